//! `brx.idx` and the `.branchtargets` lists it picks its target from.
//!
//! PTX ISA 9.0, `brx.idx{.uni} index, tlist;`: `tlist` names a
//! `.branchtargets` list declared earlier in the function
//! (`tlist: .branchtargets L1, L2, ...;`), and the branch continues at
//! `tlist[index]`. Triton's Gluon dispatches the partitions of
//! `gl.warp_specialize` with it. The IR keeps the list itself as the
//! instruction's second operand (a vector of blocks), so that every
//! consumer of the control flow sees every target without a table to
//! look up. The checks and their messages are ptxas 13.0.88's
//! (`tests/bad_input/brx_*`): an index that is not a 32-bit integer
//! register or constant, a list that is not a declared `.branchtargets`,
//! a wrong operand count are each "Arguments mismatch for instruction
//! 'brx.idx'"; a list named before its declaration is also a fatal "Label
//! expected for forward reference", an undeclared one an "Unknown symbol".

use super::LowerCx;
use crate::ast;
use crate::diag::Span;
use ori_ir::{InstData, Operand, Slot, Symbol};

const MISMATCH: &str = "Arguments mismatch for instruction 'brx.idx'";

/// `name: .branchtargets labels;`: the list's blocks, each label resolved
/// as a branch target is (an undefined one is an `Unknown symbol` at the
/// end of the function).
pub(super) fn declare_list(cx: &mut LowerCx<'_>, name: &str, labels: &[(String, Span)]) {
    let list = labels
        .iter()
        .map(|(l, span)| Operand::Block(cx.label_ref(l, *span)))
        .collect();
    cx.branch_lists.insert(name.to_string(), list);
}

/// `brx.idx{.uni} index, tlist`.
pub fn lower_indexed_branch(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<InstData> {
    if i.modifiers.first().map(|m| m.as_str()) != Some("idx") {
        cx.error(i.span, "Not a name of any known instruction: 'brx'");
        return None;
    }
    if let Some(m) = i.modifiers[1..].iter().find(|m| m.as_str() != "uni") {
        cx.error(i.span, format!("Unknown modifier '.{m}'"));
        return None;
    }
    if i.operands.len() != 2 {
        cx.error(i.span, MISMATCH);
        return None;
    }
    let index = cx.operand(&i.operands[0])?;
    let list = target_list(cx, &i.operands[1]);
    if !index_is_valid(cx, &index) {
        cx.error(i.span, MISMATCH);
        return None;
    }
    let Some(list) = list else {
        cx.error(i.span, MISMATCH);
        return None;
    };
    Some(InstData::interned(
        Symbol::new("brx"),
        i.modifiers,
        [Slot::use_(index), Slot::use_(Operand::Vector(list))],
        i.span.line,
    ))
}

/// An index is a `.b32`, `.u32` or `.s32` register, or an integer constant.
fn index_is_valid(cx: &LowerCx<'_>, index: &Operand) -> bool {
    match index {
        Operand::Reg(r) => matches!(cx.func.vregs[*r].ty.as_str(), "b32" | "u32" | "s32"),
        Operand::Imm(imm) => imm.as_i64().is_some(),
        _ => false,
    }
}

/// The blocks of the list `op` names, if it names a declared one; a name
/// that is no label is remembered for [`undeclared_lists`].
fn target_list(cx: &mut LowerCx<'_>, op: &ast::Operand) -> Option<Box<[Operand]>> {
    let (ast::OperandKind::Reg(n) | ast::OperandKind::Symbol(n)) = &op.kind else {
        return None;
    };
    if let Some(list) = cx.branch_lists.get(n.as_str()) {
        return Some(list.clone());
    }
    if !cx.label_scopes_define(n) {
        cx.list_refs.push((n.to_string(), op.span));
    }
    None
}

/// The lists `brx.idx` named before any declaration: one declared later
/// is a fatal "Label expected for forward reference of 'NAME'" (ptxas
/// 13.0.88 takes lists backward only), one never declared an "Unknown
/// symbol 'NAME'".
pub(super) fn undeclared_lists(cx: &mut LowerCx<'_>) {
    for (name, span) in std::mem::take(&mut cx.list_refs) {
        let declared = cx.branch_lists.contains_key(name.as_str())
            || cx.call_lists.contains_key(name.as_str());
        if declared {
            cx.diags.push(crate::diag::Diag::new(
                cx.file,
                span,
                crate::diag::Severity::Fatal,
                format!("Label expected for forward reference of '{name}'"),
            ));
        } else {
            cx.error(span, format!("Unknown symbol '{name}'"));
        }
    }
}
