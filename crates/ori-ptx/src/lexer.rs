//! The PTX lexer: turns source text into [`Token`]s, on demand.
//!
//! It exists separately from the parser so that number syntax, comments and
//! dotted names are decided in one place. The parser pulls tokens from a
//! [`Lexer`] as it needs them and drops those of finished statements, so a
//! kernel of a million instructions never holds its ten million tokens at
//! once (it did: 800 bytes of tokens per instruction, the front end's peak).
//! Tokens are `Copy`: a string literal's contents are read from its span
//! ([`Token::str_contents`]). Token choices that matter:
//!
//! * `.name` (with optional `::seg` parts, e.g. `.shared::cta`,
//!   `.L2::cache_hint`, `.L2::256B`) is one [`TokKind::Dotted`] token; both
//!   directives (`.reg`) and instruction modifiers (`.u32`) use it.
//! * Identifiers start with a letter, `_`, `$` or `%` and go on with letters,
//!   digits, `_` and `$`. `%tid.x` is therefore `%tid` + `.x`; the parser joins
//!   them using [`Token::ws_before`].
//! * Numbers mirror ptxas's lexer, verified with ptxas 13.0.88: `0x1F`, `0x1FU`,
//!   `0b101`, octal `017`, decimal `42`/`42U`, `0f3F800000` (exactly 8 hex
//!   digits), `0d3FF0000000000000` (exactly 16), decimal floats `1.5`, `2e3`.
//!   Malformed forms are split the way ptxas splits them: `0x;` is `0` then
//!   `x` (ptxas: "Parsing error near 'x'"), `08` is `0` then `8`, `0f3F80`
//!   is `0` then identifier `f3F80`.
//! * Unknown characters become [`TokKind::Punct`] so the parser reports
//!   "Parsing error near '#': syntax error" like ptxas; an unterminated
//!   string yields a lone `"` punct (ptxas: near '"'); an unterminated block
//!   comment is reported here as "Parsing error near '': unexpected EOF while
//!   scanning" (ptxas's wording, at the line where the comment opens).
//!
//! The lexer never panics: all indexing goes through `get`.

use crate::diag::Span;

