//! The warnings ptxas 13.0.88 prints for input it compiles: performance
//! directives it ignores or adjusts, and pragmas it does not know.
//!
//! Probed on `tests/corpus/warn_*` (ptxas prints them before any phase
//! message, and only when the input has no error):
//!
//! - `.minnctapersm` without `.maxntid` or `.reqntid`: ignored, with a
//!   warning at the line of the body's closing `}` (printed while parsing,
//!   so in source order: [`located`]).
//! - then, per kernel (`.entry`) from the last to the first ([`late`]):
//!   `.maxnreg` above 255 is ignored ("Too many maxnreg specified"), below
//!   24 raised to 24 (on every target); `.minnctapersm` above 32 is ignored,
//!   and so is one whose CTAs would hold more than 2048 threads of the
//!   `.maxntid` (or `.reqntid`) size; a CTA of more than 2048 threads
//!   has both ignored (worded after whether a valid `.minnctapersm` is
//!   given);
//! - then, per kernel from the last to the first, each `.pragma` of its
//!   body that the PTX ISA does not define, in source order ("Pragma 'X'
//!   unsupported"). An uncalled `.func`'s pragmas are not reported.
//!
//! The same directives' errors are the parser's ([`zero_value`],
//! [`conflict`]): a zero `.maxnreg`, `.minnctapersm`, `.maxntid` or
//! `.reqntid`, and `.maxntid` beside `.reqntid`.

use crate::ast::{Function, Item, Module};
use crate::diag::{Diag, Severity, Span};

/// The pragmas of the PTX ISA 9.0 (by their first word).
const KNOWN_PRAGMAS: [&str; 4] = [
    "nounroll",
    "used_bytes_mask",
    "enable_smem_spilling",
    "frequency",
];

/// ptxas ignores a `.maxnreg` above this.
const MAX_REGISTERS: u64 = 255;

/// ptxas raises a `.maxnreg` below this to it (sm_90a's lower bound; ptxas
/// 13.0.88 says the same for sm_80 and sm_90).
const MIN_REGISTERS: u64 = 24;

/// The most CTAs per SM a `.minnctapersm` may ask for (sm_90).
const MAX_CTAS_PER_SM: u64 = 32;

/// The most threads an SM holds (sm_90).
const MAX_THREADS_PER_SM: u64 = 2048;

/// The directives whose values must be positive (`.maxntid 64, 0` is an
/// error), and whether each takes a list (ptxas reports a list's error at
/// the token after it, which it read looking for a `,`).
const POSITIVE: [(&str, bool); 4] = [
    ("maxnreg", false),
    ("minnctapersm", false),
    ("maxntid", true),
    ("reqntid", true),
];

/// The performance directives of kernels only: on a `.func` ptxas 13.0.88
/// takes each for a syntax error, as it takes `.noreturn` (a `.func`'s) on
/// an `.entry` (`tests/bad_input/perf_*_on_*`).
const KERNEL_ONLY: [&str; 7] = [
    ".maxntid",
    ".reqntid",
    ".minnctapersm",
    ".maxnreg",
    ".maxclusterrank",
    ".reqnctapercluster",
    ".explicitcluster",
];

/// Whether performance directive `d` (with its dot) may follow the
/// signature of a kernel (`is_entry`) or of a `.func`.
pub fn allowed_on(d: &str, is_entry: bool) -> bool {
    if is_entry {
        d != ".noreturn"
    } else {
        !KERNEL_ONLY.contains(&d)
    }
}

/// ptxas's error for a zero among directive `name`'s `values`, and whether
/// it is reported after the list.
pub fn zero_value(name: &str, values: &[u64]) -> Option<(String, bool)> {
    let &(_, list) = POSITIVE.iter().find(|(n, _)| *n == name)?;
    values
        .contains(&0)
        .then(|| (format!("Positive non-zero value expected for {name}"), list))
}

/// ptxas's error for a function's directives that cannot go together,
/// reported at its closing `}`.
pub fn conflict(perf: &[(String, Vec<u64>)]) -> Option<&'static str> {
    let has = |name: &str| perf.iter().any(|(n, _)| n == name);
    (has("maxntid") && has("reqntid"))
        .then_some("Conflicting directives: .maxntid and .reqntid cannot both be specified")
}

