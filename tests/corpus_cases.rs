//! ori against ptxas 13.0.88, one trial per case, on both corpora:
//!
//! * `tests/corpus/`: the hand-written probes and held-out sets (trials
//!   named `corpus/CASE`);
//! * `tests/real/`: what Triton, CUTLASS and hand-written Hopper libraries
//!   emit, one folder per family (trials named `real/FAMILY/KERNEL`);
//! * `tests/bad_input/`: malformed PTX, each a corpus kernel broken one way
//!   (`xtask/gen_bad_inputs.py`; trials named `bad_input/CASE`);
//! * `tests/generated/`: random wgmma pipelines from the fuzz generator
//!   (`cargo xtask oracle gen-pipelines`; trials named `generated/pipelines/gSEED`).
//!
//! Each `.ptx` has the `.expected` file `cargo xtask oracle record` wrote
//! from ptxas and cuobjdump. A case must agree with ptxas on messages (codes,
//! functions, order), advisory line numbers, serialized-or-not, exit status
//! and the SASS sync skeleton (where recorded as comparable). Known
//! differences live in each corpus's `known_differences.txt`
//! (`case<TAB>columns<TAB>why`): a listed case may differ on the listed
//! columns only, and one that starts agreeing on a listed column fails until
//! its line is taken off, so the lists only shrink.

mod common;

use libtest_mimic::{Arguments, Failed, Trial};
use ori_oracle::accuracy::{known_differences, recorded_cases as cases};
use ori_oracle::{compare, Expectation};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The columns a case is checked on.
const COLUMNS: [&str; 5] = ["messages", "lines", "serialized", "exit", "skeleton"];

fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// The columns on which ori differs from ptxas for one case, and the diff.
fn differing_columns(path: &Path) -> Result<(Vec<&'static str>, String), String> {
    let exp_path = path.with_extension("expected");
    let text =
        std::fs::read_to_string(&exp_path).map_err(|e| format!("{}: {e}", exp_path.display()))?;
    let exp = Expectation::parse(&text).map_err(|e| format!("{}: {e}", exp_path.display()))?;
    let obs = common::observe(path);
    let a = compare(&exp, &obs);
    let verdicts = [
        a.messages_agree,
        a.lines_agree,
        a.serialized_agree,
        a.exit_agree,
        a.skeleton_agree != Some(false),
    ];
    let differ = COLUMNS
        .iter()
        .zip(verdicts)
        .filter(|(_, ok)| !ok)
        .map(|(c, _)| *c)
        .collect();
    Ok((differ, a.diff))
}

fn check(path: &Path, allowed: &[String], list: &str) -> Result<(), Failed> {
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
            "listed in {list} as differing on {now_agree:?}, but ori now agrees there: \
             take it off the list"
        )
        .into());
    }
    Ok(())
}

/// The trials of one corpus, plus one that checks its list names only its
/// cases and known columns.
fn corpus_trials(label: &str, dir: &Path) -> Vec<Trial> {
    let mut all = BTreeMap::new();
    cases(dir, "", &mut all);
    let known = known_differences(dir);
    let list = format!("tests/{label}/known_differences.txt");
    let mut trials: Vec<Trial> = all
        .iter()
        .map(|(name, path)| {
            let allowed = known.get(name).cloned().unwrap_or_default();
            let (path, list) = (path.clone(), list.clone());
            Trial::test(format!("{label}/{name}"), move || {
                check(&path, &allowed, &list)
            })
        })
        .collect();
    let names: Vec<String> = all.keys().cloned().collect();
    trials.push(Trial::test(
        format!("{label}/known_differences_are_well_formed"),
        move || {
            let stale: Vec<&String> = known.keys().filter(|l| !names.contains(l)).collect();
            let bad: Vec<String> = known
                .iter()
                .flat_map(|(k, cols)| {
                    cols.iter()
                        .filter(|c| !COLUMNS.contains(&c.as_str()))
                        .map(move |c| format!("{k}: {c}"))
                })
                .collect();
            let empty: Vec<&String> = known
                .iter()
                .filter(|(_, c)| c.is_empty())
                .map(|(k, _)| k)
                .collect();
            if stale.is_empty() && bad.is_empty() && empty.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "{list}: entries naming no case {stale:?}, unknown columns {bad:?}, \
                     no columns {empty:?}"
                )
                .into())
            }
        },
    ));
    trials
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = corpus_trials("corpus", &tests_dir().join("corpus"));
    trials.extend(corpus_trials("real", &tests_dir().join("real")));
    trials.extend(corpus_trials("bad_input", &tests_dir().join("bad_input")));
    trials.extend(corpus_trials("generated", &tests_dir().join("generated")));
    libtest_mimic::run(&args, trials).exit();
}
