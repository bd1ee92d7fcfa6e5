//! The fix-it edits statements, not lines (issue 15): whatever the layout of
//! statements, lines and comments, its output is valid PTX that ori compiles
//! with nothing left to inject. Each corpus case ptxas accepts is rewritten
//! three ways, keeping its meaning: every function body on one line, each
//! operand list split over lines, and a `/* */` comment after every comma.
//! Each layout must compile to the same codes as the original, and its
//! fix-it must need no further injection (and be serialized only for what no
//! rewrite removes, C7509 and C7512), as in `fixit_idempotence.rs`.

mod common;

/// The source without `//` comments (a `// oracle-flags:` header is read
/// from the original).
fn strip_line_comments(src: &str) -> String {
    src.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every function body on one line.
fn one_line_bodies(src: &str) -> String {
    let mut out = String::new();
    let mut depth = 0i32;
    for c in strip_line_comments(src).chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            '\n' if depth > 0 => {
                out.push(' ');
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// A line break after every comma inside function bodies.
fn split_operands(src: &str) -> String {
    strip_line_comments(src).replace(", ", ",\n        ")
}

/// A block comment after every comma.
fn comments_between_tokens(src: &str) -> String {
    strip_line_comments(src).replace(", ", ", /* x */ ")
}

/// A named rewrite of a source's layout.
type Layout = (&'static str, fn(&str) -> String);

fn codes(c: &ori::Compilation) -> Vec<Option<u32>> {
    c.diags
        .iter()
        .filter(|d| ori::ir::render::ptxas_prints(d))
        .map(|d| d.code)
        .collect()
}

#[test]
fn fixit_is_valid_for_any_layout() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for path in common::corpus_cases() {
        let exp = std::fs::read_to_string(path.with_extension("expected")).unwrap_or_default();
        if !exp.contains("exit: 0") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let src = std::fs::read_to_string(&path).unwrap();
        let opts = common::case_options(&src);
        let original = ori::compile_ptx(&name, &src, &opts);
        if original.module.is_none() {
            continue;
        }
        let layouts: [Layout; 3] = [
            ("one line", one_line_bodies),
            ("split operands", split_operands),
            ("comments", comments_between_tokens),
        ];
        for (what, layout) in layouts {
            let text = layout(&src);
            let c = ori::compile_ptx(&name, &text, &opts);
            if c.module.is_none() || codes(&c) != codes(&original) {
                bad.push(format!(
                    "{name} ({what}): compiles to {:?}, the original to {:?}",
                    codes(&c),
                    codes(&original)
                ));
                continue;
            }
            let Some(fixed) = ori::fixit_ptx(&name, &text, &c) else {
                bad.push(format!("{name} ({what}): no fix-it"));
                continue;
            };
            checked += 1;
            let again = ori::compile_ptx(&name, &fixed, &opts);
            if again.module.is_none() {
                bad.push(format!(
                    "{name} ({what}): the fix-it does not compile: {:?}",
                    again.diags.first()
                ));
                continue;
            }
            for code in codes(&again) {
                if !matches!(code, Some(7509 | 7512)) {
                    bad.push(format!("{name} ({what}): the fix-it still gets C{code:?}"));
                }
            }
        }
    }
    assert!(checked >= 900, "only {checked} layouts");
    assert!(
        bad.is_empty(),
        "{} problems:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
