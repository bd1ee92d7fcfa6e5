//! The table's lines told apart at compile time: where each form line and
//! each set line of `table.txt` is, its family and opcode, and the forms in
//! order of their opcodes.
//!
//! Every process looks instructions up in the table, most of them for a
//! small kernel that needs the forms of a few opcodes. Splitting the text
//! into lines and sorting them by opcode at run time was a twentieth of
//! such a run; here `const fn`s do it while the crate compiles, from the
//! same text (`table.txt` stays the one place the table is written). The
//! forms themselves are still parsed on first use ([`super::Table::form`]).

use super::TABLE_TEXT;

/// One line of the table, by byte offsets into [`TABLE_TEXT`]: the line
/// without its comment and surrounding blanks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Line {
    /// 1-based line number in `table.txt`.
    pub number: u32,
    /// First byte of the text.
    pub start: u32,
    /// One past its last byte.
    pub end: u32,
    /// One past the family (the first word: `cp.async.bulk`).
    pub family_end: u32,
    /// One past the opcode (the family up to its first `.`).
    pub opcode_end: u32,
}

impl Line {
    /// The line's text.
    pub fn text(self) -> &'static str {
        &TABLE_TEXT[self.start as usize..self.end as usize]
    }

    /// The family the line is of.
    pub fn family(self) -> &'static str {
        &TABLE_TEXT[self.start as usize..self.family_end as usize]
    }

    /// The opcode the line is of.
    pub fn opcode(self) -> &'static str {
        &TABLE_TEXT[self.start as usize..self.opcode_end as usize]
    }
}

const EMPTY: Line = Line {
    number: 0,
    start: 0,
    end: 0,
    family_end: 0,
    opcode_end: 0,
};

/// How many form lines (`sets == false`) or set lines the table has.
const fn count(sets: bool) -> usize {
    let b = TABLE_TEXT.as_bytes();
    let (mut at, mut n) = (0, 0);
    while at < b.len() {
        let (line, next) = next_line(b, at, 0);
        if line.end > line.start && is_set(b, line) == sets {
            n += 1;
        }
        at = next;
    }
    n
}

/// The form lines (`sets == false`) or the set lines, in the table's order.
const fn lines<const N: usize>(sets: bool) -> [Line; N] {
    let b = TABLE_TEXT.as_bytes();
    let mut out = [EMPTY; N];
    let (mut at, mut k, mut number) = (0, 0, 0);
    while at < b.len() {
        number += 1;
        let (line, next) = next_line(b, at, number);
        if line.end > line.start && is_set(b, line) == sets {
            out[k] = line;
            k += 1;
        }
        at = next;
    }
    out
}

/// The line that starts at byte `at`, trimmed and without its comment, and
/// where the next one starts.
const fn next_line(b: &[u8], at: usize, number: u32) -> (Line, usize) {
    let mut end = at;
    while end < b.len() && b[end] != b'\n' {
        end += 1;
    }
    let next = end + 1;
    let mut hash = at;
    while hash < end && b[hash] != b'#' {
        hash += 1;
    }
    let (mut start, mut stop) = (at, hash);
    while start < stop && b[start].is_ascii_whitespace() {
        start += 1;
    }
    while stop > start && b[stop - 1].is_ascii_whitespace() {
        stop -= 1;
    }
    let mut family_end = start;
    while family_end < stop && !b[family_end].is_ascii_whitespace() {
        family_end += 1;
    }
    let mut opcode_end = start;
    while opcode_end < family_end && b[opcode_end] != b'.' {
        opcode_end += 1;
    }
    let line = Line {
        number,
        start: start as u32,
        end: stop as u32,
        family_end: family_end as u32,
        opcode_end: opcode_end as u32,
    };
    (line, next)
}

/// Whether a line defines a set (`set NAME = ...`).
const fn is_set(b: &[u8], line: Line) -> bool {
    let s = line.start as usize;
    line.family_end - line.start == 3 && b[s] == b's' && b[s + 1] == b'e' && b[s + 2] == b't'
}

/// Whether form `a` comes before form `b` by opcode, then by place.
const fn before(a: usize, b: usize) -> bool {
    let t = TABLE_TEXT.as_bytes();
    let (x, y) = (FORM_LINES[a], FORM_LINES[b]);
    let (xs, ys) = (x.start as usize, y.start as usize);
    let (xn, yn) = (
        (x.opcode_end - x.start) as usize,
        (y.opcode_end - y.start) as usize,
    );
    let mut k = 0;
    while k < xn && k < yn {
        if t[xs + k] != t[ys + k] {
            return t[xs + k] < t[ys + k];
        }
        k += 1;
    }
    if xn != yn {
        return xn < yn;
    }
    a < b
}

/// The form ids sorted by [`before`] (an insertion sort: it runs once, in
/// the compiler).
const fn sorted() -> [u16; FORM_COUNT] {
    let mut out = [0u16; FORM_COUNT];
    let mut k = 0;
    while k < FORM_COUNT {
        let mut j = k;
        while j > 0 && before(k, out[j - 1] as usize) {
            out[j] = out[j - 1];
            j -= 1;
        }
        out[j] = k as u16;
        k += 1;
    }
    out
}

/// How many forms the table has.
pub(crate) const FORM_COUNT: usize = count(false);

/// How many sets the table has.
const SET_COUNT: usize = count(true);

/// The form lines, in the table's order (a form's id is its place here).
const FORM_LINES: [Line; FORM_COUNT] = lines(false);

/// [`FORM_LINES`], in one place in the program.
pub(crate) static FORMS: [Line; FORM_COUNT] = FORM_LINES;

/// The set lines, in the table's order.
pub(crate) static SETS: [Line; SET_COUNT] = lines(true);

/// The form ids in order of their opcodes (the forms of one opcode in the
/// table's order): an opcode's forms are found by a binary search.
pub(crate) static BY_OPCODE: [u16; FORM_COUNT] = sorted();
