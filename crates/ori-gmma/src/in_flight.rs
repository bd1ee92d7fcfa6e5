//! Which accumulator sets are in flight, at every block entry and instruction.
//!
//! A wgmma puts its destination set in flight; `commit_group` closes the
//! open sets into a group; `wait_group N` retires all but the N most recent
//! groups (PTX ISA, seed 001). The state is a small lattice — the open sets
//! plus the committed groups, newest last — joined by union (groups aligned
//! from the newest), and solved by a worklist fixpoint in reverse postorder,
//! loops included. Each round costs one visit per instruction.

use crate::accumulator_sets::word_index;
use cranelift_entity::SecondaryMap;
use ori_ir::{Block, ControlFlowGraph, Function, InstData, Opcode};
use smallvec::SmallVec;
use std::collections::VecDeque;

/// Most committed groups tracked; older ones are merged (a conservative join).
pub const MAX_GROUPS: usize = 16;

/// Sets issued and not yet retired.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct PipeState {
    /// Destination sets of wgmmas issued since the last commit.
    pub open: SmallVec<[u32; 4]>,
    /// Committed groups, oldest first.
    pub groups: SmallVec<[SmallVec<[u32; 4]>; 4]>,
}

/// `dst |= src` for sets kept sorted and without duplicates. A small
/// `src` goes in by binary search (a huge merged oldest group, when a
/// block commits thousands of sets and never waits, takes each commit in
/// O(log n) plus a move instead of a scan and a sort); a larger one by a
/// linear merge.
fn union_into(dst: &mut SmallVec<[u32; 4]>, src: &[u32]) -> bool {
    debug_assert!(dst.windows(2).all(|w| w[0] < w[1]));
    if src.len() <= 4 {
        let mut changed = false;
        for &s in src {
            if let Err(at) = dst.binary_search(&s) {
                dst.insert(at, s);
                changed = true;
            }
        }
        return changed;
    }
    let mut src: SmallVec<[u32; 8]> = src.iter().copied().collect();
    src.sort_unstable();
    src.dedup();
    let mut out: SmallVec<[u32; 4]> = SmallVec::with_capacity(dst.len() + src.len());
    let (mut i, mut j) = (0, 0);
    while i < dst.len() || j < src.len() {
        match (dst.get(i), src.get(j)) {
            (Some(&a), Some(&b)) if a == b => {
                out.push(a);
                i += 1;
                j += 1;
            }
            (Some(&a), Some(&b)) if a < b => {
                out.push(a);
                i += 1;
            }
            (Some(&a), None) => {
                out.push(a);
                i += 1;
            }
            (_, Some(&b)) => {
                out.push(b);
                j += 1;
            }
            (None, None) => unreachable!(),
        }
    }
    let changed = out.len() != dst.len();
    *dst = out;
    changed
}

impl PipeState {
    /// Every set in flight (open or committed), sorted, without duplicates.
    pub fn all(&self) -> SmallVec<[u32; 4]> {
        let mut v = self.open.clone();
        for g in &self.groups {
            union_into(&mut v, g);
        }
        v
    }

    /// Whether set `s` is in flight (open or in a committed group): a
    /// binary search per group, without building the union.
    pub fn contains(&self, s: u32) -> bool {
        self.open.binary_search(&s).is_ok()
            || self.groups.iter().any(|g| g.binary_search(&s).is_ok())
    }

    /// Whether nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.open.is_empty() && self.groups.iter().all(|g| g.is_empty())
    }

    /// Join another state into this one; returns whether it changed.
    pub fn join(&mut self, other: &PipeState) -> bool {
        let mut changed = union_into(&mut self.open, &other.open);
        if other.groups.len() > self.groups.len() {
            let extra = other.groups.len() - self.groups.len();
            for _ in 0..extra {
                self.groups.insert(0, SmallVec::new());
            }
            changed = true;
        }
        let off = self.groups.len() - other.groups.len();
        for (k, g) in other.groups.iter().enumerate() {
            changed |= union_into(&mut self.groups[off + k], g);
        }
        changed
    }

    /// Apply one instruction.
    pub fn transfer(&mut self, d: &InstData) {
        match d.opcode {
            Opcode::WgmmaMmaAsync => {
                if let Some(w) = d.accum {
                    union_into(&mut self.open, &[word_index(w.dst)]);
                }
            }
            op if op.is_commit() => {
                let g = std::mem::take(&mut self.open);
                self.groups.push(g);
                if self.groups.len() > MAX_GROUPS {
                    // Merge the two oldest, the small one into the large one
                    // (the oldest grows with every commit past the cap; the
                    // other way round copied and sorted it at each commit).
                    let oldest = self.groups.remove(0);
                    let next = std::mem::replace(&mut self.groups[0], oldest);
                    union_into(&mut self.groups[0], &next);
                }
            }
            op if op.is_wait() => {
                // ptxas 13.0.88 closes an open stage at a wait as if committed
                // (`fence; wgmma; wait_group 0; read` compiles clean, the HGMMA
                // carrying gsb0), although the ISA leaves uncommitted wgmma
                // outside every group.
                if !self.open.is_empty() {
                    let g = std::mem::take(&mut self.open);
                    self.groups.push(g);
                }
                let n = d.wait_count().unwrap_or(0).max(0) as usize;
                if self.groups.len() > n {
                    let drop = self.groups.len() - n;
                    self.groups.drain(..drop);
                }
            }
            _ => {}
        }
    }
}

/// The fixpoint solution: state at each block's entry.
#[derive(Clone, Debug, Default)]
pub struct InFlight {
    /// State at block entry.
    pub entry: SecondaryMap<Block, PipeState>,
    /// Rounds the worklist needed (for the benchmark and tests).
    pub visits: usize,
}

impl InFlight {
    /// Solve the dataflow over `f` (its wgmmas must carry phase 85's words).
    pub fn compute(f: &Function, cfg: &ControlFlowGraph) -> InFlight {
        let mut r = InFlight::default();
        let rpo = cfg.rpo();
        let mut queued: SecondaryMap<Block, bool> = SecondaryMap::new();
        let mut work: VecDeque<Block> = rpo.iter().copied().collect();
        for b in rpo {
            queued[*b] = true;
        }
        while let Some(b) = work.pop_front() {
            queued[b] = false;
            r.visits += 1;
            let mut s = r.entry[b].clone();
            for &i in f.layout.block_insts(b) {
                s.transfer(&f.insts[i]);
            }
            for &succ in cfg.succs(b) {
                if r.entry[succ].join(&s) && !queued[succ] {
                    queued[succ] = true;
                    work.push_back(succ);
                }
            }
        }
        r
    }

    /// The most distinct sets in flight at once in block `b`. Kept by
    /// count rather than by building the union at every instruction (which
    /// is quadratic in a block that commits thousands of sets and never
    /// waits): only a wgmma adds a set (one more unless already in flight),
    /// a commit moves sets between groups, and only a wait drops some (a
    /// recount of what stays).
    pub fn max_active_in_block(&self, f: &Function, b: Block) -> usize {
        let mut s = self.entry[b].clone();
        let mut count = s.all().len();
        let mut most = count;
        for &i in f.layout.block_insts(b) {
            let d = &f.insts[i];
            match d.opcode {
                Opcode::WgmmaMmaAsync => {
                    if let Some(w) = d.accum {
                        count += usize::from(!s.contains(word_index(w.dst)));
                    }
                    s.transfer(d);
                    most = most.max(count);
                }
                op if op.is_wait() => {
                    s.transfer(d);
                    count = s.all().len();
                }
                _ => s.transfer(d),
            }
        }
        most
    }
}
