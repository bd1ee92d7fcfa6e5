//! Loops whose trip count ptxas cannot see, block by block.
//!
//! ptxas 13.0.88 unrolls a loop by four with a remainder when its trip count
//! is a run-time value, and then refuses a wait it had to inject into the
//! loop body (C7514: corpus `c7514_loop_read_acc_in_loop`,
//! `c7514_loop_pure_read_before_commit`, `c7514_loop_rmw_before_commit`);
//! a loop bounded by a constant is unrolled in full and its injected waits
//! are kept (`c7517_c7519_loop_constant_trip_count`). This module finds the
//! natural loops (a back edge `s -> h` with `h` dominating `s`) and marks
//! the blocks of those whose exit test does not compare against a constant.

use cranelift_entity::SecondaryMap;
use ori_ir::{Block, ControlFlowGraph, DominatorTree, Function, Opcode, Operand};

/// The largest loop body (PTX instructions, all its blocks) ptxas 13.0.88
/// unrolls. Probed on `c7514_loop_pure_read_before_commit` padded with
/// stores: with 4 stores (12 instructions,
/// `c7514_loop_read_body_with_4_stores_unrolled`) the loop is unrolled and
/// its injected wait refused (C7514), with 8 stores (16,
/// `c7517_loop_read_body_with_8_stores_not_unrolled`) it is kept whole and
/// the wait stays (C7517 alone). Real compilers' loops
/// (Triton's K loops, hundreds of instructions) are never unrolled, so a
/// wait ptxas injects there is kept. (ptxas's own measure is of the code
/// after its optimizations: loads whose results die, or stores it can
/// vectorize, count for less; ori counts PTX instructions.)
pub const MAX_UNROLLED_BODY: usize = 14;

/// For each block, whether it lies in a loop with a run-time trip count
/// that ptxas unrolls (a body of at most [`MAX_UNROLLED_BODY`] instructions).
pub fn unrolled_runtime_loop_blocks(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
) -> SecondaryMap<Block, bool> {
    loop_blocks(f, cfg, dt, Some(MAX_UNROLLED_BODY))
}

/// For each block, whether it lies in a loop with a run-time trip count.
pub fn runtime_loop_blocks(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
) -> SecondaryMap<Block, bool> {
    loop_blocks(f, cfg, dt, None)
}

/// The back edges `(s, h)` of loops ptxas keeps as loops: a run-time trip
/// count and a body larger than [`MAX_UNROLLED_BODY`]. ptxas's walk does not
/// carry what it learnt at the end of such a loop's body back to its header
/// (R-kept-loop-back-edge): a pure read before the wait inside such a loop
/// gets its wait (C7517) each time, where in an unrolled loop the second
/// copy sees the first copy's `wgmma.wait_group` and is refused (C7514,
/// rule 27; `c7517_loop_read_body_with_8_stores_not_unrolled` against
/// `c7514_loop_read_body_with_4_stores_unrolled`).
pub fn kept_back_edges(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
) -> fxhash::FxHashSet<(Block, Block)> {
    let unrolled = loop_blocks(f, cfg, dt, Some(MAX_UNROLLED_BODY));
    let mut out = fxhash::FxHashSet::default();
    for &s in cfg.rpo() {
        for &h in cfg.succs(s) {
            if dt.dominates(h, s) && !constant_bound(f, s) && !(unrolled[h] && unrolled[s]) {
                out.insert((s, h));
            }
        }
    }
    out
}

fn loop_blocks(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    max_body: Option<usize>,
) -> SecondaryMap<Block, bool> {
    let mut in_loop: SecondaryMap<Block, bool> = SecondaryMap::new();
    // Which back edge last visited each block (0: none), so that one map
    // serves every loop.
    let mut seen: SecondaryMap<Block, u32> = SecondaryMap::new();
    let mut stamp = 0;
    for &s in cfg.rpo() {
        for &h in cfg.succs(s) {
            if !dt.dominates(h, s) || constant_bound(f, s) {
                continue;
            }
            // The natural loop of the back edge: h, and every block that
            // reaches s without passing through h.
            stamp += 1;
            seen[h] = stamp;
            let mut body = vec![h];
            let mut work = vec![s];
            while let Some(b) = work.pop() {
                if seen[b] == stamp {
                    continue;
                }
                seen[b] = stamp;
                body.push(b);
                work.extend(cfg.preds(b).iter().copied());
            }
            let size: usize = body.iter().map(|b| f.layout.block_insts(*b).len()).sum();
            if max_body.is_some_and(|m| size > m) {
                continue;
            }
            for b in body {
                in_loop[b] = true;
            }
        }
    }
    in_loop
}

/// Whether the branch ending block `s` tests a predicate set by comparing
/// against an immediate in the same block (`setp.lt.u32 p, i, 4; @p bra`).
pub fn constant_bound(f: &Function, s: Block) -> bool {
    let insts = f.layout.block_insts(s);
    let Some(&br) = insts.last() else {
        return false;
    };
    let d = &f.insts[br];
    let Some(guard) = d.guard.as_ref().filter(|_| d.opcode == Opcode::Branch) else {
        return false;
    };
    insts.iter().rev().skip(1).any(|&i| {
        let x = &f.insts[i];
        x.name.starts_with("setp")
            && x.defs().contains(&guard.reg)
            && x.slots.iter().any(|s| matches!(s.op, Operand::Imm(_)))
    })
}

/// For each block, whether it heads a loop (a back edge's target) whose
/// body commits a wgmma group. Only such a loop changes how old the groups
/// in flight at its header are; a loop that commits nothing (an mbarrier
/// spin-wait, `LAB_WAIT: ... bra LAB_WAIT;` in CUTLASS's and FA3's inline
/// asm) leaves them as they came in (R-sticky-groups, FA3's forward and
/// backward kernels).
pub fn committing_loop_headers(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
) -> SecondaryMap<Block, bool> {
    let mut out: SecondaryMap<Block, bool> = SecondaryMap::new();
    for &s in cfg.rpo() {
        for &h in cfg.succs(s) {
            if !dt.dominates(h, s) || out[h] {
                continue;
            }
            let mut seen = fxhash::FxHashSet::default();
            seen.insert(h);
            let mut body = vec![h];
            let mut work = vec![s];
            while let Some(b) = work.pop() {
                if seen.insert(b) {
                    body.push(b);
                    work.extend(cfg.preds(b).iter().copied());
                }
            }
            out[h] = body.iter().any(|b| {
                f.layout
                    .block_insts(*b)
                    .iter()
                    .any(|i| f.insts[*i].opcode.is_commit())
            });
        }
    }
    out
}
