//! The machine formats validate against their schemas: every line of
//! `--message-format json` against `tests/schemas/ori-diagnostic.schema.json`,
//! and one SARIF log over the corpus and the real kernels (what `ori scan
//! --message-format sarif` writes) against the OASIS SARIF 2.1.0 schema
//! (`tests/schemas/sarif-schema-2.1.0.json`). The cases are every corpus
//! case with a diagnostic, every bad-input case (input errors with
//! positions) and every real kernel.

mod common;

use std::path::{Path, PathBuf};

fn schema(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/schemas")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    // The 2.1.0 schema's pattern for `language` (of a run and of a tool
    // component) has a stray `]` that the validator's check of the schema
    // itself (draft-07: `pattern` is a `format: regex`) refuses; ori writes
    // no `language`, so that pattern is dropped here, in memory, and the
    // file stays as published.
    for def in ["run", "toolComponent"] {
        let at = format!("/definitions/{def}/properties/language");
        if let Some(lang) = value.pointer_mut(&at) {
            lang.as_object_mut().unwrap().remove("pattern");
        }
    }
    jsonschema::validator_for(&value).unwrap()
}

fn bad_input_cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_input");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    v.sort();
    v
}

#[test]
fn json_and_sarif_follow_their_schemas() {
    let json = schema("ori-diagnostic.schema.json");
    let sarif = schema("sarif-schema-2.1.0.json");
    let paths: Vec<PathBuf> = common::corpus_cases()
        .into_iter()
        .chain(bad_input_cases())
        .chain(common::real_kernels())
        .collect();
    let texts: Vec<(String, String)> = paths
        .iter()
        .map(|p| {
            let name = p.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(p);
            let name = name.to_string_lossy().trim_start_matches('/').to_string();
            (name, std::fs::read_to_string(p).unwrap())
        })
        .collect();
    // The validators are not vacuous: a driver without its name, a level
    // SARIF does not know, a JSON line without its version.
    let no_name = serde_json::json!({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]});
    assert!(!sarif.is_valid(&no_name));
    let info = serde_json::json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "ori"}},
        "results": [{"level": "info", "message": {"text": "x"}}]}]});
    assert!(!sarif.is_valid(&info));
    let d = ori::ir::Diagnostic::new(ori::ir::Severity::Info, Some(7517), "x");
    let line = ori::report::render_json(&d, None).replace("\"version\":1,", "");
    assert!(!json.is_valid(&serde_json::from_str(&line).unwrap()));
    let mut compiled = Vec::new();
    let mut lines = 0;
    let mut bad = Vec::new();
    for (name, src) in &texts {
        let c = ori::compile_ptx(name, src, &ori::case_options(src));
        if c.diags.is_empty() {
            continue;
        }
        let source = ori::report::Source::new(name, src)
            .with_origins(ori::ptx::source_map::build(name, src));
        for d in &c.diags {
            let line = ori::report::render_json(d, Some(&source));
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if let Some(e) = json.iter_errors(&v).next() {
                bad.push(format!("{name}: {e} in {line}"));
            }
            lines += 1;
        }
        compiled.push((name, src, c.diags));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let sources: Vec<ori::report::Source> = compiled
        .iter()
        .map(|(name, src, _)| ori::report::Source::new(name, src))
        .collect();
    let files: Vec<ori::report::SarifFile> = compiled
        .iter()
        .zip(&sources)
        .map(|((name, _, diags), s)| ori::report::SarifFile {
            uri: name.to_string(),
            source: Some(s),
            diags,
        })
        .collect();
    let log = ori::report::sarif_log(&files, &ori::explain::explain);
    let errors: Vec<String> = sarif
        .iter_errors(&log)
        .take(20)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), lines);
    // Every injected arrive and wait points at a PTX line with its statement.
    for r in results {
        if r["ruleId"]
            .as_str()
            .is_some_and(|id| id == "C7517" || id == "C7519")
        {
            let region = &r["locations"][0]["physicalLocation"]["region"];
            assert!(region["startLine"].as_u64().is_some_and(|l| l > 0), "{r}");
            assert!(region["snippet"]["text"].is_string(), "{r}");
        }
    }
    assert!(lines > 1000, "only {lines} diagnostics checked");
}
