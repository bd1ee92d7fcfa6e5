//! The order in which ptxas lays out a function's blocks, and reports its
//! injected arrives and waits (rule R-block-order).
//!
//! ptxas 13.0.88 does not keep the PTX's block order: a block that the
//! PTX places after the function's `ret` but that runs before the loop it
//! branches back into (the CuTe DSL's first mainloop iteration) comes
//! before that loop in the SASS, and its C7519 is printed first. Probes
//! (`tests/corpus/c7519_block_order_*`) fit one order: a post-order of a
//! depth-first walk *backwards* from the exits, which visits a block's
//! predecessors that branch to it (the last in the PTX first) before the
//! one placed right before it. A join's fall-through predecessor thus
//! comes right before it, and every block after all its forward
//! predecessors.
//!
//! The same order is ptxas's SASS layout: `--emit sass` writes the blocks
//! in it, which made the sync skeletons of 38 real kernels agree (the
//! persistent GEMMs of Triton, quack, the CuTe DSL and TileLang's
//! warp-specialized MLA decode), and none stopped agreeing.

use cranelift_entity::SecondaryMap;
use ori_ir::{Block, ControlFlowGraph, Function};
use smallvec::SmallVec;

/// `f`'s blocks reachable from its entry, in ptxas's order, then the
/// others in layout order.
pub fn ptxas_block_order(f: &Function, cfg: &ControlFlowGraph) -> Vec<Block> {
    let mut reachable: SecondaryMap<Block, bool> = SecondaryMap::new();
    for &b in cfg.rpo() {
        reachable[b] = true;
    }
    let mut visited: SecondaryMap<Block, bool> = SecondaryMap::new();
    let mut order = Vec::with_capacity(f.layout.blocks().len());
    let exits = f
        .layout
        .blocks()
        .iter()
        .filter(|&&b| reachable[b] && cfg.succs(b).is_empty());
    for &exit in exits {
        backward_post_order(f, cfg, exit, &reachable, &mut visited, &mut order);
    }
    // Blocks from which no exit is reached (an endless loop): layout order.
    let rest: Vec<Block> = f
        .layout
        .blocks()
        .iter()
        .copied()
        .filter(|&b| !visited[b])
        .collect();
    order.extend(rest);
    order
}

/// Appends to `order` the blocks reached backwards from `root` and not yet
/// visited, predecessors first.
fn backward_post_order(
    f: &Function,
    cfg: &ControlFlowGraph,
    root: Block,
    reachable: &SecondaryMap<Block, bool>,
    visited: &mut SecondaryMap<Block, bool>,
    order: &mut Vec<Block>,
) {
    if visited[root] {
        return;
    }
    visited[root] = true;
    let mut stack = vec![(root, preds_in_order(f, cfg, root), 0usize)];
    while let Some((b, preds, k)) = stack.last_mut() {
        if let Some(&p) = preds.get(*k) {
            *k += 1;
            if reachable[p] && !visited[p] {
                visited[p] = true;
                let pp = preds_in_order(f, cfg, p);
                stack.push((p, pp, 0));
            }
        } else {
            order.push(*b);
            stack.pop();
        }
    }
}

/// `b`'s predecessors: those that branch to it, last in the layout first,
/// then the one before it in the layout (which falls through into it, or
/// branches to it: ptxas drops a branch to the next block).
fn preds_in_order(f: &Function, cfg: &ControlFlowGraph, b: Block) -> SmallVec<[Block; 4]> {
    // The CFG lists predecessors in layout order.
    let mut preds: SmallVec<[Block; 4]> = cfg.preds(b).iter().rev().copied().collect();
    if let Some(k) = preds
        .iter()
        .position(|&p| f.layout.next_block(p) == Some(b))
    {
        let p = preds.remove(k);
        preds.push(p);
    }
    preds
}
