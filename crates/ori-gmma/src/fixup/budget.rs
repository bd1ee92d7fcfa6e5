//! Register resources of the pipeline: how many accumulator registers may
//! be in flight before ptxas gives up (C7511, R-in-flight-budget), and
//! whether the registers live at once fit the function's limit (C7512,
//! R-function-pressure). Both are limits ptxas's register allocator imposes,
//! measured on ptxas 13.0.88, not ISA rules.

use super::walk::a_fragment_regs;
use cranelift_entity::SecondaryMap;
use fxhash::FxHashSet;
use ori_ir::{AccumSetPool, Block, ControlFlowGraph, Function, Inst, Opcode, Operand, VReg};
use smallvec::SmallVec;

/// Most accumulator registers that may be in flight at once before ptxas
/// gives up with C7511. Bounds observed on ptxas 13.0.88: 128 in flight
/// compile clean (one `m64n256k16.f32`, or 32 `n8` sets), 256 serialize.
pub const MAX_IN_FLIGHT_ACCUMULATOR_REGS: usize = 240;

/// Registers of the per-thread limit the pipeline cannot use for
/// accumulators in flight: the default budget (240) is 15 under ptxas's
/// 255-register ceiling, and the same margin fits every limit observed
/// (R-budget-under-limit: `.maxnreg 128` with two 64-register sets in
/// flight is C7511 in `tests/real/triton*/maxnreg128_mm_*`; one 128-register
/// set under `.maxnreg 168` or `-maxrregcount=168`, and 64 under `.maxnreg
/// 96`, are fine).
pub const LIMIT_MARGIN: usize = 15;

/// The accumulator registers that may be in flight in `f` under `.maxnreg`
/// and `-maxrregcount` (the lower of the two, when set).
/// The per-thread register limit the wgmma code runs under: the lower of
/// `.maxnreg` and `-maxrregcount`, raised to the largest
/// `setmaxnreg.inc` of the function (R-setmaxnreg: warp-specialized
/// kernels declare a small `.maxnreg` for their producer warps and raise
/// the consumers' with `setmaxnreg.inc` before their wgmma; Triton's `ws_*`
/// kernels, `.maxnreg 168` and `setmaxnreg.inc 232/256`, compile clean).
fn register_limit(f: &Function, maxrregcount: Option<u32>) -> Option<u32> {
    let limit = [f.max_regs, maxrregcount].into_iter().flatten().min()?;
    let raised = f
        .layout
        .all_insts()
        .filter(|i| &*f.insts[*i].name == "setmaxnreg" && f.insts[*i].has_mod("inc"))
        .filter_map(|i| match f.insts[i].slots.first().map(|s| &s.op) {
            Some(Operand::Imm(n)) => n.as_i64().and_then(|n| u32::try_from(n).ok()),
            _ => None,
        })
        .max();
    Some(raised.map_or(limit, |r| r.max(limit)))
}

/// **R-function-pressure** (C7512, seed 003 case 4: "the function's
/// overall register pressure"): under `.maxnreg` / `-maxrregcount`, the
/// accumulator and A-fragment registers live at once (backward liveness,
/// [`max_live`]) plus the 26 a wgmma needs beside its accumulators
/// (`register_budget`) must fit the limit. Found on
/// `tests/real/triton*/maxnreg128_attn_fwd_*`: S 32, O 64 and P 16 live
/// together, with 26 that is 138, over 128. The serialized form of
/// `c7511_maxrreg200_2x_n256` (two n256 sets, 282 over 200) is C7512 too;
/// one n256 set under 168 (154) is not (`attempt_c7512_maxrreg168_n256`).
/// Checked after the walk, so the budget's C7511 comes first; a wgmma that
/// does not fit at all is C7602's.
pub(super) fn over_function_limit(
    f: &Function,
    sets: &AccumSetPool,
    maxrregcount: Option<u32>,
) -> bool {
    if in_flight_budget(f, maxrregcount) == usize::MAX {
        return false;
    }
    let Some(limit) = register_limit(f, maxrregcount) else {
        return false;
    };
    let mut tracked: FxHashSet<VReg> = sets.iter().flat_map(|(_, r)| r).copied().collect();
    for i in f.layout.all_insts() {
        let d = &f.insts[i];
        if d.opcode == Opcode::WgmmaMmaAsync {
            tracked.extend(a_fragment_regs(d));
        }
    }
    max_live(f, &tracked) as u32 + crate::register_budget::WGMMA_REGISTER_OVERHEAD > limit
}