/// A token kind; the token's text is `&src[span.lo..span.hi]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TokKind {
    /// A name: a letter, `_`, `$` or `%`, then letters, digits, `_` and `$`
    /// (`ld`, `%r12`, `$L__BB0_2`; `%tid.x` is `%tid` then a `Dotted` `.x`).
    Ident,
    /// `.name` / `.name::seg`.
    Dotted,
    /// Integer literal; `overflow` if it does not fit in 64 bits.
    Int {
        /// The literal's value (hex, binary, octal or decimal); not
        /// meaningful when `overflow` is set.
        value: u64,
        /// The literal has a `U` suffix (`42U`, `0x1FU`).
        unsigned: bool,
        /// The digits do not fit in a `u64`.
        overflow: bool,
    },
    /// `0fXXXXXXXX`
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX`
    F64(u64),
    /// Decimal float such as `1.5` (also used for `.version 8.5`).
    DecFloat(f64),
    /// String literal; its contents, without the quotes and with no escape
    /// interpreted, are [`Token::str_contents`].
    Str,
    /// Any other single character (`,;:(){}[]<>+-!@|=` and junk).
    Punct(char),
    /// End of the source: an empty span at its end, returned again on every
    /// later call.
    Eof,
}

/// One token with its position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Token {
    /// What the token is; its text is the source at `span`.
    pub kind: TokKind,
    /// Where the token is: its byte range and the line/column of its first
    /// character.
    pub span: Span,
    /// Whitespace or a comment precedes this token.
    pub ws_before: bool,
}

impl Token {
    /// The contents of a [`TokKind::Str`] token (between its quotes), read
    /// from the source it was lexed from.
    pub fn str_contents(self, src: &str) -> &str {
        src.get(self.span.lo as usize + 1..(self.span.hi as usize).saturating_sub(1))
            .unwrap_or("")
    }
}

/// A lexical error detected by the lexer itself.
#[derive(Clone, Debug, PartialEq)]
pub struct LexError {
    /// Where the error is (for an unterminated block comment, its `/*`).
    pub span: Span,
    /// The message in ptxas's wording, e.g. `Parsing error near '':
    /// unexpected EOF while scanning`.
    pub message: String,
}

impl std::fmt::Display for LexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.span.line, self.span.col, self.message
        )
    }
}

impl std::error::Error for LexError {}

/// Result of [`lex`]: tokens (always ending with [`TokKind::Eof`]) and errors.
#[derive(Clone, Debug, Default)]
pub struct Lexed {
    /// Every token of the source in order, the last one [`TokKind::Eof`].
    pub tokens: Vec<Token>,
    /// The lexical errors found, in source order (empty for well-formed text).
    pub errors: Vec<LexError>,
}

/// Character classes by byte, one load each in the lexer's hot loops:
/// bit 0, a name may start with it; bit 1, a name may go on with it.
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        let alpha = b.is_ascii_alphabetic() || b == b'_' || b == b'$';
        if alpha || b == b'%' {
            t[c] |= 1;
        }
        if alpha || b.is_ascii_digit() {
            t[c] |= 2;
        }
        c += 1;
    }
    t
};

/// A letter, `_`, `$` or `%`.
#[inline]
fn is_ident_start(c: u8) -> bool {
    CLASS[c as usize] & 1 != 0
}

/// A letter, a digit, `_` or `$`.
#[inline]
fn is_ident_cont(c: u8) -> bool {
    CLASS[c as usize] & 2 != 0
}

struct Cursor<'a> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    line: u32,
    col: u32,
}

impl<'a> Cursor<'a> {
    #[inline]
    fn peek(&self, k: usize) -> u8 {
        self.b.get(self.pos + k).copied().unwrap_or(0)
    }

    /// Advance one character (UTF-8 aware for line/column bookkeeping).
    #[inline]
    fn bump(&mut self) {
        let c = self.peek(0);
        if c == 0 && self.pos >= self.b.len() {
            return;
        }
        // ASCII is one byte (almost every byte of a PTX file); only a
        // multi-byte character needs decoding.
        let len = if c.is_ascii() {
            1
        } else {
            self.src
                .get(self.pos..)
                .and_then(|s| s.chars().next())
                .map(char::len_utf8)
                .unwrap_or(1)
        };
        self.pos += len;
        if c == b'\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
    }

    /// Advance over the bytes that satisfy `keep`, which must hold for no
    /// newline and no byte of a multi-byte character: the run stays on one
    /// line, one column a byte. The lexer's hot loops (names, modifiers,
    /// blanks) go through here instead of a [`Cursor::bump`] per byte.
    #[inline]
    fn skip_ascii_while(&mut self, keep: impl Fn(u8) -> bool) {
        let rest = self.b.get(self.pos..).unwrap_or(&[]);
        let n = rest.iter().take_while(|&&c| keep(c)).count();
        debug_assert!(rest[..n].iter().all(|&c| c.is_ascii() && c != b'\n'));
        self.pos += n;
        self.col += n as u32;
    }

    /// Advance to the end of the line (not past its newline): a `//`
    /// comment, which compiler output has on every few lines (`.loc`
    /// notes, `// begin inline asm`). One scan for the newline. The
    /// column is counted (in characters: every byte but UTF-8
    /// continuations) only for a comment that ends the file: before a
    /// newline it is reset at once.
    fn skip_line_comment(&mut self) {
        let rest = self.b.get(self.pos..).unwrap_or(&[]);
        let (n, last_line) = match find_newline(rest) {
            Some(n) => (n, false),
            None => (rest.len(), true),
        };
        if last_line {
            let chars = rest.iter().filter(|&&c| c & 0xC0 != 0x80).count();
            self.col += chars as u32;
        }
        self.pos += n;
    }

    /// Advance `n` bytes that are ASCII and no newline (every caller's:
    /// digits, number prefixes and suffixes, `::`, `/*` and `*/`): one
    /// column a byte, with no per-byte step. Numbers are in most
    /// statements (`.loc 1 78 13`, immediates, offsets).
    fn bump_n(&mut self, n: usize) {
        let n = n.min(self.b.len().saturating_sub(self.pos));
        debug_assert!(self.b[self.pos..self.pos + n]
            .iter()
            .all(|&c| c.is_ascii() && c != b'\n'));
        self.pos += n;
        self.col += n as u32;
    }

    fn at_end(&self) -> bool {
        self.pos >= self.b.len()
    }

    fn here(&self) -> Span {
        Span {
            lo: self.pos as u32,
            hi: self.pos as u32,
            line: self.line,
            col: self.col,
        }
    }
}

/// Where the first newline of `hay` is (see [`find_byte`]).
fn find_newline(hay: &[u8]) -> Option<usize> {
    find_byte(b'\n', hay)
}

/// Where the first `needle` of `hay` is. On x86_64 with SSE2, which every
/// x86_64 processor has: memchr's generic entry point asks the processor
/// for AVX2 (`cpuid`) on its first call, and in a virtual machine each
/// `cpuid` traps to the hypervisor, a cost a small kernel would feel. A
/// comment line is too short for AVX2 to matter.
pub(crate) fn find_byte(needle: u8, hay: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(sse2) = memchr::arch::x86_64::sse2::memchr::One::new(needle) {
        return sse2.find(hay);
    }
    memchr::memchr(needle, hay)
}

fn count_hex(b: &[u8], from: usize) -> usize {
    b.get(from..)
        .map(|s| s.iter().take_while(|c| c.is_ascii_hexdigit()).count())
        .unwrap_or(0)
}

fn parse_radix(text: &[u8], radix: u32) -> (u64, bool) {
    // Digits that cannot overflow 64 bits, however large: most literals
    // (offsets, `.loc` lines, table entries) are far shorter, and need no
    // overflow check per digit.
    let safe = match radix {
        2 => 64,
        8 => 21,
        10 => 19,
        16 => 16,
        _ => 0,
    };
    if text.len() <= safe {
        let digits = text
            .iter()
            .map(|&c| (c as char).to_digit(radix).unwrap_or(0));
        let v = digits.fold(0u64, |v, d| v * u64::from(radix) + u64::from(d));
        return (v, false);
    }
    let mut v: u64 = 0;
    let mut overflow = false;
    for &c in text {
        let d = (c as char).to_digit(radix).unwrap_or(0) as u64;
        match v.checked_mul(radix as u64).and_then(|x| x.checked_add(d)) {
            Some(n) => v = n,
            None => overflow = true,
        }
    }
    (v, overflow)
}

/// Lex a whole source file (the tests' entry point; the parser pulls
/// tokens from a [`Lexer`] instead).
pub fn lex(src: &str) -> Lexed {
    let mut l = Lexer::new(src);
    let mut out = Lexed::default();
    loop {
        let t = l.next_token();
        out.tokens.push(t);
        if t.kind == TokKind::Eof {
            break;
        }
    }
    out.errors = l.errors;
    out
}

/// A lexer over one source text, producing one token per call.
pub struct Lexer<'a> {
    cur: Cursor<'a>,
    /// Whitespace or a comment since the last token.
    ws: bool,
    /// Errors found so far (an unterminated block comment: it runs to the
    /// end, so it is found when [`TokKind::Eof`] is).
    pub errors: Vec<LexError>,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`.
    pub fn new(src: &'a str) -> Self {
        Lexer {
            cur: Cursor {
                src,
                b: src.as_bytes(),
                pos: 0,
                line: 1,
                col: 1,
            },
            ws: false,
            errors: Vec::new(),
        }
    }

    /// The next token; [`TokKind::Eof`] at the end, and again after it.
    pub fn next_token(&mut self) -> Token {
        let cur = &mut self.cur;
        loop {
            // Skip whitespace and comments.
            let c = cur.peek(0);
            if cur.at_end() {
                break;
            }
            if c.is_ascii_whitespace() {
                cur.bump();
                cur.skip_ascii_while(|c| c == b' ' || c == b'\t');
                self.ws = true;
                continue;
            }
            if c == b'/' && cur.peek(1) == b'/' {
                cur.skip_line_comment();
                self.ws = true;
                continue;
            }
            if c == b'/' && cur.peek(1) == b'*' {
                // ptxas reports an unterminated comment at the line it starts on.
                let open = cur.here();
                cur.bump_n(2);
                let mut closed = false;
                while !cur.at_end() {
                    if cur.peek(0) == b'*' && cur.peek(1) == b'/' {
                        cur.bump_n(2);
                        closed = true;
                        break;
                    }
                    cur.bump();
                }
                if !closed {
                    self.errors.push(LexError {
                        span: open,
                        message: "Parsing error near '': unexpected EOF while scanning".into(),
                    });
                }
                self.ws = true;
                continue;
            }
            let start = cur.here();
            let kind = lex_one(cur);
            let mut span = start;
            span.hi = cur.pos as u32;
            let ws_before = std::mem::take(&mut self.ws);
            return Token {
                kind,
                span,
                ws_before,
            };
        }
        Token {
            kind: TokKind::Eof,
            span: cur.here(),
            ws_before: self.ws,
        }
    }
}

