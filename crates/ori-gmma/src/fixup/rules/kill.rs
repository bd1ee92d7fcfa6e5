//! The kill family: writes to registers of wgmma in flight (an accumulator
//! killed before or after a chain, rewritten in place twice, an A fragment
//! written by a wgmma or rewritten in a loop), overlapping sets, and a
//! fresh value joining a group in flight: where ptxas runs out of pipeline
//! registers or serializes, and the writes it leaves undefined.

use super::{RuleId, ISA_ASYNC_ACCESS, ISA_FENCE};
use crate::fixup::plan::{Close, Plan};
use crate::fixup::state::{add_all, State};
use crate::fixup::walk::{Access, BlockCx, Walker, CHAIN};
use crate::in_flight::PipeState;
use cranelift_entity::SecondaryMap;
use ori_ir::consts::*;
use ori_ir::{AccumSet, Block, Inst, Opcode, VReg};
use smallvec::SmallVec;

rules! {
    /// A write killing an accumulator a later wgmma of the block chains on.
    KillBeforeChain => "R-kill-before-chain", Some(C7511_PIPELINE_REGISTERS),
        "runs out of pipeline registers (C7511) when a write kills an accumulator written by one wgmma and a later wgmma of the block accumulates into it, even across commits and waits",
        "corpus/c7511_def_acc_between_mma",
        ISA_ASYNC_ACCESS;
    /// A write killing an accumulator two wgmma of the open stage chained into.
    KillAfterChain => "R-kill-after-chain", Some(C7515_DEFINES_ACCUMULATORS),
        "serializes a write that kills an open accumulator after two or more wgmma of the stage chained into it; after one, the write moves past the wait",
        "corpus/c7515_kill_after_chained_mma",
        ISA_ASYNC_ACCESS;
    /// The same accumulator rewritten in place twice in one chain.
    RmwTwice => "R-rmw-twice", Some(C7515_DEFINES_ACCUMULATORS),
        "serializes when the same accumulator is rewritten in place a second time in one chain, after a wgmma took the first rewrite",
        "corpus/heldout5_33_const3_loop_mma_then_in_place_mul_of_acc_commit_after_loop",
        ISA_ASYNC_ACCESS;
    /// Accumulator sets overlapping without starting at the same register.
    OverlappingSets => "R-overlapping-sets", Some(C7511_PIPELINE_REGISTERS),
        "cannot allocate in place a set overlapping an in-flight set without starting at its lowest register",
        "corpus/heldout5_22_partially_overlapping_n16_and_n32_sets_one_stage",
        "accumulator registers of wgmma in flight may not be reused";
    /// An A fragment written by a wgmma since the last arrive.
    FragmentFromWgmma => "R-fragment-from-wgmma", Some(C7513_DEFINES_INPUTS),
        "serializes a wgmma whose A fragment (or sparse metadata) a wgmma wrote since the last arrive: no injected arrive can order it",
        "corpus/heldout5_28_f16acc_set_used_as_rega_of_next_wgmma_same_stage_no_wait",
        ISA_FENCE;
    /// An A fragment rewritten in a run-time loop while its wgmma may be in flight.
    LoopCarriedFragment => "R-loop-carried-fragment", Some(C7513_DEFINES_INPUTS),
        "serializes an A fragment rewritten, in a run-time loop, after the wgmma of its own block that reads it while that may be in flight",
        "corpus/heldout2_13_fa3_softmax_overlaps_o_gemm_wait1_rewrites_p_in_flight",
        ISA_ASYNC_ACCESS;
    /// A fresh value joining a group in flight.
    ZeroTripJoin => "R-zero-trip-join", Some(C7515_DEFINES_ACCUMULATORS),
        "serializes where a path that never issued a set brings a plain write of its registers to a join with the group in flight on another path",
        "triton2/accread_partial_fp16_64x128x64_s3_w4",
        ISA_ASYNC_ACCESS;
}

