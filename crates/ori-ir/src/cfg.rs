//! Control-flow graph, reverse postorder and dominators of a function.
//!
//! PTX blocks fall through to the next block unless they end in an
//! unconditional branch or a return, so successors come from the layout as
//! well as from branch targets (every block of a `brx.idx` list). Phase 85's in-flight dataflow iterates in
//! reverse postorder; the verifier and phase 87 use the dominator tree.

use crate::entities::Block;
use crate::function::Function;
use crate::instructions::Opcode;
use cranelift_entity::SecondaryMap;
use smallvec::SmallVec;

/// Successor and predecessor lists.
#[derive(Clone, Debug, Default)]
pub struct ControlFlowGraph {
    succs: SecondaryMap<Block, SmallVec<[Block; 2]>>,
    preds: SecondaryMap<Block, SmallVec<[Block; 2]>>,
    rpo: Vec<Block>,
    rpo_index: SecondaryMap<Block, u32>,
}

impl ControlFlowGraph {
    /// Compute the CFG of `f`.
    pub fn compute(f: &Function) -> Self {
        // Sized once: a function of 200k blocks would otherwise grow each
        // table by doubling, copying it every time.
        let n = f.blocks.len();
        let mut cfg = ControlFlowGraph {
            succs: SecondaryMap::with_capacity(n),
            preds: SecondaryMap::with_capacity(n),
            rpo: Vec::with_capacity(n),
            rpo_index: SecondaryMap::with_capacity(n),
        };
        cfg.succs.resize(n);
        cfg.preds.resize(n);
        let blocks = f.layout.blocks();
        for &b in blocks.iter() {
            let mut succs: SmallVec<[Block; 2]> = SmallVec::new();
            let mut falls_through = true;
            if let Some(&last) = f.layout.block_insts(b).last() {
                let d = &f.insts[last];
                match d.opcode {
                    Opcode::Branch | Opcode::IndexedBranch => {
                        succs = d.branch_targets();
                        falls_through = d.guard.is_some();
                    }
                    Opcode::Return => falls_through = d.guard.is_some(),
                    _ => {}
                }
            }
            if falls_through {
                if let Some(n) = f.layout.next_block(b) {
                    if !succs.contains(&n) {
                        succs.push(n);
                    }
                }
            }
            for s in &succs {
                cfg.preds[*s].push(b);
            }
            cfg.succs[b] = succs;
        }
        cfg.compute_rpo(f);
        cfg
    }

    fn compute_rpo(&mut self, f: &Function) {
        let Some(&entry) = f.layout.blocks().first() else {
            return;
        };
        let mut visited: SecondaryMap<Block, bool> = SecondaryMap::with_capacity(f.blocks.len());
        let mut post = Vec::with_capacity(f.blocks.len());
        let mut stack: Vec<(Block, usize)> = vec![(entry, 0)];
        visited[entry] = true;
        while let Some((b, k)) = stack.pop() {
            if let Some(&s) = self.succs[b].get(k) {
                stack.push((b, k + 1));
                if !visited[s] {
                    visited[s] = true;
                    stack.push((s, 0));
                }
            } else {
                post.push(b);
            }
        }
        post.reverse();
        for (k, b) in post.iter().enumerate() {
            self.rpo_index[*b] = k as u32;
        }
        self.rpo = post;
    }

    /// Successors of `b`.
    pub fn succs(&self, b: Block) -> &[Block] {
        &self.succs[b]
    }
    /// Predecessors of `b`.
    pub fn preds(&self, b: Block) -> &[Block] {
        &self.preds[b]
    }
    /// Blocks reachable from the entry, in reverse postorder.
    pub fn rpo(&self) -> &[Block] {
        &self.rpo
    }
    /// Whether `b` is reachable from the entry.
    pub fn is_reachable(&self, b: Block) -> bool {
        self.rpo.get(self.rpo_index[b] as usize) == Some(&b)
    }
}

/// Immediate dominators (Cooper, Harvey and Kennedy's iterative algorithm).
///
/// Each reachable block also gets the interval of a depth-first walk of the
/// tree (entered at `pre`, left at `post`), so that `dominates` is O(1): a
/// loop over a function's back edges must not climb the tree, which is as
/// deep as the function is long in straight-line code.
#[derive(Clone, Debug, Default)]
pub struct DominatorTree {
    idom: SecondaryMap<Block, Option<Block>>,
    rpo_index: SecondaryMap<Block, u32>,
    pre: SecondaryMap<Block, u32>,
    post: SecondaryMap<Block, u32>,
}

