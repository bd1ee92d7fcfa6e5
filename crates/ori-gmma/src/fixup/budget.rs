//! Register resources of the pipeline: how many accumulator registers may
//! be in flight before ptxas gives up (C7511, R-in-flight-budget), and
//! whether the registers live at once fit the function's limit (C7512,
//! R-function-pressure). Both are limits ptxas's register allocator imposes,
//! measured on ptxas 13.0.88, not ISA rules.

mod known_values;
mod pending;
mod pressure;

use super::walk::a_fragment_regs;
use crate::register_budget::WGMMA_REGISTER_OVERHEAD;
use cranelift_entity::SecondaryMap;
use fxhash::FxHashSet;
use ori_ir::{AccumSetPool, Block, ControlFlowGraph, Function, Opcode, Operand, VReg};
use pressure::Pressure;
use smallvec::SmallVec;

/// ptxas's per-thread register ceiling on sm_90 when neither `.maxnreg`
/// nor `-maxrregcount` sets a lower one: the limit both budgets below are
/// taken from by default (`tests/corpus/clean_default_limit_228_live`: 228
/// accumulator registers live compile clean; `c7512_default_limit_232_live`:
/// 232 are C7512 without any `.maxnreg`).
pub const DEFAULT_REGISTER_LIMIT: u32 = 255;

/// Registers under the limit that the wgmma in flight may not reach
/// (R-in-flight-budget): C7511 when their accumulator and A-fragment
/// registers exceed `limit - 2`. Found by sweeping the registers in flight
/// in steps of 2 (f16 `n8` sets) on ptxas 13.0.88: under the default 255,
/// 252 compile and 254 are C7511; under `.maxnreg 200`, 198 compile and 200
/// are C7511 (`tests/corpus/c7511_in_flight_*` and `c7512_in_flight_*`). Both leave a margin of 2
/// and no other: 1 would let 254 pass, 3 would stop 198.
pub const IN_FLIGHT_MARGIN: usize = 2;

/// The per-thread register limit the in-flight budget (C7511) runs under:
/// the lowest of
/// ptxas's ceiling, `.maxnreg` and `-maxrregcount`, raised to the largest
/// `setmaxnreg.inc` of the function (R-setmaxnreg: warp-specialized
/// kernels declare a small `.maxnreg` for their producer warps and raise
/// the consumers' with `setmaxnreg.inc` before their wgmma; Triton's `ws_*`
/// kernels, `.maxnreg 168` and `setmaxnreg.inc 232/256`, compile clean).
fn register_limit(f: &Function, maxrregcount: Option<u32>) -> u32 {
    let limit = [Some(DEFAULT_REGISTER_LIMIT), f.max_regs, maxrregcount]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(DEFAULT_REGISTER_LIMIT);
    let raised = f
        .layout
        .all_insts()
        .filter(|i| &*f.insts[*i].name == "setmaxnreg" && f.insts[*i].has_mod("inc"))
        .filter_map(|i| setmaxnreg_count(&f.insts[i]))
        .max();
    raised.map_or(limit, |r| r.max(limit))
}

/// The count `setmaxnreg.inc/dec N` sets (`None` for another instruction).
fn setmaxnreg_count(d: &ori_ir::InstData) -> Option<u32> {
    if &*d.name != "setmaxnreg" {
        return None;
    }
    match d.slots.first().map(|s| &s.op) {
        Some(Operand::Imm(n)) => n.as_i64().and_then(|n| u32::try_from(n).ok()),
        _ => None,
    }
}

