//! Human diagnostics, as rustc shows them.
//!
//! A kernel author reading "warpgroup.wait is injected in around line 812"
//! wants to see line 812 of their PTX, not ori's IR. This renderer prints the
//! source statements a diagnostic names, with a primary caret span under the
//! culprit and a secondary span under the wgmma it conflicts with, then the
//! fix and the phase-87 rule that decided (`ori explain` tells more). Spans
//! that lie far apart are shown as separate excerpts of the same file.
//!
//! Where the PTX names the user's source (`.loc`), the line of Python or C++
//! that produced the culprit is shown under it, read from disk when the file
//! is there, else named.
//!
//! Without a source (IR-text input, whose instructions have no spans) the
//! culprit's IR text is printed instead, as a note.

use crate::source::Source;
use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use ori_ir::{Diagnostic, Note, Severity};

/// Whether to color the output (ANSI escapes) or not.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Style {
    /// No escapes: pipes, files, snapshots.
    Plain,
    /// ANSI colors, for a terminal.
    Color,
}

/// Two annotated statements at most this many lines apart share one excerpt.
const JOIN_LINES: usize = 6;

/// One labelled span of the source.
struct Mark<'d> {
    range: (u32, u32),
    primary: bool,
    label: &'d str,
}

/// A note's span: the statement's own, else its whole line.
fn note_range(src: &Source, n: &Note) -> Option<(u32, u32)> {
    n.span
        .filter(|&(lo, hi)| lo < hi && hi as usize <= src.text.len())
        .or_else(|| src.trimmed_line(n.line as usize))
}

/// The span of an input error at `line:col`: the token there (at least one
/// character), or the line when the column is unknown.
fn error_range(src: &Source, line: u32, col: Option<u32>) -> Option<(u32, u32)> {
    let Some(col) = col.filter(|&c| c > 0) else {
        return src.trimmed_line(line as usize);
    };
    let (_, line_hi) = src.line_range(line as usize)?;
    let lo = src.offset_of(line as usize, col as usize)?;
    let rest = &src.text[lo as usize..line_hi as usize];
    let word = rest
        .char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || "_.%$".contains(c)))
        .map_or(rest.len(), |(k, _)| k);
    let len = if word > 0 {
        word
    } else {
        rest.chars().next().map_or(0, char::len_utf8)
    };
    Some((lo, lo + len as u32))
}

/// The marks of `d` on `src`, in source order.
fn marks<'d>(d: &'d Diagnostic, src: &Source) -> Vec<Mark<'d>> {
    let mut out = Vec::new();
    match &d.culprit {
        Some(n) => out.extend(note_range(src, n).map(|range| Mark {
            range,
            primary: true,
            label: &n.text,
        })),
        None => {
            if let Some(line) = d.line.filter(|&l| l > 0) {
                out.extend(error_range(src, line, d.col).map(|range| Mark {
                    range,
                    primary: true,
                    label: "",
                }));
            }
        }
    }
    for n in &d.related {
        out.extend(note_range(src, n).map(|range| Mark {
            range,
            primary: false,
            label: &n.text,
        }));
    }
    out.sort_by_key(|m| m.range);
    out
}

/// Excerpts of `src` holding `marks`: marks close together share one.
fn excerpts<'a>(
    src: &'a Source,
    marks: &[Mark<'a>],
) -> Vec<Snippet<'a, annotate_snippets::Annotation<'a>>> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < marks.len() {
        let first_line = src.line_of(marks[k].range.0);
        let mut last_line = src.line_of(marks[k].range.1.saturating_sub(1).max(marks[k].range.0));
        let mut end = k + 1;
        while end < marks.len() && src.line_of(marks[end].range.0) <= last_line + JOIN_LINES {
            let m = &marks[end];
            last_line = last_line.max(src.line_of(m.range.1.saturating_sub(1).max(m.range.0)));
            end += 1;
        }
        let lo = src.line_range(first_line).map_or(0, |r| r.0);
        let hi = src
            .line_range(last_line)
            .map_or(src.text.len() as u32, |r| r.1);
        let mut snippet = Snippet::source(&src.text[lo as usize..hi as usize])
            .line_start(first_line)
            .path(src.path);
        for m in &marks[k..end] {
            let kind = if m.primary {
                AnnotationKind::Primary
            } else {
                AnnotationKind::Context
            };
            let span = (m.range.0 - lo) as usize..(m.range.1.min(hi) - lo) as usize;
            snippet = snippet.annotation(kind.span(span).label(m.label));
        }
        out.push(snippet);
        k = end;
    }
    out
}

