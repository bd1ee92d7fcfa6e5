//! How far ori agrees with its truths, counted from the files on disk.
//!
//! Every figure here is derived, never typed: the recorded cases of each
//! corpus (a `.ptx` with its `.expected`), the known-differences list that
//! `tests/corpus_cases.rs` holds each corpus to exactly (a listed column
//! must differ, an unlisted one must agree), and the GPU recordings of the
//! host backend. `cargo xtask docs` writes `docs/accuracy.md` and the
//! README's figures from this; a test fails when either is stale.

use crate::{Expectation, COLUMNS};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// One corpus (or one family of `tests/real`): how many recorded cases
/// agree with ptxas on each column.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    /// `corpus`, `real/triton36`, `generated`, ...
    pub name: String,
    /// Recorded cases.
    pub cases: usize,
    /// Cases that agree on every column.
    pub all: usize,
    /// Per column of [`COLUMNS`]: cases that agree (skeleton: of those
    /// recorded as comparable).
    pub agree: [usize; 5],
    /// Cases whose SASS skeleton ptxas's recording marks comparable.
    pub skeleton_comparable: usize,
}

/// A corpus's known differences (`known_differences.txt`, lines
/// `case<TAB>columns<TAB>why`): case -> the columns it differs on. Read by
/// `tests/corpus_cases.rs` too, which holds each case to its line.
pub fn known_differences(dir: &Path) -> BTreeMap<String, Vec<String>> {
    let text = std::fs::read_to_string(dir.join("known_differences.txt")).unwrap_or_default();
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
                .filter(|c| !c.is_empty())
                .collect();
            (case, cols)
        })
        .collect()
}

/// Recorded cases below `dir` (a `.ptx` with its `.expected` beside it),
/// named relative to it without `.ptx`, prefixed by `prefix`: the cases
/// `tests/corpus_cases.rs` runs and this module counts.
pub fn recorded_cases(dir: &Path, prefix: &str, out: &mut BTreeMap<String, PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            recorded_cases(&p, &format!("{prefix}{name}/"), out);
        } else if let Some(stem) = name.strip_suffix(".ptx") {
            if p.with_extension("expected").is_file() {
                out.insert(format!("{prefix}{stem}"), p);
            }
        }
    }
}

/// Recorded cases below `dir`, with whether their skeleton is comparable.
fn recorded(dir: &Path) -> BTreeMap<String, bool> {
    let mut paths = BTreeMap::new();
    recorded_cases(dir, "", &mut paths);
    paths
        .into_iter()
        .map(|(name, p)| {
            let text = std::fs::read_to_string(p.with_extension("expected")).unwrap_or_default();
            let comparable = Expectation::parse(&text).is_ok_and(|e| e.skeleton_comparable);
            (name, comparable)
        })
        .collect()
}

/// The row of the cases of `cases` (name -> skeleton comparable) under a
/// known-differences list.
fn row(name: &str, cases: &BTreeMap<String, bool>, known: &BTreeMap<String, Vec<String>>) -> Row {
    let mut r = Row {
        name: name.to_string(),
        cases: cases.len(),
        ..Row::default()
    };
    for (case, &comparable) in cases {
        let differs = known.get(case).map(Vec::as_slice).unwrap_or_default();
        r.all += usize::from(differs.is_empty());
        r.skeleton_comparable += usize::from(comparable);
        for (k, col) in COLUMNS.iter().enumerate() {
            let counted = *col != "skeleton" || comparable;
            r.agree[k] += usize::from(counted && !differs.iter().any(|d| d == col));
        }
    }
    r
}

/// The rows of every corpus under `tests`: `corpus`, each family of
/// `real` and their total, `generated`, `bad_input`.
pub fn corpus_rows(tests: &Path) -> Vec<Row> {
    let mut rows = Vec::new();
    for label in ["corpus", "real", "generated", "bad_input"] {
        let dir = tests.join(label);
        let cases = recorded(&dir);
        let known = known_differences(&dir);
        if label == "real" {
            let mut families: BTreeMap<&str, BTreeMap<String, bool>> = BTreeMap::new();
            for (case, &c) in &cases {
                let fam = case.split('/').next().unwrap_or("");
                families.entry(fam).or_default().insert(case.clone(), c);
            }
            for (fam, fam_cases) in &families {
                rows.push(row(&format!("real/{fam}"), fam_cases, &known));
            }
            rows.push(row("real (all families)", &cases, &known));
        } else {
            rows.push(row(label, &cases, &known));
        }
    }
    rows
}

/// `n/d (p%)`, with one decimal.
pub fn ratio(n: usize, d: usize) -> String {
    if d == 0 {
        return "-".into();
    }
    format!("{n}/{d} ({:.1}%)", 100.0 * n as f64 / d as f64)
}

/// The markdown table of `rows`.
pub fn render_table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| corpus | cases | every column | messages | advisory lines | serialized-or-not | SASS sync skeleton | exit status |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let _ = write!(
            s,
            "| `{}` | {} | {} |",
            r.name,
            r.cases,
            ratio(r.all, r.cases)
        );
        for (k, col) in COLUMNS.iter().enumerate() {
            let of = if *col == "skeleton" {
                r.skeleton_comparable
            } else {
                r.cases
            };
            let _ = write!(s, " {} |", ratio(r.agree[k], of));
        }
        s.push('\n');
    }
    s
}

/// Files below `dir` whose name ends with `suffix`.
pub fn count_files(dir: &Path, suffix: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                count_files(&p, suffix)
            } else {
                usize::from(e.file_name().to_string_lossy().ends_with(suffix))
            }
        })
        .sum()
}

