//! Diagnostics as data: what happened, where, and to which instruction.
//!
//! The passes never format output; they produce `Diagnostic` values carrying
//! ptxas's exact message text plus what ptxas never says (the culprit
//! instruction, the register involved, the wgmma it conflicts with, a
//! suggested fix). Renderers for ptxas's layout, a human layout and JSON
//! live in `render`, apart from the data.

use std::borrow::Cow;

/// How serious a diagnostic is, least first; ptxas prints `info`,
/// `warning`, `error`, `fatal`. The one severity of the whole project: the
/// front end's diagnostics, the passes', and the oracle's parsed ptxas
/// messages all use it.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Severity {
    /// ori's own remark, with no ptxas counterpart: the ptxas renderer
    /// prints nothing for it, so `--message-format ptxas` stays diffable.
    Note,
    /// `ptxas info    :`
    Info,
    /// `ptxas warning :`
    Warning,
    /// `ptxas ... error   :`
    Error,
    /// `ptxas ... fatal   :` (ptxas stops; ori reports and goes on)
    Fatal,
}

impl Severity {
    /// The word ptxas prints.
    pub fn word(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
            Severity::Fatal => "fatal",
            Severity::Note => "note",
        }
    }

    /// The word as ptxas prints it, padded to 8 columns (`error   `).
    pub fn padded(self) -> &'static str {
        match self {
            Severity::Info => "info    ",
            Severity::Warning => "warning ",
            Severity::Error => "error   ",
            Severity::Fatal => "fatal   ",
            Severity::Note => "note    ",
        }
    }

    /// The severity ptxas means by `word` (`None` for `note`, which ptxas
    /// never prints, and anything else).
    pub fn from_ptxas_word(word: &str) -> Option<Severity> {
        match word {
            "info" => Some(Severity::Info),
            "warning" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            "fatal" => Some(Severity::Fatal),
            _ => None,
        }
    }

    /// Whether ptxas stops or fails on it (error or fatal).
    pub fn is_error(self) -> bool {
        self >= Severity::Error
    }
}

/// A related source position with an explanation.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Note {
    /// PTX line (0 when unknown).
    pub line: u32,
    /// The instruction's text, if any.
    pub inst: Option<String>,
    /// The statement's byte range `[lo, hi)` in the source the diagnostic is
    /// about (`InstData::src`), so renderers can point at the source
    /// instead of printing ori's IR; `None` for IR-text input.
    pub span: Option<(u32, u32)>,
    /// What this position has to do with the diagnostic (most are fixed
    /// phrases: borrowed, not allocated per diagnostic).
    pub text: Cow<'static, str>,
}

/// One diagnostic.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Diagnostic {
    /// Severity.
    pub severity: Severity,
    /// The ptxas message code (`7517` for C7517), if it has one.
    pub code: Option<u32>,
    /// Message text exactly as ptxas words it (without prefix or code).
    pub message: String,
    /// Input file, when the diagnostic is tied to one.
    pub file: Option<String>,
    /// Line ptxas would name in its `FILE, line N;` prefix (errors only).
    pub line: Option<u32>,
    /// Column, where known (ptxas never prints it; ori's human form does).
    pub col: Option<u32>,
    /// Function the message is about.
    pub function: Option<String>,
    /// The instruction responsible (ori's addition).
    pub culprit: Option<Note>,
    /// Other positions involved (ori's addition).
    pub related: Vec<Note>,
    /// Suggested fix (ori's addition); a fixed phrase of ori's, or made for
    /// this diagnostic.
    pub help: Option<Cow<'static, str>>,
    /// The rule that made the decision (`R-wait-before-read`; phase 87's
    /// rules, see `ori explain`), where one did.
    pub rule: Option<&'static str>,
}

impl Diagnostic {
    /// A diagnostic with only severity, code and message set.
    pub fn new(severity: Severity, code: Option<u32>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            code,
            message: message.into(),
            file: None,
            line: None,
            col: None,
            function: None,
            culprit: None,
            related: Vec::new(),
            help: None,
            rule: None,
        }
    }

    /// An input error at a file position.
    pub fn error_at(file: &str, line: u32, col: u32, message: impl Into<String>) -> Self {
        let mut d = Diagnostic::new(Severity::Error, None, message);
        d.file = Some(file.to_string());
        d.line = Some(line);
        d.col = Some(col);
        d
    }
}