/// **R-function-pressure** (C7512, seed 003 case 4: "the function's
/// overall register pressure"): wherever accumulator or A-fragment
/// registers are live, those live at once ([`Pressure`]) plus the 26 a
/// wgmma needs beside its accumulators (`register_budget`) must fit the
/// per-thread register count in effect there ([`RegisterCounts`]).
/// Found on `tests/real/triton*/maxnreg128_attn_fwd_*`: S 32 and O 64 live
/// beside the P fragment (16) the P*V wgmma still holds in flight, with 26
/// that is 138, over `.maxnreg 128`. The serialized
/// form of `c7511_maxrreg200_2x_n256` (two n256 sets, 282 over 200) is
/// C7512 too; one n256 set under 168 (154) is not
/// (`attempt_c7512_maxrreg168_n256`). Under `setmaxnreg` the count is the
/// one the consumer's path set: 222 fits `setmaxnreg.inc 224` and 226 does
/// not, whatever the count at entry or on other paths
/// (`c7512_setmaxnreg_inc224_*`, `clean_setmaxnreg_inc224_*`); quack's e4m3
/// GEMMs hold 256 (two 64-register sets and their fp32 promotion copies)
/// under 240. Without launch bounds or a limit the count is ptxas's ceiling
/// of 255 (`c7512_default_limit_232_live`: 232 live are C7512,
/// `clean_default_limit_228_live`: 228 fit), unless the function holds a
/// `setmaxnreg`, which ptxas then ignores (C7508, R-setmaxnreg-ignored)
/// and checks nothing more (ThunderKittens' educational GEMM, level 8).
/// Checked after the walk, so the budget's C7511 comes first; a wgmma that
/// does not fit at all is C7602's.
pub(super) fn over_function_limit(
    f: &Function,
    sets: &AccumSetPool,
    cfg: &ControlFlowGraph,
    (maxrregcount, compile_only): (Option<u32>, bool),
) -> bool {
    if in_flight_budget(f, maxrregcount) == usize::MAX {
        return false;
    }
    let entry = match crate::setmaxnreg::count_at_entry(f, maxrregcount) {
        Some(count) => count,
        // ptxas ignores the `setmaxnreg` (C7508) and checks nothing more.
        None if crate::setmaxnreg::has_setmaxnreg(f) => return false,
        None => DEFAULT_REGISTER_LIMIT,
    };
    let counts = RegisterCounts::compute(f, cfg, entry, !compile_only);
    let mut tracked: FxHashSet<VReg> = sets.iter().flat_map(|(_, r)| r).copied().collect();
    for i in f.layout.all_insts() {
        let d = &f.insts[i];
        if d.opcode == Opcode::WgmmaMmaAsync {
            tracked.extend(a_fragment_regs(d));
        }
    }
    // Cheap first: all of them live at once fit the smallest count where
    // any of them is defined (elsewhere none counts as live).
    let least = counts.least_where_defined(f, cfg, &tracked);
    if tracked.len() as u32 + WGMMA_REGISTER_OVERHEAD <= least {
        return false;
    }
    let pressure = Pressure::compute(f, cfg, &tracked);
    let mut over = false;
    pressure.for_each_point(cfg, |b, k, live| {
        over |= live > 0 && live as u32 + WGMMA_REGISTER_OVERHEAD > counts.at(b, k);
    });
    over
}

/// The per-thread register count in effect at each point of a function:
/// the count at entry, then the `N` of the last `setmaxnreg.inc/dec N` on
/// the way there (where ptxas honours them). Where paths with different
/// counts meet, the larger holds: ptxas gives a warpgroup the registers it
/// raised to (Triton's `ws_*` consumers loop back through their producer's
/// `setmaxnreg.dec`).
pub(super) struct RegisterCounts {
    at_start: SecondaryMap<Block, Option<u32>>,
    /// Each block's `setmaxnreg`s: (position, count).
    sets: SecondaryMap<Block, SmallVec<[(usize, u32); 2]>>,
    honoured: bool,
}

impl RegisterCounts {
    fn compute(f: &Function, cfg: &ControlFlowGraph, entry: u32, honoured: bool) -> Self {
        let mut sets: SecondaryMap<Block, SmallVec<[(usize, u32); 2]>> = SecondaryMap::new();
        for &b in cfg.rpo() {
            let insts = f.layout.block_insts(b).iter().enumerate();
            sets[b] = insts
                .filter_map(|(k, &i)| Some((k, setmaxnreg_count(&f.insts[i])?)))
                .collect();
        }
        let mut at_start: SecondaryMap<Block, Option<u32>> = SecondaryMap::new();
        let mut at_end: SecondaryMap<Block, Option<u32>> = SecondaryMap::new();
        let mut changed = true;
        while changed {
            changed = false;
            for (n, &b) in cfg.rpo().iter().enumerate() {
                let from_preds = cfg.preds(b).iter().filter_map(|&p| at_end[p]).max();
                let Some(start) = (if n == 0 { Some(entry) } else { from_preds }) else {
                    continue;
                };
                let start = from_preds.map_or(start, |p| p.max(start));
                let set = sets[b].last().filter(|_| honoured);
                let end = set.map_or(start, |&(_, n)| n);
                if at_start[b] != Some(start) || at_end[b] != Some(end) {
                    (at_start[b], at_end[b]) = (Some(start), Some(end));
                    changed = true;
                }
            }
        }
        RegisterCounts {
            at_start,
            sets,
            honoured,
        }
    }

