//! The instruction types the open arithmetic, comparison and select
//! families take (PTX ISA 9.0, 9.7.1-9.7.4; the sets probed type by type
//! with ptxas 13.0.88 for sm_90a by the grammar fuzzer), and the
//! comparisons each type takes.
//!
//! It exists because these families are open in the instruction table,
//! so a type they do not take (`add.s8`, `mul.u32` without `.lo`/`.hi`/
//! `.wide`, `cnot.pred`, `shl.u32`), a missing or second type, or a
//! comparison of another kind of type (`setp.hs.s32`, `setp.lt.b32`)
//! lowered as if valid. ptxas says "Unexpected instruction types
//! specified for 'OP'", "Comparison modifier required for instruction
//! 'OP'" or "Mismatch between instruction type and comparison qualifier".

use super::LowerCx;
use crate::ast;

const INT: &[&str] = &["u16", "u32", "u64", "s16", "s32", "s64"];
const FLOAT: &[&str] = &["f16", "f16x2", "bf16", "bf16x2", "f32", "f64"];
const WIDE: &[&str] = &["u16", "u32", "s16", "s32"];
const F32_F64: &[&str] = &["f32", "f64"];
const BITS: &[&str] = &["b16", "b32", "b64"];
const PRED: &[&str] = &["pred"];
const SIGNED: &[&str] = &["s16", "s32", "s64"];
const UNSIGNED: &[&str] = &["u16", "u32", "u64"];

/// A type modifier of any instruction (`b8` .. `b128`, `f16x2`, `pred`,
/// the fp8 and tf32 kinds).
fn is_type(m: &str) -> bool {
    m == "pred" || super::float_literals::is_type(m)
}

/// The sets of types single-type instruction `opcode` with `mods` takes
/// (their union), or `None` when it is not checked here.
fn single_type_sets(opcode: &str, mods: &[&str]) -> Option<&'static [&'static [&'static str]]> {
    let has = |w: &str| mods.contains(&w);
    let lohi = has("lo") || has("hi");
    Some(match opcode {
        "add" | "sub" => &[INT, FLOAT],
        "min" | "max" => &[INT, FLOAT, &["u16x2", "s16x2"]],
        "mul" | "mad" if has("wide") => &[WIDE],
        "mul" | "mad" if lohi => &[INT],
        "mul" => &[FLOAT],
        "mad" => &[F32_F64],
        "fma" => &[FLOAT],
        "div" => &[INT, F32_F64],
        "rem" => &[INT],
        "neg" | "abs" => &[SIGNED, UNSIGNED, FLOAT],
        "and" | "or" | "xor" | "not" => &[BITS, PRED],
        "cnot" | "shl" => &[BITS],
        "shr" => &[BITS, INT],
        "selp" => &[BITS, INT, F32_F64],
        "setp" => &[BITS, INT, FLOAT],
        _ => return None,
    })
}

/// The comparisons a type takes: bit types equality only, signed
/// integers the ordered ones, unsigned ones also `lo`/`ls`/`hi`/`hs`,
/// floating-point types also the unordered ones and `num`/`nan`.
fn comparisons_of(ty: &str) -> &'static [&'static str] {
    const ALL: &[&str] = &[
        "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu",
        "gtu", "geu", "num", "nan",
    ];
    match ty.as_bytes().first() {
        Some(b'b') if !ty.starts_with("bf") => &ALL[..2],
        Some(b's') => &ALL[..6],
        Some(b'u') => &ALL[..10],
        _ => {
            const FLOAT_CMP: &[&str] = &[
                "eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu",
                "num", "nan",
            ];
            FLOAT_CMP
        }
    }
}

/// Whether `i`'s types (and comparison) are ones its family takes;
/// reports ptxas's error and returns false when not.
pub(super) fn instruction_types_fit(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> bool {
    let opcode = i.opcode.as_str();
    let mods: smallvec::SmallVec<[&str; 6]> = i.modifiers.iter().map(|m| m.as_str()).collect();
    let Some(sets) = single_type_sets(opcode, &mods) else {
        return true;
    };
    let types: smallvec::SmallVec<[&str; 2]> =
        mods.iter().copied().filter(|m| is_type(m)).collect();
    let fits = match types.as_slice() {
        [t] => sets.iter().any(|s| s.contains(t)),
        _ => false,
    };
    if !fits {
        cx.error(
            i.span,
            format!("Unexpected instruction types specified for '{opcode}'"),
        );
        return false;
    }
    let ty = types[0];
    if matches!(opcode, "neg" | "abs") && UNSIGNED.contains(&ty) {
        cx.error(
            i.span,
            format!("Instruction '{opcode}' applies only to signed numeric types"),
        );
        return false;
    }
    if opcode == "setp" {
        return comparison_fits(cx, i, &mods, ty);
    }
    true
}

/// `setp`'s comparison: present, and one its type takes.
fn comparison_fits(cx: &mut LowerCx<'_>, i: &ast::Instruction, mods: &[&str], ty: &str) -> bool {
    let all = comparisons_of("f32");
    let unsigned = comparisons_of("u32");
    let Some(cmp) = mods
        .iter()
        .find(|m| all.contains(m) || unsigned.contains(m))
    else {
        cx.error(
            i.span,
            format!(
                "Comparison modifier required for instruction '{}'",
                i.opcode
            ),
        );
        return false;
    };
    if comparisons_of(ty).contains(cmp) {
        return true;
    }
    cx.error(
        i.span,
        "Mismatch between instruction type and comparison qualifier",
    );
    false
}
