//! Floating-point literals take the precision of the operand they stand for.
//!
//! PTX writes a floating-point literal as a double: `0.1`, `1e-3` and
//! `0d3FB999999999999A` are all f64 values (PTX ISA, "Floating-Point
//! Constants"). In an operand of type `.f32` ptxas converts the value to
//! single precision, so the IR must hold the `.f32` bits, never the
//! double's: an `add.f32 d, a, 0.1` adds 0x3DCCCCCD. Probed with ptxas
//! 13.0.88 on sm_90a (the SASS immediates of `tests/corpus/float_literal_*`):
//! the conversion rounds to nearest, ties to even (0d3FF0000010000000 is
//! 1.0, 0d3FF0000030000000 is 0x3F800002); a value beyond f32's range is
//! ±inf, one below its smallest denormal ±0; a NaN stays a NaN of the same
//! sign, quieted, keeping the top of its payload (0d7FF8000020000000 is
//! 0x7FC00001). A `0f` literal is kept as written: in an `.f64` operand
//! ptxas takes its 32 bits as the low half of the double, unconverted
//! (`add.f64 d, a, 0f3DCCCCCD` adds the bits 0x000000003DCCCCCD).
//!
//! A literal must also be of a kind the operand's type takes, or ptxas
//! says "Arguments mismatch for instruction" (probed, recorded in
//! `tests/bad_input/grammar_literal_*`): an `.fN` operand takes only
//! floating-point literals (`add.f32 d, a, 1` is rejected); an `.sN`/`.uN`
//! operand takes none (`add.s32 d, a, 0.5`), a half-precision one (`.f16`,
//! `.bf16`, `.f16x2`, `.bf16x2`) no literal at all (`add.f16 d, a,
//! 0f3F800000`, `add.bf16 d, 11, b`); a `.bN` operand takes
//! a floating-point literal of its width only (`mov.b32 r, 0f3F800000` and
//! `mov.b64 rd, 0.1` are accepted, `mov.b32 r, 0.1` and `mov.b64 rd,
//! 0f3F800000` are not).

use crate::ast;
use ori_ir::{Imm, Operand, Role, Slot, Symbol};
use smallvec::SmallVec;

/// The instructions whose sources are all of the instruction's type
/// (PTX ISA: arithmetic, comparison and selection, moves, conversions'
/// sources, stores' values). Elsewhere the type says what is moved or
/// reduced and other operands are sizes or counts
/// (`cp.reduce.async.bulk....add.f32 [d], [s], 96`, fuzz seed 23).
const TYPED_SOURCES: &[&str] = &[
    "add", "sub", "mul", "div", "rem", "mad", "fma", "min", "max", "abs", "neg", "mov", "setp",
    "set", "selp", "slct", "cvt", "rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh",
    "copysign", "testp", "st", "and", "or", "xor", "not",
];

/// The type modifier of source operand `k` (1-based among all operands,
/// the destination being 0) of an instruction with `mods`: the type of
/// the instruction when it has one; the source type (the last) of `cvt`
/// and `set`; `slct`'s selector type for its last operand. `None` where
/// the operand's type cannot be told from the modifiers alone.
fn source_type<'m>(opcode: &str, mods: &[&'m str], k: usize) -> Option<&'m str> {
    if !TYPED_SOURCES.contains(&opcode) {
        return None;
    }
    let mut types = mods.iter().copied().filter(|m| is_type(m));
    let first = types.next()?;
    let last = types.next_back();
    match (opcode, last) {
        (_, None) => Some(first),
        ("cvt" | "set", Some(t)) => Some(t),
        ("slct", Some(t)) => Some(if k == 3 { t } else { first }),
        _ => None,
    }
}

/// A type modifier: b/s/u/f followed by a width (`f32`, `bf16x2`, `e4m3x2`).
pub(super) fn is_type(m: &str) -> bool {
    let digits = m.find(|c: char| c.is_ascii_digit()).unwrap_or(m.len());
    matches!(&m[..digits], "b" | "s" | "u" | "f" | "bf" | "e" | "tf") && digits < m.len()
}

