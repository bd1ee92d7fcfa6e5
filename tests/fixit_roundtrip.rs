//! The fix-it round trip, one trial per kernel, on both corpora: ptxas
//! 13.0.88 compiles ori's `--emit ptx` output of every kernel it compiles
//! with no C75xx message (but C7504, C7508, C7509 and C7512, which no rewrite of the PTX
//! can remove) and with the original's sync skeleton.
//!
//! There is no ptxas in CI, so the verdicts come from
//! `CORPUS/roundtrip.expected`, written by `cargo xtask oracle
//! record-roundtrip [--corpus tests/real]`: each line holds the digest of the
//! fix-it ptxas compiled. A trial first recomputes the fix-it; if its digest
//! is not the recorded one, ori now writes another text than the one ptxas
//! judged, and the trial fails until it is re-recorded (the live check is
//! `cargo xtask oracle check --ptx-roundtrip`). Where the skeletons cannot be
//! compared the record says why (`calls-written-out`, `gmma-count-differs`,
//! see `ori_oracle::SkeletonVerdict`). Known failures live in
//! `CORPUS/roundtrip_known_differences.txt` (`case<TAB>why`); a listed case
//! that passes fails too, so the list only shrinks.

mod common;

use libtest_mimic::{Arguments, Failed, Trial};
use ori_oracle::{fixit_digest, parse_roundtrip, RoundtripRecord};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn known(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(dir.join("roundtrip_known_differences.txt"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .map(|(c, w)| (c.trim().to_string(), w.trim().to_string()))
        .collect()
}

fn trial(
    case: String,
    path: PathBuf,
    rerecord: &'static str,
    records: Arc<BTreeMap<String, RoundtripRecord>>,
    known: Option<String>,
) -> Result<(), Failed> {
    let src = std::fs::read_to_string(&path).map_err(|e| format!("{e}"))?;
    let file = path.file_name().unwrap().to_string_lossy().into_owned();
    let opts = ori::case_options(&src);
    let c = ori::compile_ptx(&file, &src, &opts);
    let Some(fixed) = ori::fixit_ptx(&file, &src, &c, &opts) else {
        // A kernel ori rejects (listed, with the reason) has no fix-it.
        if known.is_some() {
            return Ok(());
        }
        return Err("ori writes no fix-it for a kernel ptxas compiles".into());
    };
    let Some(r) = records.get(&case) else {
        return Err(format!("no recorded round trip: run `{rerecord} {case}`").into());
    };
    if fixit_digest(&fixed) != r.digest {
        return Err(format!(
            "the fix-it changed since ptxas judged it: run `{rerecord} {case}` (or the live \
             `cargo xtask oracle check --ptx-roundtrip`)"
        )
        .into());
    }
    match (r.failures(), known) {
        (why, None) if why.is_empty() => Ok(()),
        (why, None) => Err(why.join("; ").into()),
        (why, Some(reason)) if why.is_empty() => Err(format!(
            "listed in roundtrip_known_differences.txt ({reason}) but passes: take its line off"
        )
        .into()),
        (_, Some(_)) => Ok(()),
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let corpora = [
        (
            "corpus",
            common::corpus_dir(),
            common::corpus_cases(),
            "cargo xtask oracle record-roundtrip",
        ),
        (
            "real",
            common::corpus_dir().with_file_name("real"),
            common::real_kernels(),
            "cargo xtask oracle --corpus tests/real record-roundtrip",
        ),
    ];
    for (prefix, dir, paths, rerecord) in corpora {
        let text = std::fs::read_to_string(dir.join("roundtrip.expected")).unwrap_or_default();
        let records = Arc::new(parse_roundtrip(&text).unwrap_or_else(|e| panic!("{e}")));
        let mut known = known(&dir);
        for path in paths {
            let exp = std::fs::read_to_string(path.with_extension("expected")).unwrap_or_default();
            if !exp.lines().any(|l| l.trim() == "exit: 0") {
                continue;
            }
            let rel = path.strip_prefix(&dir).unwrap().with_extension("");
            let case = rel.to_string_lossy().replace('\\', "/");
            let k = known.remove(&case);
            let records = Arc::clone(&records);
            let p = path.clone();
            let c = case.clone();
            trials.push(Trial::test(format!("{prefix}/{case}"), move || {
                trial(c, p, rerecord, records, k)
            }));
        }
        assert!(
            known.is_empty(),
            "{}/roundtrip_known_differences.txt lists cases that are not kernels ptxas compiles: {:?}",
            dir.display(),
            known.keys().collect::<Vec<_>>()
        );
    }
    libtest_mimic::run(&args, trials).exit();
}
