//! The host backend on real Triton kernels against an H100, one trial per
//! kernel (`host_triton/NAME`).
//!
//! `tests/host/triton/cases.tsv` lists every `mm_kernel` of
//! `tests/real/triton36` and `triton39`, four and eight warps (one and two
//! warpgroups per CTA), and every `tma_device_mm_kernel` (TMA loads and
//! stores through descriptors the kernel builds with `tensormap.replace`,
//! mbarriers, and the warp-specialized variants of three warpgroups with
//! `setmaxnreg`), Triton 3.9's `tma_host_mm_kernel`s (tensor maps passed
//! by value, encoded from the compiled kernel's descriptor metadata), the
//! persistent, split-K, grouped and batched matmuls, the fused-epilogue
//! matmuls, flash attention, and (session 16) the gated-MLP, fp8
//! tensor/row/block-scaled, int8 and int4 weight-dequantizing and LoRA
//! matmuls, whose further inputs (scales, a second weight, the LoRA factors)
//! come as named buffers in the last column
//! (f16, bf16, tf32, tf32x3, e4m3,
//! e5m2 and their mixes, int8, f16 accumulators, fp8 with imprecise
//! accumulation, both majors of B), each on a 128x128x128 problem over its
//! full grid. The inputs (`inputs/*.npy`) are small integers, so every
//! product and partial sum is exact in every type: the GPU's answer is one
//! bit pattern, recorded by `tests/host/triton/record_gpu.py` on an H100
//! (`gpu/NAME.gpu.npy.gz`, never edited; `record.log` says which GPU, ptxas
//! and CuPy). Each kernel goes through ori's passes, then runs with
//! `ori_host::run` exactly as `ori run` launches it, and C must be the same
//! bytes. Triton 3.6's kernels that read `cp.async` data with wgmma and no
//! `fence.proxy.async` must also be stopped by the sanitizer's proxy check.

mod common;

use common::{half_to_f32, unfenced_cp_async};
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
    let [name, ptx, grid, block, a, b, c_descr, c_count, list, v, m_count, tolerance, extra] =
        f[..]
    else {
        return Err(format!("a cases.tsv row of {} columns", f.len()));
    };
    let (src, m, entry) = common::compile_entry(ptx)?;
    let mut g = GlobalMemory::new();
    let (a, b) = (load(&dir().join(a))?, load(&dir().join(b))?);
    let (a_shape, b_shape) = (a.shape.clone(), b.shape.clone());
    let pa = g.alloc(a.data);
    let pb = g.alloc(b.data);
    let size = ori::host::npy::element_size(c_descr).ok_or("c dtype")?;
    let count: usize = c_count.parse().map_err(|_| "c count")?;
    let pc = g.alloc(vec![0; count * size]);
    let pv = match v {
        "-" => 0,
        v => g.alloc(load(&dir().join(v))?.data),
    };
    let m_count: usize = m_count.parse().unwrap_or(0);
    let pm = g.alloc(vec![0; 4 * m_count]);
    // More inputs by name (scales, a second weight matrix): NAME=FILE;...
    let mut named = Vec::new();
    for x in extra.split(';').filter(|x| *x != "-") {
        let (xname, file) = x.split_once('=').ok_or(format!("extra input '{x}'"))?;
        named.push((xname, g.alloc(load(&dir().join(file))?.data)));
    }
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
            "V" => pv,
            "MO" => pm,
            _ if named.iter().any(|(x, _)| *x == p) => {
                named.iter().find(|(x, _)| *x == p).map_or(0, |(_, at)| *at)
            }
            _ if p.starts_with('f') => u64::from(
                p[1..]
                    .parse::<f32>()
                    .map_err(|_| format!("'{p}'"))?
                    .to_bits(),
            ),
            _ => match p.strip_prefix('S') {
                Some(n) => g.alloc(vec![0; n.parse().map_err(|_| "scratch size")?]),
                None => p.parse::<u64>().map_err(|_| format!("parameter '{p}'"))?,
            },
        });
    }
    params.resize(m.funcs[m.by_name[entry.as_str()]].params.len(), 0);
    let dims: Vec<u32> = grid.split(',').filter_map(|x| x.parse().ok()).collect();
    let launch = Launch {
        params,
        dynamic_shared: 227 * 1024,
        grid: [dims[0], dims[1], dims[2]],
        block: [block.parse().map_err(|_| "block")?, 1, 1],
        param_bytes,
        ..Launch::default()
    };
    // The sanitizer's proxy check. Triton 3.6 reads `cp.async`-filled
    // shared memory with wgmma without a `fence.proxy.async` after the
    // wait, which the PTX ISA leaves unordered (3.9 fences): those kernels
    // must be reported at exactly such a write, as that documented hazard,
    // and still run to the GPU's output. Any other finding is a failure.
    let stats = ori::host::run(&m, &entry, &launch, &g).map_err(|e| e.to_string())?;
    for h in &stats.hazards {
        let documented = h.kind == ori::host::HazardKind::UnfencedAsyncCopy
            && unfenced_cp_async(&src, &h.message);
        if !(ptx.contains("triton36") && documented) {
            return Err(format!("line {}: {h}", h.line));
        }
    }
    let gpu = gpu_record(&format!("{name}.gpu.npy.gz"))?;
    let host = g.buffer(pc).ok_or("no C")?;
    if tolerance == "approx" {
        within_tolerance("Out", &host, &gpu)?;
        if m_count == 0 {
            return Ok(());
        }
        let gpu_m = gpu_record(&format!("{name}.M.gpu.npy.gz"))?;
        return within_tolerance("M", &g.buffer(pm).ok_or("no M")?, &gpu_m);
    }
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

