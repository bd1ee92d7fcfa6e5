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

/// A set of tracked registers, by their dense index: a few words where a
/// hash set hashed every register of every block's set in each round.
#[derive(Clone, Default, PartialEq, Eq)]
struct Bits(Vec<u64>);

impl Bits {
    fn insert(&mut self, k: usize) -> bool {
        let (w, b) = (k / 64, 1u64 << (k % 64));
        if self.0.len() <= w {
            self.0.resize(w + 1, 0);
        }
        let fresh = self.0[w] & b == 0;
        self.0[w] |= b;
        fresh
    }

    fn remove(&mut self, k: usize) -> bool {
        let (w, b) = (k / 64, 1u64 << (k % 64));
        let held = self.contains(k);
        if held {
            self.0[w] &= !b;
        }
        held
    }

    fn contains(&self, k: usize) -> bool {
        self.0
            .get(k / 64)
            .is_some_and(|w| w & (1u64 << (k % 64)) != 0)
    }

    fn union(&mut self, other: &Bits) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }

    fn subtract(&mut self, other: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a &= !b;
        }
    }

    fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &word)| {
            (0..64)
                .filter(move |b| word & (1u64 << b) != 0)
                .map(move |b| w * 64 + b)
        })
    }
}

/// The tracked registers' liveness in `f`, per block.
pub(super) struct Pressure<'a> {
    f: &'a Function,
    tracked: &'a FxHashSet<VReg>,
    /// Each tracked register's dense index (`u32::MAX`: not tracked).
    index: SecondaryMap<VReg, u32>,
    known: KnownValues,
    live_in: SecondaryMap<Block, Bits>,
    defined_out: SecondaryMap<Block, Bits>,
    pending_out: SecondaryMap<Block, Option<Pending>>,
}

type Regs = SmallVec<[usize; 8]>;

