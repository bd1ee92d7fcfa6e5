//! The vector sizes ptxas 13.0.88 checks (probed: the `grammar_vector_*`
//! cases of `tests/bad_input`).
//!
//! It exists because a vector operand's size is part of an instruction's
//! meaning: `ld.global.v4.f32 {a, b}, [p]` would load four values into two
//! registers, and `mov.b64 d, {a, b, c}` packs 96 bits into 64. ptxas
//! rejects both; so does ori, in ptxas's words, before the instruction is
//! lowered. A vector register (`.reg .v2 .f32 v`) counts as its components
//! (`LowerCx` expands it before the handlers run).
//!
//! - A brace list of a size no vector has: `Illegal vector size: N`
//!   (1, 2 and 4 for `mov`; 8 too for loads and stores).
//! - Registers of different sizes in one list: `Incompatible elements of
//!   vector expression`.
//! - `ld`, `ldu`, `st` and `mov.vN`: each vector operand has the `.vN`
//!   size (one without `.vN`): `Argument vector size mismatch for
//!   instruction 'OP'`, twice for the vector result of a `.vN` (and a
//!   load's scalar one), else once; a scalar result of a `.vN` is first
//!   `Result vector expected`.
//! - `atom` and `red`: the same for their result and value, with ptxas's
//!   messages naming the argument (`Vector expected for argument 2`);
//!   `ldmatrix` and `stmatrix` take a brace list of their `.xN` registers.
//! - `mov.bN` packing or unpacking a list: two or four registers of N bits
//!   together, else `Arguments mismatch for instruction 'mov'`.
//! - A 256-bit load or store (`.v8.f32`) needs PTX ISA 8.8 and sm_100.

use super::LowerCx;
use crate::ast;
use ori_ir::RegClass;

