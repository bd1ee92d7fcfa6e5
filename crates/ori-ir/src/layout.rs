//! The order of blocks and instructions, kept apart from their definitions.
//!
//! As in Cranelift, definitions live in `PrimaryMap`s and the `Layout` says
//! where each one sits. Every instruction carries a sequence number that grows
//! along its block, and every block its position, so "does `a` come before
//! `b` in program order" is an O(1) comparison. Phase 87 inserts arrives and
//! waits; an insertion renumbers only the one block it lands in.

use crate::entities::{Block, Inst};
use cranelift_entity::packed_option::PackedOption;
use cranelift_entity::{EntityRef, SecondaryMap};
use fxhash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

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
    /// Edits recorded between [`Layout::begin_batch`] and
    /// [`Layout::end_batch`], applied together.
    batch: Option<Batch>,
}

/// Insertions and removals recorded for one rebuild of each block they
/// touch: `k` edits in a block of `n` instructions cost O(n + k) instead of
/// O(n) each (a straight-line block of 300k instructions with an injection
/// every few instructions took minutes).
/// What a batch places at one anchor: phase 87 places one or two, inline.
type Placed = SmallVec<[Inst; 2]>;

#[derive(Clone, Default, Debug)]
struct Batch {
    /// Instructions to place just before each anchor, in order.
    before: FxHashMap<Inst, Placed>,
    /// Instructions to place just after each anchor, in order.
    after: FxHashMap<Inst, Placed>,
    /// What stood around an instruction of a block's order when it was
    /// taken out: it stays at that place (before, after).
    left: FxHashMap<Inst, (Placed, Placed)>,
    /// Per instruction, the [`Mark`] bits. Rebuilding a block asks about
    /// every instruction in it; dense bits answer in program order from
    /// cache, and the hash maps above are probed only where a bit says an
    /// entry may be (the rebuild of a 1M-instruction block probed four
    /// tables of 200k entries per instruction: a cache miss each).
    marks: SecondaryMap<Inst, u8>,
    /// Blocks to rebuild.
    touched: FxHashSet<Block>,
}

/// Bits of [`Batch::marks`].
struct Mark;

impl Mark {
    /// Taken out and not placed again.
    const REMOVED: u8 = 1;
    /// Now in a `before` or `after` list (moved, or new).
    const LISTED: u8 = 2;
    /// May have an entry in `before`, `after` or `left` (set on insertion,
    /// never cleared: a hint that saves the probes, not a fact).
    const ANCHOR: u8 = 4;
}

impl Batch {
    fn has(&self, i: Inst, mark: u8) -> bool {
        self.marks[i] & mark != 0
    }

    fn set(&mut self, i: Inst, mark: u8, on: bool) {
        if on {
            self.marks[i] |= mark;
        } else if self.has(i, mark) {
            self.marks[i] &= !mark;
        }
    }

    /// What is placed before `i`, after `i`, and what was left around it.
    fn around(&self, i: Inst) -> (&[Inst], &[Inst], Option<&(Placed, Placed)>) {
        if !self.has(i, Mark::ANCHOR) {
            return (&[], &[], None);
        }
        let before = self.before.get(&i).map_or(&[][..], |v| &v[..]);
        let after = self.after.get(&i).map_or(&[][..], |v| &v[..]);
        (before, after, self.left.get(&i))
    }
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

