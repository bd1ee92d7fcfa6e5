//! Uniformity: which registers may differ across the threads of a warpgroup,
//! and which blocks run under a divergent branch.
//!
//! Phase 87 may only put a warpgroup arrive or wait where every thread of the
//! warpgroup gets to it (ptxas: C7518 / C7520 otherwise). A register is
//! divergent when it is derived from `%tid`, `%laneid` and the like, or
//! loaded from a divergent address, or produced by an atomic; parameters,
//! `%ctaid`, `%ntid` and constants are uniform. A block is divergent when it
//! is control dependent on a branch whose predicate is divergent: reachable
//! from one of the branch's successors before the branch's immediate
//! post-dominator.
//!
//! Registers are judged where they are used, not once per name (**R-uniform-
//! at-use**): ptxas 13.0.88 sees SSA values, so a predicate register
//! redefined from `%tid` late in a kernel does not make an earlier branch on
//! its uniform value divergent (`gen_predicate_reuse`: a `@q bra` on
//! `setp.eq q, n, 7` before `setp.lt q, tid, 64` gets its arrive, C7519,
//! where a per-name analysis serialized, C7520). A forward dataflow over the
//! registers that may be divergent somewhere (union at joins; an unguarded
//! definition replaces the register's state, a guarded one may keep the old
//! value) gives each guard its divergence at its instruction.
//!
//! **R-shfl-idx-broadcast**: a `shfl.sync.idx` whose lane operand is
//! uniform and whose `c` operand is the constant 31 (clamp 31, no segment
//! mask: every thread reads the same lane of the whole warp) yields a
//! uniform value, whatever its source and member mask; CUTLASS's
//! `canonical_warp_idx_sync` (`shfl.sync.idx.b32 r, warp, 0, 31, -1`) is
//! the common case. ptxas 13.0.88 folds a `c` register that a `mov` of 31
//! sets, and no other `c` (63, `0x201f`, `0x1c1f`, a parameter: all
//! divergent), nor another mode (`up`, `down`, `bfly`), nor a lane from
//! `%tid` (the probes `tests/corpus/*shfl_*`).

use cranelift_entity::SecondaryMap;
use ori_ir::{Block, ControlFlowGraph, Function, Inst, InstData, Opcode, Operand, VReg};
use smallvec::SmallVec;

/// Whether a special register differs across a warpgroup's threads.
pub fn special_is_divergent(name: &str) -> bool {
    let base = name.split('.').next().unwrap_or(name);
    matches!(
        base,
        "%tid"
            | "%laneid"
            | "%warpid"
            | "%lanemask_eq"
            | "%lanemask_le"
            | "%lanemask_lt"
            | "%lanemask_ge"
            | "%lanemask_gt"
            | "%clock"
            | "%clock64"
            | "%globaltimer"
            | "%globaltimer_lo"
            | "%globaltimer_hi"
            | "%smid"
    )
}

/// Divergent registers and blocks of one function.
#[derive(Clone, Debug, Default)]
pub struct Uniformity {
    /// Registers that may differ across threads at some point of the
    /// function (a per-name superset; guards use [`Uniformity::guard_is_divergent`]).
    pub divergent_reg: SecondaryMap<VReg, bool>,
    /// Guarded instructions whose guard is divergent where it is read.
    pub divergent_guard: SecondaryMap<Inst, bool>,
    /// `brx.idx` instructions whose index is divergent where it is read
    /// (**R-brx-index-divergence**: ptxas 13.0.88 takes such a branch for
    /// a divergent one with or without `.uni`, corpus `brx_*`).
    pub divergent_index: SecondaryMap<Inst, bool>,
    /// Blocks executed under a divergent branch.
    pub divergent_block: SecondaryMap<Block, bool>,
    /// Each block's immediate post-dominator (`None`: the virtual exit).
    pub ipdom: SecondaryMap<Block, Option<Block>>,
}

/// The most bits (candidate registers times blocks) the flow-sensitive
/// pass keeps; past it, guards take the per-name result (conservative).
const MAX_FLOW_BITS: usize = 1 << 26;

/// Per-block sets of the candidate registers, as words.
struct FlowSets {
    words: usize,
    bits: Vec<u64>,
}

