//! The order of blocks and instructions, kept apart from their definitions.
//!
//! As in Cranelift, definitions live in `PrimaryMap`s and the `Layout` says
//! where each one sits. Every instruction carries a sequence number that grows
//! along its block, and every block its position, so "does `a` come before
//! `b` in program order" is an O(1) comparison. Phase 87 inserts arrives and
//! waits; an insertion renumbers only the one block it lands in.

use crate::entities::{Block, Inst};
use cranelift_entity::packed_option::PackedOption;
use cranelift_entity::SecondaryMap;

/// Gap left between sequence numbers so most insertions renumber nothing.
const SEQ_STRIDE: u32 = 16;

/// Block and instruction order.
#[derive(Clone, Default, Debug)]
pub struct Layout {
    blocks: Vec<Block>,
    block_pos: SecondaryMap<Block, u32>,
    insts: SecondaryMap<Block, Vec<Inst>>,
    inst_block: SecondaryMap<Inst, PackedOption<Block>>,
    seq: SecondaryMap<Inst, u32>,
}

impl Layout {
    /// An empty layout.
    pub fn new() -> Self {
        Self::default()
    }

    /// Append a block at the end of the function.
    pub fn append_block(&mut self, b: Block) {
        self.block_pos[b] = self.blocks.len() as u32;
        self.blocks.push(b);
    }

    /// Blocks in layout order.
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// Whether `b` has been appended to the layout. O(1).
    pub fn is_block_laid_out(&self, b: Block) -> bool {
        self.blocks.get(self.block_pos[b] as usize) == Some(&b)
    }

    /// Position of a block in layout order.
    pub fn block_position(&self, b: Block) -> u32 {
        self.block_pos[b]
    }

    /// The block after `b` in layout order (the fall-through successor).
    pub fn next_block(&self, b: Block) -> Option<Block> {
        self.blocks.get(self.block_pos[b] as usize + 1).copied()
    }

    /// Instructions of a block in order.
    pub fn block_insts(&self, b: Block) -> &[Inst] {
        &self.insts[b]
    }

    /// The block holding `i`, if it is laid out.
    pub fn inst_block(&self, i: Inst) -> Option<Block> {
        self.inst_block[i].expand()
    }

    /// Append an instruction at the end of a block.
    pub fn append_inst(&mut self, i: Inst, b: Block) {
        let seq = self.insts[b]
            .last()
            .map_or(SEQ_STRIDE, |l| self.seq[*l] + SEQ_STRIDE);
        self.insts[b].push(i);
        self.inst_block[i] = b.into();
        self.seq[i] = seq;
    }

    /// Insert `i` immediately before `before` (which must be laid out).
    pub fn insert_before(&mut self, i: Inst, before: Inst) {
        let b = self.inst_block[before].expect("insert_before: instruction not laid out");
        let pos = self.insts[b].iter().position(|x| *x == before).unwrap_or(0);
        self.insert_at(i, b, pos);
    }

    /// Insert `i` immediately after `after` (which must be laid out).
    pub fn insert_after(&mut self, i: Inst, after: Inst) {
        let b = self.inst_block[after].expect("insert_after: instruction not laid out");
        let pos = self.insts[b]
            .iter()
            .position(|x| *x == after)
            .map_or(0, |p| p + 1);
        self.insert_at(i, b, pos);
    }

    /// Insert `i` at index `pos` of block `b`.
    pub fn insert_at(&mut self, i: Inst, b: Block, pos: usize) {
        let pos = pos.min(self.insts[b].len());
        self.insts[b].insert(pos, i);
        self.inst_block[i] = b.into();
        let prev = if pos == 0 {
            0
        } else {
            self.seq[self.insts[b][pos - 1]]
        };
        let next = self.insts[b].get(pos + 1).map(|n| self.seq[*n]);
        match next {
            Some(n) if n - prev >= 2 => self.seq[i] = prev + (n - prev) / 2,
            None => self.seq[i] = prev + SEQ_STRIDE,
            _ => self.renumber(b),
        }
    }

    /// Remove `i` from the layout.
    pub fn remove_inst(&mut self, i: Inst) {
        if let Some(b) = self.inst_block[i].take() {
            self.insts[b].retain(|x| *x != i);
        }
    }

    fn renumber(&mut self, b: Block) {
        for (k, i) in self.insts[b].iter().enumerate() {
            self.seq[*i] = (k as u32 + 1) * SEQ_STRIDE;
        }
    }

    /// Program-order key of an instruction: (block position, sequence number).
    pub fn order_key(&self, i: Inst) -> (u32, u32) {
        let b = self.inst_block[i]
            .expand()
            .map_or(u32::MAX, |b| self.block_pos[b]);
        (b, self.seq[i])
    }

    /// Whether `a` comes strictly before `b` in layout order. O(1).
    pub fn precedes(&self, a: Inst, b: Inst) -> bool {
        self.order_key(a) < self.order_key(b)
    }

    /// All instructions in layout order.
    pub fn all_insts(&self) -> impl Iterator<Item = Inst> + '_ {
        self.blocks
            .iter()
            .flat_map(move |b| self.insts[*b].iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_entity::EntityRef;

    #[test]
    fn insertion_keeps_program_order_comparable() {
        let mut l = Layout::new();
        let (b0, b1) = (Block::new(0), Block::new(1));
        l.append_block(b0);
        l.append_block(b1);
        assert!(l.is_block_laid_out(b0) && l.is_block_laid_out(b1));
        assert!(!l.is_block_laid_out(Block::new(2)));
        let i: Vec<Inst> = (0..40).map(Inst::new).collect();
        l.append_inst(i[0], b0);
        l.append_inst(i[1], b0);
        l.append_inst(i[2], b1);
        // Many insertions at the same point force a renumbering.
        for k in 3..40 {
            l.insert_before(i[k], i[1]);
        }
        let order: Vec<Inst> = l.all_insts().collect();
        for w in order.windows(2) {
            assert!(l.precedes(w[0], w[1]), "{:?} before {:?}", w[0], w[1]);
            assert!(!l.precedes(w[1], w[0]));
        }
        assert_eq!(order.first(), Some(&i[0]));
        assert_eq!(order.last(), Some(&i[2]));
        assert_eq!(order[order.len() - 2], i[1]);
    }
}
