//! Questions the walk asks about the code around an instruction: what
//! follows it in its block (another wgmma, a read-modify-write, a commit),
//! and where a copy's value is needed. Each is a scan of the rest of one
//! block, or of the blocks up to the next GMMA op, using the positions
//! numbered once per run.

use super::state::State;
use super::walk::{accumulator_regs, Walker};
use fxhash::FxHashSet;
use ori_ir::{AccumSet, Block, Inst, InstData, Opcode, VReg};
use smallvec::SmallVec;

impl Walker<'_> {
    /// Sets in `ids` that contain `r`.
    pub(super) fn hits(&self, r: VReg, ids: &[AccumSet]) -> bool {
        self.tables.reg_sets[r].iter().any(|s| ids.contains(s))
    }

    /// Whether another wgmma follows `at` in block `b` before the next commit or wait.
    pub(super) fn wgmma_later(&self, b: Block, at: Inst) -> bool {
        let Some(after) = self.after_in_block(b, at) else {
            return false;
        };
        for &i in after {
            let d = &self.f.insts[i];
            // A user fence starts a new stage too (`heldout5_27`: a read, a
            // fence, then the next wgmma gets a wait, not C7514).
            if d.opcode.is_commit() || d.opcode.is_wait() || d.opcode.is_arrive() {
                return false;
            }
            if d.opcode == Opcode::WgmmaMmaAsync {
                return true;
            }
        }
        false
    }

    /// **R-join-wait-needs-a-reader.** Whether some path from the end of
    /// block `b` reaches an instruction that touches a register of the
    /// `sets` (or the exit, or a call) before a GMMA op (a `wait_group`, a
    /// fence, a wgmma chaining on them). ptxas's wait at the end of a join
    /// of arms with different wait levels (`heldout4_30`, whose accumulators
    /// are stored after the loop with no wait of their own) is not made when
    /// every path waits by itself first (Triton's flattened persistent TMA
    /// kernels: the loop exit begins with `wgmma.wait_group 0`).
    pub(super) fn unwaited_use_after(&self, b: Block, sets: &[AccumSet]) -> bool {
        let mut seen = FxHashSet::default();
        let mut work: Vec<Block> = self.an.cfg.succs(b).to_vec();
        while let Some(blk) = work.pop() {
            if !seen.insert(blk) {
                continue;
            }
            let mut stopped = false;
            for &i in self.f.layout.block_insts(blk) {
                let d = &self.f.insts[i];
                if d.opcode.is_gmma_family() {
                    stopped = true;
                    break;
                }
                if d.opcode == Opcode::Return || d.opcode == Opcode::Call {
                    return true;
                }
                let touches = self.tables.regs.inst_watched(i)
                    && self
                        .tables
                        .regs
                        .uses(i)
                        .iter()
                        .chain(self.tables.regs.defs(i))
                        .any(|r| self.hits(*r, sets));
                if touches {
                    return true;
                }
            }
            if !stopped {
                work.extend(self.an.cfg.succs(blk).iter().copied());
            }
        }
        false
    }

    /// The first instruction after `at` in block `b`, before the next GMMA
    /// op, that reads and redefines a register of the `open` sets (a
    /// read-modify-write, which gets a wait). Whether it depends on `at`
    /// does not matter (`c7517_c7519_add_read_then_dependent_rmw_between_mma`).
    pub(super) fn rmw_later(&self, b: Block, at: Inst, open: &[AccumSet]) -> Option<Inst> {
        for &i in self.after_in_block(b, at)? {
            let d = &self.f.insts[i];
            if d.opcode.is_gmma_family() || d.opcode.is_terminator() || d.opcode == Opcode::Call {
                return None;
            }
            let uses = self.tables.regs.uses(i);
            if self
                .tables
                .regs
                .defs(i)
                .iter()
                .any(|r| self.hits(*r, open) && uses.contains(r))
            {
                return Some(i);
            }
        }
        None
    }

    /// Whether instruction `at` of block `b` is a guarded store next to another
    /// store under the same guard.
    pub(super) fn in_store_run(&self, b: Block, at: Inst) -> bool {
        let insts = self.f.layout.block_insts(b);
        let Some(pos) = self.position(insts, at) else {
            return false;
        };
        let store_guard = |i: Inst| {
            let d = &self.f.insts[i];
            (&*d.name == "st").then_some(d.guard).flatten()
        };
        let Some(g) = store_guard(at) else {
            return false;
        };
        let same = |k: usize| insts.get(k).and_then(|i| store_guard(*i)) == Some(g);
        (pos > 0 && same(pos - 1)) || same(pos + 1)
    }

    /// Where the copy `at: mov dst, src` must have been made, in its block: the
    /// first later instruction that uses `dst`, redefines `src` or `dst`
    /// (a wgmma included). `None` when the copy is live at the block's end
    /// or a call or terminator comes first.
    pub(super) fn copy_end(&self, b: Block, at: Inst, dsts: &[VReg], src: VReg) -> Option<Inst> {
        let insts = self.f.layout.block_insts(b);
        let pos = self.position(insts, at)?;
        for &i in &insts[pos + 1..] {
            let d = &self.f.insts[i];
            if d.opcode == Opcode::Call || d.opcode.is_terminator() {
                return None;
            }
            let (defs, uses) = (self.tables.regs.defs(i), self.tables.regs.uses(i));
            let touches_copy = dsts.iter().any(|r| uses.contains(r) || defs.contains(r));
            if touches_copy || defs.contains(&src) {
                return Some(i);
            }
        }
        None
    }

    /// The instructions after `at` in its block `b`.
    pub(super) fn after_in_block(&self, b: Block, at: Inst) -> Option<&[Inst]> {
        let insts = self.f.layout.block_insts(b);
        self.position(insts, at).map(|k| &insts[k + 1..])
    }

    /// The index of `at` in its block's `insts` (O(1): the positions are
    /// numbered once per run).
    pub(super) fn position(&self, insts: &[Inst], at: Inst) -> Option<usize> {
        let k = self.tables.pos[at] as usize;
        (insts.get(k) == Some(&at)).then_some(k)
    }

    /// Whether a commit or wait follows `at` in block `b`.
    pub(super) fn sync_later_in_block(&self, b: Block, at: Inst) -> bool {
        let insts = self.f.layout.block_insts(b);
        let Some(pos) = self.position(insts, at) else {
            return false;
        };
        insts[pos + 1..].iter().any(|&i| {
            let op = self.f.insts[i].opcode;
            op.is_commit() || op.is_wait()
        })
    }

    /// Whether a wgmma later in block `b` takes `r` as an accumulator.
    pub(super) fn wgmma_later_in_block_using(&self, b: Block, at: Inst, r: VReg) -> bool {
        let insts = self.f.layout.block_insts(b);
        let Some(pos) = self.position(insts, at) else {
            return false;
        };
        insts[pos + 1..].iter().any(|&i| {
            let d = &self.f.insts[i];
            d.opcode == Opcode::WgmmaMmaAsync && accumulator_regs(d).contains(&r)
        })
    }

    /// Whether a wait for `i` (in block `b`), hoisted to the end of the
    /// nearest uniform dominator (`apply::hoist_to_uniform`), could come
    /// before a wgmma that runs before `i`: some path from that point to
    /// `i` issues a wgmma (or calls a function with a pipeline) with no
    /// `wait_group 0` after it. A backward search from `i`, stopped at the
    /// uniform block and at retiring waits.
    pub(super) fn wgmma_after_hoist(&self, b: Block, i: Inst) -> bool {
        let (passed, Some(h)) = self.an.climb_to_uniform(b) else {
            return false;
        };
        if passed.is_empty() {
            return false;
        }
        // `Some(true)`: a wgmma first; `Some(false)`: a retiring wait first.
        let scan = |insts: &[Inst]| {
            insts.iter().rev().find_map(|&x| {
                let d = &self.f.insts[x];
                if d.opcode.is_wait() && d.wait_count().unwrap_or(0) == 0 {
                    Some(false)
                } else if d.opcode == Opcode::WgmmaMmaAsync || self.calls_pipeline(d) {
                    Some(true)
                } else {
                    None
                }
            })
        };
        let insts = self.f.layout.block_insts(b);
        let before = &insts[..self.position(insts, i).unwrap_or(0)];
        if let Some(found) = scan(before) {
            return found;
        }
        let mut seen: FxHashSet<Block> = FxHashSet::default();
        let mut work: SmallVec<[Block; 8]> = self.an.cfg.preds(b).iter().copied().collect();
        while let Some(p) = work.pop() {
            if p == h || !seen.insert(p) {
                continue;
            }
            match scan(self.f.layout.block_insts(p)) {
                Some(true) => return true,
                Some(false) => {}
                None => work.extend(self.an.cfg.preds(p).iter().copied()),
            }
        }
        false
    }

    /// Whether `d` calls a function that has a wgmma pipeline.
    fn calls_pipeline(&self, d: &InstData) -> bool {
        d.direct_callee().is_some_and(|n| {
            self.module
                .funcs
                .get(&**n)
                .is_some_and(|x| x.holds_pipeline_ops)
        })
    }

    /// The first `wait_group 0` after the copy `at` in block `b`, with
    /// nothing between that touches the copy or redefines its source.
    pub(super) fn retiring_wait_after(
        &self,
        b: Block,
        at: Inst,
        dsts: &[VReg],
        src: VReg,
    ) -> Option<Inst> {
        for &i in self.after_in_block(b, at)? {
            let d = &self.f.insts[i];
            if d.opcode.is_wait() && d.wait_count() == Some(0) {
                return Some(i);
            }
            let (defs, uses) = (self.tables.regs.defs(i), self.tables.regs.uses(i));
            let touches = dsts.iter().any(|r| uses.contains(r) || defs.contains(r));
            if touches
                || defs.contains(&src)
                || d.opcode == Opcode::Call
                || d.opcode.is_terminator()
            {
                return None;
            }
        }
        None
    }

    /// The line of the instruction just before `at` in block `b`.
    pub(super) fn line_before(&self, b: Block, at: Inst) -> Option<u32> {
        let insts = self.f.layout.block_insts(b);
        let k = self.position(insts, at)?;
        k.checked_sub(1).map(|p| self.f.insts[insts[p]].line)
    }

    /// `(dsts, src)` when `d` is a plain unguarded `mov` of an accumulator
    /// register into registers of another class: a copy, or the unpack
    /// `mov.b32 {lo, hi}, acc` of a packed f16x2 accumulator (ptxas folds
    /// both into the uses: `heldout2_08`).
    pub(super) fn accumulator_copy(&self, i: Inst) -> Option<(SmallVec<[VReg; 4]>, VReg)> {
        let d = &self.f.insts[i];
        if &*d.name != "mov" || d.guard.is_some() {
            return None;
        }
        let (defs, uses) = (self.tables.regs.defs(i), self.tables.regs.uses(i));
        let tensor = |r: &VReg| self.tables.kinds.tensor(*r);
        match uses {
            [src] if tensor(src) && !defs.is_empty() && !defs.iter().any(tensor) => {
                Some((defs.iter().copied().collect(), *src))
            }
            _ => None,
        }
    }

    /// Whether a wgmma later in block `b`, before the next commit or wait,
    /// takes `r` as an accumulator.
    pub(super) fn wgmma_later_using(&self, b: Block, at: Inst, r: VReg) -> bool {
        let insts = self.f.layout.block_insts(b);
        let Some(pos) = self.position(insts, at) else {
            return false;
        };
        for &i in &insts[pos + 1..] {
            let d = &self.f.insts[i];
            if d.opcode.is_commit() || d.opcode.is_wait() {
                return false;
            }
            if d.opcode == Opcode::WgmmaMmaAsync && accumulator_regs(d).contains(&r) {
                return true;
            }
        }
        false
    }

    /// The user's commit that follows `at` in its block with only instructions
    /// between that write no accumulator register (and no other GMMA op).
    pub(super) fn commit_after_reads(&self, b: Block, at: Inst) -> Option<Inst> {
        let insts = self.f.layout.block_insts(b);
        let pos = self.position(insts, at)?;
        for &i in &insts[pos + 1..] {
            let d = &self.f.insts[i];
            if d.opcode == Opcode::WgmmaCommitGroup {
                return Some(i);
            }
            if d.opcode.is_gmma_family()
                || d.opcode == Opcode::Call
                || self
                    .tables
                    .regs
                    .defs(i)
                    .iter()
                    .any(|r| !self.tables.reg_sets[*r].is_empty())
            {
                return None;
            }
        }
        None
    }

    /// Whether the registers the wgmma in flight hold, their accumulator
    /// sets' and the A fragments of those reading A from registers, number
    /// more than `budget` (R-in-flight-budget: an A fragment counts like an
    /// accumulator, `tests/corpus/c7511_in_flight_a_fragments_*`; a
    /// FlexAttention forward with 192 accumulator and 64 fragment registers
    /// in flight is C7511). Their union is no larger than the sum of the
    /// sizes, so the union is built (a hash set) only when that sum is over
    /// the budget.
    pub(super) fn in_flight_exceeds(&self, s: &State, budget: usize) -> bool {
        let ids = s.pipe.all();
        let sets = || ids.iter().filter_map(|&id| self.sets.get(id));
        if sets().map(|set| set.len()).sum::<usize>() + s.a_frags.len() <= budget {
            return false;
        }
        let mut regs: FxHashSet<VReg> = FxHashSet::default();
        for set in sets() {
            regs.extend(set.iter().copied());
        }
        regs.extend(s.a_frags.iter().map(|(r, _)| *r));
        regs.len() > budget
    }
}