fn level(s: Severity) -> Level<'static> {
    match s {
        Severity::Info => Level::INFO,
        Severity::Warning => Level::WARNING,
        Severity::Error => Level::ERROR,
        Severity::Fatal => Level::ERROR.with_name(Some("fatal")),
        Severity::Note => Level::NOTE,
    }
}

/// `file:line[:column]` of a source position.
fn at(o: &ori_ir::Origin) -> String {
    match o.column {
        Some(c) => format!("{}:{}:{c}", o.file, o.line),
        None => format!("{}:{}", o.file, o.line),
    }
}

/// The user's source line a `.loc` names, read from disk where the file
/// is there (the kernel author's own machine); trimmed at the end.
fn user_line(o: &ori_ir::Origin) -> Option<String> {
    let text = std::fs::read_to_string(&o.file).ok()?;
    let line = text.lines().nth(o.line.checked_sub(1)? as usize)?;
    let line = line.trim_end();
    (!line.trim().is_empty()).then(|| line.to_string())
}

/// The notes under a diagnostic: where the user's line is when it could
/// not be shown, the inlining call sites, the instructions as ori's IR has
/// them when there is no source to point into, and the function.
fn footers(
    d: &Diagnostic,
    origin: Option<&ori_ir::Origin>,
    shown: bool,
    no_marks: bool,
) -> Vec<String> {
    let mut footers = Vec::new();
    if let Some(o) = origin {
        if !shown {
            footers.push(format!("from {}", at(o)));
        }
        let mut call = o.inlined_at.as_deref();
        while let Some(c) = call {
            footers.push(format!("inlined at {}", at(c)));
            call = c.inlined_at.as_deref();
        }
    }
    if no_marks {
        for (n, what) in d
            .culprit
            .iter()
            .map(|n| (n, "culprit"))
            .chain(d.related.iter().map(|n| (n, "related")))
        {
            let inst = n
                .inst
                .as_deref()
                .map(|i| format!(": {i}"))
                .unwrap_or_default();
            footers.push(format!("{what} at line {}: {}{inst}", n.line, n.text));
        }
    }
    if let Some(f) = &d.function {
        if !d.message.contains(&format!("'{f}'")) {
            footers.push(format!("in function '{f}'"));
        }
    }
    footers
}