/// Whether the vector operands of `i` have the sizes its modifiers ask
/// for; reports ptxas's errors and returns false when they do not.
pub(super) fn vector_sizes_fit(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> bool {
    let has = |m: &str| i.modifiers.iter().any(|x| x == m);
    let widths = match i.opcode.as_str() {
        // `st.async` and `st.bulk` are forms of the table.
        "st" if has("async") || has("bulk") => return true,
        "ld" | "ldu" | "st" | "atom" | "red" => [1, 2, 4, 8].as_slice(),
        "mov" | "ldmatrix" | "stmatrix" => [1, 2, 4].as_slice(),
        _ => return true,
    };
    // Scalars under no `.vN` (nearly every load, store and move) have
    // nothing to check: a width of one is narrower than 256 bits, and no
    // count can differ. `ldmatrix`/`stmatrix` want a brace list even then.
    let scalar = !i
        .operands
        .iter()
        .any(|o| matches!(o.kind, ast::OperandKind::Vector(_)));
    if scalar && vector_width(i) == 1 && !matches!(i.opcode.as_str(), "ldmatrix" | "stmatrix") {
        return true;
    }
    let wide = wide_access_supported(cx, i);
    let mut fits = true;
    for op in &i.operands {
        let ast::OperandKind::Vector(v) = &op.kind else {
            continue;
        };
        if !widths.contains(&v.len()) {
            cx.error(i.span, format!("Illegal vector size: {}", v.len()));
        }
        if !same_element_size(cx, v) {
            cx.error(i.span, "Incompatible elements of vector expression");
            fits = false;
        }
    }
    let vector_mov = has("v2") || has("v4");
    let counts = fits
        && match i.opcode.as_str() {
            "mov" if !vector_mov => packing_fits(cx, i),
            "atom" | "red" => atomic_counts_fit(cx, i),
            "ldmatrix" | "stmatrix" => matrix_count_fits(cx, i),
            _ => counts_fit(cx, i),
        };
    wide && counts
}

/// The bits of `i`'s type modifier (`.f32`: 32).
fn type_bits(i: &ast::Instruction) -> Option<u32> {
    i.modifiers.iter().find_map(|m| {
        let n = m
            .strip_prefix("bf")
            .or_else(|| m.strip_prefix(['b', 'u', 's', 'f']))?;
        n.parse::<u32>().ok()
    })
}

/// A 256-bit load or store (`.v8.f32`, `.v4.b64`) needs PTX ISA 8.8 and
/// sm_100; ptxas's two messages where they are missing.
fn wide_access_supported(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> bool {
    let memory = matches!(i.opcode.as_str(), "ld" | "ldu" | "st");
    let bits = type_bits(i).unwrap_or(0) * vector_width(i) as u32;
    if !memory || bits != 256 {
        return true;
    }
    let feature = "Feature '256 bit wide load/store' requires";
    let mut fits = true;
    if cx.version < (8, 8) {
        cx.error(i.span, format!("{feature} PTX ISA .version 8.8 or later"));
        fits = false;
    }
    let sm = cx.arch().trim_start_matches("sm_");
    let sm: u32 = sm.trim_end_matches(['a', 'f']).parse().unwrap_or(0);
    if sm < 100 {
        cx.error(i.span, format!("{feature} .target sm_100 or higher"));
        fits = false;
    }
    fits
}

/// The `.vN` of `i` (1 without one).
fn vector_width(i: &ast::Instruction) -> usize {
    let v = i.modifiers.iter().find_map(|m| match m.as_str() {
        "v2" => Some(2),
        "v4" => Some(4),
        "v8" => Some(8),
        _ => None,
    });
    v.unwrap_or(1)
}

/// How many values operand `op` stands for: a vector's elements, else one.
fn operand_width(op: &ast::Operand) -> usize {
    match &op.kind {
        ast::OperandKind::Vector(v) => v.len(),
        _ => 1,
    }
}

/// Whether the registers of a vector have one size (the sink and
/// immediates fit any).
fn same_element_size(cx: &mut LowerCx<'_>, v: &[ast::Operand]) -> bool {
    let mut size = None;
    for e in v {
        let ast::OperandKind::Reg(n) = &e.kind else {
            continue;
        };
        let Some(bits) = cx.reg_class(n).and_then(class_bits) else {
            continue;
        };
        if *size.get_or_insert(bits) != bits {
            return false;
        }
    }
    true
}

/// The bits of a register of class `c` (`None`: not a sized value).
fn class_bits(c: RegClass) -> Option<u32> {
    match c {
        RegClass::R16 => Some(16),
        RegClass::R32 => Some(32),
        RegClass::R64 => Some(64),
        _ => None,
    }
}

/// `ld`, `ldu`, `st`, `mov.vN`: every data operand has `.vN` values.
fn counts_fit(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> bool {
    let want = vector_width(i);
    // The data operands: a load's result, a store's source, both of a move.
    let data: &[usize] = match i.opcode.as_str() {
        "st" => &[1],
        "mov" => &[0, 1],
        _ => &[0],
    };
    let mut fits = true;
    for &k in data {
        let Some(op) = i.operands.get(k) else {
            continue;
        };
        if operand_width(op) == want {
            continue;
        }
        let result = i.opcode != "st" && k == 0;
        let scalar = !matches!(op.kind, ast::OperandKind::Vector(_));
        if result && scalar {
            cx.error(i.span, "Result vector expected");
        }
        // ptxas checks a load's result twice against a `.vN`, a move's
        // twice unless it is a scalar.
        let twice = result && want > 1 && (i.opcode != "mov" || !scalar);
        let message = format!(
            "Argument vector size mismatch for instruction '{}'",
            i.opcode
        );
        for _ in 0..1 + usize::from(twice) {
            cx.error(i.span, message.clone());
        }
        fits = false;
    }
    fits
}

/// `atom` and `red` with `.vN` (`atom.global.v2.f32.add d, [a], b`): the
/// result and the value have `.vN` values, in ptxas's words for each.
fn atomic_counts_fit(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> bool {
    let want = vector_width(i);
    let data: &[usize] = if i.opcode == "red" { &[1] } else { &[0, 2] };
    let (op, family) = (
        i.opcode.as_str(),
        format!("{} instruction with vector types", i.opcode),
    );
    let mut generic = 0;
    let mut scalar_result = false;
    for &k in data {
        let Some(o) = i.operands.get(k) else {
            continue;
        };
        let (is_vector, width) = (
            matches!(o.kind, ast::OperandKind::Vector(_)),
            operand_width(o),
        );
        let result = op == "atom" && k == 0;
        if want == 1 && is_vector {
            cx.error(
                i.span,
                format!("Vector is not expected for argument {k} of instruction '{op}'"),
            );
            return false;
        } else if want > 1 && !is_vector {
            cx.error(i.span, format!("Vector expected for argument {k}"));
            scalar_result |= result;
            generic += usize::from(result);
        } else if width != want {
            let m =
                format!("Argument {k} of instruction '{family}': Argument vector size mismatch");
            cx.error(i.span, m);
            generic += 1 + usize::from(result);
        }
    }
    if scalar_result {
        cx.error(i.span, "Result vector expected");
    }
    let message = format!("Argument vector size mismatch for instruction '{op}'");
    for _ in 0..generic {
        cx.error(i.span, message.clone());
    }
    let vector_expected = data.iter().any(|&k| {
        want > 1
            && i.operands
                .get(k)
                .is_some_and(|o| !matches!(o.kind, ast::OperandKind::Vector(_)))
    });
    generic == 0 && !vector_expected
}

/// `ldmatrix` and `stmatrix` with `.xN`: their registers are a brace list
/// of N (even for `.x1`), `Vector of size N is expected for argument K`.
fn matrix_count_fits(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> bool {
    let want = i.modifiers.iter().find_map(|m| match m.as_str() {
        "x1" => Some(1),
        "x2" => Some(2),
        "x4" => Some(4),
        _ => None,
    });
    let k = usize::from(i.opcode == "stmatrix");
    let (Some(want), Some(op)) = (want, i.operands.get(k)) else {
        return true;
    };
    let list = matches!(op.kind, ast::OperandKind::Vector(_));
    if list && operand_width(op) == want {
        return true;
    }
    let name = i.opcode.as_str();
    cx.error(
        i.span,
        format!("Vector of size {want} is expected for argument {k} of instruction '{name}'"),
    );
    if list {
        cx.error(
            i.span,
            format!("Argument vector size mismatch for instruction '{name}'"),
        );
    }
    false
}

/// `mov.bN` with a brace list: two or four registers of `N / count` bits.
fn packing_fits(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> bool {
    let Some(bits) = type_bits(i) else {
        return true;
    };
    let mut fits = true;
    for op in &i.operands {
        let ast::OperandKind::Vector(v) = &op.kind else {
            continue;
        };
        let elems: Vec<u32> = v
            .iter()
            .filter_map(|e| match &e.kind {
                ast::OperandKind::Reg(n) => cx.reg_class(n).and_then(class_bits),
                _ => None,
            })
            .collect();
        let total = elems.first().map(|b| b * v.len() as u32);
        fits &= matches!(v.len(), 2 | 4) && total.is_none_or(|t| t == bits);
    }
    if !fits {
        cx.error(i.span, "Arguments mismatch for instruction 'mov'");
    }
    fits
}
