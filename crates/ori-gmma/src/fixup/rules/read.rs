//! The read family: what ptxas does at a plain instruction that reads (or
//! copies) an accumulator in flight, and the precedence of the rules asked
//! there. The first rule of [`READ_ORDER`] that applies decides; the walk
//! asks them through that list (`read_rules`), so a read rule is asked
//! exactly where it is placed.

use super::chained::ReadChainedCommitted;
use super::divergence::DivergentStoreRun;
use super::wait::WaitBeforeRead;
use super::{Rule, RuleId, ISA_ASYNC_ACCESS};
use crate::fixup::plan::{Close, Plan, Seen};
use crate::fixup::state::State;
use crate::fixup::walk::{Access, BlockCx, Walker};
use cranelift_entity::SecondaryMap;
use ori_ir::consts::*;
use ori_ir::{Block, Inst, VReg};
use smallvec::SmallVec;

rules! {
    /// A pure read of the open stage followed by a read-modify-write.
    ReadBeforeRmw => "R-read-before-rmw", Some(C7517_WAIT_INJECTED),
        "waits before a pure read of the open stage when a read-modify-write of the stage follows it before the next wgmma (the RMW needs the wait anyway), naming the read's line; without the RMW the read is C7514 (R-read-between-wgmma)",
        "corpus/c7517_c7519_add_read_then_rmw_between_mma",
        ISA_ASYNC_ACCESS,
        culprit: "this instruction reads an accumulator of a wgmma still in flight";
    /// A copy of an in-flight accumulator is no read; its uses are.
    CopyPropagation => "R-copy-propagation", None,
        "propagates mov copies (and mov.b32 {lo, hi} unpacks) of in-flight accumulators before phase 87: the copy is no read, its uses are; ori moves the copy down to its first use",
        "corpus/heldout_14_e4m3_f16acc_read_before_commit",
        ISA_ASYNC_ACCESS;
    /// A pure read between two wgmma of a stage.
    ReadBetweenWgmma => "R-read-between-wgmma", Some(C7514_READS_ACCUMULATORS),
        "serializes a pure read of an open set with more wgmma of the stage to come: no wait can split the stage",
        "corpus/c7514_pure_read_acc_between_mma",
        ISA_ASYNC_ACCESS;
    /// A read of a group a partial wait left in flight, or in flight on some paths only.
    ReadUnsureGroup => "R-read-unsure-group", Some(C7514_READS_ACCUMULATORS),
        "does not strengthen a user's wait_group N>0, nor wait for a set in flight on some incoming paths only: a read there serializes",
        "corpus/c7514_read_acc_wait1_inflight",
        ISA_ASYNC_ACCESS;
    /// A user wait refuses later injected waits.
    RefuseAfterUserWait => "R-refuse-after-user-wait", Some(C7514_READS_ACCUMULATORS),
        "refuses to add a wait for a pure read after a wgmma.wait_group of the user's on some path from the entry, or earlier in its block order (R-block-order)",
        "corpus/heldout3_19_loop_const4_pure_read_before_wait",
        ISA_ASYNC_ACCESS;
    /// A wgmma overwriting an accumulator copied in the open stage.
    CopiedOverwriteInStage => "R-copied-overwrite-in-stage", Some(C7514_READS_ACCUMULATORS),
        "serializes a wgmma of the open stage that overwrites an accumulator whose copy is still live",
        "corpus/c7514_mov_read_d0_between_mma",
        ISA_ASYNC_ACCESS;
    /// A write to a register of a wgmma still in flight, left alone by ptxas.
    UndefinedWrite (isa_strict_only) => "R-undefined-write", None,
        "leaves a write to a register of a wgmma that may still be in flight (and, after a partial wait, a read of a set a retired group also wrote) as it is; ori notes it, and waits first in ISA-strict mode",
        "corpus/heldout_04_interleaved_sets_wait1_store_inflight",
        ISA_ASYNC_ACCESS;
}

