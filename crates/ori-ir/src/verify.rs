//! The verifier: structural rules every function must satisfy between passes.
//!
//! It checks CFG consistency (terminators last, branch targets laid out),
//! operand kinds and counts against each GMMA opcode's signature, register
//! classes (wgmma accumulators are class 6, guards are predicates) and that
//! every register named is declared. It reports every violation, with the
//! instruction, and never panics: the pass manager runs it after each pass.

use crate::entities::Inst;
use crate::function::{Function, RegClass};
use crate::instructions::{Opcode, Operand, Role};
use crate::wgmma_form::WgmmaForm;
use crate::write::write_inst;
use std::fmt;

/// One violation.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct VerifierError {
    /// The offending instruction, if the rule is about one.
    pub inst: Option<Inst>,
    /// Its PTX line.
    pub line: u32,
    /// The rule broken.
    pub message: String,
}

impl fmt::Display for VerifierError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.inst {
            Some(i) => write!(f, "{i} (line {}): {}", self.line, self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for VerifierError {}

/// Whether an operand can be written: registers (alone, in a vector or a
/// predicate pair), the sink `_`, or a call's return list (registers or
/// `.param` variables).
fn writable(op: &Operand) -> bool {
    match op {
        Operand::Reg(_) | Operand::PredPair(..) | Operand::Sink => true,
        Operand::Vector(v) => v.iter().all(writable),
        Operand::Args(v) => v
            .iter()
            .all(|o| matches!(o, Operand::Sym(_)) || writable(o)),
        _ => false,
    }
}

fn regs_ok(f: &Function, op: &Operand) -> bool {
    let mut ok = true;
    op.for_each_reg(&mut |r| ok &= f.vregs.is_valid(r));
    ok
}

/// Verify `f`; an empty vector means it is well formed. The errors come in
/// layout order.
pub fn verify_function(f: &Function) -> Vec<VerifierError> {
    verify_blocks(f, 0..f.layout.blocks().len(), &laid_out_twice(f))
}

/// Where an instruction is laid out again after its first place: (block's
/// index in the layout, index in the block), in layout order. Read from
/// the layout alone, before the instructions are verified.
fn laid_out_twice(f: &Function) -> Vec<(usize, usize)> {
    let mut seen: cranelift_entity::SecondaryMap<Inst, bool> = crate::sized_map(f.insts.len());
    let mut twice = Vec::new();
    for (bi, &b) in f.layout.blocks().iter().enumerate() {
        if !f.blocks.is_valid(b) {
            continue;
        }
        for (k, &i) in f.layout.block_insts(b).iter().enumerate() {
            if !f.insts.is_valid(i) {
                continue;
            }
            if seen[i] {
                twice.push((bi, k));
            }
            seen[i] = true;
        }
    }
    twice
}

/// Verify the blocks of the layout at indices `range` (`twice`:
/// [`laid_out_twice`]).
fn verify_blocks(
    f: &Function,
    range: std::ops::Range<usize>,
    twice: &[(usize, usize)],
) -> Vec<VerifierError> {
    let mut errs = Vec::new();
    let first = range.start;
    let blocks = &f.layout.blocks()[range];
    for (bi, &b) in (first..).zip(blocks) {
        if !f.blocks.is_valid(b) {
            errs.push(VerifierError {
                inst: None,
                line: 0,
                message: format!("{b} is laid out but not defined"),
            });
            continue;
        }
        let insts = f.layout.block_insts(b);
        for (k, &i) in insts.iter().enumerate() {
            let mut err = |message: String| {
                let line = f.insts.get(i).map_or(0, |d| d.line);
                errs.push(VerifierError {
                    inst: Some(i),
                    line,
                    message,
                });
            };
            let Some(d) = f.insts.get(i) else {
                err(format!("{i} is laid out but not defined"));
                continue;
            };
            if twice.binary_search(&(bi, k)).is_ok() {
                err(format!("{i} is laid out twice"));
            }
            if f.layout.inst_block(i) != Some(b) {
                err(format!(
                    "{i} is listed in {b} but the layout places it elsewhere"
                ));
            }
            verify_control(f, d, k + 1 == insts.len(), &mut err);
            if d.slots.iter().any(|s| !regs_ok(f, &s.op)) {
                err("operand names an undeclared register".into());
                continue;
            }
            if let Some(s) = d
                .slots
                .iter()
                .find(|s| s.role.defines() && !writable(&s.op))
            {
                let mut text = String::new();
                crate::write::write_operand(&mut text, f, &s.op);
                err(format!("'{text}' is written but is no register"));
            }
            verify_signature(f, d, &mut err);
        }
    }
    errs
}

/// An instruction's control flow: a terminator ends its block (`last`:
/// the instruction is its block's last), a branch goes to laid-out blocks,
/// a guard is a declared predicate.
fn verify_control(
    f: &Function,
    d: &crate::instructions::InstData,
    last: bool,
    err: &mut impl FnMut(String),
) {
    if d.opcode.is_terminator() && !last {
        err(format!(
            "terminator '{}' is not the last instruction of its block",
            d.mnemonic()
        ));
    }
    if d.opcode == Opcode::Branch {
        match d.branch_target() {
            Some(t) if f.blocks.is_valid(t) && f.layout.is_block_laid_out(t) => {}
            _ => err("branch target is not a laid-out block".into()),
        }
    }
    if d.opcode == Opcode::IndexedBranch {
        verify_indexed_branch(f, d, err);
    }
    if let Some(g) = d.guard {
        if !f.vregs.is_valid(g.reg) {
            err("guard names an undeclared register".into());
        } else if f.vregs[g.reg].class != RegClass::Pred {
            err(format!(
                "guard '{}' is not a predicate",
                f.vregs[g.reg].name
            ));
        }
    }
}

fn verify_signature(f: &Function, d: &crate::instructions::InstData, err: &mut impl FnMut(String)) {
    match d.opcode {
        Opcode::WgmmaFence
        | Opcode::WgmmaCommitGroup
        | Opcode::WarpgroupArrive
        | Opcode::WarpgroupCommitBatch
            if !d.slots.is_empty() =>
        {
            err(format!(
                "'{}' takes no operands, found {}",
                d.mnemonic(),
                d.slots.len()
            ));
        }
        Opcode::WgmmaWaitGroup | Opcode::WarpgroupWait
            if d.slots.len() != 1 || d.wait_count().is_none_or(|n| n < 0) =>
        {
            err(format!(
                "'{}' takes one integer constant, at least 0",
                d.mnemonic()
            ));
        }
        Opcode::WgmmaMmaAsync => verify_wgmma(f, d, err),
        _ => {}
    }
}

/// A `brx.idx`: an index (a 32-bit register or an integer constant) and a
/// list of laid-out blocks, at least one.
fn verify_indexed_branch(
    f: &Function,
    d: &crate::instructions::InstData,
    err: &mut impl FnMut(String),
) {
    let index_ok = match d.slots.first().map(|s| &s.op) {
        Some(Operand::Reg(r)) => f.vregs.is_valid(*r) && f.vregs[*r].class == RegClass::R32,
        Some(Operand::Imm(i)) => i.as_i64().is_some(),
        _ => false,
    };
    if d.slots.len() != 2 || !index_ok {
        return err("brx.idx takes a 32-bit index and a list of blocks".into());
    }
    let laid_out = |o: &Operand| match o {
        Operand::Block(t) => f.blocks.is_valid(*t) && f.layout.is_block_laid_out(*t),
        _ => false,
    };
    match d.indexed_targets() {
        Some(list) if !list.is_empty() && list.iter().all(laid_out) => {}
        _ => err("brx.idx target list is not a list of laid-out blocks".into()),
    }
}

/// The operands of a `wgmma.mma_async`: as many as its form takes, the
/// accumulators a vector of tensor-class registers read and written, the
/// A fragment of the form's size, the sparsity operands, the inputs read.
fn verify_wgmma(f: &Function, d: &crate::instructions::InstData, err: &mut impl FnMut(String)) {
    let form = match WgmmaForm::decode(&d.mods[1..]) {
        Ok(form) => form,
        Err(e) => return err(format!("wgmma.mma_async: {e}")),
    };
    let a_regs = matches!(d.slots.get(1).map(|s| &s.op), Some(Operand::Vector(_)));
    let want = form.operand_count(a_regs);
    if d.slots.len() != want {
        return err(format!(
            "wgmma.mma_async takes {want} operands here, found {}",
            d.slots.len()
        ));
    }
    match &d.slots[0] {
        s if s.role != Role::DefUse => err("wgmma accumulator operand must be 'inout'".into()),
        s => match &s.op {
            Operand::Vector(v) if v.len() == form.accumulator_regs() => {
                for o in v {
                    match o {
                        Operand::Reg(r) if f.vregs[*r].class == RegClass::Tensor => {}
                        Operand::Reg(r) => err(format!(
                            "wgmma accumulator '{}' is not in register class 6",
                            f.vregs[*r].name
                        )),
                        _ => err("wgmma accumulator vector holds a non-register".into()),
                    }
                }
            }
            Operand::Vector(v) => err(format!(
                "wgmma accumulator vector has {} registers, the shape needs {}",
                v.len(),
                form.accumulator_regs()
            )),
            _ => err("wgmma accumulator must be a register vector".into()),
        },
    }
    if let Some(Operand::Vector(v)) = d.slots.get(1).map(|s| &s.op) {
        if v.len() != form.a_fragment_regs() {
            err(format!(
                "wgmma A fragment has {} registers, needs {}",
                v.len(),
                form.a_fragment_regs()
            ));
        }
    }
    let named = d.wgmma_operands();
    if let Some(w) = named.filter(|w| w.form.sparse) {
        let meta_ok = match w.sparse_metadata.unwrap_or(&Operand::Sink) {
            Operand::Reg(_) => true,
            Operand::Vector(v) => {
                !v.is_empty()
                    && v.iter()
                        .all(|o| matches!(o, Operand::Reg(_) | Operand::Special(_)))
            }
            _ => false,
        };
        if !meta_ok {
            err("wgmma sparsity metadata must be a register".into());
        }
        if !matches!(w.sparse_selector, Some(Operand::Imm(_))) {
            err("wgmma sparsity selector must be an immediate".into());
        }
    }
    for s in d.slots.iter().skip(1) {
        if s.role != Role::Use {
            err("wgmma inputs must be read-only operands".into());
        }
    }
}

/// Render the errors with the instruction text, one per line.
pub fn format_errors(f: &Function, errs: &[VerifierError]) -> String {
    let mut s = String::new();
    for e in errs {
        s.push_str(&format!("function '{}': {e}", f.name));
        if let Some(i) = e.inst.filter(|i| f.insts.is_valid(*i)) {
            s.push_str("\n    ");
            write_inst(&mut s, f, &f.insts[i]);
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::ModuleBuilder;
    use crate::FuncKind;

    /// Every error of a large function: a function of 1000 blocks of 70
    /// instructions, with errors far apart and an instruction laid out a
    /// second time far from its first place.
    #[test]
    fn every_error_of_a_large_function_is_found() {
        let mb = ModuleBuilder::new("sm_90a");
        let mut fb = mb.function("k", FuncKind::Entry);
        let r = fb.reg("r", "b32");
        let blocks: Vec<_> = (0..1000).map(|_| fb.create_block(None)).collect();
        let mut first = None;
        for (k, &b) in blocks.iter().enumerate() {
            fb.switch_to_block(b);
            for _ in 0..69 {
                let i = fb.op("add.s32", r, &[r.into(), Operand::int(1)]);
                first.get_or_insert(i);
            }
            match blocks.get(k + 1) {
                Some(&next) => fb.bra(next, None),
                None => fb.ret(),
            };
        }
        let mut f = fb.finish();
        // A return mid-block in two blocks, and the first instruction laid
        // out again at the end of the last block but one.
        for b in [blocks[10], blocks[900]] {
            let i = f.layout.block_insts(b)[3];
            f.insts[i].opcode = Opcode::Return;
        }
        let first = first.expect("an instruction");
        f.layout.append_inst(first, blocks[998]);
        let errs = verify_function(&f);
        assert_eq!(errs.len(), 5, "{errs:#?}");
    }
}
