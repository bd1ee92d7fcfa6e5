//! How many of a set of registers are live at each point of a function, as
//! a register allocator counts them.
//!
//! A register occupies a physical register from a definition to its last
//! use, so it counts where it is live (backward liveness) and some
//! definition may have reached it (forward reaching definitions). A read
//! no definition reaches holds an undefined value, which takes no register
//! before it: CuTe DSL's attention kernels read their S accumulators
//! through a runtime `scale-d` on the first K step, which made them live
//! from the kernel's entry for liveness alone (416 registers in
//! `cutedsl/fmha_fwd_f16_d64_64x256_full`, which ptxas compiles clean
//! under 240). A wgmma whose `scale-d` folds to 0 does not read its
//! accumulators at all (`known_values`). An A fragment stays taken until
//! the wait that retires its wgmma (`pending`).

use super::known_values::KnownValues;
use super::pending::Pending;
use cranelift_entity::SecondaryMap;
use fxhash::{FxHashMap, FxHashSet};
use ori_ir::{Block, ControlFlowGraph, Function, Inst, VReg};
use smallvec::SmallVec;

/// The tracked registers' liveness in `f`, per block.
pub(super) struct Pressure<'a> {
    f: &'a Function,
    tracked: &'a FxHashSet<VReg>,
    known: KnownValues,
    live_in: SecondaryMap<Block, FxHashSet<VReg>>,
    defined_out: SecondaryMap<Block, FxHashSet<VReg>>,
    pending_out: SecondaryMap<Block, Option<Pending>>,
}

impl<'a> Pressure<'a> {
    /// Solve liveness and reaching definitions of `tracked` over `cfg`.
    pub(super) fn compute(
        f: &'a Function,
        cfg: &ControlFlowGraph,
        tracked: &'a FxHashSet<VReg>,
    ) -> Self {
        let mut p = Pressure {
            f,
            tracked,
            known: KnownValues::of(f),
            live_in: SecondaryMap::new(),
            defined_out: SecondaryMap::new(),
            pending_out: SecondaryMap::new(),
        };
        p.solve_liveness(cfg);
        p.solve_definitions(cfg);
        p.solve_pending(cfg);
        p
    }

    /// The tracked registers `i` kills (unguarded definitions) and reads.
    fn effect(&self, i: Inst) -> (SmallVec<[VReg; 8]>, SmallVec<[VReg; 8]>) {
        let d = &self.f.insts[i];
        let keep = |r: &VReg| self.tracked.contains(r);
        let kills = match d.guard {
            Some(_) => SmallVec::new(),
            None => d.defs().into_iter().filter(keep).collect(),
        };
        let mut uses: SmallVec<[VReg; 8]> = d.uses().into_iter().filter(keep).collect();
        if self.known.scale_d_is_zero(self.f, i) {
            let acc = super::super::walk::accumulator_regs(d);
            uses.retain(|r| !acc.contains(r));
        }
        (kills, uses)
    }

    fn step(&self, live: &mut FxHashSet<VReg>, i: Inst) {
        let (kills, uses) = self.effect(i);
        for r in kills {
            live.remove(&r);
        }
        live.extend(uses);
    }

    fn live_out(&self, cfg: &ControlFlowGraph, b: Block) -> FxHashSet<VReg> {
        let mut live = FxHashSet::default();
        for &s in cfg.succs(b) {
            live.extend(self.live_in[s].iter().copied());
        }
        live
    }

    /// Backward liveness to the fixpoint (sets only grow: a size compare
    /// tells a change).
    fn solve_liveness(&mut self, cfg: &ControlFlowGraph) {
        let mut changed = true;
        while changed {
            changed = false;
            for &b in cfg.rpo().iter().rev() {
                let mut live = self.live_out(cfg, b);
                for &i in self.f.layout.block_insts(b).iter().rev() {
                    self.step(&mut live, i);
                }
                if live.len() != self.live_in[b].len() {
                    self.live_in[b] = live;
                    changed = true;
                }
            }
        }
    }

    fn defined_in(&self, cfg: &ControlFlowGraph, b: Block) -> FxHashSet<VReg> {
        let mut defined = FxHashSet::default();
        for &p in cfg.preds(b) {
            defined.extend(self.defined_out[p].iter().copied());
        }
        defined
    }