/// A recording of tests/host/triton/gpu.
fn gpu_record(file: &str) -> Result<NpyArray, String> {
    let gz = dir().join("gpu").join(file);
    let mut bytes = Vec::new();
    let f = std::fs::File::open(&gz).map_err(|e| format!("{}: {e}", gz.display()))?;
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(f), &mut bytes)
        .map_err(|e| format!("{}: {e}", gz.display()))?;
    NpyArray::parse(&bytes).map_err(|e| format!("{}: {e}", gz.display()))
}

/// Kernels with approximate math (ex2.approx, div.full) against the GPU:
/// every element within 2 units in the last place of its type (the README's
/// host-backend tolerance: the host computes those functions correctly
/// rounded, the GPU's MUFU within a few f32 ulp, and the kernels round the
/// result to f16 or bf16; measured, 99.5% or more of Out is bit-identical
/// and the rest 1 ulp apart, M (f32) within 2 ulp).
fn within_tolerance(what: &str, host: &[u8], gpu: &NpyArray) -> Result<(), String> {
    const ULPS: f64 = 2.0;
    if gpu.descr == "|u1" {
        // fp8 codes of one sign are ordered: 2 ulp is 2 codes apart.
        for (k, (h, d)) in host.iter().zip(&gpu.data).enumerate() {
            if (h ^ d) & 0x80 != 0 && (h | d) & 0x7f != 0 || h.abs_diff(*d) > 2 {
                return Err(format!(
                    "{what}[{k}] = {h:#04x}, the H100 gave {d:#04x}: more than 2 fp8 codes apart"
                ));
            }
        }
        return Ok(());
    }
    // (mantissa bits, least normal exponent) of the element type.
    let (mant, emin) = match gpu.descr.as_str() {
        "<f2" => (10, -14),
        "<u2" => (7, -126),
        _ => (23, -126),
    };
    let decode = |b: &[u8]| -> f64 {
        match gpu.descr.as_str() {
            "<f2" => f64::from(half_to_f32(u16::from_le_bytes([b[0], b[1]]))),
            "<u2" => f64::from(f32::from_bits(
                u32::from(u16::from_le_bytes([b[0], b[1]])) << 16,
            )),
            _ => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        }
    };
    let size = ori::host::npy::element_size(&gpu.descr).ok_or("dtype")?;
    for (k, (h, d)) in host.chunks(size).zip(gpu.data.chunks(size)).enumerate() {
        let (h, d) = (decode(h), decode(d));
        let e = if d == 0.0 {
            emin
        } else {
            (d.abs().log2().floor() as i32).max(emin)
        };
        let ulp = 2f64.powi(e - mant);
        // (A NaN on either side fails: it is not within anything.)
        let within = (h - d).abs() <= ULPS * ulp;
        if !within {
            return Err(format!(
                "{what}[{k}] = {h}, the H100 gave {d}: {:.1} ulp apart (at most {ULPS})",
                (h - d).abs() / ulp
            ));
        }
    }
    Ok(())
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
