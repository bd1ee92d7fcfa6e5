//! SARIF 2.1.0, for code scanning in CI.
//!
//! GitHub code scanning and other SARIF viewers show a result on the line
//! it names; a serialized `wgmma` pipeline then appears on the PTX line of
//! its culprit (or, where the PTX names it with `.loc`, on the user's Python
//! or C++ line, the PTX line then related), with the wgmma in flight as a
//! related location and the phase-87 rule in the result's properties. One run holds every file of an
//! `ori scan` or `ori compile`; the driver lists each code and rule used,
//! with `ori explain`'s text as its help.
//!
//! Levels: ptxas prints everything of phase 87 as `info`, but a
//! serialization (C7509–C7516, C7518, C7520) costs the kernel its pipeline,
//! so SARIF gets it as a `warning`; the injected arrive and wait (C7517,
//! C7519) and ori's own notes are `note`s; input errors are `error`s.

use crate::source::Source;
use ori_ir::consts::{C7517_WAIT_INJECTED, C7519_ARRIVE_INJECTED};
use ori_ir::{Diagnostic, Note, Severity};
use serde_json::{json, Map, Value};

/// The schema this output follows.
pub const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The full text explaining a rule id (`C7517`, `R-wait-before-read`): what
/// `ori explain` prints.
pub type RuleDocs<'a> = &'a dyn Fn(&str) -> Option<String>;

/// One analysed file (an empty `uri` for diagnostics tied to no file,
/// such as a usage error): its path as SARIF should name it (relative, with
/// forward slashes, for code scanning), its source when it was read, and its
/// diagnostics.
pub struct SarifFile<'a> {
    /// Path (a relative URI reference).
    pub uri: String,
    /// The file's text, for lines, columns and snippets.
    pub source: Option<&'a Source<'a>>,
    /// What ori reported on it.
    pub diags: &'a [Diagnostic],
}

/// The rule id of a diagnostic: its ptxas code, else its rule (ori's notes).
fn rule_id(d: &Diagnostic) -> Option<String> {
    d.code
        .map(|c| format!("C{c}"))
        .or_else(|| d.rule.map(str::to_string))
}

fn level(d: &Diagnostic) -> &'static str {
    match d.severity {
        Severity::Error | Severity::Fatal => "error",
        Severity::Warning => "warning",
        Severity::Info => match d.code {
            Some(C7517_WAIT_INJECTED | C7519_ARRIVE_INJECTED) | None => "note",
            Some(_) => "warning",
        },
        Severity::Note => "note",
    }
}

/// A SARIF region for the byte range `[lo, hi)`.
fn region(src: &Source, (lo, hi): (u32, u32)) -> Value {
    let hi = hi.max(lo).min(src.text.len() as u32);
    let lo = lo.min(hi);
    let text = &src.text[lo as usize..hi as usize];
    json!({
        "startLine": src.line_of(lo),
        "startColumn": src.column_of(lo),
        "endLine": src.line_of(hi),
        "endColumn": src.column_of(hi),
        "charOffset": src.text[..lo as usize].chars().count(),
        "charLength": text.chars().count(),
        "snippet": { "text": text },
    })
}

/// A physical location in `file`, at the note's span or its line.
fn physical(
    file: &SarifFile,
    span: Option<(u32, u32)>,
    line: Option<u32>,
    col: Option<u32>,
) -> Value {
    let mut loc = Map::new();
    loc.insert("artifactLocation".into(), json!({ "uri": file.uri }));
    let range = file.source.and_then(|s| {
        span.filter(|&(lo, hi)| lo < hi && hi as usize <= s.text.len())
            .or_else(|| {
                let line = line.filter(|&l| l > 0)? as usize;
                match col {
                    Some(c) if c > 0 => s.offset_of(line, c as usize).map(|o| (o, o)),
                    _ => s.trimmed_line(line),
                }
            })
            .map(|r| region(s, r))
    });
    match (range, line.filter(|&l| l > 0)) {
        (Some(r), _) => {
            loc.insert("region".into(), r);
        }
        (None, Some(l)) => {
            let mut r = json!({ "startLine": l });
            if let Some(c) = col.filter(|&c| c > 0) {
                r["startColumn"] = json!(c);
            }
            loc.insert("region".into(), r);
        }
        (None, None) => {}
    }
    Value::Object(loc)
}

fn note_location(file: &SarifFile, n: &Note, id: Option<usize>) -> Value {
    let mut v = json!({
        "physicalLocation": physical(file, n.span, Some(n.line), None),
        "message": { "text": n.text },
    });
    if let Some(id) = id {
        v["id"] = json!(id);
    }
    v
}

