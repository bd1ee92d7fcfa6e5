//! What phase 87 knows about a function's shape, computed once per run and
//! shared by the walk, the late checks and the edits: the CFG, dominators,
//! uniformity, the blocks ptxas keeps, and its loops.

use crate::block_merging::PtxasBlocks;
use crate::loops::Loops;
use crate::uniformity::Uniformity;
use ori_ir::{Block, ControlFlowGraph, DominatorTree, Function};
use smallvec::SmallVec;

/// The analyses of one function.
pub(super) struct Analyses {
    pub(super) cfg: ControlFlowGraph,
    pub(super) dt: DominatorTree,
    pub(super) uni: Uniformity,
    /// Blocks as ptxas keeps them after if-conversion and full unrolling.
    pub(super) blocks: PtxasBlocks,
    pub(super) loops: Loops,
}

impl Analyses {
    pub(super) fn compute(f: &Function) -> Analyses {
        let cfg = ControlFlowGraph::compute(f);
        let dt = DominatorTree::compute(&cfg);
        let loops = Loops::compute(f, &cfg, &dt);
        Analyses {
            uni: Uniformity::compute(f, &cfg),
            blocks: PtxasBlocks::compute_from(f, &cfg, &loops.fully_unrolled),
            loops,
            cfg,
            dt,
        }
    }

    /// Where ptxas hoists a wait needed in block `b`: up the dominator tree
    /// through divergent blocks to the nearest uniform one. Returns the
    /// divergent blocks climbed (`b` first; none when `b` is uniform) and
    /// the uniform block reached (`None` when the entry is divergent).
    pub(super) fn climb_to_uniform(&self, b: Block) -> (SmallVec<[Block; 4]>, Option<Block>) {
        let mut passed = SmallVec::new();
        let mut h = b;
        while self.uni.divergent_block[h] {
            passed.push(h);
            match self.dt.idom(h) {
                Some(p) if p != h => h = p,
                _ => return (passed, None),
            }
        }
        (passed, Some(h))
    }
}