/// Integer lists: the elements of a `{...}` initializer read straight from
/// the source, with no token each.
impl Lexer<'_> {
    /// Go back to just after `t`, a one-character punctuation token this
    /// lexer returned (a list's `{` or `,`), forgetting what was lexed
    /// past it: the tokens, and an unterminated comment's error.
    pub(crate) fn resume_after(&mut self, t: Token) {
        debug_assert!(matches!(t.kind, TokKind::Punct(_)) && t.span.hi == t.span.lo + 1);
        self.cur.pos = t.span.hi as usize;
        self.cur.line = t.span.line;
        self.cur.col = t.span.col + 1;
        self.ws = false;
        self.errors.retain(|e| e.span.lo < t.span.hi);
    }

    /// Read list elements `N ,` (blanks and newlines around them), each `N`
    /// a decimal literal with no sign or suffix, as the tokens `Int ,`
    /// would be read, and append their values to `out`. Stops before the
    /// first element that is anything else or not followed by a comma (the
    /// last one, before `}`, or a comment): the lexer goes on from there.
    /// Octal (`017`), hex, `U` and literals of 20 digits or more are left
    /// to [`Lexer::next_token`].
    pub(crate) fn int_elements(&mut self, out: &mut Vec<crate::ast::Imm>) {
        use crate::ast::Imm;
        let b = self.cur.b;
        let from = self.cur.pos;
        // `taken`: the end of the last element taken, with the newlines
        // before it (and where its line starts); `at`: the scan.
        let mut taken = Blanks {
            pos: from,
            newlines: 0,
            line_start: None,
        };
        let mut at = taken;
        loop {
            at.skip(b);
            let literal = at.pos;
            let mut value: u64 = 0;
            while let Some(d) = b.get(at.pos).map(|c| c.wrapping_sub(b'0')) {
                if d > 9 {
                    break;
                }
                // At most 19 digits are taken: no overflow.
                value = value.wrapping_mul(10).wrapping_add(u64::from(d));
                at.pos += 1;
            }
            let digits = at.pos - literal;
            if digits == 0 || digits > 19 || (digits > 1 && b[literal] == b'0') {
                break;
            }
            at.skip(b);
            if b.get(at.pos) != Some(&b',') {
                break;
            }
            at.pos += 1;
            out.push(i64::try_from(value).map_or(Imm::UInt(value), Imm::Int));
            taken = at;
        }
        // Every byte taken is ASCII: a column is a byte.
        self.cur.pos = taken.pos;
        self.cur.line += taken.newlines;
        self.cur.col = match taken.line_start {
            Some(s) => 1 + (taken.pos - s) as u32,
            None => self.cur.col + (taken.pos - from) as u32,
        };
    }
}