    /// The smallest count in the blocks that some definition of `tracked`
    /// reaches or that hold one (`u32::MAX` where none does).
    fn least_where_defined(
        &self,
        f: &Function,
        cfg: &ControlFlowGraph,
        tracked: &FxHashSet<VReg>,
    ) -> u32 {
        let mut reached: SecondaryMap<Block, bool> = SecondaryMap::new();
        for &b in cfg.rpo() {
            reached[b] = f.layout.block_insts(b).iter().any(|&i| {
                let mut any = false;
                f.insts[i].for_each_def(|r| any |= tracked.contains(&r));
                any
            });
        }
        let mut changed = true;
        while changed {
            changed = false;
            for &b in cfg.rpo() {
                if !reached[b] && cfg.preds(b).iter().any(|&p| reached[p]) {
                    reached[b] = true;
                    changed = true;
                }
            }
        }
        let mut least = u32::MAX;
        for &b in cfg.rpo().iter().filter(|&&b| reached[b]) {
            least = least.min(self.at(b, 0));
            let set = self.sets[b]
                .iter()
                .map(|&(_, n)| n)
                .filter(|_| self.honoured);
            least = least.min(set.min().unwrap_or(u32::MAX));
        }
        least
    }

    /// The count before the `k`th instruction of block `b`.
    fn at(&self, b: Block, k: usize) -> u32 {
        let start = self.at_start[b].unwrap_or(u32::MAX);
        if !self.honoured {
            return start;
        }
        let set = self.sets[b].iter().take_while(|(at, _)| *at < k).last();
        set.map_or(start, |&(_, n)| n)
    }
}

/// Whether the registers `f`'s wgmma code needs are too many for `over`
/// (`None` without a wgmma). The need, as ori counts it for
/// R-function-pressure: the accumulator and A-fragment registers live at
/// once plus the 26 a wgmma needs beside them. ptxas 13.0.88 reports
/// exactly this many used registers for a warp-specialized GEMM whose
/// other values are few (`tests/corpus/c7508_setmaxnreg_maxntid_two_ctas_fit`).
///
/// `over` must also say yes to any count above one it says yes to: the
/// need is at most all those registers at once (plus the 26), so when that
/// many are not too many, no liveness is computed (a small kernel's launch
/// bounds leave room for far more).
pub(crate) fn wgmma_register_need_over(f: &Function, over: impl Fn(u32) -> bool) -> Option<bool> {
    let mut tracked: FxHashSet<VReg> = FxHashSet::default();
    for i in f.layout.all_insts() {
        let d = &f.insts[i];
        if d.opcode == Opcode::WgmmaMmaAsync {
            tracked.extend(super::walk::accumulator_regs(d));
            tracked.extend(a_fragment_regs(d));
        }
    }
    if tracked.is_empty() {
        return None;
    }
    if !over(tracked.len() as u32 + WGMMA_REGISTER_OVERHEAD) {
        return Some(false);
    }
    let cfg = ControlFlowGraph::compute(f);
    let live = Pressure::compute(f, &cfg, &tracked).max(&cfg);
    Some(over(live as u32 + WGMMA_REGISTER_OVERHEAD))
}

/// When some wgmma of `f` does not fit under the limit at all, register
/// allocation's fatal C7602 is what ptxas reports, and no C7511
/// (`err_c7602_second_mma_larger_maxrreg40`): the budget is then unlimited.
pub fn in_flight_budget(f: &Function, maxrregcount: Option<u32>) -> usize {
    let limit = register_limit(f, maxrregcount);
    let fatal = f.layout.all_insts().any(|i| {
        let d = &f.insts[i];
        let a_in_regs = matches!(d.slots.get(1).map(|s| &s.op), Some(Operand::Vector(_)));
        d.opcode == Opcode::WgmmaMmaAsync
            && crate::register_budget::wgmma_registers(&d.mods, a_in_regs)
                .is_some_and(|need| need > limit.max(crate::register_budget::MIN_REGISTERS_SM90))
    });
    if fatal {
        return usize::MAX;
    }
    (limit as usize).saturating_sub(IN_FLIGHT_MARGIN)
}
