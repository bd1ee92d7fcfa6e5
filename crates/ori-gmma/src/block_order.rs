//! The order in which ptxas lays out a function's blocks, and reports its
//! injected arrives and waits (rule R-block-order).
//!
//! ptxas 13.0.88 does not keep the PTX's block order: a block that the
//! PTX places after the function's `ret` but that runs before the loop it
//! branches back into (the CuTe DSL's first mainloop iteration) comes
//! before that loop in the SASS, and its C7519 is printed first. Probes
//! (`tests/corpus/c7519_block_order_*`) fit one order: a post-order of a
//! depth-first walk *backwards* over the forward edges (back edges, to a
//! block that dominates their source, left out) from the blocks with no
//! forward successor, in PTX order, which visits a block's predecessors
//! that branch to it (the last in the PTX first) before the one placed
//! right before it. A join's fall-through predecessor thus comes right
//! before it, every block after all its forward predecessors, and a
//! loop's latch after its header even when the PTX places it first (a
//! loop entered at its test: `c7519_block_order_loop_entered_at_test`).
//!
//! The same order is ptxas's SASS layout: `--emit sass` writes the blocks
//! in it, which made the sync skeletons of 38 real kernels agree (the
//! persistent GEMMs of Triton, quack, the CuTe DSL and TileLang's
//! warp-specialized MLA decode), and none stopped agreeing.

use cranelift_entity::SecondaryMap;
use ori_ir::{Block, ControlFlowGraph, DominatorTree, Function};
use smallvec::SmallVec;

/// `f`'s blocks reachable from its entry, in ptxas's order, then the
/// others in layout order.
pub fn ptxas_block_order(f: &Function, cfg: &ControlFlowGraph, dt: &DominatorTree) -> Vec<Block> {
    let mut reachable: SecondaryMap<Block, bool> = SecondaryMap::new();
    for &b in cfg.rpo() {
        reachable[b] = true;
    }
    let forward = |p: Block, b: Block| reachable[p] && !dt.dominates(b, p);
    let mut walk = Walk {
        f,
        cfg,
        forward: &forward,
        visited: SecondaryMap::new(),
        posted: SecondaryMap::new(),
        order: Vec::with_capacity(f.layout.blocks().len()),
    };
    let exits = f
        .layout
        .blocks()
        .iter()
        .filter(|&&b| reachable[b] && cfg.succs(b).is_empty());
    for &exit in exits {
        walk.from(exit);
    }
    // The blocks no walk reached (unreachable ones, endless loops): layout
    // order.
    let rest: Vec<Block> = f
        .layout
        .blocks()
        .iter()
        .copied()
        .filter(|&b| !walk.posted[b])
        .collect();
    let mut order = walk.order;
    order.extend(rest);
    order
}

/// The backward walk over forward edges.
struct Walk<'a, F: Fn(Block, Block) -> bool> {
    f: &'a Function,
    cfg: &'a ControlFlowGraph,
    forward: &'a F,
    visited: SecondaryMap<Block, bool>,
    posted: SecondaryMap<Block, bool>,
    order: Vec<Block>,
}

impl<F: Fn(Block, Block) -> bool> Walk<'_, F> {
    /// Posts the blocks reached backwards from `root`, predecessors first.
    fn from(&mut self, root: Block) {
        if self.visited[root] {
            return;
        }
        self.visited[root] = true;
        let preds = preds_in_order(self.f, self.cfg, root, self.forward);
        let mut stack = vec![(root, preds, 0usize)];
        while let Some((b, preds, k)) = stack.last_mut() {
            if let Some(&p) = preds.get(*k) {
                *k += 1;
                if !self.visited[p] {
                    self.visited[p] = true;
                    let pp = preds_in_order(self.f, self.cfg, p, self.forward);
                    stack.push((p, pp, 0));
                }
            } else {
                let b = *b;
                stack.pop();
                self.post(b);
            }
        }
    }

    /// Posts `b`, then each latch it leads to (a block whose only edges
    /// out go back to a loop header) once all its forward predecessors are
    /// posted: no walk from an exit reaches a latch backwards.
    fn post(&mut self, b: Block) {
        self.posted[b] = true;
        self.order.push(b);
        let (cfg, forward) = (self.cfg, self.forward);
        for &s in cfg.succs(b) {
            let latch = forward(b, s)
                && !self.visited[s]
                && !cfg.succs(s).is_empty()
                && cfg.succs(s).iter().all(|&t| !forward(s, t))
                && cfg
                    .preds(s)
                    .iter()
                    .all(|&p| !forward(p, s) || self.posted[p]);
            if latch {
                self.visited[s] = true;
                self.post(s);
            }
        }
    }
}

/// `b`'s predecessors over forward edges: those that branch to it, last in
/// the layout first, then the one before it in the layout (which falls
/// through into it, or branches to it: ptxas drops a branch to the next
/// block).
fn preds_in_order(
    f: &Function,
    cfg: &ControlFlowGraph,
    b: Block,
    forward: &impl Fn(Block, Block) -> bool,
) -> SmallVec<[Block; 4]> {
    // The CFG lists predecessors in layout order.
    let mut preds: SmallVec<[Block; 4]> = cfg
        .preds(b)
        .iter()
        .rev()
        .copied()
        .filter(|&p| forward(p, b))
        .collect();
    if let Some(k) = preds
        .iter()
        .position(|&p| f.layout.next_block(p) == Some(b))
    {
        let p = preds.remove(k);
        preds.push(p);
    }
    preds
}
