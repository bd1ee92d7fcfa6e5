//! Handlers of the wgmma family and of the internal `_warpgroup.*` ops.
//!
//! `wgmma.mma_async` is ptxas's largest handler (seed 003: `sub_50AC70`):
//! shapes, types, operand forms, immediates and register types are all
//! checked here, in the order ptxas 13.0.88 checks them and with its wording.
//! The order matters because ptxas reports several problems of one
//! instruction, and some checks stop the ones after them; it was worked out
//! by running ptxas on the generated `wgmma` table (`ori_oracle::wgmma_table`,
//! `tests/wgmma_table/verdicts.tsv`) and on hand-made multi-fault variants:
//!
//! 1. modifiers ptxas does not know at all: `Unknown modifier '.X'` (each);
//! 2. known modifiers no wgmma takes (`.relu`, `.ftz`, ...): `Illegal modifier`, stop;
//! 3. the `.dtype.atype.btype` signature: `Unexpected instruction types`, stop;
//! 4. the operand template (count, operand kinds, register types):
//!    `Arguments mismatch for instruction 'wgmma.mma_async'`, stop;
//! 5. `.sync`, then the shape's presence;
//! 6. per type family (`... with floating point types` / `FP8 types` /
//!    `integer types` / `mixed integer types` / `boolean type`): `.b1`'s
//!    reduction, PTX ISA version, target, `.satfinite`, `.b1`'s operations,
//!    the shape (stops the operand checks), then vectors, A's element type,
//!    immediate values and vectors mixing element types. Register types are
//!    only checked for vectors whose elements all have one type;
//! 7. last, family-independent leftovers: `.b1` without a boolean operation,
//!    `.satfinite`, `.sat`, rounding modifiers.
//!
//! Sparse `wgmma.mma_async.sp` (PTX ISA 8.2) goes through the same steps,
//! probed on ptxas 13.0.88 (corpus `sparse_*`, `tests/wgmma_table`): a
//! second `.sp` is `Multiple sparsity modifiers specified` right after the
//! unknown modifiers; the template has `sp-meta, sp-sel` after `b-desc`
//! (the metadata a 32-bit register or a vector of them, the selector an
//! integer immediate), except for `.b1`, which keeps its dense template and
//! gets `Illegal modifier '.sp'` first among its family checks and an illegal
//! shape whatever K; family messages name `Sparse wgmma.mma_async with ...`
//! and the feature `Sparse WGMMA with ...` (PTX ISA 8.2, mixed integers 8.4);
//! K doubles (f16/bf16 32, tf32 16, FP8 and integers 64); `sp-sel` is
//! argument 4, 0 or 1 for the floating point types and 0 for FP8 and
//! integers, and the arguments after it are numbered two higher.
//!
//! Accumulator registers become class 6. `wgmma.fence` / `commit_group` /
//! `wait_group` are thin wrappers producing one Ori instruction each;
//! `_warpgroup.arrive` / `wait` / `commit_batch` are what phase 87 inserts,
//! parsable so IR dumps round-trip.

use super::LowerCx;
use crate::ast;
use crate::diag::Span;
use ori_ir::{InstData, Operand, Slot, Symbol};
use smallvec::SmallVec;
use std::fmt;

// ---------------------------------------------------------------------------
// Modifiers.

/// PTX type names: as modifiers they are known to ptxas's parser.
const TYPE_NAMES: &[&str] = &[
    "b1", "b8", "b16", "b32", "b64", "b128", "s4", "s8", "s16", "s32", "s64", "u4", "u8", "u16",
    "u32", "u64", "f16", "f16x2", "bf16", "bf16x2", "tf32", "f32", "f64", "e4m3", "e5m2", "e4m3x2",
    "e5m2x2", "e2m1", "e2m3", "e3m2", "ue8m0", "pred",
];

/// Rounding modifiers (`Illegal rounding modifier` on a wgmma).
const ROUNDING: &[&str] = &[
    "rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi", "rs",
];

