//! The generated `wgmma` table against ptxas 13.0.88 (issue #3).
//!
//! `ori_oracle::wgmma_table` generates one kernel per `wgmma.mma_async`
//! shape/type/form combination of the ISA tables plus a systematic set of
//! invalid ones; `cargo xtask oracle record-table` ran real ptxas on each and
//! wrote `tests/wgmma_table/verdicts.tsv`. This test regenerates the same
//! cases in memory, runs ori's front end (parse, `-arch` check, lowering) on
//! each and requires the same verdict as ptxas on every row. It also counts
//! the rejected rows whose first error reads exactly like ptxas's and keeps
//! that figure from dropping below [`WORDING_FLOOR`].

use ori_oracle::wgmma_table::{error_text, parse_verdicts, table_cases, TableCase, VERDICTS_PATH};
use std::collections::HashMap;
use std::path::Path;

/// Rejected rows whose first error message equals ptxas's, in percent.
const WORDING_FLOOR: f64 = 100.0;

/// ori's verdict on one case: `(accepted, first error as ptxas lays it out)`.
fn ori_verdict(case: &TableCase) -> (bool, String) {
    let file = format!("{}.ptx", case.name);
    let (ast, mut diags) = ori_ptx::parse_with_diags(&file, &case.ptx);
    if diags.is_empty() {
        let (_, lowered) = ori_ptx::lower::lower_module(&file, &ast);
        diags = lowered;
    }
    // ptxas checks `-arch` against `.target` only once the file is error-free.
    if !diags.iter().any(|d| d.is_error()) {
        diags.extend(ori_ptx::check_arch(&file, &ast, case.arch));
    }
    let first = diags
        .iter()
        .filter(|d| d.is_error())
        .find_map(|d| error_text(&d.render_ptxas()))
        .unwrap_or_default();
    (!diags.iter().any(|d| d.is_error()), first)
}

#[test]
fn wgmma_table_matches_ptxas() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(VERDICTS_PATH);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let recorded = parse_verdicts(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let by_name: HashMap<&str, _> = recorded.iter().map(|v| (v.name.as_str(), v)).collect();
    let cases = table_cases();
    let missing: Vec<&str> = cases
        .iter()
        .map(|c| c.name.as_str())
        .filter(|n| !by_name.contains_key(n))
        .collect();
    assert!(
        missing.is_empty() && cases.len() == recorded.len(),
        "the generator and {} disagree ({} cases, {} rows; not recorded: {:?}); \
         run `cargo xtask oracle record-table`",
        path.display(),
        cases.len(),
        recorded.len(),
        &missing[..missing.len().min(10)]
    );

    let mut verdict_diffs = Vec::new();
    let mut wording_diffs = Vec::new();
    let (mut accepted, mut rejected, mut same_words) = (0usize, 0usize, 0usize);
    for case in &cases {
        let want = by_name[case.name.as_str()];
        let (ok, first) = ori_verdict(case);
        if ok != want.accepted() {
            verdict_diffs.push(format!(
                "{:<52} ptxas {:<8} ori {:<8} | ptxas: {} | ori: {}",
                case.name,
                verdict_word(want.accepted()),
                verdict_word(ok),
                want.first_error,
                first
            ));
        }
        if want.accepted() {
            accepted += 1;
            continue;
        }
        rejected += 1;
        if first == want.first_error {
            same_words += 1;
        } else if !ok {
            wording_diffs.push(format!(
                "{:<52} ptxas: {}\n{:<52} ori:   {}",
                case.name, want.first_error, "", first
            ));
        }
    }
    let agree = cases.len() - verdict_diffs.len();
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    let wording = pct(same_words, rejected);
    println!(
        "wgmma table: {} cases (ptxas accepted {accepted}, rejected {rejected}); \
         verdicts agree {agree}/{} ({:.1}%); first error worded as ptxas {same_words}/{rejected} ({wording:.1}%)",
        cases.len(),
        cases.len(),
        pct(agree, cases.len()),
    );
    if !wording_diffs.is_empty() {
        println!("wording differences:\n{}", wording_diffs.join("\n"));
    }
    assert!(
        verdict_diffs.is_empty(),
        "{} verdict disagreement(s) with ptxas:\n{}",
        verdict_diffs.len(),
        verdict_diffs.join("\n")
    );
    assert!(
        wording >= WORDING_FLOOR,
        "first-error wording agreement {wording:.1}% fell below the floor {WORDING_FLOOR}%"
    );
}

fn verdict_word(accepted: bool) -> &'static str {
    if accepted {
        "accepts"
    } else {
        "rejects"
    }
}