/// A position in a list's elements, with the newlines passed since the
/// scan began.
#[derive(Clone, Copy)]
struct Blanks {
    pos: usize,
    newlines: u32,
    /// The byte after the last newline passed.
    line_start: Option<usize>,
}

impl Blanks {
    /// Advance over spaces, tabs, carriage returns and newlines (the
    /// blanks between list elements).
    #[inline]
    fn skip(&mut self, b: &[u8]) {
        while let Some(&c) = b.get(self.pos) {
            match c {
                b' ' | b'\t' | b'\r' => {}
                b'\n' => {
                    self.newlines += 1;
                    self.line_start = Some(self.pos + 1);
                }
                _ => return,
            }
            self.pos += 1;
        }
    }
}

fn lex_one(cur: &mut Cursor<'_>) -> TokKind {
    let c = cur.peek(0);
    if is_ident_start(c) {
        // `%` must be followed by an identifier character to be a name.
        if c == b'%' && !is_ident_cont(cur.peek(1)) {
            cur.bump();
            return TokKind::Punct('%');
        }
        cur.bump();
        cur.skip_ascii_while(is_ident_cont);
        return TokKind::Ident;
    }
    if c == b'.' && is_ident_cont(cur.peek(1)) {
        cur.bump();
        cur.skip_ascii_while(is_ident_cont);
        while cur.peek(0) == b':' && cur.peek(1) == b':' && is_ident_cont(cur.peek(2)) {
            cur.bump_n(2);
            cur.skip_ascii_while(is_ident_cont);
        }
        return TokKind::Dotted;
    }
    if c.is_ascii_digit() {
        return lex_number(cur);
    }
    if c == b'"' {
        // Strings end on the same line.
        let mut k = 1;
        loop {
            match cur.peek(k) {
                b'"' => break,
                0 if cur.pos + k >= cur.b.len() => {
                    cur.bump();
                    return TokKind::Punct('"');
                }
                b'\n' => {
                    cur.bump();
                    return TokKind::Punct('"');
                }
                b'\\' => k += 2,
                _ => k += 1,
            }
        }
        // k bytes + closing quote; bump per char keeps columns right.
        let end = cur.pos + k + 1;
        while cur.pos < end && !cur.at_end() {
            cur.bump();
        }
        return TokKind::Str;
    }
    // Any other character is a punct: an ASCII one is one byte and no
    // newline (blanks are skipped before a token), so one column.
    if c.is_ascii() {
        cur.bump_n(1);
        return TokKind::Punct(char::from(c));
    }
    // A multi-byte character.
    let ch = cur
        .src
        .get(cur.pos..)
        .and_then(|s| s.chars().next())
        .unwrap_or('\0');
    cur.bump();
    TokKind::Punct(ch)
}