/// `bits` (an f64) rounded to f32 as ptxas rounds a literal (see the
/// module comment). Written out rather than left to `as f32`, whose NaN
/// payload Rust leaves unspecified.
pub(super) fn f64_literal_to_f32(bits: u64) -> u32 {
    let v = f64::from_bits(bits);
    if v.is_nan() {
        let sign = ((bits >> 63) as u32) << 31;
        let payload = ((bits >> 29) as u32) & 0x007F_FFFF;
        return sign | 0x7FC0_0000 | payload;
    }
    // IEEE 754 conversion: round to nearest, ties to even; overflow to ±inf.
    (v as f32).to_bits()
}

/// Each `0d`/decimal literal among the sources of an `.f32` instruction,
/// vectors included, replaced by its f32 bits.
pub(super) fn convert_sources(opcode: &str, mods: &[Symbol], slots: &mut [Slot]) {
    if !slots.iter().any(|s| s.role == Role::Use && has_f64(&s.op)) {
        return;
    }
    let mods: SmallVec<[&str; 8]> = mods.iter().map(|m| m.as_str()).collect();
    for (k, slot) in slots.iter_mut().enumerate() {
        if slot.role == Role::Use && source_type(opcode, &mods, k) == Some("f32") {
            convert(&mut slot.op);
        }
    }
}

fn has_f64(op: &Operand) -> bool {
    match op {
        Operand::Imm(Imm::F64(_)) => true,
        Operand::Vector(v) => v.iter().any(has_f64),
        _ => false,
    }
}

fn convert(op: &mut Operand) {
    match op {
        Operand::Imm(Imm::F64(bits)) => *op = Operand::Imm(Imm::F32(f64_literal_to_f32(*bits))),
        Operand::Vector(v) => v.iter_mut().for_each(convert),
        _ => {}
    }
}

/// The kind of a literal, as the type check sees it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Literal {
    Integer,
    /// `0fXXXXXXXX`.
    Single,
    /// `0dXXXXXXXXXXXXXXXX` or a decimal with a point or exponent.
    Double,
}

/// Whether an operand of type `ty` may be written as a `lit` literal.
fn literal_fits(ty: &str, lit: Literal) -> bool {
    let float = lit != Literal::Integer;
    match ty {
        "f32" | "f64" => float,
        "b32" => lit != Literal::Double,
        "b64" => lit != Literal::Single,
        _ if ty.starts_with('b') && !ty.starts_with("bf") => !float,
        _ if ty.starts_with('s') || ty.starts_with('u') => !float,
        // Half precision takes no literal at all (the grammar fuzzer:
        // `add.bf16 d, 11, b`, `setp.gtu.f16 p, 6, b` are rejected).
        "f16" | "bf16" | "f16x2" | "bf16x2" => false,
        // What the narrower float kinds make of an integer literal is not
        // probed: let it through.
        _ => !float,
    }
}

fn literal_of(kind: &ast::OperandKind) -> Option<Literal> {
    match kind {
        ast::OperandKind::Imm(ast::Imm::Int(_) | ast::Imm::UInt(_)) => Some(Literal::Integer),
        ast::OperandKind::Imm(ast::Imm::F32(_)) => Some(Literal::Single),
        ast::OperandKind::Imm(ast::Imm::F64(_)) => Some(Literal::Double),
        _ => None,
    }
}