/// Whether ptxas knows the pragma `text` (its first word).
pub fn is_known_pragma(text: &str) -> bool {
    let word = text.split_whitespace().next().unwrap_or("");
    KNOWN_PRAGMAS.contains(&word)
}

/// The warnings of `m` (parsed from `src`): those ptxas prints with a
/// line while parsing, then those it prints per kernel after it.
pub fn warnings(file: &str, src: &str, m: &Module) -> (Vec<Diag>, Vec<Diag>) {
    let functions: Vec<&Function> = m
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Function(f) => Some(f),
            _ => None,
        })
        .collect();
    let located = functions
        .iter()
        .filter_map(|f| located(file, src, f))
        .collect();
    let kernels = || {
        functions
            .iter()
            .rev()
            .filter(|f| f.is_entry && f.body.is_some())
    };
    let mut late: Vec<Diag> = kernels().flat_map(|f| directives(f)).collect();
    for f in kernels() {
        late.extend(
            f.unsupported_pragmas
                .iter()
                .map(|p| unlocated(format!("Pragma '{p}' unsupported"))),
        );
    }
    (located, late)
}

/// The value of performance directive `name` (its first), if given.
fn directive<'f>(f: &'f Function, name: &str) -> Option<&'f [u64]> {
    f.perf
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_slice())
}

/// `.minnctapersm` with no thread count to weigh it against.
fn located(file: &str, src: &str, f: &Function) -> Option<Diag> {
    let ignored = f.body.is_some()
        && directive(f, "minnctapersm").is_some()
        && directive(f, "maxntid").is_none()
        && directive(f, "reqntid").is_none();
    if !ignored {
        return None;
    }
    let close = f.span.hi.saturating_sub(1) as usize;
    let body = src.get(f.span.lo as usize..close).unwrap_or("");
    let line = f.span.line + body.bytes().filter(|&b| b == b'\n').count() as u32;
    let at = Span {
        lo: close as u32,
        hi: close as u32 + 1,
        line,
        col: 1,
    };
    Some(Diag::new(
        file,
        at,
        Severity::Warning,
        ".minnctapersm is ignored when neither .maxntid nor .reqntid is specified.",
    ))
}

/// Kernel `f`'s register and occupancy directives that ptxas ignores or
/// adjusts, in its order.
fn directives(f: &Function) -> Vec<Diag> {
    let name = &f.name;
    let mut out = Vec::new();
    match directive(f, "maxnreg").and_then(|v| v.first()) {
        Some(&n) if n > MAX_REGISTERS => out.push(unlocated(format!(
            "Too many maxnreg specified for entry {name}, will be ignored"
        ))),
        Some(&n) if n > 0 && n < MIN_REGISTERS => out.push(unlocated(format!(
            "For entry {name} adjusting per thread register count of {n} to lower bound of {MIN_REGISTERS}"
        ))),
        _ => {}
    }
    let Some(threads) = directive(f, "maxntid").or_else(|| directive(f, "reqntid")) else {
        return out;
    };
    let mut ctas = directive(f, "minnctapersm").and_then(|v| v.first().copied());
    if ctas.is_some_and(|n| n > MAX_CTAS_PER_SM) {
        out.push(unlocated(format!(
            "Value of minnctapersm for entry {name} is out of range. minnctapersm will be ignored"
        )));
        ctas = None;
    }
    let per_cta = threads.iter().fold(1u64, |p, &n| p.saturating_mul(n));
    let message = if per_cta > MAX_THREADS_PER_SM {
        let what = if ctas.is_some() {
            "maxntid,"
        } else {
            "threads per SM"
        };
        format!("Value of {what} for entry {name} is out of range. .minnctapersm and .maxntid will be ignored")
    } else if ctas.is_some_and(|n| n.saturating_mul(per_cta) > MAX_THREADS_PER_SM) {
        format!("Value of threads per SM for entry {name} is out of range. .minnctapersm will be ignored")
    } else {
        return out;
    };
    out.push(unlocated(message));
    out
}

/// A warning with no location.
fn unlocated(message: String) -> Diag {
    Diag {
        file: String::new(),
        line: 0,
        col: 0,
        severity: Severity::Warning,
        message,
    }
}
