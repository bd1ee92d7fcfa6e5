//! The operand sizes `mov` takes (ptxas 13.0.88, probed): a register of
//! the instruction type's size (`.f32` and `.b32` registers are the same
//! size), and special registers by their own size.
//!
//! It exists because `mov` is the one instruction code generators use to
//! read special registers, and ptxas rejects a size it does not take with
//! `Arguments mismatch for instruction 'mov'` (`mov.u32 %r, %clock64`,
//! `mov.u64 %rd, %tid.x`, `mov.u32 %r, %rd`) or, for a floating-point
//! type, `Special register argument not allowed for instruction 'mov'`.

use super::LowerCx;
use crate::ast;
use ori_ir::RegClass;

/// The register class of a scalar `mov` type (`None`: not checked: 8-bit
/// types, vectors, 128-bit).
fn class_of(ty: &str) -> Option<RegClass> {
    Some(match ty {
        "b16" | "u16" | "s16" | "f16" | "bf16" => RegClass::R16,
        "b32" | "u32" | "s32" | "f32" => RegClass::R32,
        "b64" | "u64" | "s64" | "f64" => RegClass::R64,
        "pred" => RegClass::Pred,
        _ => return None,
    })
}

/// The classes a special register may be moved as.
fn special_classes(name: &str) -> &'static [RegClass] {
    use RegClass::*;
    let (base, comp) = name.split_once('.').unwrap_or((name, ""));
    match base {
        "%clock64" | "%globaltimer" | "%current_graph_exec" => &[R64],
        b if b.starts_with("%pm") && b.ends_with("_64") => &[R64],
        "%gridid" => &[R32, R64],
        "%is_explicit_cluster" => &[Pred],
        "%tid" | "%ntid" | "%ctaid" | "%nctaid" if !comp.is_empty() => &[R16, R32],
        _ => &[R32],
    }
}

/// Whether `mov`'s operands have the sizes its type asks for; reports
/// ptxas's error and returns false when they do not.
pub(super) fn mov_types_fit(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> bool {
    let mut types = i.modifiers.iter().filter_map(|m| class_of(m));
    let (Some(want), None) = (types.next(), types.next()) else {
        return true;
    };
    let float = i
        .modifiers
        .iter()
        .any(|m| m.starts_with('f') || m.starts_with("bf"));
    let mut special_in_float = false;
    let mut fits = true;
    for op in &i.operands {
        let ast::OperandKind::Reg(n) = &op.kind else {
            continue;
        };
        if let Some(c) = cx.reg_class(n) {
            // wgmma operands (accumulators, fragments) are classed apart
            // from their declared type: not checked.
            fits &= c == want || c == RegClass::Tensor;
        } else if n.starts_with('%') && crate::isa::is_special_register(n) {
            special_in_float |= float;
            fits &= special_classes(n).contains(&want);
        }
    }
    if special_in_float {
        cx.error(
            i.span,
            "Special register argument not allowed for instruction 'mov'",
        );
        return false;
    }
    if !fits {
        cx.error(i.span, "Arguments mismatch for instruction 'mov'");
    }
    fits
}
