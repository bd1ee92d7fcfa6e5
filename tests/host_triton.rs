//! The host backend on real Triton kernels against an H100, one trial per
//! kernel (`host_triton/NAME`).
//!
//! `tests/host/triton/cases.tsv` lists every `mm_kernel` of
//! `tests/real/triton36` and `triton39`, four and eight warps (one and two
//! warpgroups per CTA), and every `tma_device_mm_kernel` (TMA loads and
//! stores through descriptors the kernel builds with `tensormap.replace`,
//! mbarriers, and the warp-specialized variants of three warpgroups with
//! `setmaxnreg`), and Triton 3.9's `tma_host_mm_kernel`s (tensor maps passed
//! by value, encoded from the compiled kernel's descriptor metadata)
//! (f16, bf16, tf32, tf32x3, e4m3,
//! e5m2 and their mixes, int8, f16 accumulators, fp8 with imprecise
//! accumulation, both majors of B), each on a 128x128x128 problem over its
//! full grid. The inputs (`inputs/*.npy`) are small integers, so every
//! product and partial sum is exact in every type: the GPU's answer is one
//! bit pattern, recorded by `tests/host/triton/record_gpu.py` on an H100
//! (`gpu/NAME.gpu.npy.gz`, never edited; `record.log` says which GPU, ptxas
//! and CuPy). Each kernel goes through ori's passes, then runs with
//! `ori_host::run` exactly as `ori run` launches it, and C must be the same
//! bytes. The kernels that never `fence.proxy.async` (Triton 3.6's
//! cp.async matmuls) must also be stopped by the sanitizer's proxy check.

use libtest_mimic::{Arguments, Failed, Trial};
use ori::host::npy::NpyArray;
use ori::host::{GlobalMemory, Launch};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/host/triton")
}