/// Render one diagnostic. `src` is the PTX file the diagnostic is about
/// (`None` for IR-text input, or a diagnostic tied to no file).
pub fn render_human(d: &Diagnostic, src: Option<&Source>, style: Style) -> String {
    let code = d.code.map(|c| format!("C{c}"));
    let mut title = level(d.severity).primary_title(d.message.as_str());
    if let Some(c) = &code {
        title = title.id(c.as_str());
    }
    let mut group = Group::with_title(title);
    let marks = src.map(|s| marks(d, s)).unwrap_or_default();
    match src {
        Some(s) if !marks.is_empty() => {
            for e in excerpts(s, &marks) {
                group = group.element(e);
            }
        }
        _ => {
            // A position without source to show: `--> file:line:col`.
            let path = src.map(|s| s.path).or(d.file.as_deref());
            if let (Some(p), Some(l)) = (path, d.line.filter(|&l| l > 0)) {
                let mut origin = Origin::path(p).line(l as usize);
                if let Some(c) = d.col {
                    origin = origin.char_column(c as usize);
                }
                group = group.element(origin);
            }
        }
    }
    let origin = d
        .culprit
        .as_ref()
        .zip(src)
        .and_then(|(n, s)| s.origin_of(n));
    let origin_text = origin.and_then(|o| user_line(o).map(|t| (o, t)));
    if let Some((o, text)) = &origin_text {
        // From the `.loc`'s column (a character count) to the line's end.
        let from = o
            .column
            .and_then(|c| text.char_indices().nth(c.saturating_sub(1) as usize))
            .map_or(0, |(k, _)| k);
        let snippet = Snippet::source(text.as_str())
            .line_start(o.line as usize)
            .path(o.file.as_str())
            .annotation(
                AnnotationKind::Context
                    .span(from..text.len())
                    .label("the source line that produced it"),
            );
        group = group.element(snippet);
    }
    let footers = footers(d, origin, origin_text.is_some(), marks.is_empty());
    for f in &footers {
        group = group.element(Level::NOTE.message(f.as_str()));
    }
    if let Some(h) = &d.help {
        group = group.element(Level::HELP.message(h.as_ref()));
    }
    let rule = d
        .rule
        .map(|r| format!("decided by rule {r} (`ori explain {r}` says why)"));
    if let Some(r) = &rule {
        group = group.element(Level::NOTE.message(r.as_str()));
    }
    let renderer = match style {
        Style::Plain => Renderer::plain(),
        Style::Color => Renderer::styled(),
    };
    renderer.render(&[group])
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: &str = "\
.visible .entry k()
{
\twgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 1, 1, 1, 0, 0;
\tadd.f32 %f5, %f1, %f2;
}
";

    fn stmt(text: &str) -> (u32, u32) {
        let lo = K.find(text).unwrap() as u32;
        (lo, lo + text.len() as u32)
    }

    fn advisory() -> Diagnostic {
        let mut d = Diagnostic::new(
            Severity::Info,
            Some(7517),
            "warpgroup.wait is injected in around line 4 by compiler to allow use of registers defined by GMMA in function 'k'",
        );
        d.function = Some("k".into());
        d.culprit = Some(Note {
            line: 4,
            inst: Some("#3 add.f32 %f5, %f1, %f2".into()),
            span: Some(stmt("add.f32 %f5, %f1, %f2;")),
            text: "reads an accumulator of a wgmma in flight".into(),
        });
        d.related.push(Note {
            line: 3,
            inst: None,
            span: Some(stmt("wgmma.mma_async")),
            text: "in flight from this wgmma".into(),
        });
        d.help = Some("put wgmma.commit_group + wgmma.wait_group before it".into());
        d.rule = Some("R-wait-before-read");
        d
    }

    /// The user's line: read from disk and shown under the PTX where the
    /// file is there, named where it is not, and every inlining call site.
    #[test]
    fn shows_the_users_source_line_the_loc_names() {
        let dir = std::env::temp_dir().join(format!("ori-human-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let py = dir.join("k.py");
        std::fs::write(&py, "import triton\n\n    acc += tl.dot(a, b)\n").unwrap();
        let origin = |file: &str, line| ori_ir::Origin {
            file: file.into(),
            line,
            column: Some(5),
            inlined_at: None,
        };
        let mut map = ori_ir::SourceMap::default();
        let mut o = origin(py.to_str().unwrap(), 3);
        o.inlined_at = Some(Box::new(origin("/nowhere/caller.py", 40)));
        map.push(0, K.len() as u32, o);
        let src = Source::new("k.ptx", K).with_origins(map);
        let out = render_human(&advisory(), Some(&src), Style::Plain);
        assert!(out.contains("k.py:3:5"), "{out}");
        assert!(out.contains("acc += tl.dot(a, b)"), "{out}");
        assert!(out.contains("inlined at /nowhere/caller.py:40:5"), "{out}");
        let mut map = ori_ir::SourceMap::default();
        map.push(0, K.len() as u32, origin("/nowhere/k.py", 9));
        let src = Source::new("k.ptx", K).with_origins(map);
        let out = render_human(&advisory(), Some(&src), Style::Plain);
        assert!(out.contains("from /nowhere/k.py:9:5"), "{out}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn points_at_the_source_with_primary_and_secondary_spans() {
        let src = Source::new("k.ptx", K);
        let out = render_human(&advisory(), Some(&src), Style::Plain);
        assert!(
            out.starts_with("info[C7517]: warpgroup.wait is injected"),
            "{out}"
        );
        assert!(out.contains("--> k.ptx:4:2"), "{out}");
        assert!(out.contains("4 |     add.f32 %f5, %f1, %f2;"), "{out}");
        assert!(
            out.contains("^^^^^^^^^^^^^^^^^^^^^^ reads an accumulator"),
            "{out}"
        );
        assert!(
            out.contains("--------------- in flight from this wgmma"),
            "{out}"
        );
        assert!(out.contains("help: put wgmma.commit_group"), "{out}");
        assert!(out.contains("`ori explain R-wait-before-read`"), "{out}");
        // The source replaces ori's IR text.
        assert!(!out.contains("#3 add.f32"), "{out}");
        assert!(!out.contains('\x1b'));
        assert!(render_human(&advisory(), Some(&src), Style::Color).contains('\x1b'));
    }

    #[test]
    fn without_source_names_the_ir_instruction() {
        let out = render_human(&advisory(), None, Style::Plain);
        assert!(out.contains("culprit at line 4: reads an accumulator of a wgmma in flight: #3 add.f32 %f5, %f1, %f2"), "{out}");
    }

    #[test]
    fn input_error_points_at_the_token() {
        let src = Source::new("k.ptx", K);
        let d = Diagnostic::error_at("k.ptx", 4, 2, "Unknown symbol 'x'");
        let out = render_human(&d, Some(&src), Style::Plain);
        assert!(out.starts_with("error: Unknown symbol 'x'"), "{out}");
        assert!(out.contains("--> k.ptx:4:2"), "{out}");
        assert!(out.contains("^^^^^^^"), "{out}");
        assert!(!out.contains("^^^^^^^^"), "{out}");
    }
}
