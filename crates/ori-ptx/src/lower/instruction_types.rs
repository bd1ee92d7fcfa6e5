//! The instruction types the open arithmetic, comparison and select
//! families take (PTX ISA 9.0, 9.7.1-9.7.4; the sets probed type by type
//! with ptxas 13.0.88 for sm_90a by the grammar fuzzer), and the
//! comparisons each type takes.
//!
//! It exists because these families are open in the instruction table,
//! so a type they do not take (`add.s8`, `mul.u32` without `.lo`/`.hi`/
//! `.wide`, `cnot.pred`, `shl.u32`, `mov.u8`, `set.eq.f32.bf16`), a
//! missing or second type, or a
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
        "mov" => &[BITS, INT, F32_F64, PRED, &["b128"]],
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
    if let Some(n) = operand_count(opcode, &mods) {
        if n != i.operands.len() {
            let msg = format!("Arguments mismatch for instruction '{opcode}'");
            cx.error(i.span, msg);
            return false;
        }
    }
    if matches!(opcode, "set" | "slct") {
        let error = if two_types_fit(opcode, &mods) {
            foreign_word(opcode, &mods)
        } else {
            Some(format!(
                "Unexpected instruction types specified for '{opcode}'"
            ))
        };
        if let Some(e) = &error {
            cx.error(i.span, e.clone());
        }
        return error.is_none();
    }
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
    // `mov`'s sizes are checked with its operands (`mov_types`).
    if opcode == "mov" {
        let error = foreign_word(opcode, &mods);
        if let Some(e) = &error {
            cx.error(i.span, e.clone());
        }
        return error.is_none();
    }
    if let Some(e) = modifier_error(opcode, &mods, ty) {
        cx.error(i.span, e);
        return false;
    }
    if opcode == "setp" {
        return comparison_fits(cx, i, &mods, ty);
    }
    true
}

/// `set` and `slct` name two types, the result's first: `set` makes a
/// `.u32`, `.s32` or `.f32` from a comparison of bit, integer, `.f32` or
/// `.f64` values, an integer or its own type from half-precision ones
/// (`set.gt.f16x2.f16x2`, `set.eq.u32.bf16`, not `set.eq.f32.bf16`); `slct` selects bit, integer, `.f32` or `.f64` values by
/// an `.s32` or `.f32`.
fn two_types_fit(opcode: &str, mods: &[&str]) -> bool {
    let types: smallvec::SmallVec<[&str; 2]> =
        mods.iter().copied().filter(|m| is_type(m)).collect();
    let values = |t: &str| BITS.contains(&t) || INT.contains(&t) || F32_F64.contains(&t);
    match (opcode, types.as_slice()) {
        ("set", [d, a]) => {
            let half = matches!(*a, "f16" | "bf16" | "f16x2" | "bf16x2");
            let int = matches!(*d, "u32" | "s32");
            (values(a) && (int || *d == "f32")) || (half && (int || d == a))
        }
        ("slct", [d, c]) => values(d) && matches!(*c, "s32" | "f32"),
        _ => false,
    }
}

/// The operand count of `setp` and `set` (three, four with a boolean
/// operation) and of `min`/`max` (three; sm_90a has no three-input form
/// but for `.f32`, left to ptxas's target check).
fn operand_count(opcode: &str, mods: &[&str]) -> Option<usize> {
    match opcode {
        "setp" | "set" => {
            let boolean = mods.iter().any(|m| matches!(*m, "and" | "or" | "xor"));
            Some(3 + usize::from(boolean))
        }
        "min" | "max" if !mods.contains(&"f32") => Some(3),
        _ => None,
    }
}

/// The words other than types each family takes (PTX ISA 9.0): roundings,
/// `.ftz`, `.sat`, `.cc`, `.lo`/`.hi`/`.wide`, `.relu`, `.NaN`, ...
fn words_of(opcode: &str) -> &'static [&'static str] {
    const ROUND: &[&str] = &["rn", "rz", "rm", "rp", "ftz", "sat", "cc"];
    match opcode {
        "add" | "sub" => ROUND,
        "mul" | "mad" => &[
            "rn", "rz", "rm", "rp", "ftz", "sat", "cc", "lo", "hi", "wide",
        ],
        "fma" => &["rn", "rz", "rm", "rp", "ftz", "sat", "relu", "oob"],
        "div" => &["rn", "rz", "rm", "rp", "ftz", "approx", "full"],
        "min" | "max" => &["ftz", "NaN", "xorsign", "abs", "relu"],
        "neg" | "abs" | "slct" => &["ftz"],
        "mov" => &["v2", "v4"],
        "setp" | "set" => &[
            "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu",
            "gtu", "geu", "num", "nan", "and", "or", "xor", "ftz",
        ],
        _ => &[],
    }
}

/// The first word of `mods`, not a type, that `opcode` does not take.
fn foreign_word(opcode: &str, mods: &[&str]) -> Option<String> {
    let words = words_of(opcode);
    let m = mods.iter().find(|m| !is_type(m) && !words.contains(m))?;
    Some(format!(
        "Illegal modifier '.{m}' for instruction '{opcode}'"
    ))
}

/// A word `opcode` does not take, or takes not with type `ty`: a
/// rounding on an integer type, but `.rn` on half precision, `.ftz` but on `.f32` and 16-bit floats
/// (not `.bf16`), `.NaN` on `.f64` or an integer.
fn modifier_error(opcode: &str, mods: &[&str], ty: &str) -> Option<String> {
    if let Some(e) = foreign_word(opcode, mods) {
        return Some(e);
    }
    let float = FLOAT.contains(&ty);
    let rounding = mods
        .iter()
        .find(|m| matches!(**m, "rn" | "rz" | "rm" | "rp"));
    // Half precision rounds to nearest only (`add.rp.f16x2` is refused).
    let half = float && !F32_F64.contains(&ty);
    if rounding.is_some_and(|r| !float || (half && *r != "rn")) {
        return Some(format!(
            "Illegal rounding modifier for instruction '{opcode}'"
        ));
    }
    let ftz_ok = matches!(ty, "f32" | "f16" | "f16x2");
    let nan_ok = float && ty != "f64";
    let bad = mods
        .iter()
        .find(|m| (**m == "ftz" && !ftz_ok) || (**m == "NaN" && !nan_ok))?;
    Some(format!(
        "Illegal modifier '.{bad}' for instruction '{opcode}'"
    ))
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
