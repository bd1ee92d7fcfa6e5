//! The wait family: where ptxas injects a `warpgroup.wait` (before a read,
//! at an exit, at a join of arms that waited at different levels, before a
//! wgmma overwriting a copied accumulator), the commit it writes out at a
//! wait reached with the stage open, and the waits it refuses in loops it
//! unrolls.

use super::read::{ReadAt, ReadRule};
use super::{Rule, RuleId, ISA_ASYNC_ACCESS};
use crate::fixup::plan::{Close, Plan, Seen};
use crate::fixup::state::State;
use crate::fixup::walk::{Access, BlockCx, Walker};
use crate::in_flight::PipeState;
use cranelift_entity::SecondaryMap;
use ori_ir::consts::*;
use ori_ir::{AccumSet, Block, Inst, Opcode, VReg};

rules! {
    /// A wait before an instruction that reads an accumulator in flight.
    WaitBeforeRead => "R-wait-before-read", Some(C7517_WAIT_INJECTED),
        "injects commit (when the stage is open) and warpgroup.wait 0 before a non-wgmma instruction reading or rewriting in place an accumulator in flight, hoisted to uniform code but naming the reader's line",
        "corpus/c7517_c7519_read_then_rmw_between_mma",
        ISA_ASYNC_ACCESS,
        culprit: "this instruction reads an accumulator of a wgmma still in flight";
    /// The user's commit moved up to the wait its reads get.
    HoistCommit => "R-hoist-commit", Some(C7517_WAIT_INJECTED),
        "moves the user's commit_group that follows plain reads of the open stage up to the wait the reads get, instead of committing an empty group later",
        "corpus/c7517_read_acc_before_commit",
        "commit_group closes all prior uncommitted wgmma into one group";
    /// A wait before `ret` with accumulators in flight.
    WaitAtExit => "R-wait-at-exit", Some(C7517_WAIT_INJECTED),
        "waits before an exit reached with anything in flight (the dummy wgmma of an empty group included); a branch to a block holding only ret becomes a predicated exit, so the wait goes before the branch",
        "corpus/c7517_exit_branch_to_bare_ret",
        ISA_ASYNC_ACCESS,
        culprit: "the function exits here with wgmma in flight";
    /// A wgmma overwriting an accumulator whose copy is still live.
    WaitBeforeCopiedOverwrite => "R-wait-before-copied-overwrite", Some(C7517_WAIT_INJECTED),
        "propagates copies of in-flight accumulators; a wgmma overwriting a copied accumulator of a committed group waits first",
        "corpus/c7517_read_acc_after_commit_then_mma",
        ISA_ASYNC_ACCESS,
        culprit: "this wgmma overwrites an accumulator whose copy is still live";
    /// A wgmma taking a copy of a register in flight.
    WaitBeforeCopyIntoWgmma => "R-wait-before-copy-into-wgmma", Some(C7517_WAIT_INJECTED),
        "propagates a copy of a register in flight before any wait (R-unwaited-sets-in-flight) into the wgmma that takes it as an accumulator, and waits before that wgmma, committing the open stage first",
        "corpus/c7517_c7519_copy_future_acc_between_wgmma",
        ISA_ASYNC_ACCESS,
        culprit: "this wgmma takes a copy of a register still in flight";
    /// A copy whose value lives out of its block sinks to the user's wait.
    UnpackSinksToWait => "R-unpack-sinks-to-wait", Some(C7517_WAIT_INJECTED),
        "sinks a copy (an f16x2 unpack) of an in-flight accumulator whose value lives out of its block to the block's wait_group 0 and waits there; C7517 names the line before the user's wait",
        "corpus/c7517_f16x2_loop_nounroll_repacked_halves",
        ISA_ASYNC_ACCESS,
        culprit: "ptxas sinks a copy of an in-flight accumulator (used past its block) to this wait_group and waits here";
    /// The wait at a join of arms that waited at different levels.
    JoinWaitLevels => "R-join-wait-levels", Some(C7517_WAIT_INJECTED),
        "waits at the end of a join of uniform arms that each end in a wait of a different level, naming its branch, when some path then touches the sets before waiting itself",
        "corpus/heldout4_30_loop_last_iter_wait0_else_wait1_uniform_diamond_then_read",
        ISA_ASYNC_ACCESS,
        culprit: "paths reaching this point left different groups in flight";
    /// A wait reached with the stage still open closes it.
    ImplicitCommit => "R-wait-closes-stage", None,
        "closes a stage left open at a user's wait_group (the last HGMMA carries gsb0); ori writes the commit out",
        "corpus/attempt_c7516_no_commit",
        "wait_group waits for committed groups only; uncommitted wgmma are not covered";
    /// A wait injected into a loop ptxas unrolls with a remainder.
    UnrolledLoopWait => "R-unrolled-loop-wait", Some(C7514_READS_ACCUMULATORS),
        "refuses, in a late check, a wait injected into a small loop with a run-time trip count, which it unrolls with a remainder, when the loop holds a wgmma.wait_group of its own (the next copy of the body then waits after it)",
        "corpus/c7514_loop_read_acc_in_loop",
        ISA_ASYNC_ACCESS;
}

