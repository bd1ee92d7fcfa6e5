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

/// The per-thread register limit the wgmma code runs under: the lowest of
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
        .filter_map(|i| match f.insts[i].slots.first().map(|s| &s.op) {
            Some(Operand::Imm(n)) => n.as_i64().and_then(|n| u32::try_from(n).ok()),
            _ => None,
        })
        .max();
    raised.map_or(limit, |r| r.max(limit))
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
/// ptxas applies the same check under its default limit of 255
/// (`c7512_default_limit_232_live`), but ori's live count is an upper
/// bound of ptxas's (it does not rematerialize or reload A fragments): under
/// the default limit it would serialize 19 real kernels ptxas compiles
/// clean (Triton's tf32x3 GEMMs, FMHA and FlexAttention backward passes)
/// to gain 3, so the rule waits for an explicit limit.
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
    if f.max_regs.is_none() && maxrregcount.is_none() {
        return false;
    }
    let limit = register_limit(f, maxrregcount);
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