/// Whether every literal source of `i` (vectors included) is of a kind
/// its operand's type takes; the first that is not is ptxas's "Arguments
/// mismatch", reported at the instruction.
pub(super) fn literals_fit(cx: &mut super::LowerCx<'_>, i: &ast::Instruction) -> bool {
    let has_literal = i.operands.iter().any(|o| match &o.kind {
        ast::OperandKind::Vector(v) => v.iter().any(|o| literal_of(&o.kind).is_some()),
        k => literal_of(k).is_some(),
    });
    if !has_literal || !TYPED_SOURCES.contains(&i.opcode.as_str()) {
        return true;
    }
    // An integer literal is refused only in an `.f32` or `.f64` operand
    // (`literal_fits`), and most literals are integers in integer code.
    let only_integers = i.operands.iter().all(|o| match &o.kind {
        ast::OperandKind::Vector(v) => v
            .iter()
            .all(|o| matches!(literal_of(&o.kind), None | Some(Literal::Integer))),
        k => matches!(literal_of(k), None | Some(Literal::Integer)),
    });
    let float_type = |m: &ori_ir::Symbol| {
        matches!(
            m.as_str(),
            "f32" | "f64" | "f16" | "bf16" | "f16x2" | "bf16x2"
        )
    };
    if only_integers && !i.modifiers.iter().any(float_type) {
        return true;
    }
    let mods: SmallVec<[&str; 8]> = i.modifiers.iter().map(|m| m.as_str()).collect();
    let bad = i.operands.iter().enumerate().any(|(k, o)| {
        let Some(ty) = source_type(&i.opcode, &mods, k) else {
            return false;
        };
        let one = |o: &ast::Operand| literal_of(&o.kind).is_some_and(|l| !literal_fits(ty, l));
        match &o.kind {
            ast::OperandKind::Vector(v) => v.iter().any(one),
            _ => one(o),
        }
    });
    if bad {
        cx.error(
            i.span,
            format!("Arguments mismatch for instruction '{}'", i.opcode),
        );
    }
    !bad
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SASS immediates ptxas 13.0.88 printed for these literals in an
    /// `add.f32` (sm_90a).
    #[test]
    fn rounding_as_ptxas() {
        let cases: &[(u64, u32)] = &[
            (0.1f64.to_bits(), 0x3DCC_CCCD),
            (0x3FF0_0000_1000_0000, 0x3F80_0000),
            (0x3FF0_0000_3000_0000, 0x3F80_0002),
            (0x3FF0_0000_1000_0001, 0x3F80_0001),
            (1e300f64.to_bits(), 0x7F80_0000),
            ((-1e39f64).to_bits(), 0xFF80_0000),
            (3.4028235677973366e38f64.to_bits(), 0x7F80_0000),
            (1e-40f64.to_bits(), 0x0001_16C2),
            ((-1e-300f64).to_bits(), 0x8000_0000),
            (0x7FF8_0000_0000_0001, 0x7FC0_0000),
            (0x7FF8_0000_2000_0000, 0x7FC0_0001),
            (0xFFF0_0000_0000_0001, 0xFFC0_0000),
        ];
        for &(f64_bits, f32_bits) in cases {
            assert_eq!(f64_literal_to_f32(f64_bits), f32_bits, "{f64_bits:#018x}");
        }
    }

    /// ptxas 13.0.88's verdicts (accepted: true) on `add`/`mov`/`st`/`setp`
    /// of these types with these literals.
    #[test]
    fn literal_kinds_as_ptxas() {
        use Literal::*;
        let cases = [
            ("f32", Integer, false),
            ("f32", Single, true),
            ("f32", Double, true),
            ("f64", Single, true),
            ("f64", Integer, false),
            ("b32", Single, true),
            ("b32", Double, false),
            ("b32", Integer, true),
            ("b64", Double, true),
            ("b64", Single, false),
            ("s32", Double, false),
            ("u32", Single, false),
            ("u32", Integer, true),
            ("f16", Single, false),
            ("b16", Double, false),
        ];
        for (ty, lit, ok) in cases {
            assert_eq!(literal_fits(ty, lit), ok, "{ty}");
        }
    }

    #[test]
    fn operand_types() {
        assert_eq!(source_type("add", &["rn", "f32"], 2), Some("f32"));
        assert_eq!(source_type("cvt", &["rn", "f16", "f32"], 1), Some("f32"));
        assert_eq!(source_type("cvt", &["rn", "f32", "f64"], 1), Some("f64"));
        assert_eq!(source_type("slct", &["f32", "s32"], 1), Some("f32"));
        assert_eq!(source_type("slct", &["f32", "s32"], 3), Some("s32"));
        assert_eq!(source_type("ex2", &["approx", "ftz"], 1), None);
        let reduce = ["global", "shared::cta", "bulk_group", "add", "f32"];
        assert_eq!(source_type("cp", &reduce, 2), None);
    }
}