/// Where a read rule is asked: the plain instruction `i`, its accesses, and
/// what the walk holds there.
pub(in crate::fixup) struct ReadAt<'a> {
    pub(in crate::fixup) bx: &'a mut BlockCx,
    pub(in crate::fixup) st: &'a mut State,
    pub(in crate::fixup) plan: &'a mut Plan,
    pub(in crate::fixup) i: Inst,
    pub(in crate::fixup) acc: &'a Access,
}

/// A rule asked at a plain instruction reading an accumulator in flight:
/// its predicate and its action.
pub(in crate::fixup) trait ReadRule {
    /// Whether the rule applies at `at`, with the rule that then decides
    /// (R-read-unsure-group becomes R-read-after-divergent-wait when the
    /// wait was divergent) and the register read.
    fn applies(&self, w: &Walker<'_>, at: &ReadAt<'_>) -> Option<(RuleId, VReg)>;

    /// What `rule` does at `at` for register `r`; whether a wait now covers
    /// the instruction. By default the function is serialized.
    fn act(&self, _w: &Walker<'_>, at: &mut ReadAt<'_>, rule: RuleId, r: VReg) -> bool {
        let st = &*at.st;
        at.plan.fail(rule, Some(at.i), Some(r), st.last_wgmma);
        false
    }
}

/// The read rules in their precedence, as the walk asks them and as
/// [`READ_ORDER`] names them: one list.
macro_rules! read_precedence {
    ($($rule:ident),* $(,)?) => {
        /// The read rules in precedence order, as the walk asks them.
        const READ_RULES: &[&dyn ReadRule] = &[$(&$rule),*];
        /// Their ids, in the same order (`super::PRECEDENCE`'s `Point::Read`).
        pub(super) const READ_ORDER: &[RuleId] = &[$(<$rule as Rule>::ID),*];
    };
}

read_precedence![
    ReadBeforeRmw,
    ReadChainedCommitted,
    ReadBetweenWgmma,
    UndefinedWrite,
    ReadUnsureGroup,
    DivergentStoreRun,
    RefuseAfterUserWait,
    WaitBeforeRead,
];

/// The accumulator `acc` reads of a committed group only (none of the open
/// stage).
fn committed(acc: &Access) -> Option<VReg> {
    acc.read_any.filter(|_| acc.read_open.is_none())
}

impl ReadRule for ReadBeforeRmw {
    fn applies(&self, w: &Walker<'_>, at: &ReadAt<'_>) -> Option<(RuleId, VReg)> {
        let r = at.acc.between?;
        w.rmw_later(at.bx.b, at.i, &at.st.pipe.open)?;
        Some((Self::ID, r))
    }

    fn act(&self, w: &Walker<'_>, at: &mut ReadAt<'_>, rule: RuleId, r: VReg) -> bool {
        w.wait_for_read(at, rule, r)
    }
}

impl ReadRule for ReadBetweenWgmma {
    fn applies(&self, _w: &Walker<'_>, at: &ReadAt<'_>) -> Option<(RuleId, VReg)> {
        at.acc.between.map(|r| (Self::ID, r))
    }
}

/// After a partial wait, a read of a set that a retired group also wrote
/// passes ptxas 13.0.88 unchecked, though a group still in flight writes it
/// too (`heldout_04`).
impl ReadRule for UndefinedWrite {
    fn applies(&self, w: &Walker<'_>, at: &ReadAt<'_>) -> Option<(RuleId, VReg)> {
        let st = &*at.st;
        committed(at.acc)
            .filter(|r| st.partial_wait && w.hits(*r, &st.retired) && !w.hits(*r, &st.mixed))
            .map(|r| (Self::ID, r))
    }

    fn act(&self, w: &Walker<'_>, at: &mut ReadAt<'_>, rule: RuleId, r: VReg) -> bool {
        // The ISA-strict wait retires committed groups only: the wgmmas
        // still open here are committed first, as for a write
        // (`in_flight_write_rules`).
        let close = Close::for_open(&at.st.pipe);
        at.plan.undefined_write(at.i, r, close);
        let strict = rule.injects_in(w.mode);
        if strict && !w.strict_wait_placeable(at.plan, at.i, r, at.st) {
            return false;
        }
        if strict {
            if close == Close::CommitBatch {
                at.bx.close_stage();
            }
            at.st.retire_all();
            at.st.retired.clear();
        }
        strict
    }
}

