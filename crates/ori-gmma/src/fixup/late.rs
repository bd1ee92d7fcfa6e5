//! The checks ptxas makes after its primary walk, over the decided plan, in
//! its order: fresh values joining a group in flight (C7515,
//! R-zero-trip-join), the waits for exits reached by a branch to a bare
//! `ret` (R-wait-at-exit), waits injected into loops it unrolls (C7514,
//! R-unrolled-loop-wait), and the function's register pressure (C7512,
//! R-function-pressure).

use super::plan::{Close, Plan};
use super::rules::RuleId;
use super::solve::Solution;
use super::state::add_all;
use super::walk::Walker;
use crate::in_flight::PipeState;
use cranelift_entity::SecondaryMap;
use ori_ir::{AccumSet, Block, Inst, Opcode};
use smallvec::SmallVec;

impl Walker<'_> {
    /// The late checks, in ptxas's order.
    pub(super) fn late_checks(&self, sol: &Solution, plan: &mut Plan, maxrregcount: Option<u32>) {
        self.check_plain_joins(&sol.outs, plan);
        self.bare_exit_waits(&sol.outs, plan);
        self.hoisted_waits_commit(&sol.outs, plan);
        self.check_unrolled_loop_waits(plan);
        if plan.failure().is_none()
            && super::budget::over_function_limit(self.f, self.sets, maxrregcount)
        {
            plan.fail(RuleId::FunctionPressure, None, None, None);
        }
    }

    /// **R-hoisted-wait-commits**: a wait hoisted out of a divergent
    /// reader's block (R-divergent-hoist) to the end of a uniform dominator
    /// sits above any commit on the way to the reader, so the wgmmas issued
    /// before it may still be uncommitted there, and `wgmma.wait_group`
    /// retires committed groups only (PTX ISA). Where the converged state
    /// out of that block has wgmmas open, the wait commits them first, as
    /// ptxas's SASS does: the last HGMMA before its hoisted
    /// `WARPGROUP.DEPBAR` carries the gsb0 token. The user's commit on the
    /// way to the reader then closes an empty group. (Found by the
    /// `pipelines` fuzz target: a wgmma issued uncommitted before a
    /// divergent branch whose side commits and reads it.)
    fn hoisted_waits_commit(&self, outs: &SecondaryMap<Block, Option<PipeState>>, plan: &mut Plan) {
        let open_at_hoist = |i: Inst| {
            let at = super::apply::hoist_to_uniform(self.f, self.an, i);
            at != i
                && self
                    .f
                    .layout
                    .inst_block(at)
                    .and_then(|h| outs[h].as_ref())
                    .is_some_and(|o| !o.open.is_empty())
        };
        for w in &mut plan.waits {
            if w.close == Close::Nothing && open_at_hoist(w.at) {
                w.close = Close::CommitBatch;
            }
        }
        for (i, _, close) in &mut plan.ub_writes {
            if *close == Close::Nothing && open_at_hoist(*i) {
                *close = Close::CommitBatch;
            }
        }
    }

    /// **R-wait-at-exit** for a block holding only a `ret`, reached with
    /// accumulators in flight: ptxas turns a branch to it into a predicated
    /// exit at the branch, so the wait goes before the branches of the
    /// in-flight predecessors (from their converged exit states).
    fn bare_exit_waits(&self, outs: &SecondaryMap<Block, Option<PipeState>>, plan: &mut Plan) {
        for b in std::mem::take(&mut plan.bare_exits) {
            let ret = self.f.layout.block_insts(b)[0];
            for &p in self.an.cfg.preds(b) {
                let Some(out) = outs[p].as_ref().filter(|o| !o.is_empty()) else {
                    continue;
                };
                let close = Close::for_open(out);
                let last = self.f.layout.block_insts(p).last().copied();
                let at = last
                    .filter(|l| self.f.insts[*l].opcode == Opcode::Branch)
                    .unwrap_or(ret);
                plan.wait(at, close, None, RuleId::WaitAtExit);
            }
        }
    }

    /// **R-unrolled-loop-wait**: a wait injected into a loop ptxas unrolls
    /// with a remainder is refused by its late check (C7514; see `loops`):
    /// a small loop with a run-time trip count that waits itself.
    fn check_unrolled_loop_waits(&self, plan: &mut Plan) {
        if plan.failure().is_some() {
            return;
        }
        let f = self.f;
        let looped = plan.waits.iter().find(|w| {
            !f.insts[w.at].opcode.is_terminator()
                && f.layout
                    .inst_block(w.at)
                    .is_some_and(|b| self.an.loops.waiting_unrolled[b])
        });
        if let Some(w) = looped {
            let at = w.at;
            plan.fail(RuleId::UnrolledLoopWait, Some(at), None, None);
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
    fn check_plain_joins(&self, outs: &SecondaryMap<Block, Option<PipeState>>, plan: &mut Plan) {
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