fn lex_number(cur: &mut Cursor<'_>) -> TokKind {
    if cur.peek(0) == b'0' {
        if let Some(tok) = lex_prefixed_number(cur) {
            return tok;
        }
    }
    lex_decimal_number(cur)
}

/// A number written with a `0x`, `0b`, `0f` or `0d` prefix; `None` when the
/// second character is no such prefix. A prefix without its digits lexes as
/// the integer 0, leaving the letter to the next token.
fn lex_prefixed_number(cur: &mut Cursor<'_>) -> Option<TokKind> {
    let b = cur.b;
    let p = cur.pos;
    let c1 = cur.peek(1);
    let digits = |n: usize| b.get(p + 2..p + 2 + n).unwrap_or(&[]);
    let tok = match c1 {
        b'x' | b'X' => {
            let n = count_hex(b, p + 2);
            (n > 0).then(|| {
                let (v, o) = parse_radix(digits(n), 16);
                cur.bump_n(2 + n);
                int_suffix(cur, v, o)
            })
        }
        b'b' | b'B' => {
            let n = b
                .get(p + 2..)
                .map(|s| s.iter().take_while(|c| **c == b'0' || **c == b'1').count())
                .unwrap_or(0);
            (n > 0).then(|| {
                let (v, o) = parse_radix(digits(n), 2);
                cur.bump_n(2 + n);
                int_suffix(cur, v, o)
            })
        }
        b'f' | b'F' | b'd' | b'D' => {
            let want = if c1 == b'f' || c1 == b'F' { 8 } else { 16 };
            let n = count_hex(b, p + 2);
            (n == want && !is_ident_cont(cur.peek(2 + n))).then(|| {
                let (v, _) = parse_radix(digits(n), 16);
                cur.bump_n(2 + n);
                if want == 8 {
                    TokKind::F32(v as u32)
                } else {
                    TokKind::F64(v)
                }
            })
        }
        _ => return None,
    };
    Some(tok.unwrap_or_else(|| {
        cur.bump();
        int_tok(0, false, false)
    }))
}

/// A decimal integer, an octal integer (leading `0`) or a decimal float.
fn lex_decimal_number(cur: &mut Cursor<'_>) -> TokKind {
    let b = cur.b;
    let p = cur.pos;
    let n = b
        .get(p..)
        .map(|s| s.iter().take_while(|c| c.is_ascii_digit()).count())
        .unwrap_or(0);
    let after = cur.peek(n);
    if after == b'.' && !is_ident_start(cur.peek(n + 1)) || exp_follows(cur, n) {
        return lex_decimal_float(cur, n);
    }
    if cur.peek(0) == b'0' && n > 1 {
        // Octal: only the leading octal digits belong to this token.
        let m = b
            .get(p..p + n)
            .map(|s| s.iter().take_while(|c| (b'0'..=b'7').contains(c)).count())
            .unwrap_or(1);
        let (v, o) = parse_radix(b.get(p + 1..p + m).unwrap_or(&[]), 8);
        cur.bump_n(m);
        if m < n {
            return int_tok(v, false, o);
        }
        return int_suffix(cur, v, o);
    }
    let (v, o) = parse_radix(b.get(p..p + n).unwrap_or(&[]), 10);
    cur.bump_n(n);
    int_suffix(cur, v, o)
}

