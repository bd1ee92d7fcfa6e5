//! Shared helpers of the integration tests: corpus discovery and running ori
//! the way `cargo xtask oracle check` does, in-process.

#![allow(dead_code)]

pub mod triton_case;

use std::path::{Path, PathBuf};

/// Every `*.ptx` under `tests/SUBDIR`, sorted.
fn ptx_files(subdir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(subdir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    v.sort();
    v
}

/// Cases whose fix-it no wait can settle: ptxas pairs two conversions of
/// the accumulators of a wgmma that reads none and places the pair after
/// the instruction following that wgmma, before any wait the fix-it writes
/// (`ori_gmma::paired_conversions`), so ori, as ptxas on the recorded
/// round trip (`tests/corpus/roundtrip_known_differences.txt`), injects
/// its wait again. A listed case that settles fails `fixit_idempotence` until taken off.
pub const UNSETTLED_PAIRS: [&str; 6] = [
    "c7517_loaded_acc_scale_d0_selp_cvt_pair_packed.ptx",
    "c7517_two_zero_acc_wgmma_cvt_pair.ptx",
    "c7517_zero_acc_commit_then_insns_cvt_pair.ptx",
    "c7517_zero_acc_insns_before_commit_cvt_pair.ptx",
    "c7517_zero_acc_mov_before_spin_loop_cvt_pair.ptx",
    "c7517_zero_acc_selp_cvt_pair_packed.ptx",
];

/// `tests/corpus`.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("corpus")
}

/// Every `tests/corpus/*.ptx`, sorted.
pub fn corpus_cases() -> Vec<PathBuf> {
    ptx_files("corpus")
}

/// Every kernel of the real-kernel corpus (`tests/real/FAMILY/*.ptx`), sorted.
pub fn real_kernels() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("real");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten())
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    v.sort();
    v
}

/// Every Triton-generated kernel under `tests/triton/`.
pub fn triton_kernels() -> Vec<PathBuf> {
    ptx_files("triton")
}

/// Run ori on a case as `ori compile NAME --message-format ptxas --emit sass` would.
pub fn observe(path: &Path) -> ori_oracle::Observed {
    let src = std::fs::read_to_string(path).expect("read case");
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let c = ori::compile_source(&name, &src, &ori::case_options(&src));
    let messages = c
        .diags
        .iter()
        .filter(|d| ori::ir::render::ptxas_prints(d))
        .map(ori::ir::render::render_ptxas)
        .collect();
    let failed = c.failed();
    let sass = c
        .module
        .as_ref()
        .filter(|_| !failed)
        .map(ori::lower::sass::emit_module);
    ori_oracle::Observed {
        exit_code: i32::from(failed),
        messages,
        sass,
    }
}

/// An f16's value, decoded by hand (the tests stay independent of the
/// backend's crates): subnormals, infinities and NaN included.
pub fn half_to_f32(h: u16) -> f32 {
    let (s, e, m) = (
        (h >> 15) as u32,
        ((h >> 10) & 0x1f) as i32,
        (h & 0x3ff) as f32,
    );
    let v = match e {
        0 => m * 2f32.powi(-24),
        31 if m == 0.0 => f32::INFINITY,
        31 => f32::NAN,
        _ => (1.0 + m / 1024.0) * 2f32.powi(e - 15),
    };
    if s == 1 {
        -v
    } else {
        v
    }
}

/// Whether `message` is the host sanitizer's proxy-check finding on a
/// `cp.async` line of `src` (the kernels that read `cp.async` data with
/// wgmma and no `fence.proxy.async`).
pub fn unfenced_cp_async(src: &str, message: &str) -> bool {
    let Some(at) = message.find("wrote at line ") else {
        return false;
    };
    let line: usize = message[at + 14..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    message.contains("through the generic proxy")
        && src
            .lines()
            .nth(line.wrapping_sub(1))
            .is_some_and(|l| l.trim_start().starts_with("cp.async"))
}

/// The PTX file at `ptx` (relative to the repository) through ori's
/// passes: its text, the module, and the name of its `.entry`.
pub fn compile_entry(ptx: &str) -> Result<(String, ori::ir::Module, String), String> {
    compile_entry_with(ptx, true)
}

/// [`compile_entry`], or the PTX as written when `passes` is false.
pub fn compile_entry_with(
    ptx: &str,
    passes: bool,
) -> Result<(String, ori::ir::Module, String), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(root.join(ptx)).map_err(|e| format!("{ptx}: {e}"))?;
    let m = if passes {
        let c = ori::compile_ptx(ptx, &src, &ori::Options::default());
        c.module.ok_or_else(|| format!("{:?}", c.diags))?
    } else {
        ori::ptx_to_ir(ptx, &src).map_err(|d| format!("{d:?}"))?
    };
    let entry = m
        .funcs
        .values()
        .find(|f| f.kind == ori::ir::FuncKind::Entry)
        .ok_or("no .entry")?
        .name
        .to_string();
    Ok((src, m, entry))
}