/// A read of a group a partial wait left in flight, or one in flight on
/// some paths only (a wait in one arm of a branch).
impl ReadRule for ReadUnsureGroup {
    fn applies(&self, w: &Walker<'_>, at: &ReadAt<'_>) -> Option<(RuleId, VReg)> {
        let st = &*at.st;
        committed(at.acc)
            .filter(|r| st.partial_wait || w.hits(*r, &st.mixed))
            .map(|r| match st.divergent_wait {
                true => (RuleId::ReadAfterDivergentWait, r),
                false => (Self::ID, r),
            })
    }

    fn act(&self, _w: &Walker<'_>, at: &mut ReadAt<'_>, rule: RuleId, r: VReg) -> bool {
        // R-first-visit: a wait decided here on the first visit stands, so
        // the converged visit sees the read covered
        // (`c7517_loop_commits_then_read_own_wait`: the back edge brings the
        // set retired by that very wait, which a fresh look would call in
        // flight on some paths only).
        if !(at.plan.has_wait(at.i) && rule == Self::ID) {
            at.plan.fail(rule, Some(at.i), Some(r), at.st.last_wgmma);
            return false;
        }
        at.plan.state_from_plan = true;
        let close = Close::for_open(&at.st.pipe);
        if close == Close::CommitBatch {
            at.bx.close_stage();
        }
        at.plan.wait(at.i, close, None, RuleId::WaitBeforeRead);
        at.st.retire_all();
        true
    }
}

impl ReadRule for RefuseAfterUserWait {
    fn applies(&self, w: &Walker<'_>, at: &ReadAt<'_>) -> Option<(RuleId, VReg)> {
        let (st, acc) = (&*at.st, at.acc);
        acc.read_any
            .filter(|_| (st.user_waited || w.tables.wait_above[at.i]) && !acc.defines_acc)
            .map(|r| (Self::ID, r))
    }
}

/// `Walker::copy_shape`'s answers, by instruction: a table of one word per
/// instruction (0: not asked yet; [`CopyShapes::NONE`]: not a copy that
/// sinks; `k`: `found[k - 1]`) read in the walk's own order, where a hash
/// map of the answers cost one cache miss per visit of every plain
/// instruction (a third of the walk's time on the generated 1M matmul).
pub(in crate::fixup) struct CopyShapes {
    at: SecondaryMap<Inst, u32>,
    found: Vec<CopyShape>,
}

impl CopyShapes {
    const NONE: u32 = u32::MAX;

    /// No answer yet, for `insts` instructions.
    pub(in crate::fixup) fn new(insts: usize) -> CopyShapes {
        CopyShapes {
            at: ori_ir::sized_map(insts),
            found: Vec::new(),
        }
    }

    fn get(&self, i: Inst) -> Option<Option<&CopyShape>> {
        match self.at[i] {
            0 => None,
            CopyShapes::NONE => Some(None),
            k => Some(self.found.get(k as usize - 1)),
        }
    }

    fn insert(&mut self, i: Inst, shape: Option<CopyShape>) {
        self.at[i] = match shape {
            None => CopyShapes::NONE,
            Some(s) => {
                self.found.push(s);
                self.found.len() as u32
            }
        };
    }
}

/// A copy of an accumulator: (destinations, source, where it is made,
/// whether that is the user's `wait_group 0`).
type CopyShape = (SmallVec<[VReg; 4]>, VReg, Inst, bool);