impl ReadRule for WaitBeforeRead {
    fn applies(&self, _w: &Walker<'_>, at: &ReadAt<'_>) -> Option<(RuleId, VReg)> {
        at.acc.read_any.map(|r| (Self::ID, r))
    }

    fn act(&self, w: &Walker<'_>, at: &mut ReadAt<'_>, rule: RuleId, r: VReg) -> bool {
        w.wait_for_read(at, rule, r)
    }
}

impl Walker<'_> {
    /// The action of R-wait-before-read and R-read-before-rmw: the wait
    /// before the reader, or C7518 where it cannot be hoisted to uniform
    /// code (R-divergent-hoist). Whether a wait now covers the reader.
    pub(in crate::fixup) fn wait_for_read(
        &self,
        at: &mut ReadAt<'_>,
        rule: RuleId,
        r: VReg,
    ) -> bool {
        if self.wait_unplaceable(at.bx.b, at.st) {
            let rule = RuleId::DivergentHoist;
            at.plan.fail(rule, Some(at.i), Some(r), at.st.last_wgmma);
            return false;
        }
        self.wait_before_read(at.bx, at.st, at.plan, at.i, at.acc, rule);
        true
    }

    /// **R-wait-before-read**, **R-read-before-rmw** (and
    /// **R-hoist-commit**, **R-rmw-twice**): a wait before the reader; in divergent code ptxas hoists it to uniform
    /// code but still names the reader's line.
    pub(in crate::fixup) fn wait_before_read(
        &self,
        bx: &mut BlockCx,
        st: &mut State,
        plan: &mut Plan,
        i: Inst,
        acc: &Access,
        rule: RuleId,
    ) {
        // The same accumulator rewritten in place a second time in one chain
        // (after a wgmma that took the first rewrite): C7515 (`heldout5_33`;
        // other registers each time are fine).
        let in_place = || acc.defs.iter().copied().filter(|r| acc.uses.contains(r));
        if let Some(r) = in_place().find(|r| st.rmw_regs.contains(r)) {
            plan.fail(RuleId::RmwTwice, Some(i), Some(r), st.last_wgmma);
        }
        for r in in_place() {
            if self.tables.kinds.tensor(r) && !st.rmw_regs.contains(&r) {
                st.rmw_regs.push(r);
            }
        }
        // A read in flight by R-unwaited-sets-in-flight only: writes of
        // sets not in flight between it and the commit do not keep the
        // commit down (`c7517_read_future_acc_then_rewrite_before_commit`).
        let unwaited = acc.read_any.is_some_and(|r| !self.hits(r, &acc.all));
        let hoist = || {
            match unwaited {
                true => self.commit_after_unwaited_read(bx.b, i, &acc.all),
                false => self.commit_after_reads(bx.b, i),
            }
            .filter(|_| !acc.defines_acc)
        };
        let close = if st.pipe.open.is_empty() {
            Close::Nothing
        } else if let Some(c) = hoist() {
            Close::Hoist(c)
        } else {
            bx.close_stage();
            Close::CommitBatch
        };
        plan.wait(i, close, self.unpack_line(bx.b, i), rule);
        st.retire_all();
    }

    /// A wait an earlier visit decided before `i` stands on every later
    /// visit (R-first-visit), so where a back edge brings wgmmas open to it
    /// they are committed first, as [`Plan::wait`] upgrades a recorded wait
    /// (fuzz input `ok-hazard-unannounced-1331bb41`: a write and a read at a
    /// loop's top, the read's wait decided on the first visit, the loop's
    /// last wgmma open round the back edge). Only the edit changes: the
    /// decisions stay those of the visits (`heldout3_19` keeps its C7514
    /// from the converged state). Waits hoisted out of divergent code are
    /// made where they go (`make_hoisted_waits`).
    pub(in crate::fixup) fn keep_recorded_wait(&self, st: &State, plan: &mut Plan, i: Inst) {
        if st.pipe.open.is_empty() || crate::fixup::apply::hoist_to_uniform(self.f, self.an, i) != i
        {
            return;
        }
        plan.wait(i, Close::CommitBatch, None, RuleId::WaitBeforeRead);
    }

    /// **R-hoisted-wait-retires**: a wait hoisted out of divergent code to
    /// the end of uniform block `b` (`apply::hoist_to_uniform`) runs on
    /// every path out of `b`, so the groups it retires are retired at the
    /// join after the divergent code too: ptxas names the divergent reader
    /// once and waits for nothing more after the join
    /// (`c7517_divergent_read_after_loop_one_wait`). Made before `b`'s last
    /// instruction, where the edit puts it, naming the reader.
    pub(in crate::fixup) fn make_hoisted_waits(
        &self,
        bx: &mut BlockCx,
        st: &mut State,
        plan: &mut Plan,
        b: Block,
    ) {
        for w in &self.hoisted[b] {
            // The stage open here is committed first, whatever the reader
            // saw below: a user's commit in the divergent code comes after
            // this point (fuzz input `ok-hazard-strict-df523a77`).
            let close = Close::for_open(&st.pipe);
            if close == Close::CommitBatch {
                bx.close_stage();
            }
            plan.wait(w.at, close, w.line, w.rule);
        }
        st.retire_all();
    }

    /// **R-join-wait-levels.** Entered from uniform arms that each end in a
    /// wait of their own, at different levels: unless a read needs it
    /// first, ptxas waits at the end of this block, naming its branch
    /// (`heldout4_30`). With a wait on one side only, reads here are C7514
    /// instead (R-read-unsure-group).
    pub(in crate::fixup) fn join_needs_wait(&self, b: Block, st: &State) -> bool {
        let f = self.f;
        let arm_waits = |p: &Block| {
            self.an.cfg.preds(*p).len() == 1
                && f.layout
                    .block_insts(*p)
                    .iter()
                    .any(|i| f.insts[*i].opcode == Opcode::WgmmaWaitGroup)
        };
        self.an.cfg.preds(b).len() > 1
            && !self.an.loops.header[b]
            && !st.mixed.is_empty()
            && !st.divergent_wait
            && self.an.cfg.preds(b).iter().all(arm_waits)
            && self.unwaited_use_after(b, &st.pipe.all())
    }

    /// **R-wait-at-exit**: nothing may stay in flight past the exit.
    pub(in crate::fixup) fn exit_rules(
        &self,
        bx: &BlockCx,
        st: &mut State,
        plan: &mut Plan,
        i: Inst,
    ) {
        if st.pipe.is_empty() {
            return;
        }
        if st.divergent_wait && !st.mixed.is_empty() {
            // In flight here only on the paths that skipped a divergent
            // wait: the exit wait depends on it (probe d2).
            let rule = RuleId::ReadAfterDivergentWait;
            plan.fail(rule, Some(i), None, st.last_wgmma);
            return;
        }
        if self.f.layout.block_insts(bx.b)[0] == i {
            plan.bare_exit(bx.b, i);
        } else {
            plan.wait(i, Close::for_open(&st.pipe), None, RuleId::WaitAtExit);
        }
        st.retire_all();
    }

    /// **R-join-wait-levels**'s wait, at the branch `i` ending a join
    /// block that needs it (`join_needs_wait`), where paths still disagree.
    pub(in crate::fixup) fn join_wait_levels(&self, st: &mut State, plan: &mut Plan, i: Inst) {
        if !st.mixed.is_empty() && !st.pipe.is_empty() {
            plan.wait(i, Close::for_open(&st.pipe), None, RuleId::JoinWaitLevels);
            st.retire_all();
        }
    }

    /// **R-wait-closes-stage**: ptxas closes a stage left open at a wait
    /// (the last HGMMA carries gsb0, `attempt_c7516_no_commit`); ori writes
    /// the commit out.
    pub(in crate::fixup) fn implicit_commit(&self, st: &State, plan: &mut Plan, i: Inst) {
        let op = self.f.insts[i].opcode;
        if op.is_wait() && !st.pipe.open.is_empty() && plan.record(Seen::ImplicitCommit, i) {
            plan.implicit_commits.push(i);
        }
    }

    /// **R-wait-at-exit** for a block holding only a `ret`, reached with
    /// accumulators in flight: ptxas turns a branch to it into a predicated
    /// exit at the branch, so the wait goes before the branches of the
    /// in-flight predecessors (from their converged exit states).
    pub(in crate::fixup) fn bare_exit_waits(
        &self,
        outs: &SecondaryMap<Block, Option<PipeState>>,
        plan: &mut Plan,
    ) {
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
    pub(in crate::fixup) fn check_unrolled_loop_waits(&self, plan: &mut Plan) {
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
}

/// **R-unwaited-sets-in-flight** and **R-wait-before-copy-into-wgmma**.
///
/// Before its first `wgmma.wait_group`, ptxas 13.0.88 counts every register
/// of every accumulator set as in flight from a wgmma's issue on, whatever
/// defined it, even nothing: a register loaded before the function's first
/// wgmma and read while that wgmma is in flight gets a wait
/// (`c7517_read_future_acc_loaded_before_wgmma`,
/// `c7517_read_undefined_future_acc`; the CuTe DSL zeroes its second
/// accumulator set by copies of one register, read after the first wgmma:
/// `c7517_c7519_copy_future_acc_between_wgmma`). A write after the issue
/// gives the register a value that is not in flight, register by register
/// (`c7519_copy_future_acc_defined_after_wgmma`,
/// `c7517_read_future_acc_other_register_rewritten`); any wait, of any
/// level, ends it (`clean_read_future_acc_after_wait1`), and a wait
/// earlier on the path prevents it
/// (`clean_read_future_acc_after_earlier_wait`). ptxas carries it across
/// blocks and loops (`c7517_read_future_acc_after_branch`); ori ends it
/// at the end of the wgmma's ptxas block, for FlashAttention-3's backward
/// kernels, which zero accumulators by copies of another set's register
/// after a spin loop on an mbarrier, compile with no wait.
impl Walker<'_> {
    /// Whether `r` is in flight only by R-unwaited-sets-in-flight.
    pub(in crate::fixup) fn unwaited_in_flight(&self, st: &State, r: VReg) -> bool {
        st.unwaited && !self.tables.reg_sets[r].is_empty() && !st.unwaited_cleared.contains(&r)
    }

    /// The user's commit after `at` in block `b` with no GMMA op, call or
    /// write of a set in `all` between.
    fn commit_after_unwaited_read(&self, b: Block, at: Inst, all: &[AccumSet]) -> Option<Inst> {
        for &i in self.after_in_block(b, at)? {
            let d = &self.f.insts[i];
            if d.opcode == Opcode::WgmmaCommitGroup {
                return Some(i);
            }
            let writes_in_flight = || {
                let defs = self.tables.regs.defs(i);
                defs.iter().any(|r| self.hits(*r, all))
            };
            if d.opcode.is_gmma_family() || d.opcode == Opcode::Call || writes_in_flight() {
                return None;
            }
        }
        None
    }

    /// The registers `defs` get values that are not in flight.
    pub(in crate::fixup) fn clear_unwaited(&self, st: &mut State, defs: &[VReg]) {
        if !st.unwaited {
            return;
        }
        for &r in defs {
            if !self.tables.reg_sets[r].is_empty() {
                st.unwaited_cleared.insert(r);
            }
        }
    }

    /// A plain `mov` of a register in flight only by
    /// R-unwaited-sets-in-flight is no read: its uses are (the copy is
    /// propagated). A copy not used before the next `wgmma.wait_group` or
    /// fence of its block sinks there and waits first, naming the line
    /// before it (R-unpack-sinks-to-wait: `c7517_copy_future_acc_sunk_to_wait`).
    /// Returns whether `i` is such a copy.
    pub(in crate::fixup) fn unwaited_copy(
        &self,
        bx: &mut BlockCx,
        st: &mut State,
        plan: &mut Plan,
        i: Inst,
        acc: &Access,
    ) -> bool {
        let (b, d) = (bx.b, &self.f.insts[i]);
        let (defs, uses) = (self.tables.regs.defs(i), self.tables.regs.uses(i));
        let src = match uses {
            [src] if &*d.name == "mov" && d.guard.is_none() && !defs.is_empty() => *src,
            _ => return false,
        };
        if self.hits(src, &acc.all) || !self.unwaited_in_flight(st, src) {
            return false;
        }
        if let Some(wait) = self.unwaited_copy_sink(b, i, defs, src) {
            let line = self.line_before(b, wait).unwrap_or(d.line);
            if plan.record(Seen::CopySink, i) {
                plan.copy_sinks.push((i, wait, RuleId::UnpackSinksToWait));
            }
            let close = Close::for_open(&st.pipe);
            plan.wait(wait, close, Some(line), RuleId::UnpackSinksToWait);
            // Made after that wait, the copy is of a value no longer in flight.
            if self.f.insts[wait].opcode.is_arrive() {
                bx.sink_fence = Some(wait);
            }
            return true;
        }
        // Made where its value is first needed (after the wait that use
        // gets), as R-copy-propagation moves it.
        let end = self.copy_end(b, i, defs, src);
        if let Some(end) = end.filter(|_| plan.record(Seen::CopySink, i)) {
            plan.copy_sinks.push((i, end, RuleId::CopyPropagation));
        }
        for &dst in defs {
            st.aliases.push((dst, src));
        }
        true
    }

    /// The `wgmma.wait_group` of block `b` that the copy `at` of `src`
    /// into `dsts` reaches before anything uses the copy or redefines
    /// either.
    fn unwaited_copy_sink(&self, b: Block, at: Inst, dsts: &[VReg], src: VReg) -> Option<Inst> {
        for &i in self.after_in_block(b, at)? {
            let d = &self.f.insts[i];
            // A fence too: the copy is made before it (`c7517_copy_future_acc_sunk_to_fence`).
            if d.opcode == Opcode::WgmmaWaitGroup || d.opcode.is_arrive() {
                return Some(i);
            }
            let (defs, uses) = (self.tables.regs.defs(i), self.tables.regs.uses(i));
            let touches = dsts.iter().any(|r| uses.contains(r) || defs.contains(r));
            if touches || defs.contains(&src) || d.opcode.is_terminator() {
                return None;
            }
            if d.opcode == Opcode::Call || d.opcode == Opcode::WgmmaMmaAsync {
                return None;
            }
        }
        None
    }

    /// **R-wait-before-copy-into-wgmma**: a wgmma taking, as an accumulator
    /// or fragment, a copy of a register in flight by
    /// R-unwaited-sets-in-flight reads that register there: ptxas waits
    /// before the wgmma, committing the open stage first.
    pub(in crate::fixup) fn wgmma_takes_unwaited_copy(
        &self,
        bx: &mut BlockCx,
        st: &mut State,
        plan: &mut Plan,
        i: Inst,
        accs: &[VReg],
    ) {
        if !st.unwaited {
            return;
        }
        let all = st.pipe.all();
        let frags = self.tables.regs.frags(i);
        let takes = st.aliases.iter().any(|(dst, src)| {
            (accs.contains(dst) || frags.contains(dst))
                && !self.hits(*src, &all)
                && self.unwaited_in_flight(st, *src)
        });
        if !takes {
            return;
        }
        let close = Close::for_open(&st.pipe);
        if close == Close::CommitBatch {
            bx.close_stage();
        }
        plan.wait(i, close, None, RuleId::WaitBeforeCopyIntoWgmma);
        st.retire_all();
    }
}