impl<'a> Pressure<'a> {
    /// Solve liveness and reaching definitions of `tracked` over `cfg`.
    pub(super) fn compute(
        f: &'a Function,
        cfg: &ControlFlowGraph,
        tracked: &'a FxHashSet<VReg>,
    ) -> Self {
        let mut index = SecondaryMap::with_default(u32::MAX);
        let mut sorted: Vec<VReg> = tracked.iter().copied().collect();
        sorted.sort_unstable();
        for (k, r) in sorted.into_iter().enumerate() {
            index[r] = k as u32;
        }
        let mut p = Pressure {
            f,
            tracked,
            index,
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

    fn idx(&self, r: VReg) -> Option<usize> {
        let k = self.index[r];
        (k != u32::MAX).then_some(k as usize)
    }

    /// The tracked registers `i` defines, by index.
    fn defs(&self, i: Inst) -> Regs {
        let mut out = Regs::new();
        self.f.insts[i].for_each_def(|r| out.extend(self.idx(r)));
        out
    }

    /// The tracked registers `i` kills (unguarded definitions) and reads.
    fn effect(&self, i: Inst) -> (Regs, Regs) {
        let d = &self.f.insts[i];
        let kills = match d.guard {
            Some(_) => Regs::new(),
            None => self.defs(i),
        };
        let mut uses = Regs::new();
        d.for_each_use(|r| uses.extend(self.idx(r)));
        if !uses.is_empty() && self.known.scale_d_is_zero(self.f, i) {
            let acc: Regs = super::super::walk::accumulator_regs(d)
                .into_iter()
                .filter_map(|r| self.idx(r))
                .collect();
            uses.retain(|r| !acc.contains(r));
        }
        (kills, uses)
    }

    fn live_out(&self, cfg: &ControlFlowGraph, b: Block) -> Bits {
        let mut live = Bits::default();
        for &s in cfg.succs(b) {
            live.union(&self.live_in[s]);
        }
        live
    }

    /// Backward liveness to the fixpoint (sets only grow: a size compare
    /// tells a change), each block summed up once as `live_in = gen ∪
    /// (live_out − kill)`.
    fn solve_liveness(&mut self, cfg: &ControlFlowGraph) {
        let mut summary: SecondaryMap<Block, (Bits, Bits)> = SecondaryMap::new();
        for &b in cfg.rpo() {
            let (mut gen, mut kill) = (Bits::default(), Bits::default());
            for &i in self.f.layout.block_insts(b).iter().rev() {
                let (kills, uses) = self.effect(i);
                for r in kills {
                    gen.remove(r);
                    kill.insert(r);
                }
                for r in uses {
                    gen.insert(r);
                }
            }
            summary[b] = (gen, kill);
        }
        let mut changed = true;
        while changed {
            changed = false;
            for &b in cfg.rpo().iter().rev() {
                let (gen, kill) = &summary[b];
                let mut live = self.live_out(cfg, b);
                live.subtract(kill);
                live.union(gen);
                if live.len() != self.live_in[b].len() {
                    self.live_in[b] = live;
                    changed = true;
                }
            }
        }
    }

    fn defined_in(&self, cfg: &ControlFlowGraph, b: Block) -> Bits {
        let mut defined = Bits::default();
        for &p in cfg.preds(b) {
            defined.union(&self.defined_out[p]);
        }
        defined
    }

    /// Forward: the tracked registers some definition may reach.
    fn solve_definitions(&mut self, cfg: &ControlFlowGraph) {
        let mut defines: SecondaryMap<Block, Bits> = SecondaryMap::new();
        for &b in cfg.rpo() {
            for &i in self.f.layout.block_insts(b) {
                for r in self.defs(i) {
                    defines[b].insert(r);
                }
            }
        }
        let mut changed = true;
        while changed {
            changed = false;
            for &b in cfg.rpo() {
                let mut defined = self.defined_in(cfg, b);
                defined.union(&defines[b]);
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
    /// tracked registers live and defined, or held by a wgmma in flight,
    /// before the block's `k`th instruction (`k` = its length: at its end).
    pub(super) fn for_each_point(
        &self,
        cfg: &ControlFlowGraph,
        mut visit: impl FnMut(Block, usize, usize),
    ) {
        for &b in cfg.rpo() {
            let insts = self.f.layout.block_insts(b);
            let scan = BlockScan::new(self, cfg, b);
            let mut live = self.live_out(cfg, b);
            let mut n = live.iter().filter(|&r| scan.counts(r, insts.len())).count();
            visit(b, insts.len(), n + scan.held(&live, insts.len()));
            for (k, &i) in insts.iter().enumerate().rev() {
                n = scan.step_back(&mut live, n, k, i);
                visit(b, k, n + scan.held(&live, k));
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

/// One block's backward scan: the registers defined before it, where in it
/// each is first defined, and the fragments in flight at each point.
struct BlockScan<'p, 'a> {
    p: &'p Pressure<'a>,
    defined: Bits,
    first: FxHashMap<usize, usize>,
    pending: Vec<Option<Vec<VReg>>>,
}

impl<'p, 'a> BlockScan<'p, 'a> {
    fn new(p: &'p Pressure<'a>, cfg: &ControlFlowGraph, b: Block) -> Self {
        let mut first: FxHashMap<usize, usize> = FxHashMap::default();
        for (k, &i) in p.f.layout.block_insts(b).iter().enumerate() {
            for r in p.defs(i) {
                first.entry(r).or_insert(k);
            }
        }
        BlockScan {
            p,
            defined: p.defined_in(cfg, b),
            first,
            pending: p.pending_in_block(cfg, b),
        }
    }

    /// Whether live register `r` takes a register before instruction `k`:
    /// some definition reaches it there.
    fn counts(&self, r: usize, k: usize) -> bool {
        self.defined.contains(r) || self.first.get(&r).is_some_and(|&at| at < k)
    }

    /// The fragments in flight before instruction `k` that are not live.
    fn held(&self, live: &Bits, k: usize) -> usize {
        let Some(pending) = &self.pending[k] else {
            return 0;
        };
        let mut held: SmallVec<[usize; 16]> = SmallVec::new();
        for r in pending.iter().filter_map(|&r| self.p.idx(r)) {
            if !live.contains(r) && !held.contains(&r) {
                held.push(r);
            }
        }
        held.len()
    }

    /// From the point after instruction `i` (the `k`th) to the point
    /// before it: `live` and its count `n` of registers that take one.
    fn step_back(&self, live: &mut Bits, mut n: usize, k: usize, i: Inst) -> usize {
        let (kills, uses) = self.p.effect(i);
        for r in kills {
            if live.remove(r) && self.counts(r, k + 1) {
                n -= 1;
            }
        }
        // Live across their first definition (a guarded one): undefined
        // before it.
        let mut born: Regs = Regs::new();
        for r in self.p.defs(i) {
            let first_here = self.first.get(&r) == Some(&k);
            if first_here && live.contains(r) && !self.defined.contains(r) && !born.contains(&r) {
                born.push(r);
            }
        }
        n -= born.len();
        for r in uses {
            if live.insert(r) && self.counts(r, k) {
                n += 1;
            }
        }
        n
    }
}
