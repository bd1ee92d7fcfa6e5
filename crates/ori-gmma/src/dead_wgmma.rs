//! ptxas's dead-code elimination of wgmma, as the GMMA passes see its result
//! (rule R-dead-wgmma).
//!
//! ptxas 13.0.88 optimizes a function before its GMMA passes, and a
//! `wgmma.mma_async` whose accumulator results no instruction reads is dead
//! code like any other: every register it writes is written again on every
//! path before a read, or never read. ptxas deletes it, so phase 87 neither
//! fences it (no C7519 for the registers it reads) nor waits for it, and a
//! commit left with no wgmma before it closes an empty group. Deleting one
//! wgmma can leave another dead (a chain whose last result is unread), so
//! the analysis runs until none is left.
//!
//! Found on the generated pipelines, whose accumulators are often rewritten
//! by a `scale-d` 0 wgmma before they are read; the probes
//! `tests/corpus/c7519_dead_wgmma_*` (recorded from ptxas 13.0.88) show the
//! arrive of a wgmma disappear when a later wgmma or plain instruction
//! overwrites all of its accumulators first, and come back when one
//! accumulator is read in between.

use cranelift_entity::SecondaryMap;
use ori_ir::{
    sized_map, Block, ControlFlowGraph, DominatorTree, Function, Inst, InstData, Opcode, RegClass,
    VReg,
};
use smallvec::SmallVec;

/// Delete every dead wgmma of `f` (see the module documentation); how many
/// were deleted.
pub fn remove_dead_wgmmas(f: &mut Function) -> usize {
    let mut removed = 0;
    loop {
        let dead = dead_wgmmas(f);
        if dead.is_empty() {
            return removed;
        }
        removed += dead.len();
        let mut freed = Vec::new();
        for i in dead {
            freed.extend(accumulators(&f.insts[i]));
            f.layout.remove_inst(i);
        }
        demote(f, &freed);
    }
}

/// Registers of deleted wgmmas that no remaining wgmma writes are plain
/// registers again (the class of their type): ptxas's GMMA passes see no
/// accumulator in them, so writing one needs no arrive
/// (`clean_kill_dead_set_between_mma`).
fn demote(f: &mut Function, freed: &[VReg]) {
    let t = Tracked::of(f);
    for &r in freed {
        let v = &mut f.vregs[r];
        if t.bit[r] == 0 && v.class == RegClass::Tensor {
            if let Some(c) = RegClass::of_ptx_type(v.ty.as_str()) {
                v.class = c;
            }
        }
    }
}

/// The accumulator registers of `f`'s wgmmas, each given a bit, and those
/// of them live at the function's exits (its return registers).
struct Tracked {
    /// Bit index plus one; 0: not tracked.
    bit: SecondaryMap<VReg, u32>,
    words: usize,
    at_exit: Vec<u64>,
}

impl Tracked {
    fn of(f: &Function) -> Tracked {
        let mut bit: SecondaryMap<VReg, u32> = sized_map(f.vregs.len());
        let mut n = 0u32;
        for &b in f.layout.blocks() {
            for &i in f.layout.block_insts(b) {
                let d = &f.insts[i];
                if d.opcode == Opcode::WgmmaMmaAsync {
                    for r in accumulators(d) {
                        if bit[r] == 0 {
                            n += 1;
                            bit[r] = n;
                        }
                    }
                }
            }
        }
        let words = (n as usize).div_ceil(64);
        let mut t = Tracked {
            bit,
            words,
            at_exit: vec![0; words],
        };
        if !f.ret_params.is_empty() {
            let mut at_exit = vec![0; words];
            for (r, v) in f.vregs.iter() {
                if f.ret_params.iter().any(|p| *p.name == *v.name) {
                    t.set(&mut at_exit, r, true);
                }
            }
            t.at_exit = at_exit;
        }
        t
    }

    fn set(&self, live: &mut [u64], r: VReg, on: bool) {
        let Some(k) = (self.bit[r] as usize).checked_sub(1) else {
            return;
        };
        let mask = 1u64 << (k % 64);
        if on {
            live[k / 64] |= mask;
        } else {
            live[k / 64] &= !mask;
        }
    }

    fn get(&self, live: &[u64], r: VReg) -> bool {
        (self.bit[r] as usize)
            .checked_sub(1)
            .is_some_and(|k| live[k / 64] & (1u64 << (k % 64)) != 0)
    }
}

/// The registers a wgmma writes: its D operand (slot 0).
fn accumulators(d: &InstData) -> SmallVec<[VReg; 8]> {
    let mut out = SmallVec::new();
    if let Some(s) = d.slots.first() {
        s.op.for_each_reg(&mut |r| out.push(r));
    }
    out
}

