//! The mnemonic-keyed handler table.
//!
//! As in ptxas (seed 003: `sub_5D4190` registers `wgmma.mma_async` →
//! `sub_50AC70`, `wgmma.fence` → `sub_4DA380`, ...), each PTX mnemonic
//! family maps to one handler that checks the instruction and builds its Ori
//! form. The wgmma family and the internal `_warpgroup.*` ops have their own
//! handlers (`wgmma.rs`); everything else goes through the generic
//! def/use handlers (`generic.rs`).

use super::LowerCx;
use crate::ast;
use fxhash::FxHashMap;
use ori_ir::InstData;

/// A handler: check one instruction and build its IR form (None after reporting an error).
pub type Handler = fn(&mut LowerCx<'_>, &ast::Instruction) -> Option<InstData>;

/// Table from mnemonic key (`wgmma.mma_async`, `add`, ...) to handler.
pub type HandlerTable = FxHashMap<&'static str, Handler>;

/// Build the table.
pub fn handler_table() -> HandlerTable {
    let mut t: HandlerTable = FxHashMap::default();
    t.insert("wgmma.mma_async", super::wgmma::lower_mma_async as Handler);
    t.insert("wgmma.fence", super::wgmma::lower_fence as Handler);
    t.insert(
        "wgmma.commit_group",
        super::wgmma::lower_commit_group as Handler,
    );
    t.insert(
        "wgmma.wait_group",
        super::wgmma::lower_wait_group as Handler,
    );
    t.insert("_warpgroup.arrive", super::wgmma::lower_internal as Handler);
    t.insert("_warpgroup.wait", super::wgmma::lower_internal as Handler);
    t.insert(
        "_warpgroup.commit_batch",
        super::wgmma::lower_internal as Handler,
    );
    t.insert("bra", super::generic::lower_branch as Handler);
    t.insert("ret", super::generic::lower_return as Handler);
    t.insert("exit", super::generic::lower_return as Handler);
    t.insert("call", super::indirect_call::lower_call as Handler);
    t.insert(
        "brx",
        super::indexed_branch::lower_indexed_branch as Handler,
    );
    // One list of mnemonics (the parser's): every one the parser accepts
    // and no handler above claims goes through the generic def/use
    // handler, so that the two can no longer disagree (`istypep`, `vadd2`
    // once parsed and then failed as unknown instructions). `wgmma` and
    // `_warpgroup` are keyed by their modifier only: an unknown one is the
    // modifier's error.
    for &g in crate::parser::OPCODES {
        if g != "wgmma" && g != "_warpgroup" {
            t.entry(g)
                .or_insert(super::generic::lower_generic as Handler);
        }
    }
    t
}

/// `opcode.modifier` written into `buf` (no allocation per instruction);
/// `None` when it does not fit, and no key is that long.
fn dotted_key<'b>(buf: &'b mut [u8; 64], opcode: &str, modifier: &str) -> Option<&'b str> {
    let (o, m) = (opcode.as_bytes(), modifier.as_bytes());
    let n = o.len() + 1 + m.len();
    let out = buf.get_mut(..n)?;
    out[..o.len()].copy_from_slice(o);
    out[o.len()] = b'.';
    out[o.len() + 1..].copy_from_slice(m);
    std::str::from_utf8(out).ok()
}

/// Look the instruction up (most specific key first) and run its handler.
pub fn lower_inst(
    cx: &mut LowerCx<'_>,
    i: &ast::Instruction,
    table: &HandlerTable,
) -> Option<InstData> {
    // Found once per (mnemonic, first modifier): both are interned.
    let key = (i.opcode, i.modifiers.first().copied());
    let handler = *cx.handlers.entry(key).or_insert_with(|| {
        let mut buf = [0u8; 64];
        let key2 = i
            .modifiers
            .first()
            .and_then(|m| dotted_key(&mut buf, &i.opcode, m));
        key2.and_then(|k| table.get(k))
            .or_else(|| table.get(i.opcode.as_str()))
            .copied()
    });
    let Some(handler) = handler else {
        if i.opcode == "wgmma" || i.opcode == "_warpgroup" {
            let m = i.modifiers.first().map_or("", |m| m.as_str());
            cx.error(i.span, format!("Unknown modifier '.{m}'"));
        } else {
            cx.error(
                i.span,
                format!("Not a name of any known instruction: '{}'", i.opcode),
            );
        }
        return None;
    };
    let guard = match &i.pred {
        Some(p) => Some(cx.guard(p)?),
        None => None,
    };
    if !negations_are_valid(cx, i) {
        return None;
    }
    let mut data = handler(cx, i)?;
    data.guard = guard;
    Some(data)
}

/// R-front-predicate-negation: `!x` is a predicate read. ptxas 13.0.88
/// rejects it on a register that is not `.pred` ("Illegal argument to
/// predicate negation", then the instruction's "Arguments mismatch"),
/// wherever it stands, and as the destination of an instruction that
/// defines one ("Result register required": `not.pred !p, q`), which is
/// what keeps a negation out of every written operand of the IR
/// (`tests/bad_input/fuzz_negated_*`, found by the `compile_ptx` target).
fn negations_are_valid(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> bool {
    fn negates_non_pred(cx: &mut LowerCx<'_>, op: &ast::Operand) -> bool {
        match &op.kind {
            ast::OperandKind::NegPred(n) => {
                cx.reg_class(n).is_some_and(|c| c != ori_ir::RegClass::Pred)
            }
            ast::OperandKind::Vector(v) => v.iter().any(|o| negates_non_pred(cx, o)),
            _ => false,
        }
    }
    if i.operands.iter().any(|o| negates_non_pred(cx, o)) {
        cx.error(i.span, "Illegal argument to predicate negation");
        cx.error(
            i.span,
            format!("Arguments mismatch for instruction '{}'", i.opcode),
        );
        return false;
    }
    super::generic::result_register_given(cx, i, |k| matches!(k, ast::OperandKind::NegPred(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_keys() {
        let mut buf = [0u8; 64];
        assert_eq!(
            dotted_key(&mut buf, "wgmma", "mma_async"),
            Some("wgmma.mma_async")
        );
        assert_eq!(dotted_key(&mut buf, "x", &"y".repeat(70)), None);
        let t = handler_table();
        assert!(t.contains_key("wgmma.mma_async") && t.contains_key("add"));
        // Every mnemonic the parser accepts has a handler.
        for op in crate::parser::OPCODES {
            assert!(
                t.contains_key(op) || ["wgmma", "_warpgroup"].contains(op),
                "{op}"
            );
        }
        assert!(t.contains_key("istypep") && t.contains_key("vadd2"));
    }
}
