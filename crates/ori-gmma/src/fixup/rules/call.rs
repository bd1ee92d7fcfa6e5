//! The call family: calls ptxas cannot inline (C7509, C7520 inside an open
//! stage), callees with a pipeline of their own (C7510), and accumulators
//! passed in flight to a callee it inlines (a wait at the call, or C7514
//! after a partial wait).

use super::{RuleId, ISA_ASYNC_ACCESS};
use crate::fixup::plan::{Close, Plan};
use crate::fixup::state::State;
use crate::fixup::walk::{BlockCx, Walker};
use ori_ir::consts::*;
use ori_ir::Inst;

rules! {
    /// A wait at a call passing accumulators in flight to an inlined callee.
    WaitAtCall => "R-wait-at-call", Some(C7517_WAIT_INJECTED),
        "inlines a defined callee, whose body reads the arguments at the call's line: accumulators passed in flight get a wait at the call",
        "corpus/heldout_35_call_helper_with_acc_args_before_wait",
        ISA_ASYNC_ACCESS,
        culprit: "this call passes accumulators in flight to a callee ptxas inlines";
    /// Accumulators passed to an inlined callee after a partial wait.
    CallAfterPartialWait => "R-call-after-partial-wait", Some(C7514_READS_ACCUMULATORS),
        "does not strengthen a partial wait for an inlined callee's reads of accumulators passed to it",
        "corpus/heldout3_24_helper_with_inflight_acc_args_after_wait1",
        ISA_ASYNC_ACCESS;
    /// Calls ptxas cannot inline.
    ExternCall => "R-extern-call", Some(C7509_EXTERN_CALLS),
        "serializes a function calling an external (or, under -c, any) function outside an open stage",
        "corpus/c7509_extern_call_after_wait",
        "wgmma pipelines may not cross calls the compiler cannot see";
    /// An indirect call.
    IndirectCall => "R-indirect-call", Some(C7510_CROSSES_CALL),
        "serializes a function making an indirect call (through a register, with a .calltargets list or a .callprototype) outside an open stage, as for an extern call but with C7510; inside an open stage it answers C7520, and an arrive needed after the call is C7520 too",
        "corpus/c7510_indirect_call_after_wait",
        "wgmma pipelines may not cross calls the compiler cannot see";
    /// A call to a function whose address is taken.
    AddressTakenCallee => "R-address-taken-callee", Some(C7509_EXTERN_CALLS),
        "does not inline a function whose address the module takes (mov of its name, a table initializer; not a .calltargets list), even when the address goes unused: its walk treats a direct call to it as an inlined one (arrives after it are injected, C7519), then serializes the caller as for an extern call",
        "corpus/c7519_c7509_call_to_address_taken_func_in_stage",
        "wgmma pipelines may not cross calls the compiler cannot see";
    /// An extern call inside an open stage.
    ExternCallInStage => "R-extern-call-in-stage", Some(C7520_WGAR_DIVERGENT),
        "serializes with C7520 (not C7509) a function calling an external function between two wgmma of an open stage",
        "corpus/c7520_extern_call_in_pipeline",
        "wgmma pipelines may not cross calls the compiler cannot see";
    /// An arrive needed after an extern call.
    ArriveAfterExternCall => "R-arrive-after-extern-call", Some(C7520_WGAR_DIVERGENT),
        "serializes with C7520 (not C7509) a function that needs an arrive after an extern call (under -c, any call), in uniform code too; an arrive needed before the call is injected (C7519)",
        "corpus/c7520_arrive_after_extern_call",
        "wgmma pipelines may not cross calls the compiler cannot see";
    /// A callee with a pipeline of its own.
    CallCrossesPipeline => "R-call-crosses-pipeline", Some(C7510_CROSSES_CALL),
        "serializes a caller whose inlined callee holds a wgmma, commit or wait; the callee's commits close the caller's stage",
        "corpus/c7510_func_with_pipeline",
        "wgmma pipelines may not cross function boundaries";
}

impl Walker<'_> {
    /// The rules of a call: ptxas inlines a defined callee (without `-c`),
    /// whose body reads the arguments at the call's line.
    pub(in crate::fixup) fn call_rules(
        &self,
        bx: &mut BlockCx,
        st: &mut State,
        plan: &mut Plan,
        i: Inst,
    ) {
        let d = &self.f.insts[i];
        let info = d
            .direct_callee()
            .and_then(|n| self.module.funcs.get(&**n).copied());
        let defined = info.is_some_and(|x| x.has_body);
        // A callee whose address is taken is walked as an inlined one
        // (R-address-taken-callee serializes after the walk).
        let inlined = defined && !self.module.compile_only;
        let all = st.pipe.all();
        let passes_in_flight = self
            .tables
            .regs
            .uses(i)
            .iter()
            .copied()
            .find(|r| self.hits(*r, &all));
        let unsure = passes_in_flight.filter(|r| {
            st.partial_wait
                || self.tables.reg_sets[*r]
                    .iter()
                    .any(|s| st.mixed.contains(s))
        });
        if let Some(r) = unsure.filter(|_| defined) {
            // As for a plain read: ptxas does not strengthen a partial wait
            // for the inlined callee's reads (`heldout3_24`).
            plan.fail(
                RuleId::CallAfterPartialWait,
                Some(i),
                Some(r),
                st.last_wgmma,
            );
        } else if passes_in_flight.is_some() && inlined {
            let close = Close::for_open(&st.pipe);
            if close == Close::CommitBatch {
                bx.close_stage();
            }
            plan.wait(i, close, None, RuleId::WaitAtCall);
            st.retire_all();
        }
        if inlined && info.is_some_and(|x| x.holds_pipeline_ops) {
            // R-call-crosses-pipeline: ptxas inlines the callee, whose commits
            // and waits close this block's stage, so a commit after the call
            // is empty (`c7510_call_pipeline_func_inside_pipeline`).
            let rule = RuleId::CallCrossesPipeline;
            plan.fail(rule, Some(i), None, st.last_wgmma);
            bx.close_stage();
        } else if !inlined {
            // R-extern-call, R-indirect-call: inside an open stage ptxas
            // answers C7520.
            let rule = if !st.pipe.open.is_empty() {
                RuleId::ExternCallInStage
            } else if d.is_indirect_call() {
                RuleId::IndirectCall
            } else {
                RuleId::ExternCall
            };
            plan.fail(rule, Some(i), None, None);
        } else {
            // R-call-ends-block: the inlined body ends ptxas's block even
            // when it has no pipeline, so a commit right after the call
            // closes an empty group (`c7519_commit_after_inlined_call`).
            bx.close_stage();
        }
    }
}

impl Walker<'_> {
    /// **R-address-taken-callee**, after the walk: a direct call to a
    /// function whose address the module takes serializes the caller
    /// (C7509) unless the walk failed first. Not under `-c`, where every
    /// call is extern already.
    pub(in crate::fixup) fn address_taken_callee(&self, plan: &mut Plan) {
        if plan.failure().is_some() || self.module.compile_only {
            return;
        }
        let taken = |i: &Inst| {
            self.f.insts[*i]
                .direct_callee()
                .and_then(|n| self.module.funcs.get(&**n))
                .is_some_and(|x| x.has_body && x.address_taken && !x.holds_pipeline_ops)
        };
        if let Some(i) = self.f.layout.all_insts().find(taken) {
            plan.fail(RuleId::AddressTakenCallee, Some(i), None, None);
        }
    }
}
