//! Renderers of diagnostics that need no source text: ptxas's layout and JSON.
//!
//! `ptxas` reproduces what ptxas 13.0.88 prints byte for byte, so the two can
//! be diffed; `json` is one object per line for tools. The human layout and
//! SARIF, which show the user's source, are in the `ori-report` crate.

use crate::diagnostics::{Diagnostic, Severity};
use std::fmt::Write;

/// Whether ptxas prints a counterpart of `d` (ori's own notes have none, and
/// the ptxas layout leaves them out).
pub fn ptxas_prints(d: &Diagnostic) -> bool {
    d.severity != Severity::Note
}

/// ptxas's layout: `ptxas info    : (C7517) ...`, `ptxas warning : ...`,
/// `ptxas FILE, line N; error   : ...`.
pub fn render_ptxas(d: &Diagnostic) -> String {
    let code = d.code.map(|c| format!("(C{c}) ")).unwrap_or_default();
    let word = match d.severity {
        Severity::Info => "info    ",
        Severity::Warning => "warning ",
        Severity::Error => "error   ",
        Severity::Fatal => "fatal   ",
        Severity::Note => "note    ",
    };
    match (&d.file, d.line) {
        (Some(file), Some(line)) => {
            format!("ptxas {file}, line {line}; {word}: {code}{}", d.message)
        }
        _ => format!("ptxas {word}: {code}{}", d.message),
    }
}

fn json_str(out: &mut String, v: &str) {
    out.push('"');
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn json_opt_str(out: &mut String, v: Option<&str>) {
    match v {
        Some(v) => json_str(out, v),
        None => out.push_str("null"),
    }
}

fn json_note(out: &mut String, n: &crate::diagnostics::Note) {
    let _ = write!(out, "{{\"line\":{},\"span\":", n.line);
    match n.span {
        Some((lo, hi)) => {
            let _ = write!(out, "[{lo},{hi}]");
        }
        None => out.push_str("null"),
    }
    out.push_str(",\"inst\":");
    json_opt_str(out, n.inst.as_deref());
    out.push_str(",\"text\":");
    json_str(out, &n.text);
    out.push('}');
}

/// The version of the JSON layout, the first field of every object; it
/// changes when a field changes meaning or goes away (adding a field does
/// not change it). Schema: `tests/schemas/ori-diagnostic.schema.json`.
pub const JSON_VERSION: u32 = 1;

/// One JSON object (no trailing newline), as
/// `tests/schemas/ori-diagnostic.schema.json` describes it.
pub fn render_json(d: &Diagnostic) -> String {
    let mut s = format!("{{\"version\":{JSON_VERSION},\"severity\":");
    json_str(&mut s, d.severity.word());
    s.push_str(",\"code\":");
    match d.code {
        Some(c) => {
            let _ = write!(s, "\"C{c}\"");
        }
        None => s.push_str("null"),
    }
    s.push_str(",\"message\":");
    json_str(&mut s, &d.message);
    s.push_str(",\"file\":");
    json_opt_str(&mut s, d.file.as_deref());
    let num = |v: Option<u32>| v.map_or("null".to_string(), |v| v.to_string());
    let _ = write!(s, ",\"line\":{},\"column\":{}", num(d.line), num(d.col));
    s.push_str(",\"function\":");
    json_opt_str(&mut s, d.function.as_deref());
    s.push_str(",\"culprit\":");
    match &d.culprit {
        Some(n) => json_note(&mut s, n),
        None => s.push_str("null"),
    }
    s.push_str(",\"related\":[");
    for (k, n) in d.related.iter().enumerate() {
        if k > 0 {
            s.push(',');
        }
        json_note(&mut s, n);
    }
    s.push_str("],\"help\":");
    json_opt_str(&mut s, d.help.as_deref());
    s.push_str(",\"rule\":");
    json_opt_str(&mut s, d.rule);
    s.push('}');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptxas_layout_matches_the_oracle() {
        let mut d = Diagnostic::new(
            Severity::Info,
            Some(7517),
            "warpgroup.wait is injected in around line 17 by compiler to allow use of registers defined by GMMA in function 'k'",
        );
        d.function = Some("k".into());
        // Recorded from ptxas 13.0.88 on the corpus.
        assert_eq!(
            render_ptxas(&d),
            "ptxas info    : (C7517) warpgroup.wait is injected in around line 17 by compiler to allow use of registers defined by GMMA in function 'k'"
        );
        let e = Diagnostic::error_at("k.ptx", 3, 5, "Unknown symbol 'x'");
        assert_eq!(
            render_ptxas(&e),
            "ptxas k.ptx, line 3; error   : Unknown symbol 'x'"
        );
    }

    #[test]
    fn json_escapes_and_keeps_fields() {
        let mut d = Diagnostic::error_at("a\"b.ptx", 1, 2, "bad\nthing");
        d.help = Some("fix".into());
        let j = render_json(&d);
        assert!(j.contains("\"file\":\"a\\\"b.ptx\""));
        assert!(j.contains("\"message\":\"bad\\nthing\""));
        assert!(j.contains("\"line\":1,\"column\":2"));
        assert!(j.ends_with("\"help\":\"fix\",\"rule\":null}"));
        d.rule = Some("R-wait-before-read");
        assert!(render_json(&d).ends_with("\"rule\":\"R-wait-before-read\"}"));
        assert!(j.starts_with("{\"version\":1,\"severity\":\"error\""));
    }
}