/// The README's figures section is between these lines.
pub const README_BEGIN: &str = "<!-- figures: generated by `cargo xtask docs`, do not edit -->";
/// End of the README's figures section.
pub const README_END: &str = "<!-- end of figures -->";

/// The GPU recordings `ori run` is checked against, per suite: (what,
/// folder under `tests/`, file suffix of one recording).
const HOST_SUITES: [(&str, &str, &str); 3] = [
    ("hand-written wgmma kernels", "host/cases", ".gpu.bin"),
    (
        "Triton kernels of `tests/real`",
        "host/triton/gpu",
        ".gpu.npy.gz",
    ),
    ("CUTLASS GEMMs", "host/cutlass/gpu", ""),
];

/// Recordings of one host suite: files with the suffix, or (no suffix)
/// the recorded kernels, one folder each.
fn host_recordings(tests: &Path, dir: &str, suffix: &str) -> usize {
    let dir = tests.join(dir);
    if !suffix.is_empty() {
        return count_files(&dir, suffix);
    }
    std::fs::read_dir(&dir).map_or(0, |d| {
        d.filter_map(Result::ok)
            .filter(|e| e.path().is_dir())
            .count()
    })
}

fn host_table(tests: &Path) -> String {
    let mut s = String::from("| suite | GPU recordings |\n|---|---:|\n");
    for (what, dir, suffix) in HOST_SUITES {
        let n = host_recordings(tests, dir, suffix);
        let _ = writeln!(s, "| {what} (`tests/{dir}`) | {n} |");
    }
    s
}

/// The whole of `docs/accuracy.md`.
pub fn render_doc(tests: &Path) -> String {
    let rows = corpus_rows(tests);
    format!(
        "# Accuracy\n\n\
         Written by `cargo xtask docs` from the files on disk; `tests/generated_docs.rs` \
         fails when it is stale.\n\n\
         ## Phase 87 against ptxas 13.0.88\n\n\
         Each recorded case is a PTX file and what ptxas 13.0.88 (and cuobjdump) printed \
         for it. A case agrees on a column unless its corpus's `known_differences.txt` \
         lists that column for it, and `tests/corpus_cases.rs` holds every case to its \
         list exactly: an unlisted difference fails, and so does a listed column that \
         agrees. The SASS sync skeleton is compared where the recording marks it \
         comparable (no loop ptxas unrolls, no call it inlines).\n\n{}\n\
         ## `ori run` against the GPU\n\n\
         Kernels with inputs, and the bytes an H100 wrote for them \
         (`tests/host/README.md` says how to record them again):\n\n{}\n\
         The recordings above use small integer-valued inputs, whose sums are exact: \
         they check data movement, layouts and the instruction semantics. The tensor \
         core's rounding is checked on random data by the probe recording of \
         `tests/host/mma/` (every wgmma and `mma.sync` form, bit for bit; \
         `docs/host.md`). The other ptxas releases: `docs/ptxas-versions.md`.\n",
        render_table(&rows),
        host_table(tests),
    )
}

/// The README's figures, markers included.
pub fn readme_figures(tests: &Path) -> String {
    let rows = corpus_rows(tests);
    let pick = |name: &str| {
        rows.iter()
            .find(|r| r.name == name)
            .cloned()
            .unwrap_or_default()
    };
    let mut s = format!(
        "{README_BEGIN}\n\n| measured on | cases | agree with ptxas 13.0.88 on every column | serialized-or-not |\n|---|---:|---:|---:|\n"
    );
    for (what, name) in [
        (
            "hand-written probes and held-out sets (`tests/corpus`)",
            "corpus",
        ),
        (
            "real kernels: Triton, Gluon, PyTorch Inductor and FlexAttention, CUTLASS, DeepGEMM, FA3, ThunderKittens, CuTe DSL, quack, TileLang, FlashInfer (`tests/real`)",
            "real (all families)",
        ),
        (
            "random generated pipelines (`tests/generated`)",
            "generated",
        ),
        ("malformed PTX (`tests/bad_input`)", "bad_input"),
    ] {
        let r = pick(name);
        let serialized = COLUMNS.iter().position(|c| *c == "serialized").unwrap_or(0);
        let _ = writeln!(
            s,
            "| {what} | {} | {} | {} |",
            r.cases,
            ratio(r.all, r.cases),
            ratio(r.agree[serialized], r.cases)
        );
    }
    let _ = write!(
        s,
        "\nPer column and per family: [docs/accuracy.md](docs/accuracy.md).\n\n{README_END}\n"
    );
    s
}

/// `text` with the section between `begin` and `end` replaced by
/// `section` (markers included in `section`); `None` when `text` has no
/// such section.
pub fn splice(text: &str, begin: &str, end: &str, section: &str) -> Option<String> {
    let b = text.find(begin)?;
    let e = text[b..].find(end)? + b + end.len();
    let rest = text[e..].strip_prefix('\n').unwrap_or(&text[e..]);
    Some(format!("{}{section}{rest}", &text[..b]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_column_counts_as_differing_and_skeletons_only_where_comparable() {
        let cases: BTreeMap<String, bool> = [("a", true), ("b", true), ("c", false)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let known: BTreeMap<String, Vec<String>> = [(
            "b".to_string(),
            vec!["messages".to_string(), "skeleton".to_string()],
        )]
        .into();
        let r = row("x", &cases, &known);
        assert_eq!((r.cases, r.all, r.skeleton_comparable), (3, 2, 2));
        assert_eq!(r.agree, [2, 3, 3, 1, 3]);
        assert!(render_table(&[r]).contains("| `x` | 3 | 2/3 (66.7%) | 2/3 (66.7%) |"));
    }
}
