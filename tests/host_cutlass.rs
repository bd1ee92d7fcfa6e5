//! The host backend on real CUTLASS GEMMs against an H100, one trial per
//! kernel (`host_cutlass/NAME`).
//!
//! Each kernel of `tests/real/cutlass` named by a directory of
//! `tests/host/cutlass/gpu/` was run on the H100 by a recorder built from
//! the same wrapper (`tests/host/cutlass/record_gemm.cu`, whose PTX was
//! checked to be the committed kernel's byte for byte) through CUTLASS's
//! own host code (`GemmUniversalAdapter`): a 256x256x256 problem, D =
//! A B + C, small-integer inputs so that every sum is exact. The recording
//! holds the kernel's parameter block as launched (its TMA descriptors
//! encoded by the driver, the device addresses of every buffer), the
//! launch shape, the inputs and the D the GPU wrote (never edited;
//! `record.log` says which GPU). The test replays that block as `ori run
//! --params @params.bin --mem ADDR=...` does: each buffer at its recorded
//! address, the kernel through ori's passes, the whole grid; D must be
//! the same bytes. A kernel of clusters of several CTAs (`_c2x1`, `_c1x2`)
//! runs with the cluster shape its recording's `meta.txt` names.

mod common;

use common::unfenced_cp_async;
use libtest_mimic::{Arguments, Failed, Trial};
use ori::host::{GlobalMemory, Launch};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/host/cutlass/gpu")
}

fn gunzip(path: &Path) -> Result<Vec<u8>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(f), &mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(bytes)
}

/// `meta.txt`: `KEY VALUE...` lines.
fn meta(name: &str) -> Result<Vec<(String, Vec<String>)>, String> {
    let path = dir().join(name).join("meta.txt");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace().map(str::to_string);
            Some((w.next()?, w.collect()))
        })
        .collect())
}

fn dims(v: &[String]) -> Result<[u32; 3], String> {
    let d: Vec<u32> = v
        .first()
        .ok_or("no dimensions")?
        .split(',')
        .map(|x| x.parse().map_err(|_| format!("'{x}' is not a dimension")))
        .collect::<Result<_, _>>()?;
    d.try_into()
        .map_err(|_| "three dimensions expected".to_string())
}

fn address(v: &[String]) -> Result<(u64, usize), String> {
    let [addr, len] = v else {
        return Err(format!("a buffer line of {} words", v.len()));
    };
    let a = u64::from_str_radix(addr.trim_start_matches("0x"), 16)
        .or_else(|_| if addr == "(nil)" { Ok(0) } else { Err(()) })
        .map_err(|()| format!("'{addr}' is not an address"))?;
    Ok((
        a,
        len.parse().map_err(|_| format!("'{len}' is not a size"))?,
    ))
}

fn run_case(name: &str) -> Result<(), String> {
    let (src, m, entry) = common::compile_entry(&format!("tests/real/cutlass/{name}.ptx"))?;
    let meta = meta(name)?;
    let get = |k: &str| -> Result<&[String], String> {
        meta.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_slice())
            .ok_or_else(|| format!("meta.txt has no '{k}'"))
    };
    let mut g = GlobalMemory::new();
    let case = dir().join(name);
    for part in ["a", "b", "c"] {
        let (addr, len) = address(get(part)?)?;
        let bytes = gunzip(&case.join(format!("{part}.bin.gz")))?;
        if bytes.len() != len {
            return Err(format!(
                "{part}.bin has {} bytes, meta.txt says {len}",
                bytes.len()
            ));
        }
        g.alloc_at(addr, bytes)?;
    }
    let (d_addr, d_len) = address(get("d")?)?;
    g.alloc_at(d_addr, vec![0; d_len])?;
    let (ws_addr, ws_len) = address(get("workspace")?)?;
    if ws_len > 0 {
        g.alloc_at(ws_addr, vec![0; ws_len])?;
    }
    let params = std::fs::read(case.join("params.bin")).map_err(|e| e.to_string())?;
    let launch = Launch {
        grid: dims(get("grid")?)?,
        block: dims(get("block")?)?,
        dynamic_shared: get("shared")?
            .first()
            .and_then(|s| s.parse().ok())
            .ok_or("shared")?,
        param_block: Some(params),
        // Recordings before clusters of several CTAs have no `cluster` line.
        cluster: match get("cluster") {
            Ok(v) => dims(v)?,
            Err(_) => [1, 1, 1],
        },
        step_limit: u64::MAX,
        ..Launch::default()
    };
    // The sanitizer's proxy check: CUTLASS's cp.async mainloops, like
    // Triton 3.6's, read `cp.async`-filled shared memory with wgmma and no
    // `fence.proxy.async` (cp.async writes through the generic proxy,
    // wgmma reads through the async one). Such a kernel must be reported
    // at exactly such a write, as that documented hazard, and still run to
    // the GPU's output; any other finding is a failure.
    let stats = ori::host::run(&m, &entry, &launch, &g).map_err(|e| e.to_string())?;
    for h in &stats.hazards {
        if !(h.kind == ori::host::HazardKind::UnfencedAsyncCopy
            && unfenced_cp_async(&src, &h.message))
        {
            return Err(format!("line {}: {h}", h.line));
        }
    }
    let gpu = gunzip(&case.join("d.bin.gz"))?;
    let host = g.buffer(d_addr).ok_or("no D")?;
    if host == gpu {
        return Ok(());
    }
    let first = host.iter().zip(&gpu).position(|(h, d)| h != d).unwrap_or(0);
    let differ = host.iter().zip(&gpu).filter(|(h, d)| h != d).count();
    Err(format!(
        "{differ} of {} bytes of D differ from the H100's; the first at byte {first}",
        gpu.len()
    ))
}

/// `known.txt`: NAME, a tab, and the start of the error the host backend
/// must stop with (what it does not support yet). Such a trial fails if
/// the run succeeds or stops otherwise, so the list stays true.
fn known(name: &str) -> Option<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/host/cutlass/known.txt");
    std::fs::read_to_string(path).ok()?.lines().find_map(|l| {
        let (n, why) = l.split_once('\t')?;
        (n == name).then(|| why.to_string())
    })
}

fn trial(name: &str) -> Result<(), String> {
    match (known(name), run_case(name)) {
        (None, r) => r,
        (Some(why), Err(e)) if e.contains(&why) => Ok(()),
        (Some(why), Err(e)) => Err(format!("known.txt expects '{why}', the run gave: {e}")),
        (Some(why), Ok(())) => Err(format!(
            "known.txt expects '{why}', but the kernel now agrees: drop it from the list"
        )),
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    assert!(!names.is_empty(), "no recordings under {}", dir().display());
    let trials = names
        .into_iter()
        .map(|n| Trial::test(n.clone(), move || trial(&n).map_err(Failed::from)))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