/// Other modifiers ptxas knows from other instructions; on a wgmma they are
/// `Illegal modifier '.X' for instruction 'wgmma.mma_async'` before anything else.
const OTHER_KNOWN: &[&str] = &[
    "relu",
    "ftz",
    "approx",
    "full",
    "nan",
    "xorsign",
    "abs",
    "oob",
    "cc",
    "hi",
    "lo",
    "wide",
    "uni",
    "volatile",
    "relaxed",
    "acquire",
    "release",
    "acq_rel",
    "weak",
    "cta",
    "gpu",
    "sys",
    "cluster",
    "global",
    "shared",
    "local",
    "const",
    "param",
    "row",
    "col",
    "sp",
    "v2",
    "v4",
    "v8",
    "x1",
    "x2",
    "x4",
    "trans",
    "async",
    "noftz",
    "shiftamt",
    "clamp",
    "wrap",
    "min",
    "max",
    "add",
    "inc",
    "dec",
    "exch",
    "cas",
    "red",
    "collector",
    "ws",
    "kind",
];

/// Boolean operations and the reduction of `.b1` (`.and.popc`).
const BOOL_OPS: &[&str] = &["and", "or", "xor", "popc"];

fn parse_shape(s: &str) -> Option<(u32, u32, u32)> {
    let rest = s.strip_prefix('m')?;
    let (m, rest) = rest.split_once('n')?;
    let (n, k) = rest.split_once('k')?;
    let num = |t: &str| -> Option<u32> {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    Some((num(m)?, num(n)?, num(k)?))
}

/// N values of the `.b1` table (and of the integer table, which ptxas 13.0.88
/// also accepts with N = 240 and 256).
fn bit_n(n: u32) -> bool {
    (n.is_multiple_of(8) && (8..=32).contains(&n))
        || (n.is_multiple_of(16) && (48..=256).contains(&n))
}

/// Every N that is a multiple of 8 up to 256 (the floating point and FP8 tables).
fn float_n(n: u32) -> bool {
    n.is_multiple_of(8) && (8..=256).contains(&n)
}

/// Whether ptxas's parser knows the shape token at all (else `Unknown modifier`):
/// the wgmma shapes (dense and sparse K) and the mma/wmma ones.
fn known_shape((m, n, k): (u32, u32, u32)) -> bool {
    match (m, n, k) {
        (64, n, 8 | 16 | 32 | 64) => float_n(n),
        (64, n, 256) => bit_n(n),
        (16, 8, 4 | 8 | 16 | 32 | 64 | 128 | 256) => true,
        (8, 8, 4 | 16 | 32 | 128) => true,
        (32, 8, 16) | (8, 32, 16) | (16, 16, 8 | 16) => true,
        _ => false,
    }
}

/// The modifiers of one `wgmma.mma_async`, sorted by kind.
#[derive(Default)]
struct Mods<'a> {
    /// Modifiers ptxas does not know, in order; `None` marks a repeated
    /// `.sp` (`Multiple sparsity modifiers specified`, reported in place).
    unknown: Vec<Option<&'a str>>,
    /// How many `.sp` modifiers were written.
    sparse: usize,
    early_illegal: Vec<&'a str>,
    sync: bool,
    shape: Option<(&'a str, (u32, u32, u32))>,
    types: SmallVec<[&'a str; 4]>,
    satfinite: bool,
    sat: bool,
    rounding: bool,
    bool_ops: Vec<&'a str>,
}

impl<'a> Mods<'a> {
    fn sort(mods: &'a [Symbol]) -> Mods<'a> {
        let mut out = Mods::default();
        for m in mods {
            let m = m.as_str();
            match m {
                "sync" => out.sync = true,
                "sp" => {
                    out.sparse += 1;
                    if out.sparse > 1 {
                        out.unknown.push(None);
                    }
                }
                "aligned" => {}
                "satfinite" => out.satfinite = true,
                "sat" => out.sat = true,
                _ if BOOL_OPS.contains(&m) => out.bool_ops.push(m),
                _ if TYPE_NAMES.contains(&m) => out.types.push(m),
                _ if ROUNDING.contains(&m) => out.rounding = true,
                _ if OTHER_KNOWN.contains(&m) => out.early_illegal.push(m),
                _ => match parse_shape(m) {
                    Some(s) if known_shape(s) => out.shape = Some((m, s)),
                    _ => out.unknown.push(Some(m)),
                },
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------
// Type families.

/// The type families ptxas names in its messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fam {
    /// `.f16`, `.bf16`, `.tf32`.
    Float,
    /// `.e4m3` / `.e5m2`.
    Fp8,
    /// `.s8.s8` / `.u8.u8`.
    Int,
    /// `.s8.u8` / `.u8.s8` (PTX ISA 8.4).
    MixedInt,
    /// `.b1`.
    Bool,
}

impl Fam {
    fn words(self) -> &'static str {
        match self {
            Fam::Float => "floating point types",
            Fam::Fp8 => "FP8 types",
            Fam::Int => "integer types",
            Fam::MixedInt => "mixed integer types",
            Fam::Bool => "boolean type",
        }
    }
    /// `wgmma.mma_async with ...` (`Sparse wgmma.mma_async with ...`), the
    /// instruction name in family messages.
    fn inst(self, sparse: bool) -> FamText {
        FamText {
            sparse,
            head: "wgmma.mma_async",
            words: self.words(),
        }
    }
    /// The feature named when the PTX ISA version is too old.
    fn feature(self, sparse: bool) -> FamText {
        FamText {
            sparse,
            head: "WGMMA",
            words: self.words(),
        }
    }
    /// The PTX ISA version the family needs.
    fn version(self, sparse: bool) -> (u32, u32) {
        match (self, sparse) {
            (Fam::MixedInt, _) => (8, 4),
            (_, true) => (8, 2),
            (_, false) => (8, 0),
        }
    }
}

/// The decoded `.dtype.atype.btype` of an instruction that passed the signature check.
#[derive(Clone, Copy)]
struct Sig<'a> {
    d: &'a str,
    a: &'a str,
    fam: Fam,
    /// `.sp` on a family that has a sparse form (not `.b1`).
    sparse: bool,
}

impl Sig<'_> {
    /// `.f16`/`.bf16` inputs: trans immediates, and 8 / 7 operands.
    fn half(&self) -> bool {
        matches!(self.a, "f16" | "bf16")
    }
    /// Immediates after scale-d in the descriptor-A / register-A form.
    fn imm_count(&self, a_regs: bool) -> usize {
        match self.fam {
            Fam::Float if self.half() => {
                if a_regs {
                    3
                } else {
                    4
                }
            }
            Fam::Float | Fam::Fp8 => 2,
            Fam::Int | Fam::MixedInt | Fam::Bool => 0,
        }
    }
    /// Register types an accumulator of `.dtype` may have.
    fn acc_type_ok(&self, ty: &str) -> bool {
        match self.d {
            "f32" => matches!(ty, "f32" | "b32"),
            "f16" => matches!(ty, "f16x2" | "b32"),
            _ => matches!(ty, "s32" | "u32" | "b32"),
        }
    }
    /// K of the family's shapes for these input types (doubled when sparse).
    fn k(&self) -> u32 {
        let dense = match self.a {
            "f16" | "bf16" => 16,
            "tf32" => 8,
            "b1" => 256,
            _ => 32,
        };
        if self.sparse {
            2 * dense
        } else {
            dense
        }
    }
    /// Operands before `scale-d`: `d, a, b-desc` (and `sp-meta, sp-sel`).
    fn fixed(&self) -> usize {
        if self.sparse {
            5
        } else {
            3
        }
    }
    /// `Some(true)`: shape and types fit; `Some(false)`: the shape belongs to
    /// the family but not to these types; `None`: not a shape of the family.
    /// `sparse_b1`: `.sp` on `.b1`, which has no shapes at all.
    fn shape_fits(&self, (m, n, k): (u32, u32, u32), sparse_b1: bool) -> Option<bool> {
        if m != 64 || sparse_b1 {
            return None;
        }
        let x = if self.sparse { 2 } else { 1 };
        let family_shape = match self.fam {
            Fam::Float => (k == 8 * x || k == 16 * x) && float_n(n),
            Fam::Fp8 => k == 32 * x && float_n(n),
            Fam::Int | Fam::MixedInt => k == 32 * x && bit_n(n),
            Fam::Bool => k == 256 && bit_n(n),
        };
        family_shape.then(|| k == self.k() && matches!(self.d, "f16" | "f32" | "s32"))
    }
    /// Accumulator registers per thread.
    fn acc_regs(&self, n: u32) -> usize {
        if self.d == "f16" {
            (n / 4) as usize
        } else {
            (n / 2) as usize
        }
    }
}

/// The `.dtype.atype.btype` table (`Unexpected instruction types` outside it).
fn signature<'a>(types: &[&'a str], bool_ops: bool, sparse: bool) -> Option<Sig<'a>> {
    let [d, a, b] = types else {
        return None;
    };
    let fp8 = |t: &str| matches!(t, "e4m3" | "e5m2");
    let int = |t: &str| matches!(t, "s8" | "u8");
    let fam = match (*d, *a, *b) {
        ("f16" | "f32", "f16", "f16") => Fam::Float,
        ("f32", "bf16", "bf16") | ("f32", "tf32", "tf32") => Fam::Float,
        ("f16" | "f32", a, b) if fp8(a) && fp8(b) => Fam::Fp8,
        ("s32" | "u32", a, b) if int(a) && int(b) => {
            if a == b {
                Fam::Int
            } else {
                Fam::MixedInt
            }
        }
        ("s32" | "u32", "b1", "b1") => Fam::Bool,
        _ => return None,
    };
    if bool_ops && fam != Fam::Bool {
        return None;
    }
    Some(Sig {
        d,
        a,
        fam,
        sparse: sparse && fam != Fam::Bool,
    })
}

