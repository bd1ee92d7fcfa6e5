//! The checks ptxas makes after its primary walk, over the decided plan, in
//! its order: fresh values joining a group in flight (C7515,
//! R-zero-trip-join, in `rules::kill`), the waits for exits reached by a
//! branch to a bare `ret` (R-wait-at-exit, `rules::wait`), the commits of
//! waits hoisted out of divergent code (here), waits injected into loops it
//! unrolls (C7514, R-unrolled-loop-wait, `rules::wait`), and the function's
//! register pressure (C7512, R-function-pressure, `rules::budget`).

use super::plan::{Close, Plan};
use super::solve::Solution;
use super::walk::Walker;
use crate::in_flight::PipeState;
use cranelift_entity::SecondaryMap;
use ori_ir::{Block, Inst};

impl Walker<'_> {
    /// The late checks, in ptxas's order.
    pub(super) fn late_checks(&self, sol: &Solution, plan: &mut Plan, maxrregcount: Option<u32>) {
        self.check_plain_joins(&sol.outs, plan);
        self.bare_exit_waits(&sol.outs, plan);
        self.hoisted_waits_commit(&sol.outs, plan);
        self.check_unrolled_loop_waits(plan);
        self.function_pressure(plan, maxrregcount);
        self.address_taken_callee(plan);
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
}
