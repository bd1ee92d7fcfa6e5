//! The divergence family: what ptxas 13.0.88 cannot do in divergent code
//! (an arrive, a wait that depends on which path waited, a wait it cannot
//! hoist to uniform code, a run of stores under one divergent predicate),
//! where it serializes with C7518 or C7520.

use super::read::{ReadAt, ReadRule};
use super::{Rule, RuleId};
use crate::fixup::plan::Plan;
use crate::fixup::state::State;
use crate::fixup::walk::Walker;
use ori_ir::consts::*;
use ori_ir::{Block, FuncKind, Inst, Opcode, VReg};

rules! {
    /// An arrive needed in divergent code.
    DivergentArrive => "R-divergent-arrive", Some(C7520_WGAR_DIVERGENT),
        "serializes when an arrive must be injected in divergent code, or around a fence in divergent code, of a kernel (.entry); in a .func it injects the arrive",
        "corpus/c7520_divergent_empty_commit",
        "wgmma.fence is a .aligned warpgroup instruction: every thread must execute it";
    /// The same read when the wait it depends on was divergent.
    ReadAfterDivergentWait => "R-read-after-divergent-wait", Some(C7518_WGDP_DIVERGENT),
        "serializes with C7518 when the wait a read or an exit needs depends on a wait in divergent code",
        "corpus/c7518_divergent_wait_then_exit",
        "wgmma.wait_group is a .aligned warpgroup instruction";
    /// A wait in divergent code that cannot be hoisted to uniform code.
    DivergentHoist => "R-divergent-hoist", Some(C7518_WGDP_DIVERGENT),
        "serializes with C7518 when a read needing a wait stands in divergent code and the wait, hoisted to the nearest uniform dominator, would leave a run-time loop holding the read, come before the wgmma it waits for, or climb over a brx.idx",
        "corpus/c7518_divergent_loop_read_only",
        "wgmma.wait_group is a .aligned warpgroup instruction";
    /// A run of stores under one divergent predicate.
    DivergentStoreRun => "R-divergent-store-run", Some(C7518_WGDP_DIVERGENT),
        "turns a run of stores under one divergent predicate into a branch around them, so the wait they need would be divergent",
        "corpus/heldout_26_divergent_predicated_store_inflight",
        "wgmma.wait_group is a .aligned warpgroup instruction";
}

/// ptxas turns a run of stores under one divergent predicate into a branch
/// around them (`heldout_26`; one store alone gets its wait, C7517).
impl ReadRule for DivergentStoreRun {
    fn applies(&self, w: &Walker<'_>, at: &ReadAt<'_>) -> Option<(RuleId, VReg)> {
        at.acc
            .read_any
            .filter(|_| w.an.uni.guard_is_divergent(at.i))
            .filter(|_| w.in_store_run(at.bx.b, at.i))
            .map(|r| (Self::ID, r))
    }
}

impl Walker<'_> {
    /// **R-divergent-arrive** holds in kernels only: in a `.func` compiled
    /// as a function of its own (`-c`), ptxas 13.0.88 injects an arrive in
    /// divergent code (C7519) where a kernel serializes (C7520), for a wgmma,
    /// an empty group's dummy wgmma and a fence in divergent code alike
    /// (`c7519_func_divergent_*`); waits in divergent code still serialize
    /// there (C7518). Without `-c` a device function is compiled inlined
    /// into its kernels, so the kernel's rule applies
    /// (`c7520_inlined_callee_divergent_empty_commit`).
    pub(in crate::fixup) fn arrives_check_divergence(&self) -> bool {
        self.f.kind == FuncKind::Entry || !self.module.compile_only
    }

    /// **R-divergent-hoist**: whether the wait for an instruction of block
    /// `b` cannot be placed. ptxas hoists the waits of divergent code to the
    /// end of the nearest uniform dominator; it serializes instead (C7518)
    /// when the climb there passes the divergent header of a run-time loop
    /// holding `b` (`c7518_divergent_loop_read_only`, `..._read_then_mma`),
    /// or when the wgmma last issued on the way lies below that point, in
    /// divergent code (`c7518_divergent_wgmma_then_read`). A read in a
    /// divergent branch of a stage issued in uniform code gets its hoisted
    /// wait (C7517), over `bra`s only: a climb that passes a `brx.idx`
    /// serializes, whether the `brx.idx` is the divergent branch itself
    /// (its index divergent, `.uni` or not: `brx_divergent_read_acc`,
    /// `brx_uni_divergent_read_acc`) or a uniform one inside a divergent
    /// branch (`brx_uniform_under_divergent_bra_read_acc`).
    pub(in crate::fixup) fn wait_unplaceable(&self, b: Block, st: &State) -> bool {
        let (uni, loops, dt) = (&self.an.uni, &self.an.loops, &self.an.dt);
        let (passed, target) = self.an.climb_to_uniform(b);
        if passed.iter().any(|h| loops.header[*h] && loops.runtime[*h]) {
            return true;
        }
        let brx = |x: &Block| {
            let last = self.f.layout.block_insts(*x).last();
            last.is_some_and(|&i| self.f.insts[i].opcode == Opcode::IndexedBranch)
        };
        if !passed.is_empty() && (passed.iter().any(brx) || target.as_ref().is_some_and(brx)) {
            return true;
        }
        let Some(h) = target.filter(|_| !passed.is_empty()) else {
            return false;
        };
        let issued_below = |w: Inst| {
            self.f
                .layout
                .inst_block(w)
                .is_some_and(|wb| wb != h && uni.divergent_block[wb] && dt.dominates(h, wb))
        };
        st.last_wgmma.is_some_and(issued_below)
    }

    /// In ISA-strict mode, whether the wait the ISA wants before `i` has a
    /// legal place: not where ptxas could not hoist it to uniform code
    /// (R-divergent-hoist), where the only legal form left is the
    /// serialized one (ptxas 13.0.88 leaves the access as it is; this
    /// serialization is ori's, in ISA-strict mode only), nor where a wgmma
    /// may issue between that place and `i` (the hoisted wait would retire
    /// nothing of it: fuzz input `hazard-strict-db7824e8`).
    pub(in crate::fixup) fn strict_wait_placeable(
        &self,
        plan: &mut Plan,
        i: Inst,
        r: VReg,
        st: &State,
    ) -> bool {
        let Some(b) = self.f.layout.inst_block(i) else {
            return true;
        };
        if !self.wait_unplaceable(b, st) && !self.wgmma_after_hoist(b, i) {
            return true;
        }
        plan.fail(RuleId::DivergentHoist, Some(i), Some(r), st.last_wgmma);
        false
    }
}
