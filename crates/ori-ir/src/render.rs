//! ptxas's layout of diagnostics, the one renderer that needs no source text.
//!
//! It reproduces what ptxas 13.0.88 prints byte for byte, so the two can be
//! diffed. JSON, the human layout and SARIF, which read the source text,
//! are in the `ori-report` crate.

use crate::diagnostics::{Diagnostic, Severity};

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
}
