//! Source positions and diagnostics for the PTX front end.
//!
//! Diagnostics are plain data ([`Diag`]) so that callers can test them, sort
//! them, or print them; [`Diag::render_ptxas`] prints one in exactly the
//! layout of NVIDIA's ptxas 13.0.88, which we checked by running the real tool
//! on malformed inputs:
//!
//! ```text
//! ptxas bad.ptx, line 8; fatal   : Parsing error near 'ret': syntax error
//! ptxas bad.ptx, line 6; error   : Unknown symbol '$L__BB0_9'
//! ptxas fatal   : Ptx assembly aborted due to errors
//! ```
//!
//! i.e. `ptxas FILE, line N; SEVERITY : MESSAGE` where the severity word is
//! left-justified in 8 columns (`"error   "`, `"fatal   "`, `"warning "`)
//! followed by `": "`. ptxas prints no column; we keep one in the data for
//! our own tooling (`render_with_col`). ptxas uses `fatal` for parse errors
//! (it stops there); we use [`Severity::Fatal`] for the same messages but keep
//! going after recovery so one run reports several problems.

use std::fmt;

/// A source range: byte offsets `lo..hi` into the file, and the 1-based
/// line / column (in characters) of `lo`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// Byte offset of the first byte of the range.
    pub lo: u32,
    /// Byte offset one past the last byte of the range (`lo` when empty).
    pub hi: u32,
    /// 1-based line of `lo`.
    pub line: u32,
    /// 1-based column of `lo`, counted in characters, not bytes.
    pub col: u32,
}

impl Span {
    /// The smallest span covering `self` and `other` (line/col from `self`).
    pub fn to(self, other: Span) -> Span {
        Span {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
            line: self.line,
            col: self.col,
        }
    }
}

/// Diagnostic severity: the project's one [`ori_ir::Severity`] (the front
/// end gives `Warning`, `Error` and `Fatal`).
pub use ori_ir::Severity;

/// One diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diag {
    /// The file name as given to the parser, printed as ptxas prints it
    /// (`ptxas FILE, line N; ...`).
    pub file: String,
    /// 1-based line of the offending construct; 0 for a diagnostic with no
    /// location.
    pub line: u32,
    /// 1-based column in characters (ptxas prints none; see
    /// [`Diag::render_with_col`]).
    pub col: u32,
    /// Warning, error or fatal (parse) error.
    pub severity: Severity,
    /// The message text in ptxas's wording, without location or severity,
    /// e.g. `Unknown symbol '$L__BB0_9'`.
    pub message: String,
}

impl Diag {
    /// A diagnostic in `file` at the line and column of `span`'s start.
    pub fn new(file: &str, span: Span, severity: Severity, message: impl Into<String>) -> Diag {
        Diag {
            file: file.to_string(),
            line: span.line,
            col: span.col,
            severity,
            message: message.into(),
        }
    }

    /// `true` for errors and fatal errors (not warnings).
    pub fn is_error(&self) -> bool {
        self.severity >= Severity::Error
    }

    /// ptxas layout: `ptxas FILE, line N; error   : MESSAGE`; a diagnostic
    /// at line 0 has no location (`ptxas fatal   : MESSAGE`).
    pub fn render_ptxas(&self) -> String {
        if self.line == 0 {
            return format!("ptxas {}: {}", self.severity.padded(), self.message);
        }
        format!(
            "ptxas {}, line {}; {}: {}",
            self.file,
            self.line,
            self.severity.padded(),
            self.message
        )
    }

    /// Like [`Diag::render_ptxas`] but with the column: `FILE:LINE:COL: ...`.
    pub fn render_with_col(&self) -> String {
        format!(
            "{}:{}:{}: {}: {}",
            self.file,
            self.line,
            self.col,
            self.severity.padded().trim_end(),
            self.message
        )
    }
}

impl fmt::Display for Diag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render_ptxas())
    }
}

impl std::error::Error for Diag {}

/// The trailer ptxas prints after any error: `ptxas fatal   : Ptx assembly aborted due to errors`.
pub const ABORT_LINE: &str = "ptxas fatal   : Ptx assembly aborted due to errors";
