//! Phase 87's rules against the corpora: `docs/rules.md` is what
//! `cargo xtask docs` writes today, every
//! rule decides some recorded case, and each rule's example case (named in
//! its `RuleInfo`) is one that rule decides.

use ori::gmma::RuleId;
use std::path::Path;

#[test]
fn rule_table_is_current_and_every_example_is_decided_by_its_rule() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let decided = ori::rule_table::decided_cases(&tests);
    let mut problems = Vec::new();
    for info in RuleId::ALL.iter().map(|r| r.info()) {
        let cases = decided.get(info.name).cloned().unwrap_or_default();
        if cases.is_empty() {
            problems.push(format!("{} decides no recorded case", info.name));
        } else if !cases.iter().any(|c| c == info.example) {
            problems.push(format!(
                "{}: its example {} is not decided by it (it decides {:?}...)",
                info.name,
                info.example,
                &cases[..cases.len().min(12)]
            ));
        }
    }
    let doc = std::fs::read_to_string(tests.join("../docs/rules.md")).unwrap_or_default();
    if ori::rule_table::render_doc(&decided) != doc {
        problems.push("docs/rules.md is stale (run `cargo xtask docs`)".into());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
