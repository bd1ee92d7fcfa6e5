//! Snapshots of the human diagnostics (`ori compile`, the default layout) on
//! the user's PTX: for every phase-87 rule, its example case from the rule
//! table (each code ptxas gives, with the culprit's statement underlined
//! and the wgmma it conflicts with marked), and every bad-input case (the
//! error's token underlined; a few of these ptxas accepts). The messages themselves are ptxas's, checked
//! against the oracle in `corpus_cases`; these snapshots pin the layout.

use std::path::Path;

fn human(name: &str, path: &Path) -> String {
    let src = std::fs::read_to_string(path).unwrap();
    let c = ori::compile_ptx(name, &src, &ori::case_options(&src));
    let source = ori::report::Source::new(name, &src);
    let mut out = String::new();
    for d in &c.diags {
        out.push_str(&ori::report::render_human(
            d,
            Some(&source),
            ori::report::Style::Plain,
        ));
        out.push('\n');
    }
    // Rules that decide without a message of their own (R-hoist-commit moves
    // a commit) show in the decisions, as `--print-after` lists them.
    for f in c.module.iter().flat_map(|m| m.funcs.values()) {
        for u in &f.decisions {
            out.push_str(&format!(
                "decision in {}: {} at line {} ({})\n",
                f.name, u.what, u.line, u.rule
            ));
        }
    }
    out
}

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({snapshot_path => "../snapshots/human", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn each_rule_on_its_example_case() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    for rule in ori::gmma::RuleId::ALL {
        let info = rule.info();
        let path = tests.join(format!("{}.ptx", info.example));
        let file = format!("{}.ptx", info.example);
        let out = human(&file, &path);
        assert!(
            out.contains(info.name),
            "{}: the rule is not named\n{out}",
            info.name
        );
        snapshot(info.name, &out);
    }
}

#[test]
fn bad_input_points_at_the_token() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_input");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    paths.sort();
    let mut all = String::new();
    for p in &paths {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        all.push_str(&format!("==> {name}\n"));
        all.push_str(&human(&name, p));
    }
    snapshot("bad_input", &all);
}
