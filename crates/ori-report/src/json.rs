//! `--message-format json`: one object per diagnostic, one per line, for
//! tools (`tests/schemas/ori-diagnostic.schema.json`).
//!
//! Every location is filled where one is known: `file`, `line` and
//! `column` name the PTX statement the diagnostic is about (the input
//! error's position, else the culprit's statement), and `source` names the
//! user's own file and line where the PTX carries `.loc` directives
//! (Triton's Python line, nvcc's C++ line under `-lineinfo`).

use crate::source::Source;
use ori_ir::{Diagnostic, Note, Origin};
use std::fmt::Write;

/// The version of the layout, the first field of every object; it changes
/// when a field changes meaning or goes away (adding a field does not
/// change it).
pub const JSON_VERSION: u32 = 1;

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

fn json_num(out: &mut String, v: Option<u32>) {
    match v {
        Some(v) => {
            let _ = write!(out, "{v}");
        }
        None => out.push_str("null"),
    }
}

fn json_origin(out: &mut String, o: Option<&Origin>) {
    let Some(o) = o else {
        out.push_str("null");
        return;
    };
    out.push_str("{\"file\":");
    json_str(out, &o.file);
    let _ = write!(out, ",\"line\":{},\"column\":", o.line);
    json_num(out, o.column);
    out.push_str(",\"inlined_at\":");
    json_origin(out, o.inlined_at.as_deref());
    out.push('}');
}

fn json_note(out: &mut String, n: &Note, src: Option<&Source>) {
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
    out.push_str(",\"source\":");
    json_origin(out, src.and_then(|s| s.origin_of(n)));
    out.push('}');
}

/// The PTX position a diagnostic is about: its own (an input error), else
/// its culprit's statement (line, and column where the source is known).
fn position(d: &Diagnostic, src: Option<&Source>) -> (Option<u32>, Option<u32>) {
    if d.line.is_some() {
        return (d.line, d.col);
    }
    let Some(n) = d.culprit.as_ref().filter(|n| n.line > 0) else {
        return (None, None);
    };
    let col = src.zip(n.span).map(|(s, (lo, _))| s.column_of(lo) as u32);
    (Some(n.line), col)
}

/// One JSON object (no trailing newline). `src` is the file the diagnostic
/// is about, when it was read: it names the file, the columns and the
/// user's source lines.
pub fn render_json(d: &Diagnostic, src: Option<&Source>) -> String {
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
    let (line, col) = position(d, src);
    let file = d
        .file
        .as_deref()
        .or_else(|| src.filter(|_| line.is_some()).map(|s| s.path));
    json_opt_str(&mut s, file);
    s.push_str(",\"line\":");
    json_num(&mut s, line);
    s.push_str(",\"column\":");
    json_num(&mut s, col);
    s.push_str(",\"function\":");
    json_opt_str(&mut s, d.function.as_deref());
    s.push_str(",\"culprit\":");
    match &d.culprit {
        Some(n) => json_note(&mut s, n, src),
        None => s.push_str("null"),
    }
    s.push_str(",\"related\":[");
    for (k, n) in d.related.iter().enumerate() {
        if k > 0 {
            s.push(',');
        }
        json_note(&mut s, n, src);
    }
    s.push_str("],\"help\":");
    json_opt_str(&mut s, d.help.as_deref());
    s.push_str(",\"rule\":");
    json_opt_str(&mut s, d.rule);
    s.push_str(",\"source\":");
    let culprit_origin = d
        .culprit
        .as_ref()
        .zip(src)
        .and_then(|(n, s)| s.origin_of(n));
    json_origin(&mut s, culprit_origin);
    s.push('}');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use ori_ir::{Severity, SourceMap};

    #[test]
    fn json_escapes_and_keeps_fields() {
        let mut d = Diagnostic::error_at("a\"b.ptx", 1, 2, "bad\nthing");
        d.help = Some("fix".into());
        let j = render_json(&d, None);
        assert!(j.contains("\"file\":\"a\\\"b.ptx\""));
        assert!(j.contains("\"message\":\"bad\\nthing\""));
        assert!(j.contains("\"line\":1,\"column\":2"));
        assert!(j.ends_with("\"help\":\"fix\",\"rule\":null,\"source\":null}"));
        d.rule = Some("R-wait-before-read");
        assert!(render_json(&d, None).contains("\"rule\":\"R-wait-before-read\""));
        assert!(j.starts_with("{\"version\":1,\"severity\":\"error\""));
    }

    #[test]
    fn a_culprit_names_the_file_line_column_and_user_source() {
        let text = "\n\n  add.f32 %f5, %f1, %f2;\n";
        let lo = text.find("add").unwrap() as u32;
        let mut map = SourceMap::default();
        map.push(
            0,
            text.len() as u32,
            Origin {
                file: "k.py".into(),
                line: 42,
                column: Some(7),
                inlined_at: None,
            },
        );
        let src = Source::new("k.ptx", text).with_origins(map);
        let mut d = Diagnostic::new(Severity::Info, Some(7517), "m");
        d.culprit = Some(Note {
            line: 3,
            inst: None,
            span: Some((lo, lo + 22)),
            text: "reads".into(),
        });
        let j = render_json(&d, Some(&src));
        assert!(
            j.contains("\"file\":\"k.ptx\",\"line\":3,\"column\":3"),
            "{j}"
        );
        assert!(
            j.ends_with(
                "\"source\":{\"file\":\"k.py\",\"line\":42,\"column\":7,\"inlined_at\":null}}"
            ),
            "{j}"
        );
    }
}