impl FlowSets {
    fn new(words: usize, blocks: usize) -> FlowSets {
        FlowSets {
            words,
            bits: vec![0; words * blocks],
        }
    }
    fn of(&self, k: usize) -> &[u64] {
        &self.bits[k * self.words..(k + 1) * self.words]
    }
    /// `set[k] |= src`; returns whether it grew.
    fn union_into(&mut self, k: usize, src: &[u64]) -> bool {
        let mut grew = false;
        for (d, s) in self.bits[k * self.words..(k + 1) * self.words]
            .iter_mut()
            .zip(src)
        {
            grew |= *s & !*d != 0;
            *d |= *s;
        }
        grew
    }
}

/// The mnemonics whose results depend on the thread (or on other threads'
/// values), `redux` and `vote` first (those only with `.ballot`), interned
/// once: the fixpoints below ask about every instruction each round, and
/// comparing symbols is an integer compare where comparing their text was
/// a table read and a string compare each.
fn thread_dependent_names() -> &'static [ori_ir::Symbol; 7] {
    static NAMES: std::sync::OnceLock<[ori_ir::Symbol; 7]> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        [
            "redux",
            "vote",
            "atom",
            "shfl",
            "activemask",
            "elect",
            "match",
        ]
        .map(ori_ir::Symbol::new)
    })
}

/// Registers whose every definition is an unguarded `mov` of the
/// constant 31 (the `c` operand R-shfl-idx-broadcast folds).
pub type Clamp31 = SecondaryMap<VReg, bool>;

/// The registers of `f` that hold the constant 31 wherever they are read.
fn clamp31_registers(f: &Function) -> Clamp31 {
    let mut holds: Clamp31 = ori_ir::sized_map(f.vregs.len());
    let mut other: SecondaryMap<VReg, bool> = ori_ir::sized_map(f.vregs.len());
    for i in f.layout.all_insts() {
        let d = &f.insts[i];
        let is_31 = d.name.as_str() == "mov"
            && d.guard.is_none()
            && d.slots.len() == 2
            && matches!(d.slots[1].op, Operand::Imm(v) if v.as_i64() == Some(31));
        d.for_each_def(|r| {
            if is_31 {
                holds[r] = true;
            } else {
                other[r] = true;
            }
        });
    }
    for (r, o) in other.iter() {
        if *o {
            holds[r] = false;
        }
    }
    holds
}

/// R-shfl-idx-broadcast: `shfl.sync.idx d, a, b, 31, mask` with `b`
/// uniform reads one lane for the whole warp.
fn is_uniform_broadcast(d: &InstData, div: &impl Fn(VReg) -> bool, c31: &Clamp31) -> bool {
    if !d.has_mod("idx") || d.slots.len() != 5 {
        return false;
    }
    let lane_uniform = match &d.slots[2].op {
        Operand::Imm(_) => true,
        Operand::Reg(r) => !div(*r),
        Operand::Special(n) => !special_is_divergent(n),
        _ => false,
    };
    let clamp_31 = match &d.slots[3].op {
        Operand::Imm(v) => v.as_i64() == Some(31),
        Operand::Reg(r) => c31.get(*r).copied().unwrap_or(false),
        _ => false,
    };
    lane_uniform && clamp_31 && d.guard.is_none_or(|g| !div(g.reg))
}

fn inst_sources_divergent(d: &InstData, div: &impl Fn(VReg) -> bool, c31: &Clamp31) -> bool {
    let names = thread_dependent_names();
    if let Some(k) = names.iter().position(|n| *n == d.name) {
        if k == 3 && is_uniform_broadcast(d, div, c31) {
            return false;
        }
        // Results that depend on the thread (or on other threads' values).
        return k >= 2 || d.has_mod("ballot");
    }
    let mut any = false;
    for s in &d.slots {
        if s.role.uses() || matches!(s.op, Operand::Addr { .. }) {
            let mut specials = false;
            if let Operand::Special(n) = &s.op {
                specials |= special_is_divergent(n);
            }
            if let Operand::Vector(v) = &s.op {
                for o in v {
                    if let Operand::Special(n) = o {
                        specials |= special_is_divergent(n);
                    }
                }
            }
            any |= specials;
            s.op.for_each_reg(&mut |r: VReg| any |= div(r));
        }
    }
    if let Some(g) = d.guard {
        any |= div(g.reg);
    }
    any
}

