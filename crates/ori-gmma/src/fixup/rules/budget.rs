//! The budget family: the registers a pipeline may hold, in flight
//! (C7511) and live in the function (C7512).

use super::RuleId;
use crate::fixup::plan::Plan;
use crate::fixup::state::State;
use crate::fixup::walk::Walker;
use ori_ir::consts::*;
use ori_ir::Inst;

rules! {
    /// Too many registers held by the wgmma in flight.
    InFlightBudget => "R-in-flight-budget", Some(C7511_PIPELINE_REGISTERS),
        "serializes when the accumulator and A-fragment registers of the wgmma in flight exceed the register limit minus 2 (255 by default, .maxnreg/-maxrregcount where lower, raised by setmaxnreg.inc); this C7511 replaces a C7514 found earlier",
        "corpus/c7511_in_flight_254_default_limit",
        "registers are a per-thread resource";
    /// Live accumulator and fragment registers over the function's limit.
    FunctionPressure => "R-function-pressure", Some(C7512_FUNCTION_REGISTERS),
        "serializes when accumulator and A-fragment registers live (and defined) at once plus the 26 a wgmma needs exceed the register count in effect there: .maxnreg/-maxrregcount, else the launch bounds' count, else 255 (none with an ignored setmaxnreg), then the setmaxnreg on the path",
        "corpus/c7512_two_sets_live_under_maxrreg140",
        "registers are a per-thread resource";
}

impl Walker<'_> {
    /// **R-in-flight-budget**: after wgmma `i`, more accumulator and
    /// A-fragment registers in flight than the budget (`fixup::budget::in_flight_budget`).
    pub(in crate::fixup) fn in_flight_budget_rule(&self, st: &State, plan: &mut Plan, i: Inst) {
        if self.in_flight_exceeds(st, self.tables.budget) {
            plan.fail_budget(i);
        }
    }

    /// **R-function-pressure**: accumulator and A-fragment registers live at
    /// once over the function's limit (`fixup::budget::over_function_limit`),
    /// unless the pipeline is serialized already.
    pub(in crate::fixup) fn function_pressure(&self, plan: &mut Plan, maxrregcount: Option<u32>) {
        if plan.failure().is_none()
            && crate::fixup::budget::over_function_limit(
                self.f,
                self.sets,
                &self.an.cfg,
                (maxrregcount, self.module.compile_only),
            )
        {
            plan.fail(RuleId::FunctionPressure, None, None, None);
        }
    }
}
