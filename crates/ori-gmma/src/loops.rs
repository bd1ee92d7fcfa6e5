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

/// For each block, whether it lies in a loop with a run-time trip count.
pub fn runtime_loop_blocks(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
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
            in_loop[h] = true;
            seen[h] = stamp;
            let mut work = vec![s];
            while let Some(b) = work.pop() {
                if seen[b] == stamp {
                    continue;
                }
                seen[b] = stamp;
                in_loop[b] = true;
                work.extend(cfg.preds(b).iter().copied());
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