impl Walker<'_> {
    /// The first rule of [`READ_ORDER`] that applies decides. Returns
    /// whether a wait now covers the instruction.
    pub(in crate::fixup) fn read_rules(&self, at: &mut ReadAt<'_>) -> bool {
        let decided = READ_RULES
            .iter()
            .find_map(|rule| Some((*rule, rule.applies(self, at)?)));
        match decided {
            Some((rule, (id, r))) => rule.act(self, at, id, r),
            None => false,
        }
    }

    /// **R-copy-propagation** and **R-unpack-sinks-to-wait**: a copy of an
    /// in-flight accumulator is no read; ori moves it down to where its
    /// value is first needed. Returns whether the instruction was one.
    pub(in crate::fixup) fn copy_rule(
        &self,
        b: Block,
        st: &mut State,
        plan: &mut Plan,
        i: Inst,
        acc: &Access,
    ) -> bool {
        let d = &self.f.insts[i];
        let copy = self
            .copy_shape(b, i)
            .filter(|(_, s, _, _)| self.hits(*s, &acc.all));
        let Some((dsts, src, end, to_wait)) = copy else {
            return false;
        };
        // A wgmma of the open stage between the copy and the wait keeps it
        // from sinking there: it is a read (`c7514_c7519_f16acc_loop_unpack_then_other_set_wgmma_wait0`).
        if to_wait && acc.between.is_some() {
            return false;
        }
        let rule = if to_wait {
            RuleId::UnpackSinksToWait
        } else {
            RuleId::CopyPropagation
        };
        if plan.record(Seen::CopySink, i) {
            plan.copy_sinks.push((i, end, rule));
        }
        if to_wait {
            // A copy whose value lives out of the block sinks to the user's
            // `wait_group 0`, and a wait is injected before it there (two
            // WARPGROUP.DEPBAR in the SASS); C7517 names the line of the
            // instruction just before the user's wait.
            let line = self.line_before(b, end).unwrap_or(d.line);
            plan.wait(end, Close::for_open(&st.pipe), Some(line), rule);
        }
        for dst in dsts {
            st.aliases.push((dst, src));
            st.read_touched.insert(dst);
        }
        true
    }

    /// Where the copy `i` (if it is one: `accumulator_copy`) must be
    /// made, found once per run: its destinations, its source, the
    /// instruction it sinks to and whether that is the user's
    /// `wait_group 0`. The answer depends on the block's instructions only,
    /// and the walk asks on every visit (a Triton f16-accumulator epilogue
    /// unpacks every accumulator register, each a scan down its block).
    pub(in crate::fixup) fn copy_shape(&self, b: Block, i: Inst) -> Option<CopyShape> {
        if let Some(known) = self.copy_shapes.borrow().get(i) {
            return known.cloned();
        }
        let shape = self.accumulator_copy(i).and_then(|(dsts, src)| {
            match self.copy_end(b, i, &dsts, src) {
                Some(end) => Some((dsts, src, end, false)),
                None => self
                    .retiring_wait_after(b, i, &dsts, src)
                    .map(|w| (dsts, src, w, true)),
            }
        });
        self.copy_shapes.borrow_mut().insert(i, shape.clone());
        shape
    }

    /// A wgmma overwriting an accumulator whose old value lives on in a
    /// copy: the copy must be made first. In a committed group ptxas waits
    /// before this wgmma (**R-wait-before-copied-overwrite**); in the open
    /// stage it cannot (**R-copied-overwrite-in-stage**).
    pub(in crate::fixup) fn wgmma_over_copy(
        &self,
        st: &mut State,
        plan: &mut Plan,
        i: Inst,
        accs: &[VReg],
    ) {
        let all = st.pipe.all();
        let copied = st
            .aliases
            .iter()
            .map(|(_, s)| *s)
            .find(|s| accs.contains(s) && self.hits(*s, &all));
        let Some(src) = copied else { return };
        if self.hits(src, &st.pipe.open) {
            let rule = RuleId::CopiedOverwriteInStage;
            plan.fail(rule, Some(i), Some(src), st.last_wgmma);
        } else {
            plan.wait(i, Close::Nothing, None, RuleId::WaitBeforeCopiedOverwrite);
            st.retire_all();
            // The copy, made here, reads the register just before this
            // wgmma overwrites it: the ISA wants a fence between, ptxas
            // gives none.
            st.read_touched.insert(src);
        }
        st.aliases.retain(|(_, s)| !accs.contains(s));
    }
}