impl DominatorTree {
    /// Compute the dominator tree from a CFG.
    pub fn compute(cfg: &ControlFlowGraph) -> Self {
        let mut dt = DominatorTree::default();
        let rpo = cfg.rpo();
        let Some(&entry) = rpo.first() else { return dt };
        for (k, b) in rpo.iter().enumerate() {
            dt.rpo_index[*b] = k as u32;
        }
        dt.idom[entry] = Some(entry);
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &rpo[1..] {
                let mut new_idom: Option<Block> = None;
                for &p in cfg.preds(b) {
                    if dt.idom[p].is_none() {
                        continue;
                    }
                    new_idom = Some(match new_idom {
                        None => p,
                        Some(cur) => dt.intersect(p, cur),
                    });
                }
                if new_idom.is_some() && dt.idom[b] != new_idom {
                    dt.idom[b] = new_idom;
                    changed = true;
                }
            }
        }
        dt.number(entry, rpo);
        dt
    }

    /// Number the tree's depth-first intervals (iteratively: trees are deep).
    fn number(&mut self, entry: Block, rpo: &[Block]) {
        let mut children: SecondaryMap<Block, SmallVec<[Block; 2]>> = SecondaryMap::new();
        for &b in &rpo[1..] {
            if let Some(p) = self.idom[b] {
                children[p].push(b);
            }
        }
        let mut clock = 0;
        let mut stack: Vec<(Block, usize)> = vec![(entry, 0)];
        self.pre[entry] = clock;
        while let Some((b, k)) = stack.pop() {
            if let Some(&c) = children[b].get(k) {
                stack.push((b, k + 1));
                clock += 1;
                self.pre[c] = clock;
                stack.push((c, 0));
            } else {
                clock += 1;
                self.post[b] = clock;
            }
        }
    }

    fn intersect(&self, mut a: Block, mut b: Block) -> Block {
        while a != b {
            while self.rpo_index[a] > self.rpo_index[b] {
                a = self.idom[a].unwrap_or(a);
            }
            while self.rpo_index[b] > self.rpo_index[a] {
                b = self.idom[b].unwrap_or(b);
            }
        }
        a
    }

    /// Immediate dominator of `b` (the entry is its own).
    pub fn idom(&self, b: Block) -> Option<Block> {
        self.idom[b]
    }

    /// Whether `a` dominates `b` (every block dominates itself; an
    /// unreachable block dominates nothing else and is dominated by nothing
    /// else). O(1).
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        if a == b {
            return true;
        }
        if self.idom[a].is_none() || self.idom[b].is_none() {
            return false;
        }
        self.pre[a] <= self.pre[b] && self.post[b] <= self.post[a]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::function::{FuncKind, RegClass};
    use crate::instructions::{Guard, InstData, Operand, Slot};

    /// `dominates` by climbing the tree, as it was computed before the intervals.
    fn climbs_to(dt: &DominatorTree, a: Block, mut b: Block) -> bool {
        loop {
            if a == b {
                return true;
            }
            match dt.idom(b) {
                Some(p) if p != b => b = p,
                _ => return false,
            }
        }
    }

    /// A `brx.idx` has every block of its list as a successor, each once,
    /// in the list's order; guarded, it also falls through.
    #[test]
    fn indexed_branch_succeeds_to_its_whole_list() {
        let mut f = Function::new("k", FuncKind::Entry);
        let p = f.declare_reg("p", "pred", RegClass::Pred);
        let r = f.declare_reg("r", "b32", RegClass::R32);
        let b: Vec<Block> = (0..5).map(|_| f.append_block(None)).collect();
        let list = [b[3], b[2], b[3], b[4]].map(Operand::Block);
        let brx = InstData::new(
            "brx",
            &["idx"],
            [
                Slot::use_(Operand::Reg(r)),
                Slot::use_(Operand::Vector(Box::new(list))),
            ],
            1,
        );
        let mut guarded = brx.clone();
        guarded.guard = Some(Guard {
            reg: p,
            negated: false,
        });
        f.append_inst(b[0], guarded);
        f.append_inst(b[1], brx);
        for &x in &b[2..] {
            f.append_inst(x, InstData::new("ret", &[], [], 1));
        }
        let cfg = ControlFlowGraph::compute(&f);
        assert_eq!(cfg.succs(b[0]), [b[3], b[2], b[4], b[1]]);
        assert_eq!(cfg.succs(b[1]), [b[3], b[2], b[4]]);
        assert_eq!(cfg.preds(b[3]), [b[0], b[1]]);
        assert!(crate::verify::verify_function(&f).is_empty());
    }

    #[test]
    fn interval_dominance_matches_climbing_the_tree() {
        // b0 -> b1; b1: @p bra b3 | b2; b2 -> b3; b3: @p bra b1 | b4;
        // b4: @p bra b6 | b5; b5: ret; b6: ret; b7 (unreachable): ret.
        let mut f = Function::new("k", FuncKind::Entry);
        let p = f.declare_reg("p", "pred", RegClass::Pred);
        let b: Vec<Block> = (0..8).map(|_| f.append_block(None)).collect();
        let bra = |t: Block| {
            let mut d = InstData::new("bra", &[], [Slot::use_(Operand::Block(t))], 1);
            d.guard = Some(Guard {
                reg: p,
                negated: false,
            });
            d
        };
        let ret = || InstData::new("ret", &[], [], 1);
        f.append_inst(b[1], bra(b[3]));
        f.append_inst(b[3], bra(b[1]));
        f.append_inst(b[4], bra(b[6]));
        f.append_inst(b[5], ret());
        f.append_inst(b[6], ret());
        f.append_inst(b[7], ret());
        let cfg = ControlFlowGraph::compute(&f);
        assert!(!cfg.is_reachable(b[7]));
        let dt = DominatorTree::compute(&cfg);
        for &x in &b {
            for &y in &b {
                assert_eq!(dt.dominates(x, y), climbs_to(&dt, x, y), "{x} dom {y}");
            }
        }
        assert!(dt.dominates(b[1], b[5]) && !dt.dominates(b[2], b[3]));
        assert!(!dt.dominates(b[0], b[7]) && !dt.dominates(b[7], b[0]));
    }
}