impl Uniformity {
    /// Analyse `f`.
    pub fn compute(f: &Function, cfg: &ControlFlowGraph) -> Uniformity {
        let mut u = Uniformity {
            divergent_reg: ori_ir::sized_map(f.vregs.len()),
            divergent_guard: ori_ir::sized_map(f.insts.len()),
            divergent_index: SecondaryMap::new(),
            divergent_block: ori_ir::sized_map(f.blocks.len()),
            ipdom: SecondaryMap::new(),
        };
        let c31 = clamp31_registers(f);
        u.divergent_registers(f, &c31);
        u.guards_at_use(f, cfg, &c31);
        // Blocks: control dependence on divergent branches.
        let ipdom = ori_ir::PostDominatorTree::compute(f, cfg).into_map();
        u.ipdom = ipdom.clone();
        for &b in cfg.rpo() {
            let Some(&last) = f.layout.block_insts(b).last() else {
                continue;
            };
            let d = &f.insts[last];
            let divergent_branch =
                d.opcode.is_branch() && (u.divergent_guard[last] || u.divergent_index[last]);
            if !divergent_branch || cfg.succs(b).len() < 2 {
                continue;
            }
            let stop = ipdom[b];
            let mut stack: Vec<Block> = cfg.succs(b).to_vec();
            let mut seen: SecondaryMap<Block, bool> = SecondaryMap::new();
            while let Some(x) = stack.pop() {
                if Some(x) == stop || seen[x] {
                    continue;
                }
                seen[x] = true;
                u.divergent_block[x] = true;
                stack.extend_from_slice(cfg.succs(x));
            }
        }
        u
    }

    /// Registers: a flow-insensitive fixpoint (a register defined
    /// divergently anywhere is divergent). An instruction found divergent
    /// has made all its definitions divergent: later rounds, which could
    /// change nothing there, visit only the others (in layout order, as a
    /// round over every instruction would).
    fn divergent_registers(&mut self, f: &Function, c31: &Clamp31) {
        let mut pending: Vec<Inst> = f
            .layout
            .all_insts()
            .filter(|&i| f.insts[i].opcode != Opcode::WgmmaMmaAsync)
            .collect();
        let mut changed = true;
        while changed {
            changed = false;
            pending.retain(|&i| {
                let d = &f.insts[i];
                let div = |r: VReg| self.divergent_reg[r];
                if !inst_sources_divergent(d, &div, c31) {
                    return true;
                }
                d.for_each_def(|r| {
                    changed |= !self.divergent_reg[r];
                    self.divergent_reg[r] = true;
                });
                false
            });
        }
    }

    /// Whether instruction `i` of block `b` runs under divergent control or a divergent guard.
    pub fn inst_is_divergent(&self, b: Block, i: Inst) -> bool {
        self.divergent_block[b] || self.divergent_guard[i]
    }

    /// Whether `b` post-dominates `a`, looking at most `limit` steps up
    /// `a`'s post-dominator chain (a deeper answer is `false`).
    pub fn post_dominates(&self, b: Block, a: Block, limit: usize) -> bool {
        let mut x = Some(a);
        for _ in 0..limit {
            match x {
                Some(y) if y == b => return true,
                Some(y) => x = self.ipdom[y],
                None => return false,
            }
        }
        false
    }

    /// Whether `i` is guarded by a predicate that is divergent where `i` reads it.
    pub fn guard_is_divergent(&self, i: Inst) -> bool {
        self.divergent_guard[i]
    }

