//! The arrive family: where ptxas injects a `warpgroup.arrive` (fence)
//! before a wgmma or an empty group's dummy wgmma, and the fences the ISA
//! wants that it does not give (ori's notes, arrives in ISA-strict mode).

use super::{RuleId, ISA_FENCE};
use crate::fixup::plan::{Plan, Seen};
use crate::fixup::state::{shape_of, wgmma_shape, ArriveAt, State};
use crate::fixup::walk::{BlockCx, Walker};
use ori_ir::consts::*;
use ori_ir::{Block, Inst, Opcode, VReg};
use smallvec::SmallVec;

rules! {
    /// An arrive before a wgmma whose registers were written since the last arrive.
    ArriveAfterWrite => "R-arrive-after-write", Some(C7519_ARRIVE_INJECTED),
        "injects warpgroup.arrive before a wgmma when the registers it reads (its A fragments, and its accumulators unless scale-d is 0), or any accumulator after a wgmma of the stage, were written since the last arrive; reads do not count",
        "corpus/c7519_def_other_set_between_mma",
        "wgmma.fence is required before a wgmma whose registers were modified",
        culprit: "this wgmma uses registers accessed since the last warpgroup arrive";
    /// An arrive before the first wgmma of a ptxas block with no arrive in it.
    ArriveMissing => "R-arrive-missing", Some(C7519_ARRIVE_INJECTED),
        "injects an arrive before a wgmma with no arrive since the start of its block (ptxas forgets the arrive state at every block boundary it keeps, after if-conversion and full unrolling) or since a call",
        "corpus/c7519_no_fence",
        "wgmma.fence is required before the first wgmma.mma_async",
        culprit: "no warpgroup arrive before this wgmma since the start of its block";
    /// The dummy wgmma of an empty group, and its arrive.
    EmptyGroup => "R-empty-group", Some(C7519_ARRIVE_INJECTED),
        "gives a commit with no wgmma before it in its block a dummy HGMMA.64x8x16.F16 and, unless an arrive follows the block's last plain instruction, an injected arrive at the commit; serialization keeps the dummy",
        "corpus/c7519_empty_commit",
        "an empty commit_group makes an empty wgmma-group",
        culprit: "this commit closes a group with no wgmma: ptxas gives it a dummy wgmma, fenced here";
    /// A fence the ISA wants and ptxas does not give.
    UndefinedArrive (isa_strict_only) => "R-undefined-arrive", None,
        "gives no arrive before a wgmma whose registers were only read, or used by a wgmma of another shape, since the last arrive, nor before a scale-d 0 wgmma whose accumulators were written; ori notes it, and arrives in ISA-strict mode",
        "corpus/c7517_read_after_commit_no_arrive",
        ISA_FENCE;
}

