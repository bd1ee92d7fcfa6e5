//! Where the threads of a divergent branch meet again: each block's
//! immediate post-dominator.
//!
//! Real kernels branch per thread: Triton's device-side TMA lets thread 0
//! alone build the tensor map (`@%p1 bra` on `%tid.x != 0`), masked tiles
//! skip their stores, warp-specialized kernels elect one thread to issue
//! copies. The host backend runs a warpgroup's 128 threads in lockstep, so
//! at a branch that splits them it runs one side with its threads, then the
//! other, and joins them at the first block every path from the branch must
//! reach: the immediate post-dominator (the classic SIMT reconvergence
//! stack), from `ori_ir`'s post-dominator tree.

use ori_ir::Block;
pub use ori_ir::PostDominatorTree as PostDominators;

/// The 128 lanes of a warpgroup as bits (lane `t` is bit `t`).
pub type LaneMask = u128;

/// One entry of a warpgroup's reconvergence stack: run `lanes` from `at`
/// until control reaches `until` (where the entry below takes over).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Next instruction: block and position in it.
    pub at: (Block, usize),
    /// The threads this entry runs.
    pub lanes: LaneMask,
    /// The reconvergence block that ends this entry (`None`: the bottom).
    pub until: Option<Block>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(body: &str) -> ori_ir::Module {
        let src = format!(
            ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{{\n\t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n{body}\n}}\n"
        );
        ori_ptx_module(&src)
    }

    fn ori_ptx_module(src: &str) -> ori_ir::Module {
        let (ast, diags) = ori_ptx::parse_with_diags("t.ptx", src);
        assert!(diags.is_empty(), "{diags:?}");
        let (m, diags) = ori_ptx::lower::lower_module_owned("t.ptx", ast);
        assert!(diags.is_empty(), "{diags:?}");
        m
    }

    #[test]
    fn an_if_meets_after_its_body_and_an_if_else_after_both() {
        let m = module(
            "\tmov.u32 %r1, %tid.x;\n\tsetp.ne.u32 %p1, %r1, 0;\n\t@%p1 bra $SKIP;\n\tadd.s32 %r2, %r2, 1;\n$SKIP:\n\tsetp.eq.u32 %p2, %r1, 3;\n\t@%p2 bra $ELSE;\n\tadd.s32 %r3, %r3, 1;\n\tbra $JOIN;\n$ELSE:\n\tadd.s32 %r3, %r3, 2;\n$JOIN:\n\tret;",
        );
        let f = m.funcs.values().next().unwrap();
        let pd = PostDominators::compute(f, &ori_ir::ControlFlowGraph::compute(f));
        let name = |b: Option<Block>| b.map(|b| f.block_name(b).to_string());
        let blocks = f.layout.blocks();
        // Block 0 ends in the branch to $SKIP: it meets at $SKIP.
        assert_eq!(name(pd.ipdom(blocks[0])).as_deref(), Some("$SKIP"));
        // $SKIP ends in the branch to $ELSE: both sides meet at $JOIN.
        let skip = blocks
            .iter()
            .position(|b| f.block_name(*b) == "$SKIP")
            .unwrap();
        assert_eq!(name(pd.ipdom(blocks[skip])).as_deref(), Some("$JOIN"));
        // $JOIN returns: nothing after it.
        assert_eq!(pd.ipdom(*blocks.last().unwrap()), None);
    }
}