impl Walker<'_> {
    /// **R-overlapping-sets** and **R-fragment-from-wgmma**.
    pub(in crate::fixup) fn wgmma_register_failures(
        &self,
        st: &State,
        plan: &mut Plan,
        i: Inst,
        accs: &[VReg],
    ) {
        // Accumulator sets that overlap an in-flight one without starting at
        // the same register cannot be allocated in place (`heldout5_22`: n16
        // {f0..f7} then n32 {f4..f19}). Sets are compared by their lowest
        // register (sets are sorted by register id): CUTLASS writes its
        // accumulator vectors in descending order (`{%f2930, ..., %f2867}`),
        // so the first operand is not where the set starts.
        let flying = st.pipe.all();
        let lowest = accs.iter().min();
        let misaligned = accs.iter().any(|r| {
            self.tables.reg_sets[*r].iter().any(|s| {
                flying.contains(s) && self.sets.get(*s).and_then(|set| set.first()) != lowest
            })
        });
        if misaligned {
            let rule = RuleId::OverlappingSets;
            plan.fail(rule, Some(i), accs.first().copied(), st.last_wgmma);
        }
        // An A fragment a wgmma wrote since the last arrive: no injected
        // arrive can order it (`heldout5_28`, fixed only by wait + fence).
        let frag_from_wgmma = self
            .tables
            .regs
            .frags(i)
            .iter()
            .copied()
            .find(|r| self.hits(*r, &st.wgmma_sets_since_arrive));
        if let Some(r) = frag_from_wgmma {
            plan.fail(RuleId::FragmentFromWgmma, Some(i), Some(r), st.last_wgmma);
        }
    }

    /// **R-kill-before-chain** and **R-kill-after-chain**: a write that
    /// kills an accumulator (its old value unread). Found on ptxas 13.0.88
    /// (probes n1, n3, n9, n13): when a later wgmma of the block takes the
    /// register as accumulator, C7511, even across commits and waits when a
    /// single wgmma wrote it (after two or more ptxas keeps the chain,
    /// `heldout3_30`); when no later wgmma does but two or more wgmma of the
    /// open stage chained into it, C7515; after a single wgmma, the write is
    /// moved past the wait and nothing is said. Returns (serialized here,
    /// the kill was sunk past a commit or wait of its block).
    pub(in crate::fixup) fn kill_rules(
        &self,
        bx: &BlockCx,
        st: &State,
        plan: &mut Plan,
        i: Inst,
        acc: &Access,
    ) -> (bool, bool) {
        let b = bx.b;
        let kill_chain = acc.defs.iter().copied().find(|r| {
            bx.block_wgmma_defs.get(*r) == 1
                && !acc.uses.contains(r)
                && self.wgmma_later_in_block_using(b, i, *r)
        });
        let kill_open = || {
            acc.defs
                .iter()
                .copied()
                .find(|r| self.hits(*r, &st.pipe.open) && !acc.uses.contains(r))
        };
        let fail = |plan: &mut Plan, rule, r| {
            plan.fail(rule, Some(i), Some(r), st.last_wgmma);
            (true, false)
        };
        if let Some(r) = kill_chain {
            return fail(plan, RuleId::KillBeforeChain, r);
        }
        let Some(r) = kill_open() else {
            return (false, false);
        };
        let chained = |s: &AccumSet| bx.block_issues.iter().filter(|x| *x == s).count() >= CHAIN;
        if self.wgmma_later_using(b, i, r) {
            fail(plan, RuleId::KillBeforeChain, r)
        } else if self.tables.reg_sets[r].iter().any(chained) {
            fail(plan, RuleId::KillAfterChain, r)
        } else {
            (false, self.sync_later_in_block(b, i))
        }
    }

    /// **R-loop-carried-fragment** and **R-undefined-write**: a write to a
    /// register of a wgmma that may still be in flight, which no rule above
    /// handled: undefined behaviour by the PTX ISA ("accessing the
    /// accumulator register or the input register containing the fragments
    /// of matrix A ... without first performing a wgmma.wait_group ... is
    /// undefined behavior"), left alone by ptxas 13.0.88 unless it is an A
    /// fragment rewritten, in a run-time loop, after the wgmma of its own
    /// block that reads it (seed 003: "in the same basic block and after the
    /// WGMMA"): the next iteration's wgmma reads the same register, which
    /// ptxas cannot rename (C7513, `heldout2_13`; a load at the loop top is
    /// fine, `heldout_29`; ptxas is also clean when it unrolls the loop,
    /// which ori does not model).
    pub(in crate::fixup) fn in_flight_write_rules(
        &self,
        bx: &mut BlockCx,
        st: &mut State,
        plan: &mut Plan,
        i: Inst,
        acc: &Access,
    ) {
        let all = st.pipe.all();
        let Some(r) = acc
            .defs
            .iter()
            .copied()
            .find(|r| self.hits(*r, &all) || st.a_frags.iter().any(|(x, _)| x == r))
        else {
            return;
        };
        let fragment = bx.block_fragments.contains(&r) && !self.tables.kinds.tensor(r);
        if fragment && self.an.loops.runtime[bx.b] {
            plan.fail(RuleId::LoopCarriedFragment, Some(i), Some(r), st.last_wgmma);
            return;
        }
        let close = Close::for_open(&st.pipe);
        plan.undefined_write(i, r, close);
        if RuleId::UndefinedWrite.injects_in(self.mode)
            && self.strict_wait_placeable(plan, i, r, st)
        {
            if close == Close::CommitBatch {
                bx.close_stage();
            }
            st.retire_all();
        }
    }

    /// C7515 at a join (not a loop header) where one path brings an
    /// accumulator set in flight and another path, in blocks of its own
    /// (not dominating the join) where the set was never issued, wrote some
    /// of its registers with a plain instruction: ptxas merges a fresh value
    /// into the accumulator registers while the group is in flight (Triton's
    /// zero-trip block around a `wait_group 1` mainloop:
    /// `tests/triton2/accread_partial_*`, `tests/triton/fp8e4m3_128x256x128_*`).
    /// A write before the split is the same value on every path, and a path
    /// that issued the set joins a value the wgmma chain produced
    /// (`c7517_uniform_branch_read_acc`). Only joins with a set in flight are
    /// looked at, and only the straight-line blocks above each predecessor
    /// up to the join's dominator, so the cost stays linear.
    pub(in crate::fixup) fn check_plain_joins(
        &self,
        outs: &SecondaryMap<Block, Option<PipeState>>,
        plan: &mut Plan,
    ) {
        if plan.failure().is_some() {
            return;
        }
        let dt = &self.an.dt;
        for &j in self.an.cfg.rpo() {
            let preds = self.an.cfg.preds(j);
            if preds.len() < 2 || preds.iter().any(|p| dt.dominates(j, *p)) {
                continue;
            }
            let mut flying: SmallVec<[AccumSet; 4]> = SmallVec::new();
            for p in preds {
                if let Some(o) = &outs[*p] {
                    add_all(&mut flying, o.all());
                }
            }
            if flying.is_empty() {
                continue;
            }
            for &p in preds {
                let carries = outs[p].as_ref().is_some_and(|o| !o.is_empty());
                if carries {
                    continue;
                }
                let Some(at) = self.fresh_write_above(p, j, &flying, dt) else {
                    continue;
                };
                // The written set must never have been issued on the way here.
                let sets: SmallVec<[AccumSet; 4]> = self.f.insts[at]
                    .defs()
                    .iter()
                    .flat_map(|r| self.tables.reg_sets[*r].iter().copied())
                    .collect();
                let mut up = Some(p);
                let mut issued_above = false;
                while let Some(b) = up {
                    if self.f.layout.block_insts(b).iter().any(|i| {
                        let d = &self.f.insts[*i];
                        d.opcode == Opcode::WgmmaMmaAsync
                            && d.accum.is_some_and(|w| sets.contains(&w.dst))
                    }) {
                        issued_above = true;
                        break;
                    }
                    up = dt.idom(b).filter(|x| *x != b);
                }
                if !issued_above {
                    plan.fail(RuleId::ZeroTripJoin, Some(at), None, None);
                    // ptxas sees the fresh value at this join, not a wait to add.
                    plan.waits
                        .retain(|w| self.f.layout.inst_block(w.at) != Some(j));
                    return;
                }
            }
        }
    }

    /// A plain write of a register of `sets` in the straight-line blocks from
    /// `p` up to (not including) a block dominating `j`, none of which issues
    /// a wgmma.
    fn fresh_write_above(
        &self,
        mut p: Block,
        j: Block,
        sets: &[AccumSet],
        dt: &ori_ir::DominatorTree,
    ) -> Option<Inst> {
        let mut found = None;
        loop {
            if dt.dominates(p, j) {
                return found;
            }
            for &i in self.f.layout.block_insts(p) {
                let d = &self.f.insts[i];
                if d.opcode == Opcode::WgmmaMmaAsync {
                    return None;
                }
                if d.opcode == Opcode::Generic && d.defs().iter().any(|r| self.hits(*r, sets)) {
                    found.get_or_insert(i);
                }
            }
            match self.an.cfg.preds(p) {
                [q] => p = *q,
                _ => return found,
            }
        }
    }
}