impl Walker<'_> {
    /// **R-empty-group**'s arrive: the dummy wgmma of an empty group gets one
    /// when no arrive came since the start of its block (R-arrive-missing,
    /// without R-arrive-kept: generated pipeline `g1113`)
    /// or an accumulator register was written since the last arrive
    /// (`c7517_c7519_rmw_last_before_commit`); a plain instruction alone
    /// does not need it (`clean_empty_commits_after_plain_write`: a second
    /// and a third commit after the fence's group, with a store and a
    /// write of another register between, get no arrive).
    pub(in crate::fixup) fn touched_needs_arrive(&self, st: &State) -> bool {
        st.touched.iter().any(|r| self.tables.kinds.tensor(*r))
    }

    /// **R-empty-group**: a commit with no wgmma before it in its own block
    /// closes an empty group, whose dummy wgmma gets an arrive unless one
    /// came since the block start and no accumulator was written since
    /// (`touched_needs_arrive`); in divergent code of a kernel the arrive
    /// serializes (R-divergent-arrive). Whether the group is empty.
    pub(in crate::fixup) fn empty_group(
        &self,
        bx: &mut BlockCx,
        st: &mut State,
        plan: &mut Plan,
        i: Inst,
        divergent: bool,
    ) -> bool {
        let op = self.f.insts[i].opcode;
        let empty_group = op == Opcode::WgmmaCommitGroup && !bx.block_wgmma;
        if empty_group && plan.first(Seen::EmptyCommit, i) {
            plan.empty_commits.push(i);
        }
        if op.is_commit()
            && !bx.block_wgmma
            && (st.block_no_arrive || self.touched_needs_arrive(st))
        {
            if (divergent || st.divergent_fence) && self.arrives_check_divergence() {
                plan.fail(RuleId::DivergentArrive, Some(i), None, None);
            } else {
                plan.arrive(i, RuleId::EmptyGroup);
            }
            bx.fresh_arrive = true;
            st.arrive_block = ArriveAt::At(bx.b);
            st.touched.clear();
            st.no_arrive = false;
            st.block_no_arrive = false;
        }
        empty_group
    }

    /// **R-arrive-kept**: ptxas forgets the arrive at a block boundary it
    /// keeps, unless no wgmma was issued since the arrive and block `b` is
    /// control-equivalent to the arrive's block (dominated by it and
    /// post-dominating it) and outside every run-time loop (a fence inside a
    /// loop does not serve a wgmma after it: generated pipeline `g1013`): a
    /// fence before a spin loop still serves the
    /// wgmma after the loop (`clean_fence_then_loop_then_wgmma`), not one
    /// in a branch arm (`c7519_mma_in_uniform_branch`) nor a second wgmma
    /// after the loop (`heldout5_30`).
    /// A loop header forgets it for its own instructions all the same
    /// (ptxas knows the back edge on its first visit:
    /// `c7519_loop_mma_fence_outside`,
    /// `c7519_loop_header_arrive_then_divergent_fence`), and passes it on
    /// when nothing in it used it (`restore_arrive`).
    pub(in crate::fixup) fn arrive_kept(&self, b: Block, st: &State) -> bool {
        let ArriveAt::At(a) = st.arrive_block else {
            return false;
        };
        !st.no_arrive
            && !st.wgmma_since_arrive
            && !self.an.loops.runtime[a]
            && self.an.dt.dominates(a, b)
            && self.an.uni.post_dominates(b, a, 64)
    }

    /// **R-arrive-after-write**, **R-arrive-missing**, **R-divergent-arrive**
    /// and **R-undefined-arrive**: whether this wgmma needs an arrive.
    pub(in crate::fixup) fn wgmma_arrive(
        &self,
        bx: &mut BlockCx,
        st: &mut State,
        plan: &mut Plan,
        i: Inst,
        accs: &[VReg],
    ) {
        let d = &self.f.insts[i];
        let mut regs: SmallVec<[VReg; 8]> = accs.iter().copied().collect();
        regs.extend(self.tables.regs.frags(i).iter().copied());
        // R-arrive-after-write counts the registers the wgmma reads: a
        // write of D before a scale-d 0 wgmma, which does not read D, needs
        // no arrive (`c7519_scale_d_zero_after_write_no_arrive`).
        let reads_d = !d.wgmma_operands().is_some_and(|w| w.scale_d_is_zero());
        let read_regs = if reads_d {
            &regs[..]
        } else {
            &regs[accs.len()..]
        };
        // A write of any accumulator register after a wgmma of this arrive's
        // stage also needs a new arrive, whatever registers the next wgmma
        // uses (`heldout4_38`: an add into D between D's last wgmma and E's).
        let touched = read_regs.iter().any(|r| st.touched.contains(r))
            || (st.wgmma_since_arrive && st.touched.iter().any(|r| self.tables.kinds.tensor(*r)));
        // What the ISA also orders and ptxas 13.0.88 does not: a plain read
        // of the registers since the last arrive, a write of D before a
        // scale-d 0 wgmma, or an accumulator last used by a wgmma of another
        // shape ("except when these are accumulator register accesses
        // across multiple wgmma.mma_async instructions of the same shape").
        let shape = wgmma_shape(d);
        let isa_only = !(st.no_arrive || touched)
            && (regs.iter().any(|r| st.read_touched.contains(r))
                || accs.iter().any(|r| st.touched.contains(r))
                || accs
                    .iter()
                    .any(|r| shape_of(&st.shapes, *r).is_some_and(|s| s != shape)));
        let arrived = |bx: &mut BlockCx, st: &mut State| {
            st.touched.clear();
            st.read_touched.clear();
            st.shapes.clear();
            bx.fresh_arrive = true;
            st.arrive_block = ArriveAt::At(bx.b);
        };
        if isa_only {
            if plan.record(Seen::UbArrive, i) {
                plan.ub_arrives.push(i);
            }
            if RuleId::UndefinedArrive.injects_in(self.mode) {
                arrived(bx, st);
            }
        }
        if st.no_arrive || touched {
            let divergent = self.an.uni.inst_is_divergent(bx.b, i) || st.divergent_fence;
            // R-first-visit: an arrive decided here on the first visit
            // stands; the converged state's divergent fence round the back
            // edge does not take it back (`c7519_loop_header_arrive_then_
            // divergent_fence`).
            if divergent && self.arrives_check_divergence() && !plan.has_arrive(i) {
                plan.fail(RuleId::DivergentArrive, Some(i), None, None);
            } else if st.no_arrive {
                plan.arrive(i, RuleId::ArriveMissing);
            } else {
                plan.arrive(i, RuleId::ArriveAfterWrite);
            }
            arrived(bx, st);
            st.no_arrive = false;
            st.block_no_arrive = false;
        }
    }
}