fn result(file: &SarifFile, d: &Diagnostic, rule_index: Option<usize>) -> Value {
    let mut r = json!({
        "level": level(d),
        "message": { "text": d.message },
    });
    if let (Some(id), Some(k)) = (rule_id(d), rule_index) {
        r["ruleId"] = json!(id);
        r["ruleIndex"] = json!(k);
    }
    let mut loc = match &d.culprit {
        Some(n) => note_location(file, n, None),
        None => json!({ "physicalLocation": physical(file, None, d.line, d.col) }),
    };
    if let Some(f) = &d.function {
        loc["logicalLocations"] = json!([{ "name": f, "kind": "function" }]);
    }
    let mut related: Vec<Value> = d
        .related
        .iter()
        .enumerate()
        .map(|(k, n)| note_location(file, n, Some(k + 1)))
        .collect();
    let origin = d
        .culprit
        .as_ref()
        .zip(file.source)
        .and_then(|(n, s)| s.origin_of(n));
    if let Some(o) = origin {
        // The user's line is what a code-scanning view should open; the
        // PTX statement follows it as a related location.
        let mut user = json!({
            "physicalLocation": {
                "artifactLocation": { "uri": o.file.replace('\\', "/") },
                "region": { "startLine": o.line },
            },
            "message": { "text": "the source line that produced the PTX statement" },
        });
        if let Some(c) = o.column {
            user["physicalLocation"]["region"]["startColumn"] = json!(c);
        }
        if let Some(f) = &d.function {
            user["logicalLocations"] = json!([{ "name": f, "kind": "function" }]);
        }
        loc["id"] = json!(related.len() + 1);
        related.push(loc);
        r["locations"] = json!([user]);
    } else if !file.uri.is_empty() {
        r["locations"] = json!([loc]);
    }
    if !related.is_empty() {
        r["relatedLocations"] = json!(related);
    }
    let mut props = Map::new();
    if let Some(rule) = d.rule {
        props.insert("rule".into(), json!(rule));
    }
    if let Some(h) = &d.help {
        props.insert("help".into(), json!(h));
    }
    if let Some(n) = &d.culprit {
        if let Some(i) = &n.inst {
            props.insert("oriInstruction".into(), json!(i));
        }
    }
    if !props.is_empty() {
        r["properties"] = Value::Object(props);
    }
    r
}

/// One SARIF log with one run over `files`.
pub fn sarif_log(files: &[SarifFile], docs: RuleDocs) -> Value {
    let mut rules: Vec<String> = Vec::new();
    let mut results = Vec::new();
    let mut artifacts: Vec<Value> = Vec::new();
    for file in files {
        if !file.uri.is_empty() {
            artifacts.push(json!({ "location": { "uri": file.uri } }));
        }
        for d in file.diags {
            let index = rule_id(d).map(|id| match rules.iter().position(|r| *r == id) {
                Some(k) => k,
                None => {
                    rules.push(id);
                    rules.len() - 1
                }
            });
            results.push(result(file, d, index));
        }
    }
    let descriptors: Vec<Value> = rules
        .iter()
        .map(|id| {
            let text = docs(id).unwrap_or_else(|| format!("ori reports {id}"));
            let short = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or(id)
                .trim();
            json!({
                "id": id,
                "shortDescription": { "text": short },
                "fullDescription": { "text": text },
                "help": { "text": format!("{text}\n(`ori explain {id}`)") },
            })
        })
        .collect();
    json!({
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "ori",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": descriptors,
            }},
            "columnKind": "unicodeCodePoints",
            "artifacts": artifacts,
            "results": results,
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_points_at_the_culprit_statement() {
        let text = ".entry k()\n{\n\tadd.f32 %f5, %f1, %f2;\n}\n";
        let src = Source::new("k.ptx", text);
        let lo = text.find("add").unwrap() as u32;
        let mut d = Diagnostic::new(Severity::Info, Some(7517), "wait injected");
        d.culprit = Some(Note {
            line: 3,
            inst: None,
            span: Some((lo, lo + 22)),
            text: "reads".into(),
        });
        d.function = Some("k".into());
        d.rule = Some("R-wait-before-read");
        let diags = [d];
        let log = sarif_log(
            &[SarifFile {
                uri: "k.ptx".into(),
                source: Some(&src),
                diags: &diags,
            }],
            &|id| Some(format!("{id}: explained")),
        );
        let r = &log["runs"][0]["results"][0];
        assert_eq!(r["ruleId"], "C7517");
        assert_eq!(r["level"], "note");
        let region = &r["locations"][0]["physicalLocation"]["region"];
        assert_eq!(region["startLine"], 3);
        assert_eq!(region["startColumn"], 2);
        assert_eq!(region["endColumn"], 24);
        assert_eq!(region["snippet"]["text"], "add.f32 %f5, %f1, %f2;");
        assert_eq!(r["properties"]["rule"], "R-wait-before-read");
        assert_eq!(
            log["runs"][0]["tool"]["driver"]["rules"][0]["shortDescription"]["text"],
            "C7517: explained"
        );
    }
}
