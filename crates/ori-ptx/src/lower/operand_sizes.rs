//! The register sizes and operand kinds the open families take (PTX ISA
//! 9.0, "Operand Type Information"; ptxas 13.0.88, probed by the grammar
//! fuzzer): what ptxas checks on `ld`, `st`, `atom`, `red`, the
//! arithmetic, comparisons, selects and `cvt` before anything else.
//!
//! It exists because these families are open in the instruction table
//! (their modifiers are not listed), so their operands were taken as
//! given: `add.u32 %rd1, %r1, %r2` or `ld.u64 %r1, [a]` lowered, and only
//! ptxas said no. The rules:
//! * an arithmetic, comparison or select operand is a register of the
//!   instruction type's size exactly (`.f16x2` is 32 bits; `mul.wide`'s
//!   result and `mad.wide`'s addend are twice it; a shift amount is 32
//!   bits; a comparison's result and a select's selector are predicates);
//! * `ld`'s result and `st`'s value, and `cvt`'s operands, may be wider
//!   than the type (PTX ISA: so narrow values live in ordinary registers),
//!   never narrower and never a predicate (`cvt` to or from `.bf16`,
//!   `.bf16x2` or the fp8 kinds: exactly); `atom` and `red` take the type's size exactly; a
//!   vector is checked element by element, and `mov` packs one into a bit
//!   type only;
//! * an address (`[a]`) stands only where the instruction reads or writes
//!   memory: elsewhere it is a 64-bit value to ptxas, "Argument K of
//!   instruction 'OP': must be register" where a 64-bit register would
//!   fit and "Arguments mismatch" where not; a register where
//!   `ld`/`st`/`atom`/`red` want their address is "Arguments mismatch".

use super::LowerCx;
use crate::ast;
use ori_ir::RegClass;

/// What one operand must be.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    /// A register of exactly this many bits (1: a predicate).
    Exact(u32),
    /// A register of at least this many bits, not a predicate.
    AtLeast(u32),
    /// A memory address.
    Address,
    /// A register of any size, an immediate or a vector: no address.
    Value,
}

/// The bits of a type modifier (`None`: not a type).
fn type_bits(m: &str) -> Option<u32> {
    Some(match m {
        "pred" => 1,
        "b8" | "u8" | "s8" | "e4m3" | "e5m2" => 8,
        "b16" | "u16" | "s16" | "f16" | "bf16" | "e4m3x2" | "e5m2x2" => 16,
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" | "tf32" => 32,
        "b64" | "u64" | "s64" | "f64" => 64,
        "b128" => 128,
        _ => return None,
    })
}

/// The bits of a register class (`None`: a wgmma tensor register, which
/// is classed apart from its declared type and not checked).
fn class_bits(c: RegClass) -> Option<u32> {
    Some(match c {
        RegClass::Pred => 1,
        RegClass::R16 => 16,
        RegClass::R32 => 32,
        RegClass::R64 => 64,
        RegClass::R128 => 128,
        RegClass::Tensor => return None,
    })
}

/// Instructions whose every operand is of the instruction type.
const SAME_TYPE: &[&str] = &[
    "add", "sub", "mul", "div", "rem", "mad", "fma", "min", "max", "abs", "neg", "and", "or",
    "xor", "not", "cnot", "addc", "subc", "madc", "rcp", "sqrt", "rsqrt", "sin", "cos", "lg2",
    "ex2", "tanh",
];

/// What operand `k` of an instruction of `opcode` with type words `types`
/// and `wide` (`.wide`) must be (`exact`: a `cvt` whose operands must be
/// of their types' sizes); `None` when the instruction is not checked
/// here.
fn want(opcode: &str, types: &[u32], wide: bool, exact: bool, k: usize) -> Option<Want> {
    let one = match types {
        [t] => Some(*t),
        _ => None,
    };
    Some(match opcode {
        "ld" | "ldu" => match k {
            0 => Want::AtLeast(one?.min(64)).exact_if(one? == 128),
            1 => Want::Address,
            _ => Want::Exact(64),
        },
        "st" => match k {
            0 => Want::Address,
            1 => Want::AtLeast(one?.min(64)).exact_if(one? == 128),
            _ => Want::Exact(64),
        },
        "atom" | "red" => {
            let addr = usize::from(opcode == "atom");
            match k {
                _ if k == addr => Want::Address,
                _ => Want::Exact(one?),
            }
        }
        "shl" | "shr" => Want::Exact(if k == 2 { 32 } else { one? }),
        "mul" | "mad" if wide => Want::Exact(if k == 0 || k == 3 { 2 * one? } else { one? }),
        "setp" => Want::Exact(if k == 0 || k == 3 { 1 } else { one? }),
        "selp" => Want::Exact(if k == 3 { 1 } else { one? }),
        "set" => match (k, types) {
            (0, [d, _]) => Want::Exact(*d),
            (3, _) => Want::Exact(1),
            (_, [_, a]) => Want::Exact(*a),
            _ => return None,
        },
        "slct" => match types {
            [t, c] => Want::Exact(if k == 3 { *c } else { *t }),
            _ => return None,
        },
        "cvt" => match types {
            [d, a] if exact => Want::Exact(if k == 0 { *d } else { *a }),
            [d, a] => Want::AtLeast(if k == 0 { *d } else { *a }),
            _ => return None,
        },
        "mov" => Want::Value,
        o if SAME_TYPE.contains(&o) => Want::Exact(one?),
        _ => return None,
    })
}