/// Registers `d` reads: its uses, less D of a wgmma whose `scale-d` is the
/// immediate 0 (`D = A*B` does not read D).
fn for_each_read(d: &InstData, mut f: impl FnMut(VReg)) {
    let skip_d = d.opcode == Opcode::WgmmaMmaAsync
        && d.wgmma_operands().is_some_and(|w| w.scale_d_is_zero());
    if !skip_d {
        return d.for_each_use(f);
    }
    let d_regs = accumulators(d);
    d.for_each_use(|r| {
        if !d_regs.contains(&r) {
            f(r)
        }
    });
}

/// One instruction's effect on the live set, backwards: a write not under
/// a guard ends its register's liveness, then its reads start theirs.
fn transfer(t: &Tracked, live: &mut [u64], d: &InstData) {
    if d.guard.is_none() {
        d.for_each_def(|r| t.set(live, r, false));
    }
    for_each_read(d, |r| t.set(live, r, true));
}

/// Whether `d` is a wgmma that writes no register live after it.
fn is_dead(t: &Tracked, live: &[u64], d: &InstData) -> bool {
    d.opcode == Opcode::WgmmaMmaAsync && accumulators(d).iter().all(|&r| !t.get(live, r))
}

/// The wgmmas of `f` that are dead (none of their accumulators live after
/// them), by a backward liveness of the accumulator registers over the CFG.
fn dead_wgmmas(f: &Function) -> Vec<Inst> {
    let t = Tracked::of(f);
    if t.words == 0 {
        return Vec::new();
    }
    let g = Graph::of(f);
    let live_in = live_in(f, &g, &t);
    let mut dead = Vec::new();
    for &b in g.cfg.rpo() {
        let mut live = live_out(f, &g, &t, &live_in, b);
        for &i in f.layout.block_insts(b).iter().rev() {
            let d = &f.insts[i];
            if is_dead(&t, &live, d) {
                dead.push(i);
            }
            transfer(&t, &mut live, d);
        }
    }
    dead
}

/// The CFG as ptxas's dead-code elimination sees it: with an edge past
/// every loop it unrolls by four with a remainder, from each block entering
/// the loop to each block it leaves to. A write in such a loop does not
/// make a wgmma before the loop dead (`c7519_dead_wgmma_not_past_unrolled_loop`).
struct Graph {
    cfg: ControlFlowGraph,
    bypass: SecondaryMap<Block, SmallVec<[Block; 2]>>,
}

impl Graph {
    fn of(f: &Function) -> Graph {
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(&cfg);
        let mut bypass: SecondaryMap<Block, SmallVec<[Block; 2]>> = sized_map(f.blocks.len());
        for body in crate::loops::remainder_unrolled_bodies(f, &cfg, &dt) {
            let inside = |b: &Block| body.contains(b);
            let exits: SmallVec<[Block; 2]> = body
                .iter()
                .flat_map(|&b| cfg.succs(b).iter().copied())
                .filter(|s| !inside(s))
                .collect();
            for &p in cfg.preds(body[0]).iter().filter(|p| !inside(p)) {
                bypass[p].extend(exits.iter().copied());
            }
        }
        Graph { cfg, bypass }
    }

    fn succs(&self, b: Block) -> impl Iterator<Item = Block> + '_ {
        self.cfg.succs(b).iter().chain(&self.bypass[b]).copied()
    }
}

/// The registers live out of `b`: those live into a successor, and at a
/// `ret` the function's return registers.
fn live_out(
    f: &Function,
    g: &Graph,
    t: &Tracked,
    live_in: &SecondaryMap<Block, Vec<u64>>,
    b: Block,
) -> Vec<u64> {
    let mut live = vec![0u64; t.words];
    for s in g.succs(b) {
        for (w, x) in live.iter_mut().zip(&live_in[s]) {
            *w |= x;
        }
    }
    let exits = f
        .layout
        .block_insts(b)
        .last()
        .is_some_and(|&i| f.insts[i].opcode == Opcode::Return);
    if exits {
        for (w, x) in live.iter_mut().zip(&t.at_exit) {
            *w |= x;
        }
    }
    live
}

/// The registers live into each reachable block (empty for the others),
/// iterated to the fixpoint in postorder.
fn live_in(f: &Function, g: &Graph, t: &Tracked) -> SecondaryMap<Block, Vec<u64>> {
    let mut live_in: SecondaryMap<Block, Vec<u64>> = sized_map(f.blocks.len());
    let mut changed = true;
    while changed {
        changed = false;
        for &b in g.cfg.rpo().iter().rev() {
            let mut live = live_out(f, g, t, &live_in, b);
            for &i in f.layout.block_insts(b).iter().rev() {
                transfer(t, &mut live, &f.insts[i]);
            }
            if live_in[b] != live {
                live_in[b] = live;
                changed = true;
            }
        }
    }
    live_in
}
