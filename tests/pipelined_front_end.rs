//! The pipelined front end (`ori_ptx::pipelined`: parsing on one thread,
//! lowering on another as statements come) against the sequential one
//! (`parse_with_diags`, then `lower_module_owned`), one trial per `.ptx`
//! of every corpus (`tests/triton*`, `tests/real`, `tests/corpus`,
//! `tests/bad_input`, `tests/generated`), whatever its size.
//!
//! Where the pipelined front end answers, its module must print exactly
//! as the sequential one's (instructions, registers, block names and
//! numbers) and its module-level diagnostics must be the sequential
//! front end's, which must have no other. Where it declines (`None`: a
//! diagnostic, a body not written the way compilers write one), the
//! caller runs the sequential front end, so nothing is lost; but on what
//! compilers emit (`tests/triton*`, `tests/real`) it must not decline,
//! or the speed it is there for is lost without anyone seeing.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};

fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// Every `.ptx` below `dir`, with its trial name.
fn kernels(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            kernels(&p, &format!("{prefix}{name}/"), out);
        } else if let Some(stem) = name.strip_suffix(".ptx") {
            out.push((format!("{prefix}{stem}"), p));
        }
    }
}

fn check(name: &str, path: &Path, must_pipeline: bool) -> Result<(), Failed> {
    let src = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = path.to_string_lossy();
    let (ast, parse_diags) = ori::ptx::parse_with_diags(&file, &src);
    let (sequential, lower_diags) = ori::ptx::lower::lower_module_owned(&file, ast);
    let Some(p) = ori::ptx::pipelined::parse_and_lower(&file, &src) else {
        if must_pipeline {
            return Err(format!(
                "{name}: a compiler's kernel, and the pipelined front end declined it"
            )
            .into());
        }
        return Ok(());
    };
    if !parse_diags.is_empty() {
        return Err(format!("{name}: pipelined, though parsing reports {parse_diags:?}").into());
    }
    if lower_diags != p.diags {
        return Err(format!(
            "{name}: diagnostics differ\nsequential: {lower_diags:?}\npipelined:  {:?}",
            p.diags
        )
        .into());
    }
    let (want, got) = (
        ori::ir::write_module(&sequential),
        ori::ir::write_module(&p.module),
    );
    if want != got {
        let at = want
            .lines()
            .zip(got.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let line = |s: &str| s.lines().nth(at).unwrap_or("").to_string();
        return Err(format!(
            "{name}: the modules differ from line {}\nsequential: {}\npipelined:  {}",
            at + 1,
            line(&want),
            line(&got)
        )
        .into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let dir = tests_dir();
    let mut all = Vec::new();
    for (sub, compiled) in [
        ("triton", true),
        ("triton2", true),
        ("real", true),
        ("corpus", false),
        ("bad_input", false),
        ("generated", false),
    ] {
        let mut found = Vec::new();
        kernels(&dir.join(sub), &format!("{sub}/"), &mut found);
        all.extend(found.into_iter().map(|(n, p)| (n, p, compiled)));
    }
    let trials = all
        .into_iter()
        .map(|(name, path, compiled)| {
            Trial::test(name.clone(), move || check(&name, &path, compiled))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