/// The registers `f`'s wgmma code needs, as ori counts them for
/// R-function-pressure: the accumulator and A-fragment registers live at
/// once plus the 26 a wgmma needs beside them (`None` without a wgmma).
/// ptxas 13.0.88 reports exactly this many used registers for a
/// warp-specialized GEMM whose other values are few
/// (`tests/corpus/c7508_setmaxnreg_maxntid_two_ctas_fit`).
pub(crate) fn wgmma_register_need(f: &Function) -> Option<u32> {
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
    Some(max_live(f, &tracked) as u32 + crate::register_budget::WGMMA_REGISTER_OVERHEAD)
}

/// The most registers of `tracked` live at once anywhere in `f` (backward
/// liveness to the fixpoint, then one scan of each block). Warp-specialized
/// kernels give each role its own accumulator registers, which are never
/// live together (Triton's `ws_tma_device_*`: two 128-register sets, clean).
fn max_live(f: &Function, tracked: &FxHashSet<VReg>) -> usize {
    let cfg = ControlFlowGraph::compute(f);
    let relevant = |v: SmallVec<[VReg; 8]>| -> SmallVec<[VReg; 8]> {
        v.into_iter().filter(|r| tracked.contains(r)).collect()
    };
    // Per instruction: (defs that kill, uses), of tracked registers only.
    let effect = |i: Inst| {
        let d = &f.insts[i];
        let kills = if d.guard.is_some() {
            SmallVec::new()
        } else {
            relevant(d.defs())
        };
        (kills, relevant(d.uses()))
    };
    let mut live_in: SecondaryMap<Block, FxHashSet<VReg>> = SecondaryMap::new();
    let step = |live: &mut FxHashSet<VReg>, i: Inst| {
        let (kills, uses) = effect(i);
        for r in kills {
            live.remove(&r);
        }
        live.extend(uses);
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in cfg.rpo().iter().rev() {
            let mut live: FxHashSet<VReg> = FxHashSet::default();
            for &s in cfg.succs(b) {
                live.extend(live_in[s].iter().copied());
            }
            for &i in f.layout.block_insts(b).iter().rev() {
                step(&mut live, i);
            }
            if live.len() != live_in[b].len() {
                live_in[b] = live;
                changed = true;
            }
        }
    }
    let mut most = 0;
    for &b in cfg.rpo() {
        let mut live: FxHashSet<VReg> = FxHashSet::default();
        for &s in cfg.succs(b) {
            live.extend(live_in[s].iter().copied());
        }
        most = most.max(live.len());
        for &i in f.layout.block_insts(b).iter().rev() {
            step(&mut live, i);
            most = most.max(live.len());
        }
    }
    most
}

/// When some wgmma of `f` does not fit under the limit at all, register
/// allocation's fatal C7602 is what ptxas reports, and no C7511
/// (`err_c7602_second_mma_larger_maxrreg40`): the budget is then unlimited.
pub fn in_flight_budget(f: &Function, maxrregcount: Option<u32>) -> usize {
    let Some(limit) = register_limit(f, maxrregcount) else {
        return MAX_IN_FLIGHT_ACCUMULATOR_REGS;
    };
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
    MAX_IN_FLIGHT_ACCUMULATOR_REGS.min((limit as usize).saturating_sub(LIMIT_MARGIN))
}