/// Whether an exponent (`e`/`E`, an optional sign, a digit) starts `k` bytes ahead.
fn exp_follows(cur: &Cursor<'_>, k: usize) -> bool {
    let e = cur.peek(k);
    if e != b'e' && e != b'E' {
        return false;
    }
    let s = cur.peek(k + 1);
    s.is_ascii_digit() || ((s == b'+' || s == b'-') && cur.peek(k + 2).is_ascii_digit())
}

/// Decimal float: `n` digits, then `[. digits] [e[+-]digits]`.
fn lex_decimal_float(cur: &mut Cursor<'_>, n: usize) -> TokKind {
    let p = cur.pos;
    let mut k = n;
    if cur.peek(k) == b'.' {
        k += 1;
        while cur.peek(k).is_ascii_digit() {
            k += 1;
        }
    }
    if exp_follows(cur, k) {
        k += 2;
        while cur.peek(k).is_ascii_digit() {
            k += 1;
        }
    }
    let text = cur.src.get(p..p + k).unwrap_or("0");
    let v: f64 = text.parse().unwrap_or(0.0);
    cur.bump_n(k);
    TokKind::DecFloat(v)
}

fn int_tok(value: u64, unsigned: bool, overflow: bool) -> TokKind {
    TokKind::Int {
        value,
        unsigned,
        overflow,
    }
}