// ---------------------------------------------------------------------------
// Operands.

fn reg_ty<'a>(cx: &'a LowerCx<'_>, op: &Operand) -> Option<&'a str> {
    match op {
        Operand::Reg(r) => Some(&cx.func.vregs[*r].ty),
        _ => None,
    }
}

fn is_desc_ty(ty: &str) -> bool {
    matches!(ty, "b64" | "u64" | "s64")
}

fn is_32bit_ty(ty: &str) -> bool {
    matches!(ty, "b32" | "s32" | "u32" | "f32" | "f16x2" | "bf16x2")
}

/// A scalar where ptxas's template allows an A fragment: 32-bit or predicate
/// registers (reported later as `Vector expected for argument 1`).
fn fragment_like_scalar(cx: &LowerCx<'_>, op: &Operand) -> bool {
    reg_ty(cx, op).is_some_and(|t| is_32bit_ty(t) || t == "pred")
}

/// A special register of 32 bits (`%tid.x`, `%laneid`, ...; not `%clock64`,
/// `%globaltimer` or `%gridid`).
fn is_32bit_special(name: &str) -> bool {
    !matches!(name, "%clock64" | "%globaltimer" | "%gridid")
}

fn is_desc(cx: &LowerCx<'_>, op: &Operand) -> bool {
    reg_ty(cx, op).is_some_and(is_desc_ty)
}

