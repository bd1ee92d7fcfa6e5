//! Post-dominators: for each block, the first block every path from it to
//! the function's end must reach (its immediate post-dominator).
//!
//! Two layers ask for them: the host backend, where the threads of a
//! divergent branch meet again (the classic SIMT reconvergence stack), and
//! phase 87's uniformity analysis, which blocks are control dependent on a
//! divergent branch. They are dominators of the reversed CFG, found with
//! Cooper, Harvey and Kennedy's iteration over a virtual exit that every
//! block without successors (a `ret`, an `exit`, the end) flows to.

use crate::cfg::ControlFlowGraph;
use crate::entities::Block;
use crate::function::Function;
use cranelift_entity::SecondaryMap;

/// Each block's immediate post-dominator (`None`: only the function's end
/// post-dominates it, or the block cannot reach the end).
#[derive(Clone, Debug, Default)]
pub struct PostDominatorTree {
    ipdom: SecondaryMap<Block, Option<Block>>,
}

impl PostDominatorTree {
    /// Compute them for `f`, whose CFG is `cfg`.
    pub fn compute(f: &Function, cfg: &ControlFlowGraph) -> PostDominatorTree {
        let blocks: Vec<Block> = f.layout.blocks().to_vec();
        let g = Reversed::new(f, cfg, &blocks);
        let order = g.postorder();
        let idom = g.dominators(&order);
        let mut ipdom = SecondaryMap::with_capacity(f.blocks.len());
        for (k, b) in blocks.iter().enumerate() {
            let d = idom[k + 1];
            ipdom[*b] = (d != usize::MAX && d != 0).then(|| blocks[d - 1]);
        }
        PostDominatorTree { ipdom }
    }

    /// The immediate post-dominator of `b`.
    pub fn ipdom(&self, b: Block) -> Option<Block> {
        self.ipdom.get(b).copied().flatten()
    }

    /// Every block's immediate post-dominator, as a map.
    pub fn into_map(self) -> SecondaryMap<Block, Option<Block>> {
        self.ipdom
    }
}

/// The reversed CFG over node numbers: 0 is the virtual exit, block `k` of
/// the layout is `k + 1`.
struct Reversed {
    /// A node's predecessors here: its CFG successors (the exit for a
    /// block without any).
    preds: Vec<Vec<usize>>,
    /// A node's successors here: its CFG predecessors (for the exit, the
    /// blocks without successors).
    succs: Vec<Vec<usize>>,
}

impl Reversed {
    fn new(f: &Function, cfg: &ControlFlowGraph, blocks: &[Block]) -> Reversed {
        let mut index: SecondaryMap<Block, usize> = SecondaryMap::with_capacity(f.blocks.len());
        for (k, b) in blocks.iter().enumerate() {
            index[*b] = k + 1;
        }
        let mut preds = vec![Vec::new()];
        let mut succs = vec![Vec::new()];
        for (k, b) in blocks.iter().enumerate() {
            let s = cfg.succs(*b);
            if s.is_empty() {
                preds.push(vec![0]);
                succs[0].push(k + 1);
            } else {
                preds.push(s.iter().map(|b| index[*b]).collect());
            }
            succs.push(cfg.preds(*b).iter().map(|b| index[*b]).collect());
        }
        Reversed { preds, succs }
    }

    /// The nodes reachable from the exit, in postorder (depth first).
    fn postorder(&self) -> Vec<usize> {
        let n = self.preds.len();
        let mut order = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        let mut stack = vec![(0usize, 0usize)];
        seen[0] = true;
        while let Some(&mut (v, ref mut i)) = stack.last_mut() {
            if let Some(&w) = self.succs[v].get(*i) {
                *i += 1;
                if !seen[w] {
                    seen[w] = true;
                    stack.push((w, 0));
                }
            } else {
                order.push(v);
                stack.pop();
            }
        }
        order
    }

    /// Each node's immediate dominator here (`usize::MAX`: unreachable),
    /// by Cooper, Harvey and Kennedy's iteration in reverse postorder.
    fn dominators(&self, order: &[usize]) -> Vec<usize> {
        let n = self.preds.len();
        let mut po_num = vec![usize::MAX; n];
        for (k, &v) in order.iter().enumerate() {
            po_num[v] = k;
        }
        let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
            while a != b {
                while po_num[a] < po_num[b] {
                    a = idom[a];
                }
                while po_num[b] < po_num[a] {
                    b = idom[b];
                }
            }
            a
        };
        let mut idom = vec![usize::MAX; n];
        idom[0] = 0;
        let mut changed = true;
        while changed {
            changed = false;
            for &v in order.iter().rev().filter(|&&v| v != 0) {
                let new = self.preds[v]
                    .iter()
                    .filter(|&&p| idom[p] != usize::MAX)
                    .fold(usize::MAX, |new, &p| match new {
                        usize::MAX => p,
                        _ => intersect(&idom, p, new),
                    });
                if new != usize::MAX && idom[v] != new {
                    idom[v] = new;
                    changed = true;
                }
            }
        }
        idom
    }
}