    /// **R-uniform-at-use**: each guard's divergence at its instruction,
    /// from a forward dataflow over the registers the per-name pass found
    /// divergent (the others are uniform everywhere).
    fn guards_at_use(&mut self, f: &Function, cfg: &ControlFlowGraph, c31: &Clamp31) {
        let mut slot: SecondaryMap<VReg, u32> = SecondaryMap::with_default(u32::MAX);
        let mut n = 0u32;
        for (r, &div) in self.divergent_reg.iter() {
            if div {
                slot[r] = n;
                n += 1;
            }
        }
        let blocks = cfg.rpo();
        let words = (n as usize).div_ceil(64);
        if n == 0 || words * 64 * blocks.len() > MAX_FLOW_BITS {
            for i in f.layout.all_insts() {
                let g = f.insts[i].guard;
                self.divergent_guard[i] = g.is_some_and(|g| self.divergent_reg[g.reg]);
                if let Some(r) = brx_index(&f.insts[i]) {
                    self.divergent_index[i] = self.divergent_reg[r];
                }
            }
            return;
        }
        let mut index: SecondaryMap<Block, u32> = SecondaryMap::with_default(u32::MAX);
        for (k, &b) in blocks.iter().enumerate() {
            index[b] = k as u32;
        }
        let mut entry = FlowSets::new(words, blocks.len());
        let mut cur = vec![0u64; words];
        // Only instructions defining a candidate move the sets (`transfer`):
        // listed once per block with their candidates' slots, the fixpoint
        // visits those alone.
        let movers: Vec<Vec<Mover>> = blocks
            .iter()
            .map(|&b| {
                let insts = f.layout.block_insts(b).iter();
                insts
                    .filter_map(|&i| mover(&f.insts[i], i, &slot))
                    .collect()
            })
            .collect();
        let mut changed = true;
        while changed {
            changed = false;
            for (k, &b) in blocks.iter().enumerate() {
                cur.copy_from_slice(entry.of(k));
                for m in &movers[k] {
                    transfer(&f.insts[m.inst], m, &slot, c31, &mut cur);
                }
                for &s in cfg.succs(b) {
                    if index[s] != u32::MAX {
                        changed |= entry.union_into(index[s] as usize, &cur);
                    }
                }
            }
        }
        for (k, &b) in blocks.iter().enumerate() {
            cur.copy_from_slice(entry.of(k));
            let mut movers = movers[k].iter().peekable();
            for &i in f.layout.block_insts(b) {
                let d = &f.insts[i];
                if let Some(g) = d.guard {
                    self.divergent_guard[i] = bit(&cur, &slot, g.reg);
                }
                if let Some(r) = brx_index(d) {
                    self.divergent_index[i] = bit(&cur, &slot, r);
                }
                if let Some(m) = movers.next_if(|m| m.inst == i) {
                    transfer(d, m, &slot, c31, &mut cur);
                }
            }
        }
    }
}

/// The index register of a `brx.idx` (`None` for a constant index or
/// another instruction).
fn brx_index(d: &InstData) -> Option<VReg> {
    match d.slots.first().map(|s| &s.op) {
        Some(Operand::Reg(r)) if d.opcode == Opcode::IndexedBranch => Some(*r),
        _ => None,
    }
}

/// Whether candidate register `r` is in `set` (others are uniform).
fn bit(set: &[u64], slot: &SecondaryMap<VReg, u32>, r: VReg) -> bool {
    let k = slot[r];
    k != u32::MAX && set[k as usize / 64] >> (k % 64) & 1 != 0
}

/// An instruction that defines candidate registers, with their slots in
/// the flow sets, in the order it defines them.
struct Mover {
    inst: Inst,
    slots: SmallVec<[u32; 4]>,
}

/// `d` (instruction `i`) as a [`Mover`], if it defines a candidate. A
/// wgmma moves nothing: its accumulators keep their state (as in the
/// per-name pass, wgmma makes nothing divergent).
fn mover(d: &InstData, i: Inst, slot: &SecondaryMap<VReg, u32>) -> Option<Mover> {
    if d.opcode == Opcode::WgmmaMmaAsync {
        return None;
    }
    let mut slots = SmallVec::new();
    d.for_each_def(|r| {
        if let Some(&k) = slot.get(r).filter(|k| **k != u32::MAX) {
            slots.push(k);
        }
    });
    (!slots.is_empty()).then_some(Mover { inst: i, slots })
}

/// One instruction's effect on the divergent candidate registers (`m`,
/// its [`mover`]): its definitions become divergent when a source (or the
/// guard) is; an unguarded definition replaces the old state, a guarded
/// one may keep the old value.
fn transfer(
    d: &InstData,
    m: &Mover,
    slot: &SecondaryMap<VReg, u32>,
    c31: &Clamp31,
    set: &mut [u64],
) {
    let div = inst_sources_divergent(d, &|r| bit(set, slot, r), c31);
    for &k in &m.slots {
        let (w, m) = (k as usize / 64, 1u64 << (k % 64));
        if div {
            set[w] |= m;
        } else if d.guard.is_none() {
            set[w] &= !m;
        }
    }
}
