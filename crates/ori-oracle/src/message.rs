//! ptxas diagnostic lines.
//!
//! Forms seen from ptxas 13.0.88:
//!
//! ```text
//! ptxas info    : (C7517) warpgroup.wait is injected in around line 16 by compiler to allow use of registers defined by GMMA in function 'k'
//! ptxas info    : (C7509) Potential Performance Loss: wgmma.mma_async instructions are serialized due to the presence of Extern calls in the function 'k'
//! ptxas e.ptx, line 15; error   : Unknown modifier '.m64n9k16'
//! ptxas fatal   : Ptx assembly aborted due to errors
//! ```

/// `warpgroup.wait is injected in around line %d ...`
pub const C7517_WAIT_INJECTED: u32 = 7517;
/// `warpgroup.arrive is injected in around line %d ...`
pub const C7519_ARRIVE_INJECTED: u32 = 7519;
/// `GMMA sequence has too many active live ranges ...`
pub const C7407_TOO_MANY_LIVE_RANGES: u32 = 7407;
/// The advisory (injection) codes.
pub const ADVISORY_CODES: [u32; 2] = [C7517_WAIT_INJECTED, C7519_ARRIVE_INJECTED];
/// The serialization codes ("wgmma.mma_async instructions are serialized due to ...").
pub const SERIALIZATION_CODES: [u32; 10] =
    [7509, 7510, 7511, 7512, 7513, 7514, 7515, 7516, 7518, 7520];

/// A parsed message's severity: the project's one [`ori_ir::Severity`].
pub use ori_ir::Severity;

/// One parsed diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Msg {
    /// The severity word after `ptxas` (`info`, `warning`, `error`, `fatal`).
    pub severity: Severity,
    /// `Cnnnn` code, when the message carries one.
    pub code: Option<u32>,
    /// The function named by `function 'NAME'` in the text.
    pub function: Option<String>,
    /// The source line: the `FILE, line N;` location when present, else the
    /// `around line N` of an injection advisory.
    pub line: Option<u32>,
    /// The file of a `FILE, line N;` location.
    pub file: Option<String>,
    /// The message text after `severity :` and the `(Cnnnn) ` code.
    pub text: String,
}

impl Msg {
    /// `true` for a "wgmma.mma_async instructions are serialized" message
    /// (its code is one of [`SERIALIZATION_CODES`]).
    pub fn is_serialization(&self) -> bool {
        self.code.is_some_and(|c| SERIALIZATION_CODES.contains(&c))
    }
    /// `true` for an injection advisory, C7517 (wait) or C7519 (arrive).
    pub fn is_advisory(&self) -> bool {
        self.code.is_some_and(|c| ADVISORY_CODES.contains(&c))
    }
}

/// Parses one ptxas output line. Returns `None` for lines that are not
/// diagnostics (blank lines, `ptxas info : Used N registers` is still a
/// diagnostic and is parsed).
pub fn parse_message(line: &str) -> Option<Msg> {
    let line = line.trim();
    let rest = line
        .strip_prefix("ptxas")
        .map(str::trim_start)
        .unwrap_or(line);
    // Optional location `FILE, line N;`
    let (file, loc_line, rest) = match split_location(rest) {
        Some((f, n, r)) => (Some(f.to_string()), Some(n), r),
        None => (None, None, rest),
    };
    // Severity word, padded, then ':'.
    let colon = rest.find(':')?;
    let sev = Severity::from_ptxas_word(rest[..colon].trim())?;
    let mut text = rest[colon + 1..].trim();
    let mut code = None;
    if let Some(r) = text.strip_prefix("(C") {
        if let Some(end) = r.find(')') {
            if let Ok(n) = r[..end].parse::<u32>() {
                code = Some(n);
                text = r[end + 1..].trim_start();
            }
        }
    }
    let function = quoted_after(text, "function '");
    let line_no = loc_line.or_else(|| number_after(text, "around line "));
    Some(Msg {
        severity: sev,
        code,
        function,
        line: line_no,
        file,
        text: text.to_string(),
    })
}

fn split_location(s: &str) -> Option<(&str, u32, &str)> {
    let semi = s.find(';')?;
    let head = &s[..semi];
    let comma = head.rfind(", line ")?;
    let n = head[comma + ", line ".len()..].trim().parse().ok()?;
    Some((&head[..comma], n, s[semi + 1..].trim_start()))
}

fn quoted_after(text: &str, key: &str) -> Option<String> {
    let start = text.rfind(key)? + key.len();
    let end = text[start..].find('\'')?;
    Some(text[start..start + end].to_string())
}

fn number_after(text: &str, key: &str) -> Option<u32> {
    let start = text.find(key)? + key.len();
    let digits: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advisory() {
        let m = parse_message("ptxas info    : (C7517) warpgroup.wait is injected in around line 17 by compiler to allow use of registers defined by GMMA in function 'k'").unwrap();
        assert_eq!(m.severity, Severity::Info);
        assert_eq!(m.code, Some(7517));
        assert_eq!(m.function.as_deref(), Some("k"));
        assert_eq!(m.line, Some(17));
        assert!(m.is_advisory());
        assert!(!m.is_serialization());
        assert!(m.text.starts_with("warpgroup.wait is injected"));
    }

    #[test]
    fn serialization() {
        let m = parse_message("ptxas info    : (C7509) Potential Performance Loss: wgmma.mma_async instructions are serialized due to the presence of Extern calls in the function 'k'").unwrap();
        assert_eq!(m.code, Some(7509));
        assert_eq!(m.function.as_deref(), Some("k"));
        assert_eq!(m.line, None);
        assert!(m.is_serialization());
    }

    #[test]
    fn error_with_location() {
        let m =
            parse_message("ptxas e.ptx, line 15; error   : Unknown modifier '.m64n9k16'").unwrap();
        assert_eq!(m.severity, Severity::Error);
        assert_eq!(m.file.as_deref(), Some("e.ptx"));
        assert_eq!(m.line, Some(15));
        assert_eq!(m.code, None);
        assert_eq!(m.function, None);
        assert_eq!(m.text, "Unknown modifier '.m64n9k16'");
    }

    #[test]
    fn fatal_and_warning() {
        let m = parse_message("ptxas fatal   : Ptx assembly aborted due to errors").unwrap();
        assert_eq!(m.severity, Severity::Fatal);
        assert_eq!(m.text, "Ptx assembly aborted due to errors");
        let w = parse_message("ptxas k.ptx, line 3; warning : Unknown thing").unwrap();
        assert_eq!(w.severity, Severity::Warning);
        assert_eq!(w.line, Some(3));
        let w = parse_message("ptxas warning : (C7407) GMMA sequence has too many active live ranges (5), reduce it to bring it under (4)").unwrap();
        assert_eq!(w.code, Some(7407));
        assert_eq!(w.line, None);
    }

    #[test]
    fn not_messages() {
        assert_eq!(parse_message(""), None);
        assert_eq!(parse_message("HGMMA.64x8x16.F32 R24"), None);
        assert_eq!(parse_message("ptxas something odd"), None);
    }
}
