//! The fix-it is a fixed point: ori's `--emit ptx` output, compiled by ori
//! again, needs no further injection. Where ptxas accepts the original (no
//! recorded error), ori must print no C7517/C7519 advisory on the output and
//! must serialize it only for the reasons no rewrite of the PTX can remove:
//! calls to functions without a body (C7509) and the register limit of
//! `-maxrregcount` (C7512); C7504 and C7508 (`setmaxnreg` ignored) stay too. Calls to defined functions are written out as
//! their bodies, and wgmma whose accumulator registers are shared get sets
//! of their own, so C7510 and C7511 must be gone. This is checked with
//! no ptxas, on both corpora (the real kernels of `tests/real/` included);
//! `tests/fixit_roundtrip.rs` checks the same outputs against ptxas's
//! recorded verdicts on them.

mod common;

#[test]
fn emitted_ptx_needs_no_more_injections() {
    let mut checked = 0;
    let mut bad = Vec::new();
    // Cases ptxas accepts and ori refuses: only those their corpus's
    // `known_differences.txt` lists as differing on exit status, with the
    // reason; `corpus_cases` fails when one of them starts compiling.
    let refused_as_listed = listed_exit_differences();
    let mut rejected = Vec::new();
    for path in common::corpus_cases()
        .into_iter()
        .chain(common::real_kernels())
    {
        let exp = std::fs::read_to_string(path.with_extension("expected")).unwrap_or_default();
        if !exp.contains("exit: 0") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let src = std::fs::read_to_string(&path).unwrap();
        let opts = ori::case_options(&src);
        let c = ori::compile_ptx(&name, &src, &opts);
        let Some(m) = &c.module else {
            if !refused_as_listed.contains(&path.with_extension("")) {
                rejected.push(name);
            }
            continue;
        };
        let Some(fixed) = ori::fixit_ptx(&name, &src, &c, &opts) else {
            bad.push(format!(
                "{name}: no fix-it for a module that compiled ({m:p})"
            ));
            continue;
        };
        let again = ori::compile_ptx(&name, &fixed, &opts);
        checked += 1;
        let left = again.diags.iter().filter(|d| ori::fixit_removes(d));
        if common::UNSETTLED_PAIRS.contains(&name.as_str()) {
            if left.count() == 0 {
                bad.push(format!("{name}: settles now: take it off UNSETTLED_PAIRS"));
            }
            continue;
        }
        for d in left {
            bad.push(format!("{name}: {}", ori::ir::render::render_ptxas(d)));
        }
    }
    assert!(checked >= 750, "only {checked} cases");
    assert!(rejected.is_empty(), "ori refuses {rejected:?}");
    assert!(
        bad.is_empty(),
        "{} problems:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// The cases of `tests/corpus` and `tests/real` (paths without extension)
/// whose `known_differences.txt` line lists the `exit` column.
fn listed_exit_differences() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    ["corpus", "real"]
        .iter()
        .flat_map(|corpus| {
            let dir = root.join(corpus);
            ori_oracle::accuracy::known_differences(&dir)
                .into_iter()
                .filter(|(_, cols)| cols.iter().any(|c| c == "exit"))
                .map(move |(case, _)| dir.join(case))
        })
        .collect()
}