    /// Give every block its new number `map(b)` (`map` a permutation of
    /// the function's blocks), keeping every position and sequence number:
    /// the block lists move, and each laid-out instruction's block is
    /// rewritten. Not during a batch.
    pub(crate) fn renumber_blocks(&mut self, map: impl Fn(Block) -> Block) {
        debug_assert!(self.batch.is_none(), "renumber_blocks during a batch");
        let mut insts: SecondaryMap<Block, Vec<Inst>> = SecondaryMap::new();
        let mut block_pos: SecondaryMap<Block, u32> = SecondaryMap::new();
        for (pos, b) in self.blocks.iter_mut().enumerate() {
            let nb = map(*b);
            let list = &self.insts[*b];
            for &i in list {
                self.inst_block[i] = nb.into();
            }
            // Copied, not moved: the copies are made one after another,
            // before the old lists are freed, so they lie together in
            // layout order (the lists a front end grew while it made
            // everything else lie scattered, and every later walk over the
            // layout paid for it in cache misses).
            insts[nb] = list.clone();
            block_pos[nb] = pos as u32;
            *b = nb;
        }
        self.insts = insts;
        self.block_pos = block_pos;
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

    /// Make room for instructions `0..n` in the order tables at once (a
    /// front end that knows how many instructions it will append: filling
    /// the tables one index at a time resizes them at every index). Never
    /// shrinks them.
    pub fn reserve_insts(&mut self, n: usize) {
        let Some(last) = n.checked_sub(1).map(Inst::new) else {
            return;
        };
        if self.inst_block.get(last).is_none() {
            self.inst_block.resize(n);
        }
        if self.seq.get(last).is_none() {
            self.seq.resize(n);
        }
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

    /// Start recording insertions and removals, to apply them together at
    /// [`Layout::end_batch`] with the same result as one at a time. Until
    /// then `block_insts` shows each block as it was (with instructions
    /// appended), `inst_block` is up to date, and order keys of the
    /// instructions inserted are not.
    pub fn begin_batch(&mut self) {
        if self.batch.is_none() {
            self.batch = Some(Batch::default());
        }
    }

    /// Apply the recorded edits: every block they touch is rebuilt once.
    pub fn end_batch(&mut self) {
        let Some(mut batch) = self.batch.take() else {
            return;
        };
        let mut touched: Vec<Block> = batch.touched.drain().collect();
        touched.sort_unstable();
        for b in touched {
            let old = std::mem::take(&mut self.insts[b]);
            let mut new = Vec::with_capacity(old.len() + 8);
            for i in old {
                let (_, _, left) = batch.around(i);
                // What was left around it when it was taken out stays here.
                if let Some((before, after)) = left {
                    for &x in before.iter().chain(after) {
                        Self::emit(&batch, x, &mut new);
                    }
                }
                // A moved instruction comes out where its list puts it.
                if !batch.has(i, Mark::LISTED) {
                    Self::emit(&batch, i, &mut new);
                }
            }
            for (k, i) in new.iter().enumerate() {
                self.inst_block[*i] = b.into();
                self.seq[*i] = (k as u32 + 1) * SEQ_STRIDE;
            }
            self.insts[b] = new;
        }
    }

    /// `i` with what was placed around it, unless it was taken out.
    fn emit(batch: &Batch, i: Inst, out: &mut Vec<Inst>) {
        let (before, after, _) = batch.around(i);
        for &x in before {
            Self::emit(batch, x, out);
        }
        if !batch.has(i, Mark::REMOVED) {
            out.push(i);
        }
        for &x in after {
            Self::emit(batch, x, out);
        }
    }

    /// Take `i` out (it is being moved or removed). What was placed around
    /// it stays where it is: in its list, in `i`'s place; in a block's
    /// order, in `left`.
    fn unlink_in_batch(batch: &mut Batch, i: Inst) {
        let (before, after) = if batch.has(i, Mark::ANCHOR) {
            (
                batch.before.remove(&i).unwrap_or_default(),
                batch.after.remove(&i).unwrap_or_default(),
            )
        } else {
            Default::default()
        };
        if batch.has(i, Mark::LISTED) {
            batch.set(i, Mark::LISTED, false);
            let mut around = before;
            around.extend(after);
            let lists = batch.before.values_mut().chain(batch.after.values_mut());
            let left = batch.left.values_mut().flat_map(|(b, a)| [b, a]);
            for v in lists.chain(left) {
                if let Some(k) = v.iter().position(|x| *x == i) {
                    v.remove(k);
                    v.insert_many(k, around);
                    break;
                }
            }
        } else if !(before.is_empty() && after.is_empty()) {
            batch.set(i, Mark::ANCHOR, true);
            let slot = batch.left.entry(i).or_default();
            slot.0.extend(before);
            slot.1.extend(after);
        }
    }

    /// Record `i` as placed in a list (before or after an anchor).
    fn list_in_batch(batch: &mut Batch, i: Inst, b: Block) {
        Self::unlink_in_batch(batch, i);
        batch.set(i, Mark::REMOVED, false);
        batch.set(i, Mark::LISTED, true);
        batch.touched.insert(b);
    }

    /// Insert `i` immediately before `before` (which must be laid out).
    pub fn insert_before(&mut self, i: Inst, before: Inst) {
        let b = self.inst_block[before].expect("insert_before: instruction not laid out");
        if let Some(batch) = self.batch.as_mut() {
            Self::list_in_batch(batch, i, b);
            batch.set(before, Mark::ANCHOR, true);
            batch.before.entry(before).or_default().push(i);
            self.inst_block[i] = b.into();
            return;
        }
        let pos = self.index_in_block(before).unwrap_or(0);
        self.insert_at(i, b, pos);
    }

    /// Insert `i` immediately after `after` (which must be laid out).
    pub fn insert_after(&mut self, i: Inst, after: Inst) {
        let b = self.inst_block[after].expect("insert_after: instruction not laid out");
        if let Some(batch) = self.batch.as_mut() {
            Self::list_in_batch(batch, i, b);
            batch.set(after, Mark::ANCHOR, true);
            batch.after.entry(after).or_default().insert(0, i);
            self.inst_block[i] = b.into();
            return;
        }
        let pos = self.index_in_block(after).map_or(0, |p| p + 1);
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
        let Some(b) = self.inst_block[i].take() else {
            return;
        };
        if let Some(batch) = self.batch.as_mut() {
            Self::unlink_in_batch(batch, i);
            batch.set(i, Mark::REMOVED, true);
            batch.touched.insert(b);
            return;
        }
        self.insts[b].retain(|x| *x != i);
    }

    fn renumber(&mut self, b: Block) {
        for (k, i) in self.insts[b].iter().enumerate() {
            self.seq[*i] = (k as u32 + 1) * SEQ_STRIDE;
        }
    }

    /// The index of `i` in its block's instruction list, if it is laid out
    /// (an instruction placed by an open batch is not, yet). O(log n): sequence numbers grow along a
    /// block, so this is a binary search, not a scan.
    pub fn index_in_block(&self, i: Inst) -> Option<usize> {
        let b = self.inst_block[i].expand()?;
        let insts = &self.insts[b];
        let s = self.seq[i];
        let k = insts.partition_point(|x| self.seq[*x] < s);
        (insts.get(k) == Some(&i)).then_some(k)
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

    /// Property: any sequence of insertions, moves and removals gives the
    /// same order applied at once or batched (`begin_batch`/`end_batch`).
    #[test]
    fn batched_edits_equal_edits_one_at_a_time() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _round in 0..1000 {
            let (mut one, mut batched) = (Layout::new(), Layout::new());
            let blocks = [Block::new(0), Block::new(1)];
            for b in blocks {
                one.append_block(b);
                batched.append_block(b);
            }
            let mut laid: Vec<Inst> = Vec::new();
            for k in 0..12 {
                let b = blocks[k % 2];
                one.append_inst(Inst::new(k), b);
                batched.append_inst(Inst::new(k), b);
                laid.push(Inst::new(k));
            }
            batched.begin_batch();
            let mut fresh = 100;
            let mut out: Vec<Inst> = Vec::new();
            for _ in 0..20 {
                let anchor = laid[next(laid.len())];
                match next(4) {
                    0 | 1 => {
                        // A new instruction, or one moved from elsewhere.
                        let i = if next(2) == 0 || out.is_empty() {
                            fresh += 1;
                            Inst::new(fresh)
                        } else {
                            out.remove(next(out.len()))
                        };
                        if next(2) == 0 {
                            one.insert_before(i, anchor);
                            batched.insert_before(i, anchor);
                        } else {
                            one.insert_after(i, anchor);
                            batched.insert_after(i, anchor);
                        }
                        laid.push(i);
                    }
                    _ if laid.len() > 2 => {
                        let k = next(laid.len());
                        let i = laid.remove(k);
                        one.remove_inst(i);
                        batched.remove_inst(i);
                        out.push(i);
                    }
                    _ => {}
                }
            }
            batched.end_batch();
            let a: Vec<Inst> = one.all_insts().collect();
            let b: Vec<Inst> = batched.all_insts().collect();
            assert_eq!(a, b);
            for w in b.windows(2) {
                assert!(batched.precedes(w[0], w[1]));
            }
            // The binary search finds every laid-out instruction where a
            // scan would, and nothing for one taken out.
            for l in [&one, &batched] {
                for &blk in &blocks {
                    for (k, &i) in l.block_insts(blk).iter().enumerate() {
                        assert_eq!(l.index_in_block(i), Some(k));
                    }
                }
                for &i in &out {
                    assert_eq!(l.index_in_block(i), None);
                }
            }
        }
    }

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
        for (k, &x) in l.block_insts(b0).iter().enumerate() {
            assert_eq!(l.index_in_block(x), Some(k));
        }
    }
}
