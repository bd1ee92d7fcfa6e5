//! Which PTX basic blocks are still blocks of their own when ptxas reaches
//! phase 87.
//!
//! Phase 87 of ptxas 13.0.88 forgets the warpgroup arrive at a block
//! boundary: a wgmma that starts a block needs an arrive of its own even when
//! a `wgmma.fence` ends the block before it (corpus cases
//! `c7519_mma_in_uniform_branch`, `c7519_loop_mma_fence_outside`). But by then
//! ptxas has already merged some PTX blocks: a block whose single
//! predecessor falls or branches only into it is the same block
//! (`clean_fence_bra_mma`), and a short branch around a few plain
//! instructions is if-converted into predicated code
//! (`clean_fence_before_branch_join`), and a loop with a constant bound is
//! unrolled in full (up to `loops::MAX_FULL_UNROLL`). This module computes that view, so
//! that the arrive rule applies to the blocks ptxas sees, not to PTX labels.

use cranelift_entity::SecondaryMap;
use ori_ir::{Block, ControlFlowGraph, Function, Opcode};

/// Most instructions in an arm that ptxas if-converts: one-armed branches of
/// 16 loads and adds are converted, 18 are not (probes of `heldout3_10`);
/// diamonds up to about 18 a side.
pub const MAX_IF_CONVERTED_ARM: usize = 16;

/// For each block, whether it begins a block of ptxas's own at phase 87.
#[derive(Clone, Debug, Default)]
pub struct PtxasBlocks {
    starts: SecondaryMap<Block, bool>,
}

impl PtxasBlocks {
    /// Compute the view for `f`.
    pub fn compute(f: &Function, cfg: &ControlFlowGraph) -> PtxasBlocks {
        PtxasBlocks::compute_with(f, cfg, &ori_ir::DominatorTree::compute(cfg))
    }

    /// [`PtxasBlocks::compute`] with the dominator tree already at hand.
    pub fn compute_with(
        f: &Function,
        cfg: &ControlFlowGraph,
        dt: &ori_ir::DominatorTree,
    ) -> PtxasBlocks {
        let unrolled = crate::loops::fully_unrolled_back_edges(f, cfg, dt);
        PtxasBlocks::compute_from(f, cfg, &unrolled)
    }

    /// [`PtxasBlocks::compute`] with the back edges `(latch, header)` of
    /// the fully unrolled loops already found ([`crate::loops::Loops`]).
    pub fn compute_from(
        f: &Function,
        cfg: &ControlFlowGraph,
        unrolled: &[(Block, Block)],
    ) -> PtxasBlocks {
        let mut starts = SecondaryMap::new();
        for &b in f.layout.blocks() {
            starts[b] = !merged_into_predecessor(f, cfg, b);
        }
        // ptxas unrolls a loop with a constant bound in full (`heldout3_14`: even
        // 64 iterations come out straight-line), so its header is no boundary.
        for &(_, h) in unrolled {
            starts[h] = false;
        }
        // The arms of an if-converted hammock become predicated code of its head.
        for &b in f.layout.blocks() {
            if starts[b] || cfg.preds(b).len() != 2 {
                continue;
            }
            for &p in cfg.preds(b) {
                if convertible_arm(f, cfg, p) {
                    starts[p] = false;
                }
            }
        }
        PtxasBlocks { starts }
    }

    /// Whether `b` begins a ptxas block.
    pub fn starts_block(&self, b: Block) -> bool {
        self.starts[b]
    }
}

/// An arm ptxas can predicate: a block with one predecessor and one
/// successor, a few plain instructions, and no branch of its own but an
/// unconditional one to the join (`bra.uni`, the first arm of a diamond).
fn convertible_arm(f: &Function, cfg: &ControlFlowGraph, s: Block) -> bool {
    let mut insts = f.layout.block_insts(s);
    if let Some((last, body)) = insts.split_last() {
        let d = &f.insts[*last];
        if d.opcode == Opcode::Branch && d.guard.is_none() {
            insts = body;
        }
    }
    cfg.preds(s).len() == 1
        && cfg.succs(s).len() == 1
        && insts.len() <= MAX_IF_CONVERTED_ARM
        && insts.iter().all(|i| {
            let op = f.insts[*i].opcode;
            op == Opcode::Generic && f.insts[*i].guard.is_none()
        })
}

fn merged_into_predecessor(f: &Function, cfg: &ControlFlowGraph, b: Block) -> bool {
    let preds = cfg.preds(b);
    match preds {
        // Straight line: the predecessor goes only here.
        [p] => cfg.succs(*p) == [b] && *p != b,
        // Triangle `P: @p bra B; S: ...; B:` or diamond `P -> S1, S2 -> B`
        // with convertible arms: if-converted into P.
        [x, y] => {
            let arm_of = |s: Block, head: Block| {
                s != b && convertible_arm(f, cfg, s) && cfg.preds(s) == [head]
            };
            let triangle = |p: Block, s: Block| {
                cfg.succs(p).len() == 2 && cfg.succs(p).contains(&s) && arm_of(s, p)
            };
            if triangle(*x, *y) || triangle(*y, *x) {
                return true;
            }
            match (cfg.preds(*x), cfg.preds(*y)) {
                ([hx], [hy]) if hx == hy => arm_of(*x, *hx) && arm_of(*y, *hy),
                _ => false,
            }
        }
        _ => false,
    }
}
