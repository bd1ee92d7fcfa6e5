//! ori against ptxas 13.0.88 on the real-kernel corpus (`tests/real/`):
//! what Triton, CUTLASS and hand-written Hopper libraries emit, one folder
//! per family, each kernel with the `.expected` file `cargo xtask oracle
//! record --corpus tests/real` wrote from ptxas and cuobjdump.
//!
//! Every kernel is a trial of its own (a failure names it). A kernel must
//! agree with ptxas on messages (codes, functions, order), advisory line
//! numbers, serialized-or-not and exit status, and on the SASS sync
//! skeleton when it has no loop or call. Known differences live in
//! `tests/real/known_differences.txt` (`family/kernel<TAB>columns<TAB>why`):
//! a listed kernel may differ on the listed columns only, and one that
//! starts agreeing on a listed column fails until its line is taken off, so
//! the list only shrinks.

mod common;

use libtest_mimic::{Arguments, Failed, Trial};
use ori_oracle::{compare, has_loop_or_call, Expectation};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The columns a real kernel is checked on.
const COLUMNS: [&str; 5] = ["messages", "lines", "serialized", "exit", "skeleton"];

fn real_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("real")
}

/// `family/kernel` -> path of every `.ptx` with an `.expected` beside it.
fn kernels() -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let Ok(families) = std::fs::read_dir(real_dir()) else {
        return out;
    };
    for fam in families
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
    {
        let family = fam.file_name().to_string_lossy().into_owned();
        for f in std::fs::read_dir(fam.path())
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
        {
            let p = f.path();
            if p.extension().is_some_and(|x| x == "ptx") && p.with_extension("expected").is_file() {
                let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
                out.insert(format!("{family}/{stem}"), p);
            }
        }
    }
    out
}

/// The checked list: kernel -> the columns it may differ on.
fn known_differences() -> BTreeMap<String, Vec<String>> {
    let path = real_dir().join("known_differences.txt");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut f = l.split('\t');
            let case = f.next().unwrap_or("").trim().to_string();
            let cols = f
                .next()
                .unwrap_or("")
                .split(',')
                .map(|c| c.trim().to_string())
                .collect();
            (case, cols)
        })
        .collect()
}

/// The columns on which ori differs from ptxas for one kernel.
fn differing_columns(path: &Path) -> Result<(Vec<&'static str>, String), String> {
    let exp_path = path.with_extension("expected");
    let text =
        std::fs::read_to_string(&exp_path).map_err(|e| format!("{}: {e}", exp_path.display()))?;
    let exp = Expectation::parse(&text).map_err(|e| format!("{}: {e}", exp_path.display()))?;
    let obs = common::observe(path);
    let a = compare(&exp, &obs);
    let src = std::fs::read_to_string(path).unwrap_or_default();
    let loop_free = !has_loop_or_call(&src);
    let verdicts = [
        a.messages_agree,
        a.lines_agree,
        a.serialized_agree,
        a.exit_agree,
        !(loop_free && a.skeleton_agree == Some(false)),
    ];
    let differ = COLUMNS
        .iter()
        .zip(verdicts)
        .filter(|(_, ok)| !ok)
        .map(|(c, _)| *c)
        .collect();
    Ok((differ, a.diff))
}

fn check(path: &Path, allowed: &[String]) -> Result<(), Failed> {
    let (differ, diff) = differing_columns(path)?;
    let unexpected: Vec<&str> = differ
        .iter()
        .copied()
        .filter(|c| !allowed.iter().any(|a| a == c))
        .collect();
    if !unexpected.is_empty() {
        return Err(format!(
            "ori differs from ptxas on {}:\n{diff}",
            unexpected.join(", ")
        )
        .into());
    }
    let now_agree: Vec<&String> = allowed
        .iter()
        .filter(|a| !differ.contains(&a.as_str()))
        .collect();
    if !now_agree.is_empty() {
        return Err(format!(
            "listed in tests/real/known_differences.txt as differing on {now_agree:?}, \
             but ori now agrees there: take it off the list"
        )
        .into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let all = kernels();
    let known = known_differences();
    let mut trials: Vec<Trial> = all
        .iter()
        .map(|(name, path)| {
            let allowed = known.get(name).cloned().unwrap_or_default();
            let path = path.clone();
            Trial::test(name.clone(), move || check(&path, &allowed))
        })
        .collect();
    let listed: Vec<String> = known.keys().cloned().collect();
    let names: Vec<String> = all.keys().cloned().collect();
    trials.push(Trial::test(
        "known_differences_name_real_kernels",
        move || {
            let stale: Vec<&String> = listed.iter().filter(|l| !names.contains(l)).collect();
            let bad_cols: Vec<String> = known
                .iter()
                .flat_map(|(k, cols)| {
                    cols.iter()
                        .filter(|c| !COLUMNS.contains(&c.as_str()))
                        .map(move |c| format!("{k}: {c}"))
                })
                .collect();
            if stale.is_empty() && bad_cols.is_empty() {
                Ok(())
            } else {
                Err(format!("stale entries {stale:?}, unknown columns {bad_cols:?}").into())
            }
        },
    ));
    libtest_mimic::run(&args, trials).exit();
}