fn is_int_imm(op: &Operand) -> bool {
    matches!(op, Operand::Imm(ori_ir::Imm::Int(_) | ori_ir::Imm::Hex(_)))
}

/// Whether every element of a vector is a register (with a type).
fn all_typed(cx: &LowerCx<'_>, v: &[Operand]) -> bool {
    v.iter().all(|o| reg_ty(cx, o).is_some())
}

/// The type of a vector whose elements all have the same register type;
/// ptxas checks register types only for such vectors.
fn uniform_type<'a>(cx: &'a LowerCx<'_>, v: &[Operand]) -> Option<&'a str> {
    let first = reg_ty(cx, v.first()?)?;
    v[1..]
        .iter()
        .all(|o| reg_ty(cx, o) == Some(first))
        .then_some(first)
}

/// `Vector with elements of different types`: two elements of different
/// kinds, where an untyped `.bN` register goes with anything and `.sN` with
/// `.uN` (`{b32, f32}` and `{s32, u32}` pass, `{f32, s32}` does not).
fn mixes_types<'a>(tys: impl IntoIterator<Item = &'a str>) -> bool {
    // (is an integer, the type without its sign letter for integers).
    let kind = |t: &'a str| -> Option<(bool, &'a str)> {
        match t.as_bytes().first() {
            Some(b'b') => None,
            Some(b's' | b'u') => Some((true, &t[1..])),
            _ => Some((false, t)),
        }
    };
    let mut kinds = tys.into_iter().filter_map(kind);
    match kinds.next() {
        Some(k) => kinds.any(|o| o != k),
        None => false,
    }
}

/// A family's name in messages (`Sparse wgmma.mma_async with FP8 types`),
/// made into text only when a message is.
#[derive(Clone, Copy)]
struct FamText {
    sparse: bool,
    head: &'static str,
    words: &'static str,
}

impl fmt::Display for FamText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sp = if self.sparse { "Sparse " } else { "" };
        write!(f, "{sp}{} with {}", self.head, self.words)
    }
}

