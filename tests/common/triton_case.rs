//! The launch of a row of `tests/host/triton/cases.tsv`: what
//! `tests/host_triton.rs` compares with the GPU and
//! `tests/sanitizer_bench.rs` plants bugs in.

use ori::host::npy::NpyArray;
use ori::host::{GlobalMemory, Launch};
use std::path::{Path, PathBuf};

/// `tests/host/triton`.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/host/triton")
}

fn load(path: &Path) -> Result<NpyArray, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    NpyArray::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// A row ready to run.
pub struct Case {
    pub name: String,
    pub ptx: String,
    pub src: String,
    pub m: ori::ir::Module,
    pub entry: String,
    pub g: GlobalMemory,
    pub launch: Launch,
    /// C's address, M's (the row-max output of attention), C's element
    /// size and count, M's count.
    pub pc: u64,
    pub pm: u64,
    pub size: usize,
    pub count: usize,
    pub m_count: usize,
    pub tolerance: String,
}

/// One row of `tests/host/triton/cases.tsv` ready to run: the kernel
/// (its PTX `ptx` when given, else the row's; through ori's passes unless
/// `passes` is false), its buffers and its launch.
pub fn prepare(row: &str, ptx_override: Option<&str>, passes: bool) -> Result<Case, String> {
    let f: Vec<&str> = row.split('\t').collect();
    let [name, ptx, grid, block, a, b, c_descr, c_count, list, v, m_count, tolerance, extra] =
        f[..]
    else {
        return Err(format!("a cases.tsv row of {} columns", f.len()));
    };
    let ptx = ptx_override.unwrap_or(ptx);
    let (src, m, entry) = super::compile_entry_with(ptx, passes)?;
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
    Ok(Case {
        name: name.to_string(),
        ptx: ptx.to_string(),
        src,
        m,
        entry,
        g,
        launch,
        pc,
        pm,
        size,
        count,
        m_count,
        tolerance: tolerance.to_string(),
    })
}