fn int_suffix(cur: &mut Cursor<'_>, v: u64, o: bool) -> TokKind {
    if cur.peek(0) == b'U' && !is_ident_cont(cur.peek(1)) {
        cur.bump();
        return int_tok(v, true, o);
    }
    int_tok(v, false, o)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The newline search finds what a byte loop finds, wherever the
    /// newline falls in a vector's width (and with none at all).
    #[test]
    fn find_newline_is_a_byte_search() {
        for len in [0usize, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 200] {
            for at in 0..=len {
                let mut hay = vec![b'x'; len];
                if at < len {
                    hay[at] = b'\n';
                }
                let want = hay.iter().position(|&c| c == b'\n');
                assert_eq!(find_newline(&hay), want, "len {len} at {at}");
            }
        }
    }

    /// A `//` comment is skipped to its line's end in one scan: the
    /// positions after it are those of a character-by-character walk
    /// (columns in characters, multi-byte ones included).
    #[test]
    fn line_comments_keep_lines_and_columns() {
        let src = "a // é ü\n  b //x\nc // tail é";
        let l = lex(src);
        let at: Vec<(u32, u32, u32)> = l
            .tokens
            .iter()
            .map(|t| (t.span.line, t.span.col, t.span.lo))
            .collect();
        // `b` is byte 13 (`é` and `ü` take two bytes each) at column 3;
        // the end of file is after `é`: column 12, byte 31.
        assert_eq!(at, [(1, 1, 0), (2, 3, 13), (3, 1, 19), (3, 12, 31)]);
    }

    fn kinds(s: &str) -> Vec<TokKind> {
        lex(s).tokens.into_iter().map(|t| t.kind).collect()
    }

    fn texts(s: &str) -> Vec<String> {
        lex(s)
            .tokens
            .iter()
            .map(|t| s[t.span.lo as usize..t.span.hi as usize].to_string())
            .collect()
    }

    #[test]
    fn idents_and_dotted() {
        assert_eq!(
            texts("wgmma.mma_async.sync.aligned.m64n8k16.f32 %r1, $L__BB0_2"),
            vec![
                "wgmma",
                ".mma_async",
                ".sync",
                ".aligned",
                ".m64n8k16",
                ".f32",
                "%r1",
                ",",
                "$L__BB0_2",
                ""
            ]
        );
        assert_eq!(
            texts("ld.global.L2::cache_hint.shared::cta.L2::256B"),
            vec![
                "ld",
                ".global",
                ".L2::cache_hint",
                ".shared::cta",
                ".L2::256B",
                ""
            ]
        );
        let t = lex("%tid.x %r<10>").tokens;
        assert_eq!(t[0].kind, TokKind::Ident);
        assert_eq!(t[1].kind, TokKind::Dotted);
        assert!(!t[1].ws_before);
        assert!(t[2].ws_before);
        assert_eq!(t[3].kind, TokKind::Punct('<'));
    }

    #[test]
    fn numbers() {
        let i = |v, u| TokKind::Int {
            value: v,
            unsigned: u,
            overflow: false,
        };
        assert_eq!(kinds("42")[0], i(42, false));
        assert_eq!(kinds("42U")[0], i(42, true));
        assert_eq!(kinds("0x1F")[0], i(31, false));
        assert_eq!(kinds("0xFFFFFFFFU")[0], i(0xFFFF_FFFF, true));
        assert_eq!(kinds("0b101")[0], i(5, false));
        assert_eq!(kinds("017")[0], i(15, false));
        assert_eq!(kinds("0")[0], i(0, false));
        assert_eq!(kinds("0f3F800000")[0], TokKind::F32(0x3F80_0000));
        assert_eq!(
            kinds("0d3FF0000000000000")[0],
            TokKind::F64(0x3FF0_0000_0000_0000)
        );
        assert_eq!(kinds("1.5")[0], TokKind::DecFloat(1.5));
        assert_eq!(kinds("2e3")[0], TokKind::DecFloat(2000.0));
        assert_eq!(kinds("8.5")[0], TokKind::DecFloat(8.5));
        match &kinds("99999999999999999999999")[0] {
            TokKind::Int { overflow, .. } => assert!(overflow),
            k => panic!("{k:?}"),
        }
        // Either side of 2^64, in each radix: the longest literals that
        // cannot overflow are read without checks, the rest with them.
        assert_eq!(
            kinds("9999999999999999999")[0],
            i(9_999_999_999_999_999_999, false)
        );
        assert_eq!(kinds("18446744073709551615")[0], i(u64::MAX, false));
        assert_eq!(kinds("0xFFFFFFFFFFFFFFFF")[0], i(u64::MAX, false));
        assert_eq!(kinds("0x0FFFFFFFFFFFFFFFF")[0], i(u64::MAX, false));
        let sevens = format!("0{}", "7".repeat(21));
        assert_eq!(kinds(&sevens)[0], i((1 << 63) - 1, false));
        for big in [
            "18446744073709551616",
            "0x10000000000000000",
            "02000000000000000000000",
        ] {
            match &kinds(big)[0] {
                TokKind::Int { overflow, .. } => assert!(overflow, "{big}"),
                k => panic!("{big}: {k:?}"),
            }
        }
        assert_eq!(kinds("a,b")[1], TokKind::Punct(','));
        assert_eq!(kinds("a\u{e9}b")[1], TokKind::Punct('\u{e9}'));
    }

    #[test]
    fn malformed_numbers_split_like_ptxas() {
        assert_eq!(texts("0x;"), vec!["0", "x", ";", ""]);
        assert_eq!(texts("08"), vec!["0", "8", ""]);
        assert_eq!(texts("0f3F80"), vec!["0", "f3F80", ""]);
    }

    #[test]
    fn comments_strings_positions() {
        let l = lex("// c\n  /* x\n y */ a \"s t\" #");
        let t = &l.tokens;
        assert_eq!(t[0].kind, TokKind::Ident);
        assert_eq!((t[0].span.line, t[0].span.col), (3, 7));
        assert_eq!(t[1].kind, TokKind::Str);
        assert_eq!(t[1].str_contents("// c\n  /* x\n y */ a \"s t\" #"), "s t");
        assert_eq!(t[2].kind, TokKind::Punct('#'));
        assert_eq!((t[2].span.line, t[2].span.col), (3, 15));
        assert!(l.errors.is_empty());
    }

    #[test]
    fn unterminated() {
        let l = lex("a /* x\n");
        assert_eq!(l.errors.len(), 1);
        assert_eq!((l.errors[0].span.line, l.errors[0].span.col), (1, 3));
        assert!(l.errors[0]
            .message
            .contains("unexpected EOF while scanning"));
        let t = lex("\"abc\nx");
        assert_eq!(t.tokens[0].kind, TokKind::Punct('"'));
        assert_eq!(t.tokens[1].kind, TokKind::Ident);
    }

    #[test]
    fn never_panics_on_odd_bytes() {
        for s in [
            "", "%", ".", "0x", "0f", "0d1", "\"", "/*", "é.é", "1e", "1e+", "0b", "%é",
        ] {
            let l = lex(s);
            assert_eq!(l.tokens.last().map(|t| &t.kind), Some(&TokKind::Eof));
        }
    }
}