fn load(path: &Path) -> Result<NpyArray, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    NpyArray::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// One row of cases.tsv, run and compared.
fn run_case(row: &str) -> Result<(), String> {
    let f: Vec<&str> = row.split('\t').collect();
    let [name, ptx, grid, block, a, b, c_descr, c_count, list] = f[..] else {
        return Err(format!("a cases.tsv row of {} columns", f.len()));
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(root.join(ptx)).map_err(|e| format!("{ptx}: {e}"))?;
    let c = ori::compile_ptx(ptx, &src, &ori::Options::default());
    let m = c.module.ok_or_else(|| format!("{:?}", c.diags))?;
    let entry = m
        .funcs
        .values()
        .find(|f| f.kind == ori::ir::FuncKind::Entry)
        .ok_or("no .entry")?;
    let mut g = GlobalMemory::new();
    let (a, b) = (load(&dir().join(a))?, load(&dir().join(b))?);
    let (a_shape, b_shape) = (a.shape.clone(), b.shape.clone());
    let pa = g.alloc(a.data);
    let pb = g.alloc(b.data);
    let size = ori::host::npy::element_size(c_descr).ok_or("c dtype")?;
    let count: usize = c_count.parse().map_err(|_| "c count")?;
    let pc = g.alloc(vec![0; count * size]);
    // A, B, C: the buffers; S<bytes>: a zeroed scratch buffer;
    // T/<buffer>/<element type>/<swizzle>/<box>: a tensor map over a buffer
    // (a row-major matrix), encoded as Triton's launcher has the driver do
    // it; else an integer. Trailing pointers not listed are null.
    let mut params = Vec::new();
    let mut param_bytes = Vec::new();
    for p in list.split(',') {
        if let Some(t) = p.strip_prefix("T/") {
            let f: Vec<&str> = t.split('/').collect();
            let [which, code, swizzle, boxes] = f[..] else {
                return Err(format!("tensor map '{p}'"));
            };
            let (addr, shape) = match which {
                "A" => (pa, a_shape.clone()),
                "B" => (pb, b_shape.clone()),
                _ => (pc, vec![128, count / 128]),
            };
            let code: u32 = code.parse().map_err(|_| "element type")?;
            let esz = ori::host::tensor_map::elem_bytes(code).ok_or("element type")? as u64;
            let boxes: Vec<u32> = boxes.split('x').filter_map(|x| x.parse().ok()).collect();
            let mut map = ori::host::tensor_map::TensorMap::decode(&[0; 128]);
            map.address = addr;
            map.rank = 2;
            map.elem_code = code;
            map.swizzle = swizzle.parse().map_err(|_| "swizzle")?;
            map.l2 = 2;
            map.dims[..2].copy_from_slice(&[shape[1] as u64, shape[0] as u64]);
            map.strides[0] = shape[1] as u64 * esz;
            map.box_dims[..2].copy_from_slice(&boxes);
            param_bytes.push((params.len(), map.encode().to_vec()));
            params.push(0);
            continue;
        }
        params.push(match p {
            "A" => pa,
            "B" => pb,
            "C" => pc,
            _ => match p.strip_prefix('S') {
                Some(n) => g.alloc(vec![0; n.parse().map_err(|_| "scratch size")?]),
                None => p.parse::<u64>().map_err(|_| format!("parameter '{p}'"))?,
            },
        });
    }
    params.resize(entry.params.len(), 0);
    let dims: Vec<u32> = grid.split(',').filter_map(|x| x.parse().ok()).collect();
    let launch = Launch {
        params,
        dynamic_shared: 227 * 1024,
        grid: [dims[0], dims[1], dims[2]],
        block: [block.parse().map_err(|_| "block")?, 1, 1],
        param_bytes,
        ..Launch::default()
    };
    // The sanitizer's proxy check: a kernel that never fences may read
    // cp.async-filled shared memory with wgmma, which the PTX ISA leaves
    // unordered (Triton 3.6 does; 3.9 fences). Such a kernel must be
    // stopped, naming the write; it then runs with the check off. A kernel
    // that fences must pass the check.
    let fences = src.contains("fence.proxy.async");
    let mut g0 = g.clone();
    match ori::host::run(&m, &entry.name, &launch, &mut g0) {
        Ok(_) if !fences => {
            return Err("no fence.proxy.async, yet the proxy check found nothing".into())
        }
        Ok(_) => g = g0,
        Err(e) if !fences && e.message.contains("through the generic proxy") => {
            let launch = Launch {
                check_proxy: false,
                ..launch
            };
            ori::host::run(&m, &entry.name, &launch, &mut g).map_err(|e| e.to_string())?;
        }
        Err(e) => return Err(e.to_string()),
    }
    let gz = dir().join("gpu").join(format!("{name}.gpu.npy.gz"));
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(
            std::fs::File::open(&gz).map_err(|e| format!("{}: {e}", gz.display()))?,
        ),
        &mut bytes,
    )
    .map_err(|e| format!("{}: {e}", gz.display()))?;
    let gpu = NpyArray::parse(&bytes).map_err(|e| format!("{}: {e}", gz.display()))?;
    let host = g.buffer(pc).ok_or("no C")?;
    if host == gpu.data.as_slice() {
        return Ok(());
    }
    let first = host
        .iter()
        .zip(&gpu.data)
        .position(|(h, d)| h != d)
        .unwrap_or(0);
    let differ = host
        .chunks(size)
        .zip(gpu.data.chunks(size))
        .filter(|(h, d)| h != d)
        .count();
    Err(format!(
        "{differ} of {count} elements of C differ from the H100's; first at byte {first} (element {}, row {}, column {})",
        first / size,
        first / size / 128,
        first / size % 128
    ))
}

fn main() {
    let args = Arguments::from_args();
    let table =
        std::fs::read_to_string(dir().join("cases.tsv")).expect("tests/host/triton/cases.tsv");
    let trials: Vec<Trial> = table
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|row| {
            let row = row.to_string();
            let name = row.split('\t').next().unwrap_or("").to_string();
            Trial::test(format!("host_triton/{name}"), move || {
                run_case(&row).map_err(Failed::from)
            })
        })
        .collect();
    assert!(
        trials.len() >= 156,
        "cases.tsv lists {} cases",
        trials.len()
    );
    libtest_mimic::run(&args, trials).exit();
}
