//! Which accumulator sets are in flight, at every block entry and instruction.
//!
//! A wgmma puts its destination set in flight; `commit_group` closes the
//! open sets into a group; `wait_group N` retires all but the N most recent
//! groups (PTX ISA, seed 001). The state is a small lattice — the open sets
//! plus the committed groups, newest last — joined by union (groups aligned
//! from the newest), and solved by a worklist fixpoint in reverse postorder,
//! loops included. Each round costs one visit per instruction.

use cranelift_entity::{EntityRef, SecondaryMap};
use ori_ir::{AccumSet, Block, ControlFlowGraph, Function, InstData, Opcode};
use smallvec::SmallVec;
use std::collections::VecDeque;

/// Most committed groups tracked; older ones are merged (a conservative join).
pub const MAX_GROUPS: usize = 16;

/// Sets issued and not yet retired.
#[derive(Default, PartialEq, Eq, Debug)]
pub struct PipeState {
    /// Destination sets of wgmmas issued since the last commit.
    pub open: SmallVec<[AccumSet; 4]>,
    /// Committed groups, oldest first.
    pub groups: SmallVec<[SmallVec<[AccumSet; 4]>; 4]>,
}

/// A copy of the sets as one `memcpy` each (`SmallVec`'s own `clone`
/// copies element by element: phase 87's fixpoint clones a walk state,
/// pipeline included, at every block it visits).
impl Clone for PipeState {
    fn clone(&self) -> PipeState {
        PipeState {
            open: SmallVec::from_slice(&self.open),
            groups: self
                .groups
                .iter()
                .map(|g| SmallVec::from_slice(g))
                .collect(),
        }
    }
}

/// `dst |= src` for sets kept sorted and without duplicates. A small
/// `src` goes in by binary search (a huge merged oldest group, when a
/// block commits thousands of sets and never waits, takes each commit in
/// O(log n) plus a move instead of a scan and a sort); a larger one by a
/// linear merge.
fn union_into(dst: &mut SmallVec<[AccumSet; 4]>, src: &[AccumSet]) -> bool {
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
    let mut src: SmallVec<[AccumSet; 8]> = src.iter().copied().collect();
    src.sort_unstable();
    src.dedup();
    let mut out: SmallVec<[AccumSet; 4]> = SmallVec::with_capacity(dst.len() + src.len());
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
    pub fn all(&self) -> SmallVec<[AccumSet; 4]> {
        let mut v = self.open.clone();
        for g in &self.groups {
            union_into(&mut v, g);
        }
        v
    }

    /// Whether set `s` is in flight (open or in a committed group): a
    /// binary search per group, without building the union.
    pub fn contains(&self, s: AccumSet) -> bool {
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
        if let Some(e) = Event::of(d) {
            self.apply(e);
        }
    }

    /// Apply one pipeline event.
    pub fn apply(&mut self, e: Event) {
        match e {
            Event::Wgmma(set) => {
                union_into(&mut self.open, &[set]);
            }
            Event::Commit => {
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
            Event::Wait(n) => {
                // ptxas 13.0.88 closes an open stage at a wait as if committed
                // (`fence; wgmma; wait_group 0; read` compiles clean, the HGMMA
                // carrying gsb0), although the ISA leaves uncommitted wgmma
                // outside every group.
                if !self.open.is_empty() {
                    let g = std::mem::take(&mut self.open);
                    self.groups.push(g);
                }
                let n = n as usize;
                if self.groups.len() > n {
                    let drop = self.groups.len() - n;
                    self.groups.drain(..drop);
                }
            }
        }
    }
}

/// What an instruction does to the pipeline state; every other
/// instruction does nothing to it.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Event {
    /// A wgmma (with phase 85's sets) puts its destination set in flight.
    Wgmma(AccumSet),
    /// `commit_group` (or ptxas's internal commit).
    Commit,
    /// `wait_group N` (or ptxas's internal wait), N clamped at 0.
    Wait(u32),
}

impl Event {
    /// The event of `d`, if it has one.
    pub fn of(d: &InstData) -> Option<Event> {
        match d.opcode {
            Opcode::WgmmaMmaAsync => d.accum.map(|w| Event::Wgmma(w.dst)),
            op if op.is_commit() => Some(Event::Commit),
            op if op.is_wait() => {
                let n = d.wait_count().unwrap_or(0).clamp(0, i64::from(u32::MAX));
                Some(Event::Wait(n as u32))
            }
            _ => None,
        }
    }
}

