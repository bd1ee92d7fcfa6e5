//! ori against ptxas 13.0.88 on real Triton output: the 17 tutorial matmuls
//! of `tests/triton/` and the 22 kernels of `tests/triton2/` (attention,
//! persistent, gated, fp8 with scales, batched, grouped, and accumulators
//! read inside the K loop), whose `.ptxas.txt` files hold what ptxas printed.
//! Every kernel must compile in ori and give the same C75xx codes, in the
//! same order, with the same advisory lines.

mod common;

use std::path::Path;

/// `(code, "around line" number)` of each C75xx line of ptxas's output. In
/// `tests/triton/`, the file holds two ptxas runs; the first (`### system`)
/// is CUDA 13.0.88.
fn ptxas_codes(path: &Path) -> Vec<(u32, Option<u32>)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let first_run = text.split("\n### triton:").next().unwrap_or("");
    first_run.lines().filter_map(code_of).collect()
}

fn code_of(line: &str) -> Option<(u32, Option<u32>)> {
    let at = line.find("(C75")?;
    let code = line[at + 2..at + 6].parse().ok()?;
    let around = line
        .split("around line ")
        .nth(1)
        .and_then(|r| r.split(' ').next()?.parse().ok());
    Some((code, around))
}

#[test]
fn triton_kernels_agree_with_ptxas() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut kernels = common::triton_kernels();
    kernels.extend(
        std::fs::read_dir(root.join("triton2"))
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "ptx")),
    );
    let mut bad = Vec::new();
    for path in &kernels {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let src = std::fs::read_to_string(path).unwrap();
        let c = ori::compile_ptx(&name, &src, &ori::Options::default());
        if c.failed() {
            bad.push(format!("{name}: ori rejects it: {:?}", c.diags.first()));
            continue;
        }
        let ours: Vec<(u32, Option<u32>)> = c
            .diags
            .iter()
            .filter(|d| ori::ir::render::ptxas_prints(d))
            .filter_map(|d| code_of(&ori::ir::render::render_ptxas(d)))
            .collect();
        let theirs = ptxas_codes(&path.with_extension("ptxas.txt"));
        if ours != theirs {
            bad.push(format!("{name}: ptxas {theirs:?}, ori {ours:?}"));
        }
    }
    assert!(kernels.len() >= 39, "only {} kernels", kernels.len());
    assert!(
        bad.is_empty(),
        "{} of {} disagree:\n{}",
        bad.len(),
        kernels.len(),
        bad.join("\n")
    );
}
