//! The chained-read family: a plain read of an accumulator that the open
//! stage rewrites while a committed group that also wrote it is still in
//! flight (a chain across a commit: the previous trip of a loop that ends
//! in `wgmma.wait_group 1`, or a prologue's group never waited for).
//!
//! ptxas 13.0.88 does not serialize such a read as it does a read of the
//! open stage alone (R-read-between-wgmma): it waits for the committed
//! groups before the reader, with no commit of the open stage, and lets the
//! stage run on (`c7517_read_chained_acc_loop_wait1`: the wgmma before the
//! read carries no `gsb0` and a `WARPGROUP.DEPBAR.LE gsb0, 0x0` follows it;
//! the same loop under `wait_group 0` serializes:
//! `c7514_read_chained_acc_loop_wait0`). The CuTe DSL's f16 accumulators,
//! unpacked after their wgmma and repacked round a loop, read this way
//! (`c7517_c7519_f16acc_*`). For an f16x2 unpack (`mov.b32 {h0, h1}, acc`)
//! the advisory names the line of the first instruction after the run of
//! unpacks, not the unpack's (R-unpack-names-next-line). Reads after that
//! wait and before the stage's next wgmma are covered by it.

use super::read::ReadRule;
use super::{Mode, RuleId, ISA_ASYNC_ACCESS};
use crate::fixup::plan::Close;
use crate::fixup::rules::read::ReadAt;
use crate::fixup::walk::Walker;
use ori_ir::consts::*;
use ori_ir::{Block, Inst, InstData, Opcode, Operand, Role, VReg};
use smallvec::SmallVec;

rules! {
    /// A read of an accumulator chained across a commit still in flight.
    ReadChainedCommitted => "R-read-chained-committed", Some(C7517_WAIT_INJECTED),
        "waits for the committed groups (wait_group 0, the open stage left uncommitted) before a read of an accumulator that the open stage rewrites, with more wgmma of the stage to come, when a committed group still in flight also wrote it; it does not serialize (R-read-between-wgmma) as it does when only the open stage wrote it",
        "corpus/c7517_read_chained_acc_loop_wait1",
        ISA_ASYNC_ACCESS,
        culprit: "this instruction reads an accumulator that a committed group still in flight also wrote";
}

impl ReadRule for ReadChainedCommitted {
    fn applies(&self, w: &Walker<'_>, at: &ReadAt<'_>) -> Option<(RuleId, VReg)> {
        let r = at.acc.between?;
        // The open stage's write is a wgmma before the read in its block
        // (an open stage carried round a loop with no commit in it is no
        // chain: `generated/pipelines-2000/g2367`).
        let rewritten_here = at.bx.block_wgmma_defs.get(r) > 0;
        let chained = rewritten_here && at.st.pipe.groups.iter().any(|g| w.hits(r, g));
        (chained || w.chained_wait_before(at)).then_some((RuleId::ReadChainedCommitted, r))
    }

    fn act(&self, w: &Walker<'_>, at: &mut ReadAt<'_>, rule: RuleId, r: VReg) -> bool {
        at.plan.lift_read_between(at.i);
        if w.mode == Mode::IsaStrict {
            // The ISA wants the open stage retired too: commit and wait.
            return w.wait_for_read(at, rule, r);
        }
        // The open stage's write stays in flight: ori notes the read
        // (R-undefined-write), as ptxas leaves it.
        at.plan.undefined_write(at.i, r, Close::CommitBatch);
        if w.chained_wait_before(at) {
            return true;
        }
        if w.wait_unplaceable(at.bx.b, at.st) {
            let rule = RuleId::DivergentHoist;
            at.plan.fail(rule, Some(at.i), Some(r), at.st.last_wgmma);
            return false;
        }
        let line = w.unpack_line(at.bx.b, at.i);
        at.plan.wait(at.i, Close::Nothing, line, rule);
        at.st.retire_committed();
        true
    }
}

impl Walker<'_> {
    /// Whether this rule's wait came before `at.i` since the stage's last
    /// wgmma in its block: ptxas's check of reads between wgmma comes after
    /// its walk and counts the stage split there, so the reads after that
    /// wait (the second half's unpack) are covered by it.
    fn chained_wait_before(&self, at: &ReadAt<'_>) -> bool {
        let insts = self.f.layout.block_insts(at.bx.b);
        let Some(k) = self.position(insts, at.i) else {
            return false;
        };
        insts[..k]
            .iter()
            .rev()
            .take_while(|&&j| !self.f.insts[j].opcode.is_gmma_family())
            .any(|&j| at.plan.has_wait(j))
    }

    /// **R-unpack-names-next-line**: the line C7517 names for a wait before
    /// the unpack `i` (`mov.b32 {h0, h1}, acc`). ptxas moves the run of
    /// unpacks `i` starts down to the first instruction that needs it: one
    /// that touches their registers, a GMMA op, a call or the block's end;
    /// the advisory names that instruction (`c7517_c7519_f16acc_*`: the
    /// commit or the next wgmma; `tests/real/cutedsl/dense_gemm_f16_f16acc_*`:
    /// the wgmma past a `setp` of other registers). `None` when `i` is no
    /// unpack or the run reaches the block's end.
    pub(in crate::fixup) fn unpack_line(&self, b: Block, i: Inst) -> Option<u32> {
        if !is_unpack(&self.f.insts[i]) {
            return None;
        }
        let regs = &self.tables.regs;
        let mut run: SmallVec<[VReg; 8]> = SmallVec::new();
        let mut in_run = true;
        for &j in std::iter::once(&i).chain(self.after_in_block(b, i)?) {
            let d = &self.f.insts[j];
            in_run &= is_unpack(d);
            let (defs, uses) = (regs.defs(j), regs.uses(j));
            if in_run {
                run.extend(defs.iter().chain(uses).copied());
                continue;
            }
            let touches = defs.iter().chain(uses).any(|r| run.contains(r));
            let barrier =
                d.opcode.is_gmma_family() || d.opcode == Opcode::Call || d.opcode.is_terminator();
            if touches || barrier {
                return Some(d.line);
            }
        }
        None
    }
}

/// Whether `d` is an unguarded `mov` into a vector of registers (an unpack).
fn is_unpack(d: &InstData) -> bool {
    &*d.name == "mov"
        && d.guard.is_none()
        && d.slots
            .iter()
            .any(|s| s.role == Role::Def && matches!(s.op, Operand::Vector(_)))
}