/// The operand template ptxas matches before any family check; `false` is
/// `Arguments mismatch for instruction 'wgmma.mma_async'`.
fn template_ok(cx: &LowerCx<'_>, sig: &Sig<'_>, ops: &[Operand]) -> bool {
    let Some(a) = ops.get(1) else {
        return false;
    };
    let fixed = sig.fixed();
    let a_regs = match a {
        Operand::Vector(_) => true,
        // The half-precision forms differ in length: the longer one takes a descriptor.
        _ if sig.half() => ops.len() == fixed + 1 + sig.imm_count(true),
        _ => !is_desc(cx, a),
    };
    if ops.len() != fixed + 1 + sig.imm_count(a_regs) {
        return false;
    }
    // D: a vector of accumulator-typed registers (mixed types are reported later).
    let d_ok = match &ops[0] {
        Operand::Vector(v) => {
            all_typed(cx, v) && uniform_type(cx, v).is_none_or(|t| sig.acc_type_ok(t))
        }
        o => reg_ty(cx, o).is_some_and(|t| sig.acc_type_ok(t)),
    };
    // A: a descriptor, or a fragment of 32-bit registers.
    let a_ok = match a {
        Operand::Vector(v) => match uniform_type(cx, v) {
            Some(t) if sig.a == "f16" => matches!(t, "f16x2" | "b32"),
            Some(t) => is_32bit_ty(t),
            None => all_typed(cx, v),
        },
        o if a_regs => fragment_like_scalar(cx, o),
        o => is_desc(cx, o),
    };
    // sp-meta: a 32-bit register, or a vector of them; sp-sel: an integer.
    // (A predicate as metadata crashes ptxas 13.0.88; ori calls it a mismatch.)
    let meta_elem = |o: &Operand| match o {
        Operand::Special(name) => is_32bit_special(name),
        o => reg_ty(cx, o).is_some_and(is_32bit_ty),
    };
    let sparse_ok = !sig.sparse
        || (match &ops[3] {
            Operand::Vector(v) => v.iter().all(meta_elem),
            o => meta_elem(o),
        } && is_int_imm(&ops[4]));
    let scale_d_ok = match &ops[fixed] {
        Operand::Reg(r) | Operand::NotReg(r) => &*cx.func.vregs[*r].ty == "pred",
        o => is_int_imm(o),
    };
    d_ok && a_ok
        && is_desc(cx, &ops[2])
        && sparse_ok
        && scale_d_ok
        && ops[fixed + 1..].iter().all(is_int_imm)
}

fn imm_text(v: &ori_ir::Imm) -> String {
    let mut s = String::new();
    ori_ir::write::write_imm(&mut s, *v);
    s
}

// ---------------------------------------------------------------------------
// Target and version.

/// `Feature '...' requires PTX ISA .version X or later` and `Instruction '...'
/// not supported on .target '...'`, both when both apply (ptxas goes on after them).
fn check_target(
    cx: &mut LowerCx<'_>,
    span: Span,
    feature: impl fmt::Display,
    need: (u32, u32),
    inst: impl fmt::Display,
) -> bool {
    let mut ok = true;
    if cx.version < need {
        cx.error(
            span,
            format!(
                "Feature '{feature}' requires PTX ISA .version {}.{} or later",
                need.0, need.1
            ),
        );
        ok = false;
    }
    if !cx.is_sm90a() {
        let arch = cx.arch().to_string();
        cx.error(
            span,
            format!("Instruction '{inst}' not supported on .target '{arch}'"),
        );
        ok = false;
    }
    ok
}

// ---------------------------------------------------------------------------
// wgmma.mma_async