/// Every block's pipeline events in order, read once from the
/// instructions: the fixpoint and the per-block maximum walk these (a few
/// bytes each) instead of the instructions (184 bytes each), which at a
/// million instructions no longer stay in cache between walks.
#[derive(Clone, Debug, Default)]
pub struct Events {
    all: Vec<Event>,
    /// `all[range[b].0 .. range[b].1]` are block `b`'s.
    range: SecondaryMap<Block, (u32, u32)>,
}

impl Events {
    /// Read the events of every laid-out block of `f`.
    pub fn of(f: &Function) -> Events {
        let mut ev = Events::default();
        for &b in f.layout.blocks() {
            let lo = ev.start_block();
            let insts = f.layout.block_insts(b).iter();
            ev.all.extend(insts.filter_map(|&i| Event::of(&f.insts[i])));
            ev.end_block(b, lo);
        }
        ev
    }

    /// Where the next block's events start (for [`Events::end_block`]).
    pub fn start_block(&self) -> u32 {
        self.all.len() as u32
    }

    /// Append an event of the block being read.
    pub fn push(&mut self, e: Event) {
        self.all.push(e);
    }

    /// The events pushed since `lo` are block `b`'s.
    pub fn end_block(&mut self, b: Block, lo: u32) {
        self.range[b] = (lo, self.all.len() as u32);
    }

    /// Block `b`'s events, in order.
    pub fn block(&self, b: Block) -> &[Event] {
        let (lo, hi) = self.range[b];
        &self.all[lo as usize..hi as usize]
    }
}

/// The fixpoint solution: state at each block's entry.
#[derive(Clone, Debug, Default)]
pub struct InFlight {
    /// State at block entry; `None` for nothing in flight (the lattice's
    /// bottom), which most blocks of a large kernel have: 8 bytes a block
    /// instead of a `PipeState`'s 128 (28 MB at 222k blocks, all of it
    /// fresh pages at every run).
    entry: SecondaryMap<Block, Option<Box<PipeState>>>,
    /// What a `None` entry stands for.
    empty: PipeState,
    /// Rounds the worklist needed (for the benchmark and tests).
    pub visits: usize,
    /// The blocks' events the solution was computed from.
    pub events: Events,
}

impl InFlight {
    /// Solve the dataflow over `f` (its wgmmas must carry phase 85's words).
    pub fn compute(f: &Function, cfg: &ControlFlowGraph) -> InFlight {
        InFlight::solve(Events::of(f), cfg)
    }

    /// Solve the dataflow from the blocks' events, read beforehand.
    pub fn solve(events: Events, cfg: &ControlFlowGraph) -> InFlight {
        let mut r = InFlight {
            events,
            ..InFlight::default()
        };
        let rpo = cfg.rpo();
        // Sized once, to the highest block number the walk can reach.
        let n = rpo.iter().map(|b| b.index() + 1).max().unwrap_or(0);
        r.entry.resize(n);
        let mut queued: SecondaryMap<Block, bool> = SecondaryMap::with_capacity(n);
        queued.resize(n);
        let mut work: VecDeque<Block> = rpo.iter().copied().collect();
        for b in rpo {
            queued[*b] = true;
        }
        while let Some(b) = work.pop_front() {
            queued[b] = false;
            r.visits += 1;
            let mut s = r.entry(b).clone();
            for &e in r.events.block(b) {
                s.apply(e);
            }
            if s.is_empty() && s.groups.is_empty() {
                // Joining the bottom changes nothing.
                continue;
            }
            for &succ in cfg.succs(b) {
                let changed = match &mut r.entry[succ] {
                    Some(state) => state.join(&s),
                    slot => {
                        *slot = Some(Box::new(s.clone()));
                        true
                    }
                };
                if changed && !queued[succ] {
                    queued[succ] = true;
                    work.push_back(succ);
                }
            }
        }
        r
    }

    /// The state at the entry of block `b`.
    pub fn entry(&self, b: Block) -> &PipeState {
        self.entry[b].as_deref().unwrap_or(&self.empty)
    }

    /// The most distinct sets in flight at once in block `b`. Kept by
    /// count rather than by building the union at every instruction (which
    /// is quadratic in a block that commits thousands of sets and never
    /// waits): only a wgmma adds a set (one more unless already in flight),
    /// a commit moves sets between groups, and only a wait drops some (a
    /// recount of what stays).
    pub fn max_active_in_block(&self, b: Block) -> usize {
        let mut s = self.entry(b).clone();
        let mut count = s.all().len();
        let mut most = count;
        for &e in self.events.block(b) {
            match e {
                Event::Wgmma(set) => {
                    count += usize::from(!s.contains(set));
                    s.apply(e);
                    most = most.max(count);
                }
                Event::Wait(_) => {
                    s.apply(e);
                    count = s.all().len();
                }
                Event::Commit => s.apply(e),
            }
        }
        most
    }
}
