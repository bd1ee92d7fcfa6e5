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
//! stack). Post-dominators are dominators of the reversed CFG, found with
//! Cooper, Harvey and Kennedy's iteration over a virtual exit that every
//! block without successors (a `ret`, an `exit`, the end) flows to.

use cranelift_entity::SecondaryMap;
use ori_ir::{Block, ControlFlowGraph, Function};

/// Each block's immediate post-dominator (`None`: only the function's end
/// post-dominates it, so divergent threads meet only when they exit).
#[derive(Clone, Debug, Default)]
pub struct PostDominators {
    ipdom: SecondaryMap<Block, Option<Block>>,
}

impl PostDominators {
    /// Compute them for `f`.
    pub fn compute(f: &Function) -> PostDominators {
        let cfg = ControlFlowGraph::compute(f);
        let blocks: Vec<Block> = f.layout.blocks().to_vec();
        let g = Reversed::new(f, &cfg, &blocks);
        let order = g.postorder();
        let idom = g.dominators(&order);
        let mut ipdom = SecondaryMap::with_capacity(f.blocks.len());
        for (k, b) in blocks.iter().enumerate() {
            let d = idom[k + 1];
            ipdom[*b] = (d != usize::MAX && d != 0).then(|| blocks[d - 1]);
        }
        PostDominators { ipdom }
    }

    /// The block where threads that diverge at the end of `b` meet again.
    pub fn ipdom(&self, b: Block) -> Option<Block> {
        self.ipdom.get(b).copied().flatten()
    }
}

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
        let pd = PostDominators::compute(f);
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