impl Want {
    /// `Exact` of the same size when `cond` (a 128-bit value lives only in
    /// a 128-bit register).
    fn exact_if(self, cond: bool) -> Want {
        match self {
            Want::AtLeast(_) if cond => Want::Exact(128),
            w => w,
        }
    }

    /// Whether a register of class `c` fits.
    fn fits(self, c: RegClass) -> bool {
        let Some(bits) = class_bits(c) else {
            return true;
        };
        match self {
            Want::Exact(1) => bits == 1,
            Want::Exact(b) => bits == b.max(16),
            Want::AtLeast(b) => bits != 1 && bits >= b,
            Want::Address | Want::Value => true,
        }
    }
}

/// How operand `op` breaks `w`, if it does: `Some(true)` for an address
/// where a register goes ("must be register"), `Some(false)` for a
/// register of the wrong size or a non-address where an address goes.
fn misfit(cx: &mut LowerCx<'_>, w: Want, op: &ast::OperandKind) -> Option<bool> {
    use ast::OperandKind as K;
    match (w, op) {
        (Want::Address, K::Address { .. } | K::AddressList(_)) => None,
        (Want::Address, _) => Some(false),
        (Want::Value, K::Address { .. }) => Some(false),
        (Want::Value, _) => None,
        // An address is a 64-bit value to ptxas: where one fits, it is
        // "must be register"; elsewhere the sizes mismatch first.
        (_, K::Address { .. }) => Some(w.fits(RegClass::R64)),
        (_, K::Reg(n)) => match cx.reg_class(n) {
            Some(c) if !w.fits(c) => Some(false),
            _ => None,
        },
        (_, K::Vector(v)) => v.iter().find_map(|e| misfit(cx, w, &e.kind)),
        (Want::Exact(1), K::PredPair(_) | K::NegPred(_)) => None,
        _ => None,
    }
}

/// Whether `i`'s operands are of the kinds and sizes its type asks for;
/// reports ptxas's error and returns false when one is not.
pub(super) fn operand_sizes_fit(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> bool {
    let opcode = i.opcode.as_str();
    let types: smallvec::SmallVec<[u32; 2]> =
        i.modifiers.iter().filter_map(|m| type_bits(m)).collect();
    let has = |w: &str| i.modifiers.iter().any(|m| m == w);
    // The asynchronous and bulk forms (`red.async`, `st.bulk`) have
    // operands of their own (an mbarrier, a size).
    if has("async") || has("bulk") {
        return true;
    }
    let wide = has("wide");
    // `cvt` to or from `.bf16`, `.bf16x2` or the fp8 kinds takes
    // registers of the types' sizes only (`cvt.rni.s64.bf16 %rd, %r` is
    // refused; `cvt.rn.f16x2.f32 %r, %r, %rd` is taken).
    let exact = opcode == "cvt"
        && i.modifiers
            .iter()
            .any(|m| m.starts_with("bf") || m.starts_with("e4") || m.starts_with("e5"));
    let vector_move = has("v2") || has("v4");
    // `mov` packs a vector into a bit type only (`mov.u32 r, {h, h}` is
    // refused, `mov.b32 r, {h, h}` taken).
    let bits_type = i
        .modifiers
        .iter()
        .any(|m| m.starts_with('b') && !m.starts_with("bf"));
    let packs = i
        .operands
        .iter()
        .any(|o| matches!(o.kind, ast::OperandKind::Vector(_)));
    if opcode == "mov" && packs && !bits_type && !vector_move {
        cx.error(i.span, "Arguments mismatch for instruction 'mov'");
        return false;
    }
    // The cache policy of `.L2::cache_hint` is the last operand, 64 bits.
    let policy = has("L2::cache_hint").then(|| i.operands.len().saturating_sub(1));
    for (k, op) in i.operands.iter().enumerate() {
        let w = if policy == Some(k) {
            Some(Want::Exact(64))
        } else {
            want(opcode, &types, wide, exact, k)
        };
        let Some(w) = w else {
            continue;
        };
        match misfit(cx, w, &op.kind) {
            None => {}
            Some(true) if !matches!(opcode, "atom" | "red") => {
                let msg = format!("Argument {k} of instruction '{opcode}': must be register");
                cx.error(i.span, msg);
                return false;
            }
            Some(_) => {
                // ptxas names `mul` and `mad` with their mode.
                let mode = ["wide", "lo", "hi"].into_iter().find(|m| has(m));
                let name = match mode {
                    Some(m) if matches!(opcode, "mul" | "mad") => format!("{opcode}.{m}"),
                    _ => opcode.to_string(),
                };
                cx.error(
                    i.span,
                    format!("Arguments mismatch for instruction '{name}'"),
                );
                return false;
            }
        }
    }
    true
}