/// `wgmma.mma_async` (seed 003: handler `sub_50AC70`).
pub fn lower_mma_async(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<InstData> {
    const NAME: &str = "wgmma.mma_async";
    let span = i.span;
    let m = Mods::sort(&i.modifiers[1..]);
    let errors_before = cx.diags.len();
    // 1. Modifiers the parser does not know.
    for u in &m.unknown {
        match u {
            Some(u) => cx.error(span, format!("Unknown modifier '.{u}'")),
            None => cx.error(span, "Multiple sparsity modifiers specified"),
        }
    }
    // 2. Known modifiers that no wgmma takes.
    if let Some(x) = m.early_illegal.first() {
        cx.error(
            span,
            format!("Illegal modifier '.{x}' for instruction '{NAME}'"),
        );
        return None;
    }
    // 3. The type signature.
    let sparse = m.sparse > 0;
    let Some(sig) = signature(&m.types, !m.bool_ops.is_empty(), sparse) else {
        cx.error(
            span,
            format!("Unexpected instruction types specified for '{NAME}'"),
        );
        return None;
    };
    // 4. The operand template. An unknown name is an operand of no type:
    // the arguments mismatch, then the name is unknown (ptxas 13.0.88,
    // `tests/bad_input/*__undeclared_register`).
    if super::generic::has_unknown_operand(cx, i) {
        cx.error(span, format!("Arguments mismatch for instruction '{NAME}'"));
    }
    let mut ops: SmallVec<[Operand; 10]> = SmallVec::new();
    for o in &i.operands {
        ops.push(cx.operand(o)?);
    }
    if !template_ok(cx, &sig, &ops) {
        cx.error(span, format!("Arguments mismatch for instruction '{NAME}'"));
        return None;
    }
    // 5. `.sync` and the shape's presence.
    if !m.sync {
        cx.error(
            span,
            format!(".sync modifier required for instruction '{NAME}'"),
        );
    }
    if m.shape.is_none() {
        cx.error(
            span,
            format!("Shape modifier required for instruction '{NAME}'"),
        );
    }
    // 6. Family checks.
    family_checks(cx, span, &m, &sig, &ops);
    // 7. Family-independent leftovers.
    leftover_modifier_checks(cx, span, &m, sig.fam);
    if cx.diags.len() != errors_before {
        return None;
    }
    let mut it = ops.into_iter();
    let d = it.next()?;
    cx.make_tensor(&d);
    let slots = std::iter::once(Slot::def_use(d)).chain(it.map(Slot::use_));
    Some(InstData::interned(
        Symbol::new("wgmma"),
        i.modifiers,
        slots,
        span.line,
    ))
}

/// Step 6 of [`lower_mma_async`]: what the type family allows (sparsity,
/// `.satfinite`, the boolean operations, the target, the shape) and its
/// operand checks.
fn family_checks(cx: &mut LowerCx<'_>, span: Span, m: &Mods<'_>, sig: &Sig<'_>, ops: &[Operand]) {
    const NAME: &str = "wgmma.mma_async";
    let sparse = m.sparse > 0;
    let fam = sig.fam;
    let inst = fam.inst(sparse);
    // `.b1` has no sparse form (its dense template matched above).
    let sparse_b1 = sparse && !sig.sparse;
    if sparse_b1 {
        cx.error(
            span,
            format!("Illegal modifier '.sp' for instruction '{NAME}'"),
        );
    }
    if fam == Fam::Bool && m.bool_ops.first() == Some(&"popc") {
        cx.error(
            span,
            format!(
                "Illegal reduction operation for instruction '{NAME}.{}.{}'",
                sig.d, sig.a
            ),
        );
    }
    check_target(cx, span, fam.feature(sparse), fam.version(sparse), inst);
    let int = matches!(fam, Fam::Int | Fam::MixedInt);
    if m.satfinite && !int {
        cx.error(
            span,
            format!("Illegal modifier '.satfinite' for instruction '{inst}'"),
        );
    }
    if let (Fam::Bool, Some((shape, _))) = (fam, m.shape) {
        let ops_msg = |what: &str| format!("{what} specified for {inst} with shape '.{shape}'");
        if m.bool_ops.len() != 2 {
            cx.error(span, ops_msg("Unexpected number of operations"));
        } else {
            for (got, want) in m.bool_ops.iter().zip(["and", "popc"]) {
                if *got != want {
                    cx.error(span, ops_msg("Incorrect operations"));
                }
            }
        }
    }
    let shape_ok = match m.shape {
        Some((text, s)) => match sig.shape_fits(s, sparse_b1) {
            Some(true) => Some(s),
            Some(false) => {
                cx.error(
                    span,
                    format!(
                        "Illegal instruction types specified for '{inst}' with shape '.{text}'"
                    ),
                );
                None
            }
            None => {
                cx.error(
                    span,
                    format!("Illegal matrix shape '.{text}' for instruction '{inst}'"),
                );
                None
            }
        },
        None => None,
    };
    if let Some((_, n, _)) = shape_ok {
        check_operands(cx, span, sig, inst, n, ops);
    }
    // A special register as the metadata passes the template (in a vector
    // it even compiles), but not on its own.
    if sig.sparse && matches!(ops[3], Operand::Special(_)) {
        cx.error(
            span,
            format!("Special register argument not allowed for instruction '{NAME}'"),
        );
    }
}

/// Step 7 of [`lower_mma_async`]: the modifiers no family takes, reported
/// after the family's own (ptxas's order).
fn leftover_modifier_checks(cx: &mut LowerCx<'_>, span: Span, m: &Mods<'_>, fam: Fam) {
    const NAME: &str = "wgmma.mma_async";
    let int = matches!(fam, Fam::Int | Fam::MixedInt);
    if fam == Fam::Bool && m.bool_ops.first().is_none_or(|o| *o == "popc") {
        cx.error(
            span,
            format!("Boolean operation is required for instruction '{NAME}'"),
        );
    }
    if m.satfinite && !int {
        cx.error(
            span,
            format!("Illegal modifier '.satfinite' for instruction '{NAME}'"),
        );
    }
    if m.sat {
        cx.error(
            span,
            format!("Illegal modifier '.sat' for instruction '{NAME}'"),
        );
    }
    if m.rounding {
        cx.error(
            span,
            format!("Illegal rounding modifier for instruction '{NAME}'"),
        );
    }
}

/// The family's operand checks, for a shape that fits the types.
fn check_operands(
    cx: &mut LowerCx<'_>,
    span: Span,
    sig: &Sig<'_>,
    inst: FamText,
    n: u32,
    ops: &[Operand],
) {
    for (k, op) in ops.iter().take(2).enumerate() {
        if !matches!(op, Operand::Vector(_)) && (k == 0 || !is_desc(cx, op)) {
            cx.error(span, format!("Vector expected for argument {k}"));
        }
    }
    if matches!(&ops[1], Operand::Vector(a) if a.len() == 2) {
        // A two-element vector is a `.v2` operand where ptxas wants `.v4`.
        cx.error(span, format!("Arguments mismatch for instruction '{inst}'"));
    }
    let want = [sig.acc_regs(n), 4];
    for (op, want) in ops.iter().zip(want) {
        if matches!(op, Operand::Vector(v) if v.len() != want) {
            cx.error(
                span,
                format!("Argument vector size mismatch for instruction '{inst}'"),
            );
        }
    }
    // A fragments of `.bf16`/`.tf32`/FP8 are `.b32` or `.f16x2` registers.
    if let Operand::Vector(a) = &ops[1] {
        let strict = matches!(sig.fam, Fam::Float | Fam::Fp8) && sig.a != "f16";
        if strict && uniform_type(cx, a).is_some_and(|t| !matches!(t, "b32" | "f16x2")) {
            cx.error(
                span,
                format!("Unexpected instruction types specified for '{inst}'"),
            );
        }
    }
    check_immediates(cx, span, sig, inst, ops);
    check_vector_types(cx, span, sig, ops);
}

/// sp-sel in {0, 1} for the floating point types, 0 for FP8 and integers;
/// scale-d in {0, 1}; imm-scale-a/b in {-1, 1}; imm-trans-a/b in {0, 1}.
fn check_immediates(
    cx: &mut LowerCx<'_>,
    span: Span,
    sig: &Sig<'_>,
    inst: FamText,
    ops: &[Operand],
) {
    let fixed = sig.fixed();
    for (k, op) in ops.iter().enumerate().skip(3) {
        let Operand::Imm(v) = op else {
            continue;
        };
        let is_sel = sig.sparse && k == 4;
        let sel_zero = is_sel && sig.fam != Fam::Float;
        let is_scale = k == fixed + 1 || k == fixed + 2;
        let ok = match v.as_i64() {
            Some(x) if sel_zero => x == 0,
            Some(x) if is_scale => x == -1 || x == 1,
            Some(x) => x == 0 || x == 1,
            None => true,
        };
        if !ok {
            // Against "0" ptxas 13.0.88 prints the selector as a 32-bit
            // unsigned value (`-1` reads '4294967295').
            let shown = match v.as_i64() {
                Some(x) if sel_zero && x < 0 => ori_ir::Imm::Int(i64::from(x as u32)),
                _ => *v,
            };
            let expect = if sel_zero {
                "0"
            } else if is_scale {
                "-1 or 1"
            } else {
                "0 or 1"
            };
            cx.error(
                span,
                format!(
                    "Argument {k} of instruction '{inst}': unexpected value '{}', expected to be {expect}",
                    imm_text(&shown)
                ),
            );
        }
    }
}

/// D, A (and a sparse wgmma's metadata) vectors must not mix register types.
fn check_vector_types(cx: &mut LowerCx<'_>, span: Span, sig: &Sig<'_>, ops: &[Operand]) {
    let vectors = if sig.sparse {
        &[0, 1, 3][..]
    } else {
        &[0, 1][..]
    };
    for op in vectors.iter().filter_map(|k| ops.get(*k)) {
        let Operand::Vector(v) = op else {
            continue;
        };
        let tys = v.iter().map(|o| reg_ty(cx, o));
        if all_typed(cx, v) && mixes_types(tys.flatten()) {
            cx.error(
                span,
                "Vector with elements of different types are not allowed in wgmma.mma_async instruction",
            );
        }
    }
}

// ---------------------------------------------------------------------------
// fence / commit_group / wait_group

/// The checks every wgmma op shares before its operands: unknown and illegal
/// modifiers and the operand count (`None`: stop here), then `.sync`, ISA
/// version and target (`Some(false)`: reported, but ptxas goes on).
fn check_simple(
    cx: &mut LowerCx<'_>,
    i: &ast::Instruction,
    name: &str,
    operands_ok: bool,
) -> Option<bool> {
    let mut ok = true;
    for m in &i.modifiers[1..] {
        let m = m.as_str();
        if matches!(m, "sync" | "aligned") {
            continue;
        }
        let known = TYPE_NAMES.contains(&m)
            || ROUNDING.contains(&m)
            || OTHER_KNOWN.contains(&m)
            || BOOL_OPS.contains(&m)
            || matches!(m, "sat" | "satfinite")
            || parse_shape(m).is_some_and(known_shape);
        if !known {
            cx.error(i.span, format!("Unknown modifier '.{m}'"));
            ok = false;
        } else {
            cx.error(
                i.span,
                format!("Illegal modifier '.{m}' for instruction '{name}'"),
            );
            return None;
        }
    }
    if !ok {
        return None;
    }
    if !operands_ok {
        cx.error(
            i.span,
            format!("Arguments mismatch for instruction '{name}'"),
        );
        return None;
    }
    if !i.has_modifier("sync") {
        cx.error(
            i.span,
            format!(".sync modifier required for instruction '{name}'"),
        );
        ok = false;
    }
    Some(check_target(cx, i.span, "WGMMA", (8, 0), name) && ok)
}

fn no_operands(cx: &mut LowerCx<'_>, i: &ast::Instruction, name: &str) -> Option<InstData> {
    if !check_simple(cx, i, name, i.operands.is_empty())? {
        return None;
    }
    Some(InstData::interned(i.opcode, i.modifiers, [], i.span.line))
}

/// `wgmma.fence` (seed 003: handler `sub_4DA380`).
pub fn lower_fence(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<InstData> {
    no_operands(cx, i, "wgmma.fence")
}

/// `wgmma.commit_group` (seed 003: handler `sub_4DA4B0`).
pub fn lower_commit_group(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<InstData> {
    no_operands(cx, i, "wgmma.commit_group")
}

/// `wgmma.wait_group N` (seed 003: handler `sub_4DA5E0`); N a non-negative integer constant.
pub fn lower_wait_group(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<InstData> {
    const NAME: &str = "wgmma.wait_group";
    let n = match i.operands.as_slice() {
        [o] => match &o.kind {
            ast::OperandKind::Imm(ast::Imm::Int(v)) => Some(ori_ir::Imm::Int(*v)),
            ast::OperandKind::Imm(ast::Imm::UInt(v)) => Some(ori_ir::Imm::Hex(*v)),
            _ => None,
        },
        _ => None,
    };
    let ok = check_simple(cx, i, NAME, n.is_some())?;
    let n = n?;
    if n.as_i64().is_some_and(|v| v < 0) {
        cx.error(
            i.span,
            format!(
                "Argument 0 of instruction '{NAME}': unexpected value '{}', expected to be non-negative integer",
                imm_text(&n)
            ),
        );
        return None;
    }
    if !ok {
        return None;
    }
    Some(InstData::interned(
        i.opcode,
        i.modifiers,
        [Slot::use_(Operand::Imm(n))],
        i.span.line,
    ))
}

/// `_warpgroup.arrive`, `_warpgroup.wait N`, `_warpgroup.commit_batch`: the
/// compiler-internal ops phase 87 creates (registered separately in ptxas).
pub fn lower_internal(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<InstData> {
    let is_wait = i.modifiers.first().is_some_and(|m| m == "wait");
    let want = usize::from(is_wait);
    if i.operands.len() != want {
        cx.error(
            i.span,
            format!("Arguments mismatch for instruction '{}'", i.mnemonic()),
        );
        return None;
    }
    let mut slots = Vec::new();
    for o in &i.operands {
        match cx.operand(o)? {
            op @ Operand::Imm(_) => slots.push(Slot::use_(op)),
            _ => {
                cx.error(
                    i.span,
                    format!("Arguments mismatch for instruction '{}'", i.mnemonic()),
                );
                return None;
            }
        }
    }
    Some(InstData::interned(
        i.opcode,
        i.modifiers,
        slots,
        i.span.line,
    ))
}