    /// Forward: the tracked registers some definition may reach.
    fn solve_definitions(&mut self, cfg: &ControlFlowGraph) {
        let mut changed = true;
        while changed {
            changed = false;
            for &b in cfg.rpo() {
                let mut defined = self.defined_in(cfg, b);
                for &i in self.f.layout.block_insts(b) {
                    self.f.insts[i].for_each_def(|r| {
                        if self.tracked.contains(&r) {
                            defined.insert(r);
                        }
                    });
                }
                if defined.len() != self.defined_out[b].len() {
                    self.defined_out[b] = defined;
                    changed = true;
                }
            }
        }
    }

    fn pending_in(&self, cfg: &ControlFlowGraph, b: Block) -> Pending {
        let mut pending = Pending::default();
        for &p in cfg.preds(b) {
            if let Some(out) = &self.pending_out[p] {
                pending.join(out);
            }
        }
        pending
    }

    /// Forward: the fragments in flight at the end of each block. A block's
    /// state only grows in the join's order, so the solution is reached
    /// even where the transfer is not monotone in it.
    fn solve_pending(&mut self, cfg: &ControlFlowGraph) {
        let mut changed = true;
        while changed {
            changed = false;
            for &b in cfg.rpo() {
                let mut pending = self.pending_in(cfg, b);
                for &i in self.f.layout.block_insts(b) {
                    pending.step(&self.f.insts[i], self.tracked);
                }
                let grows = match &self.pending_out[b] {
                    Some(old) => pending.exceeds(old),
                    None => true,
                };
                if grows {
                    self.pending_out[b] = Some(pending);
                    changed = true;
                }
            }
        }
    }

    /// The fragments in flight before each instruction of `b` and at its
    /// end (`None` where nothing is).
    fn pending_in_block(&self, cfg: &ControlFlowGraph, b: Block) -> Vec<Option<Vec<VReg>>> {
        let mut pending = self.pending_in(cfg, b);
        let snapshot = |p: &Pending| (!p.is_empty()).then(|| p.regs().collect());
        let mut out = Vec::new();
        for &i in self.f.layout.block_insts(b) {
            out.push(snapshot(&pending));
            pending.step(&self.f.insts[i], self.tracked);
        }
        out.push(snapshot(&pending));
        out
    }

    /// Calls `visit(b, k, n)` at each point of each reachable block: `n`
    /// tracked registers live and defined before the block's `k`th
    /// instruction (`k` = its length: at its end).
    pub(super) fn for_each_point(
        &self,
        cfg: &ControlFlowGraph,
        mut visit: impl FnMut(Block, usize, usize),
    ) {
        for &b in cfg.rpo() {
            let insts = self.f.layout.block_insts(b);
            let defined = self.defined_in(cfg, b);
            // Where in the block each register is first defined.
            let mut first: FxHashMap<VReg, usize> = FxHashMap::default();
            for (k, &i) in insts.iter().enumerate() {
                self.f.insts[i].for_each_def(|r| {
                    if self.tracked.contains(&r) {
                        first.entry(r).or_insert(k);
                    }
                });
            }
            let pending = self.pending_in_block(cfg, b);
            let count = |live: &FxHashSet<VReg>, k: usize| {
                let defined_live = live
                    .iter()
                    .filter(|r| defined.contains(r) || first.get(r).is_some_and(|&at| at < k))
                    .count();
                let mut held: SmallVec<[VReg; 16]> = SmallVec::new();
                for &r in pending[k].iter().flatten() {
                    if !live.contains(&r) && !held.contains(&r) {
                        held.push(r);
                    }
                }
                defined_live + held.len()
            };
            let mut live = self.live_out(cfg, b);
            visit(b, insts.len(), count(&live, insts.len()));
            for (k, &i) in insts.iter().enumerate().rev() {
                self.step(&mut live, i);
                visit(b, k, count(&live, k));
            }
        }
    }

    /// The most tracked registers live at once anywhere in the function.
    pub(super) fn max(&self, cfg: &ControlFlowGraph) -> usize {
        let mut most = 0;
        self.for_each_point(cfg, |_, _, n| most = most.max(n));
        most
    }
}
