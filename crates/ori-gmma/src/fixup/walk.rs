//! The primary fixup's walk over one block (seed 003: `sub_ADEB40`): the
//! transfer function of [`State`]. At each instruction it asks the rules
//! (`rules`, one item each, with their predicates and actions) of that
//! point of the walk, in the order `rules::PRECEDENCE` states.
//!
//! `solve` runs the walk over each block in the fixpoint: its first pass
//! records the first visits' decisions, its later rounds use a scratch
//! [`Plan`] that is thrown away (only the state out of the block matters);
//! then the converged states are visited to decide. The state depends on
//! the plan in one place only (R-first-visit's covered read,
//! [`Plan::state_from_plan`]), which the solver checks for.

use super::analyses::Analyses;
use super::inst_regs::InstRegs;
use super::plan::{Plan, WaitAt};
use super::rules::read::{CopyShapes, ReadAt};
use super::rules::Mode;
use super::state::{add_all, set_shape, wgmma_shape, ArriveAt, State};
use cranelift_entity::packed_option::ReservedValue;

use cranelift_entity::{EntityRef, SecondaryMap};
use fxhash::FxHashSet;
use ori_ir::{
    AccumSet, AccumSetPool, Block, ControlFlowGraph, DominatorTree, Function, Inst, InstData,
    Opcode, Operand, RegClass, Role, VReg,
};
use smallvec::SmallVec;

/// How many wgmma of one stage into one set make a chain
/// (R-kill-after-chain): the stage's issues are counted up to this.
pub(super) const CHAIN: usize = 2;

/// The set id standing for the dummy wgmma of an empty group (no registers).
fn dummy_group_set() -> AccumSet {
    AccumSet::reserved_value()
}

/// For each register, the accumulator sets containing it.
pub(super) type SetsOfReg = super::by_register::ByRegister<AccumSet>;

fn sets_of_reg(f: &Function, pool: &AccumSetPool) -> SetsOfReg {
    SetsOfReg::new(f.vregs.len(), AccumSet::reserved_value(), || {
        pool.iter()
            .flat_map(|(k, set)| set.iter().map(move |&r| (r, k)))
    })
}

/// Two facts about each register, one byte each: whether it is in an
/// accumulator set and whether it is of the tensor class. The table of
/// registers' data is 32 bytes a register (21 MB on the generated 1M
/// matmul) and the sets' offsets another table, each read at random at
/// every register operand; this one is 670 KB there.
pub(super) struct RegKinds(Vec<u8>);

impl RegKinds {
    const IN_A_SET: u8 = 1;
    const TENSOR: u8 = 2;

    fn new(f: &Function, sets: &SetsOfReg) -> RegKinds {
        let kind = |(r, d): (VReg, &ori_ir::VRegData)| {
            let tensor = if d.class == RegClass::Tensor {
                RegKinds::TENSOR
            } else {
                0
            };
            let in_a_set = if sets[r].is_empty() {
                0
            } else {
                RegKinds::IN_A_SET
            };
            tensor | in_a_set
        };
        RegKinds(f.vregs.iter().map(kind).collect())
    }

    fn get(&self, r: VReg) -> u8 {
        self.0.get(r.index()).copied().unwrap_or(0)
    }

    /// Whether `r` is of the tensor class (a wgmma accumulator's).
    #[inline]
    pub(super) fn tensor(&self, r: VReg) -> bool {
        self.get(r) & RegKinds::TENSOR != 0
    }

    /// Whether `r` is in an accumulator set or of the tensor class.
    #[inline]
    pub(super) fn in_a_set_or_tensor(&self, r: VReg) -> bool {
        self.get(r) != 0
    }
}

/// What the walk consults: the function, phase 85's sets, the tables made
/// of them and the analyses.
pub(super) struct Walker<'a> {
    pub(super) f: &'a Function,
    pub(super) sets: &'a AccumSetPool,
    /// What the walk reads of the function besides the analyses.
    pub(super) tables: Tables,
    /// CFG, dominators, uniformity, ptxas's blocks and loops, computed once.
    pub(super) an: &'a Analyses,
    pub(super) module: &'a ori_ir::ModuleInfo,
    /// ptxas's decisions only, or also what the ISA wants (ISA-strict).
    pub(super) mode: Mode,
    /// The block walk's register counts, between blocks (cleared).
    spare_counts: std::cell::Cell<RegCounts>,
    /// Waits an earlier round hoisted out of divergent code to the end of
    /// each uniform block (R-hoisted-wait-retires): the walk makes them
    /// there, so that they retire the groups on every path out of the block.
    pub(super) hoisted: SecondaryMap<Block, SmallVec<[WaitAt; 1]>>,
    /// The copies' shapes found so far (`Walker::copy_shape`).
    pub(super) copy_shapes: std::cell::RefCell<CopyShapes>,
}

/// Registers a wgmma reads as a fragment (A fragment, sparse metadata):
/// ptxas fences both alike.
pub(super) fn a_fragment_regs(d: &InstData) -> SmallVec<[VReg; 4]> {
    d.wgmma_fragment_regs()
}

/// A wgmma's accumulator registers (its D operand).
pub(super) fn accumulator_regs(d: &InstData) -> SmallVec<[VReg; 4]> {
    d.slots.first().map(|s| s.op.regs()).unwrap_or_default()
}

/// What the walk tracks within one PTX block only.
pub(super) struct BlockCx {
    pub(super) b: Block,
    /// A wgmma since the last commit or wait, in this ptxas block.
    pub(super) block_wgmma: bool,
    /// An arrive after the last plain instruction, in this ptxas block.
    pub(super) fresh_arrive: bool,
    /// Destination sets of the open stage's wgmma, one entry per wgmma.
    pub(super) block_issues: SmallVec<[AccumSet; 8]>,
    /// A-fragment registers of the wgmma earlier in this PTX block.
    pub(super) block_fragments: FxHashSet<VReg>,
    /// Accumulator registers a wgmma earlier in this PTX block wrote, with
    /// the number of wgmma that wrote each.
    pub(super) block_wgmma_defs: RegCounts,
    /// A loop header that forgot an arrive R-arrive-kept would keep: the
    /// arrive still holds after the block unless a call intervened.
    pub(super) restore_arrive: bool,
    /// The fence a copy sank to, which waits first
    /// (R-unwaited-sets-in-flight's copies).
    pub(super) sink_fence: Option<Inst>,
}

/// A count per register, dense (indexed by register) and cleared by the
/// registers it touched: a straight-line block of 100k wgmma counts 400k
/// accumulators, which a hash map kept scattered over memory. One is kept
/// by the walker and lent to each block in turn.
#[derive(Default)]
pub(super) struct RegCounts {
    counts: SecondaryMap<VReg, u32>,
    touched: Vec<VReg>,
}

impl RegCounts {
    pub(super) fn incr(&mut self, r: VReg) {
        if self.counts[r] == 0 {
            self.touched.push(r);
        }
        self.counts[r] += 1;
    }

    pub(super) fn get(&self, r: VReg) -> u32 {
        self.counts.get(r).copied().unwrap_or(0)
    }

    pub(super) fn remove(&mut self, r: VReg) {
        if self.counts.get(r).is_some() {
            self.counts[r] = 0;
        }
    }

    fn clear(&mut self) {
        for r in self.touched.drain(..) {
            self.counts[r] = 0;
        }
    }
}

impl BlockCx {
    /// A wait or commit injected here closes the stage: a commit later in
    /// the block closes an empty group (probe n10).
    pub(super) fn close_stage(&mut self) {
        self.block_wgmma = false;
        self.block_issues.clear();
    }
}

/// A plain instruction's register accesses, as ptxas sees them.
pub(super) struct Access {
    pub(super) defs: SmallVec<[VReg; 8]>,
    /// Reads, with a guarded instruction's definitions (a predicated write
    /// keeps the old value where the guard is false) and the accumulators
    /// behind live copies.
    pub(super) uses: SmallVec<[VReg; 8]>,
    /// Every set in flight before the instruction.
    pub(super) all: SmallVec<[AccumSet; 4]>,
    /// A register read of an open (uncommitted) set.
    pub(super) read_open: Option<VReg>,
    /// A register read of any set in flight.
    pub(super) read_any: Option<VReg>,
    /// Whether the instruction writes a register of a set in flight.
    pub(super) defines_acc: bool,
    /// A pure read of the open stage with more wgmma of the stage to come.
    pub(super) between: Option<VReg>,
}

impl Walker<'_> {
    /// One walk over block `b` from `st`; records decisions in `plan`.
    pub(super) fn walk_block(&self, b: Block, mut st: State, plan: &mut Plan) -> State {
        let mut bx = self.enter_block(b, &mut st);
        let join_wait = self.join_needs_wait(b, &st);
        let last = self.f.layout.block_insts(b).last().copied();
        for &i in self.f.layout.block_insts(b) {
            let d = &self.f.insts[i];
            let at_branch = Some(i) == last && d.opcode == Opcode::Branch;
            if join_wait && at_branch {
                self.join_wait_levels(&mut st, plan, i);
            }
            if Some(i) == last && !self.hoisted[b].is_empty() {
                self.make_hoisted_waits(&mut bx, &mut st, plan, b);
            }
            if plan.has_wait(i) {
                self.keep_recorded_wait(&st, plan, i);
            }
            match d.opcode {
                op if op.is_arrive() => self.on_arrive(&mut bx, &mut st, i),
                Opcode::WgmmaMmaAsync => self.on_wgmma(&mut bx, &mut st, plan, i),
                op if op.is_commit() || op.is_wait() => self.on_sync(&mut bx, &mut st, plan, i),
                Opcode::Return => self.exit_rules(&bx, &mut st, plan, i),
                Opcode::Call => {
                    self.call_rules(&mut bx, &mut st, plan, i);
                    call_transfer(&mut bx, &mut st);
                }
                _ => self.on_plain(&mut bx, &mut st, plan, i),
            }
        }
        if bx.restore_arrive && st.no_arrive {
            st.no_arrive = false;
        }
        st.block_wgmma = bx.block_wgmma;
        st.fresh_arrive = bx.fresh_arrive;
        st.block_issues = bx.block_issues;
        bx.block_wgmma_defs.clear();
        self.spare_counts.replace(bx.block_wgmma_defs);
        st
    }

    /// The state at the top of `b`: ptxas forgets the arrive at a block
    /// boundary it keeps (`block_merging`), and groups entering a loop that
    /// commits in flight become sticky (R-sticky-groups).
    fn enter_block(&self, b: Block, st: &mut State) -> BlockCx {
        let mut restore_arrive = false;
        if self.an.blocks.starts_block(b) {
            let kept = self.arrive_kept(b, st);
            let header = self.an.loops.header[b];
            st.no_arrive = !kept || header;
            st.block_no_arrive = true;
            restore_arrive = kept && header;
            st.block_wgmma = false;
            st.fresh_arrive = false;
            st.block_issues.clear();
            // R-unwaited-sets-in-flight is kept to its wgmma's ptxas block
            // (ptxas carries it further, but not on FlashAttention-3's
            // backward kernels; what tells them apart is not found yet).
            st.end_unwaited();
        }
        if self.an.loops.committing_header[b] {
            for g in st.pipe.groups.clone() {
                add_all(&mut st.sticky, g);
            }
        }
        BlockCx {
            b,
            block_wgmma: st.block_wgmma,
            fresh_arrive: st.fresh_arrive,
            block_issues: std::mem::take(&mut st.block_issues),
            block_fragments: FxHashSet::default(),
            block_wgmma_defs: self.spare_counts.take(),
            restore_arrive,
            sink_fence: None,
        }
    }

    /// A fence (or an injected arrive) orders everything before it.
    fn on_arrive(&self, bx: &mut BlockCx, st: &mut State, i: Inst) {
        if bx.sink_fence == Some(i) {
            bx.close_stage();
            st.retire_all();
        }
        bx.fresh_arrive = true;
        st.arrive_block = ArriveAt::At(bx.b);
        st.wgmma_since_arrive = false;
        st.wgmma_sets_since_arrive.clear();
        st.read_touched.clear();
        st.shapes.clear();
        // A fence in divergent code is fine for the wgmma it guards
        // (`attempt_c7520_divergent_fence_mma` compiles clean); it only
        // matters when a path around it needs an injected arrive.
        st.divergent_fence = self.an.uni.inst_is_divergent(bx.b, i);
        st.touched.clear();
        st.no_arrive = false;
        st.block_no_arrive = false;
    }

    fn on_wgmma(&self, bx: &mut BlockCx, st: &mut State, plan: &mut Plan, i: Inst) {
        let accs: SmallVec<[VReg; 8]> = self.tables.regs.accs(i).into();
        self.wgmma_register_failures(st, plan, i, &accs);
        self.wgmma_over_copy(st, plan, i, &accs);
        self.wgmma_takes_unwaited_copy(bx, st, plan, i, &accs);
        self.wgmma_arrive(bx, st, plan, i, &accs);
        self.wgmma_transfer(bx, st, plan, i, &accs);
    }

    /// How a wgmma moves the state: its set goes in flight, its registers
    /// are this stage's; then the register budget (R-in-flight-budget).
    fn wgmma_transfer(
        &self,
        bx: &mut BlockCx,
        st: &mut State,
        plan: &mut Plan,
        i: Inst,
        accs: &[VReg],
    ) {
        let d = &self.f.insts[i];
        let shape = wgmma_shape(d);
        for &r in accs {
            set_shape(&mut st.shapes, r, shape);
            bx.block_wgmma_defs.incr(r);
        }
        bx.block_wgmma = true;
        st.wgmma_since_arrive = true;
        bx.block_fragments
            .extend(self.tables.regs.frags(i).iter().copied());
        for &r in self.tables.regs.frags(i) {
            if !st.a_frags.contains(&(r, 0)) {
                st.a_frags.push((r, 0));
            }
        }
        st.pipe.transfer(d);
        if !st.seen_wait && !self.tables.wait_above[i] {
            // R-unwaited-sets-in-flight: no wait on a path here, nor
            // earlier in ptxas's block order (R-block-order).
            st.unwaited = true;
            st.unwaited_cleared.clear();
        }
        if let Some(w) = d.accum {
            let set = w.dst;
            st.mixed.retain(|s| *s != set);
            // Counted up to `CHAIN`, the most any rule asks for: a stage
            // that goes round a loop ptxas unrolls in full (no block
            // boundary at its header) would otherwise count without end,
            // and the fixpoint never converge (an internal error; found by
            // the compile_ori fuzz target, corpus case
            // `c7519_unrolled_loop_wgmma_never_committed`).
            if bx.block_issues.iter().filter(|x| **x == set).count() < CHAIN {
                bx.block_issues.push(set);
            }
            // Only sets some wgmma also reads as A fragments can matter,
            // which keeps the state small.
            if self.tables.fragment_sets.contains(&set) {
                add_all(&mut st.wgmma_sets_since_arrive, [set]);
            }
        }
        st.last_wgmma = Some(i);
        self.in_flight_budget_rule(st, plan, i);
    }

    /// A user's commit or wait. In divergent code it is fine by itself
    /// (`attempt_c7520_divergent_fence_mma` compiles clean): what fails is
    /// an injection it forces there, an arrive for the dummy wgmma of an
    /// empty commit (C7520), or a wait later that depends on which path
    /// waited (C7518).
    fn on_sync(&self, bx: &mut BlockCx, st: &mut State, plan: &mut Plan, i: Inst) {
        let d = &self.f.insts[i];
        let op = d.opcode;
        let divergent = self.an.uni.inst_is_divergent(bx.b, i);
        if op.is_wait() {
            st.divergent_wait = divergent;
            st.user_waited |= op == Opcode::WgmmaWaitGroup;
            st.seen_wait = true;
            st.end_unwaited();
        }
        let empty_group = self.empty_group(bx, st, plan, i, divergent);
        self.implicit_commit(st, plan, i);
        bx.close_stage();
        self.sync_transfer(st, d, empty_group);
    }

    /// How a commit or wait moves the state (PTX ISA: a commit closes the
    /// open wgmma into a group; `wait_group N` retires all but the N newest).
    fn sync_transfer(&self, st: &mut State, d: &InstData, empty_group: bool) {
        let op = d.opcode;
        // Sets of the groups this wait retires (a wait closes an open stage
        // first, as ptxas does).
        let mut groups = st.pipe.groups.clone();
        if (op.is_wait() && !st.pipe.open.is_empty()) || op.is_commit() {
            if op.is_wait() {
                groups.push(st.pipe.open.clone());
            }
            // One commit more since each fragment's wgmma (capped like the
            // groups of `in_flight`, so the state is finite).
            for (_, age) in st.a_frags.iter_mut() {
                *age = (*age + 1).min(crate::in_flight::MAX_GROUPS as u32 + 1);
            }
            st.a_frags.sort_unstable();
            st.a_frags.dedup();
        }
        if op == Opcode::WgmmaCommitGroup {
            st.rmw_regs.clear();
        }
        st.pipe.transfer(d);
        if empty_group {
            // The dummy wgmma of an empty group is in flight like any other:
            // a `ret` after `wait_group 1` waits for it (`heldout3_38`).
            if let Some(g) = st.pipe.groups.last_mut() {
                // Sets stay sorted (`in_flight::union_into`).
                if let Err(at) = g.binary_search(&dummy_group_set()) {
                    g.insert(at, dummy_group_set());
                }
            }
        }
        if op.is_wait() {
            self.wait_transfer(st, d, &groups);
        }
        if st.pipe.is_empty() {
            st.a_frags.clear();
            st.retired.clear();
        }
    }

    /// What a wait does beside retiring groups: sticky groups stay
    /// (R-sticky-groups), retired sets are remembered, fragments and copies
    /// of what it made final are released.
    fn wait_transfer(&self, st: &mut State, d: &InstData, before: &[SmallVec<[AccumSet; 4]>]) {
        let n = d.wait_count().unwrap_or(0);
        if n > 0 && !st.sticky.is_empty() {
            let all = st.pipe.all();
            let mut kept: SmallVec<[AccumSet; 4]> = st
                .sticky
                .iter()
                .copied()
                .filter(|s| !all.contains(s))
                .collect();
            kept.sort_unstable();
            kept.dedup();
            if !kept.is_empty() {
                st.pipe.groups.insert(0, kept);
            }
        } else {
            st.sticky.clear();
        }
        let done = before.len().saturating_sub(st.pipe.groups.len());
        for g in &before[..done] {
            add_all(&mut st.retired, g.iter().copied());
        }
        st.partial_wait = n > 0 && !st.pipe.is_empty();
        let all = st.pipe.all();
        // A copy of a value the wait made final is an ordinary register from
        // here on (`tests/triton2/accread_partial_*`).
        st.aliases.retain(|(_, src)| self.hits(*src, &all));
        // `wait_group N` keeps the N newest groups: fragments whose wgmma is
        // at most N commits old.
        let keep = n.max(0) as u32;
        st.a_frags.retain(|(_, age)| *age <= keep);
        st.mixed.retain(|s| all.contains(s));
    }

    /// Any other instruction: the copy rule, the kill rules, the read rules
    /// in their order, the in-flight write rules, then what it touched.
    fn on_plain(&self, bx: &mut BlockCx, st: &mut State, plan: &mut Plan, i: Inst) {
        bx.fresh_arrive = false;
        // No rule asks about an instruction that touches no watched
        // register (`inst_regs`): none of its registers is in flight, a
        // copy of one, a wgmma's operand or a copy's source.
        if !self.tables.regs.inst_watched(i) {
            return;
        }
        let acc = self.access(bx.b, st, i);
        if self.unwaited_copy(bx, st, plan, i, &acc) {
            self.plain_touches(bx, st, i, &acc, false);
            return;
        }
        if self.copy_rule(bx.b, st, plan, i, &acc) {
            return;
        }
        let (failed, sunk_kill) = self.kill_rules(bx, st, plan, i, &acc);
        let waited = self.read_rules(&mut ReadAt {
            bx,
            st,
            plan,
            i,
            acc: &acc,
        });
        if !waited && !failed {
            self.in_flight_write_rules(bx, st, plan, i, &acc);
        }
        self.plain_touches(bx, st, i, &acc, sunk_kill);
    }

    /// The registers a plain instruction reads and writes, copies
    /// resolved (see `State::aliases`): a use of the copy reads the
    /// accumulator; so does overwriting it while the copy lives.
    fn access(&self, b: Block, st: &mut State, i: Inst) -> Access {
        let d = &self.f.insts[i];
        let all = st.pipe.all();
        let defs: SmallVec<[VReg; 8]> = self.tables.regs.defs(i).into();
        let mut uses: SmallVec<[VReg; 8]> = self.tables.regs.uses(i).into();
        if d.guard.is_some() {
            uses.extend(defs.iter().copied());
        }
        for &(dst, src) in &st.aliases {
            if uses.contains(&dst) || defs.contains(&src) {
                uses.push(src);
            }
        }
        st.aliases
            .retain(|(dst, src)| !defs.contains(dst) && !defs.contains(src));
        let read_open = uses.iter().copied().find(|r| self.hits(*r, &st.pipe.open));
        let mut read_any = uses.iter().copied().find(|r| self.hits(*r, &all));
        if read_any.is_none() {
            // R-unwaited-sets-in-flight (a committed read: a wait, never
            // C7514).
            read_any = uses
                .iter()
                .copied()
                .find(|r| self.unwaited_in_flight(st, *r));
        }
        self.clear_unwaited(st, &defs);
        let defines_acc = defs.iter().any(|r| self.hits(*r, &all));
        let between = read_open.filter(|_| !defines_acc && self.wgmma_later(b, i));
        Access {
            defs,
            uses,
            all,
            read_open,
            read_any,
            defines_acc,
            between,
        }
    }

    /// What a plain instruction leaves for the next wgmma's arrive. A later
    /// wgmma needs an arrive after writes to its registers; plain reads do
    /// not count, of A fragments or of accumulators (on ptxas 13.0.88
    /// `commit; add f0, d0, d1; wgmma {d..}` gets a wait before the add and
    /// no arrive before the wgmma). Nor does a write of an A fragment
    /// between an arrive and the first wgmma after it
    /// (`attempt_c7513_def_rega_after_fence` compiles clean, while
    /// `heldout_09` and `heldout_12` get C7519). **R-copy-is-no-write**: a
    /// plain copy (`mov`, also the unpack `mov.b64 {lo, hi}, x`) of
    /// registers not written since the last arrive gives its destination no
    /// new value; ptxas coalesces it, and a wgmma taking it (CUTLASS's
    /// sparse metadata) needs no arrive (`tests/real/cutlass/sparse_*`).
    /// **R-pack-is-a-write**: a pack (`mov.b32 r, {h0, h1}`) into an
    /// accumulator register is a new value, halves unchanged or not
    /// (`c7519_f16acc_pack_after_fence_*`).
    fn plain_touches(
        &self,
        bx: &mut BlockCx,
        st: &mut State,
        i: Inst,
        acc: &Access,
        sunk_kill: bool,
    ) {
        let d = &self.f.insts[i];
        let tensor = |r: &VReg| self.tables.kinds.tensor(*r);
        // Only watched registers are asked about (`inst_regs`).
        let watched = |r: &VReg| self.tables.regs.watched(*r);
        st.read_touched
            .extend(acc.uses.iter().copied().filter(tensor));
        for r in &acc.defs {
            bx.block_wgmma_defs.remove(*r);
        }
        let plain_copy = self.mode == Mode::Ptxas
            && &*d.name == "mov"
            && d.guard.is_none()
            && !acc.uses.is_empty()
            && d.slots.iter().all(|s| !matches!(s.op, Operand::Imm(_)))
            && acc
                .uses
                .iter()
                .all(|u| !st.touched.contains(u) && !tensor(u))
            && !(is_pack(d) && acc.defs.iter().any(tensor));
        // ptxas sinks the kill past the wait, so it touches nothing before
        // the next wgmma; ISA-strict mode waits before the write instead,
        // which then needs the arrive like any other write.
        // (The ISA still wants a fence between the write and a later wgmma
        // that reads it: R-undefined-arrive announces it.)
        let sunk = sunk_kill && self.mode == Mode::Ptxas;
        // The ISA still wants a fence between the copy and a wgmma taking
        // its destination: R-undefined-arrive notes it.
        if sunk || plain_copy {
            st.read_touched
                .extend(acc.defs.iter().copied().filter(watched));
        }
        if sunk || plain_copy {
            return;
        }
        for &r in acc.defs.iter().filter(|r| watched(r)) {
            if tensor(&r) || st.wgmma_since_arrive {
                st.touched.insert(r);
            } else {
                st.read_touched.insert(r);
            }
        }
    }
}

/// Whether `d` packs registers into one (`mov.b32 r, {h0, h1}`).
fn is_pack(d: &InstData) -> bool {
    d.slots
        .iter()
        .any(|s| s.role == Role::Use && matches!(s.op, Operand::Vector(_)))
}

/// How a call moves the state: the callee's body ends ptxas's block and
/// its arrive (R-call-ends-block; its stage was closed by the rules).
fn call_transfer(bx: &mut BlockCx, st: &mut State) {
    st.touched.clear();
    st.no_arrive = true;
    st.block_no_arrive = true;
    bx.restore_arrive = false;
    bx.fresh_arrive = false;
}

/// What the walk reads of a function besides the analyses: made apart
/// from them, so that the two can be made at once (`super::prepare`).
pub(super) struct Tables {
    /// The wgmma, in layout order (what the edits' conflict index reads:
    /// `conflicts::Writers`).
    pub(super) wgmmas: Vec<Inst>,
    /// For each register, the accumulator sets containing it.
    pub(super) reg_sets: SetsOfReg,
    /// For each register, whether it is in a set and whether of the
    /// tensor class.
    pub(super) kinds: RegKinds,
    /// Each instruction's registers, and which ones a rule may ask about.
    pub(super) regs: InstRegs,
    /// Accumulator sets holding a register some wgmma reads as an A fragment.
    pub(super) fragment_sets: FxHashSet<AccumSet>,
    /// Whether a `wgmma.wait_group` of the user's comes earlier in ptxas's
    /// block order (R-block-order): ptxas's refusal
    /// (R-refuse-after-user-wait) also follows that order, not only paths
    /// (`heldout5_37`: an exit block laid out after the main path's wait;
    /// `c7517_c7514_refusal_follows_block_order`: a block placed after the
    /// `ret` that runs first is not refused by the wait of the block it
    /// branches to).
    pub(super) wait_above: SecondaryMap<Inst, bool>,
    /// Each instruction's index in its block.
    pub(super) pos: SecondaryMap<Inst, u32>,
    /// Registers of a wgmma with no arrive before it in its block: only these
    /// need to stay in `touched` / `read_touched` / `shapes` across blocks.
    pub(super) exposed: SecondaryMap<VReg, bool>,
    /// Accumulator registers that may be in flight (`budget::in_flight_budget`).
    pub(super) budget: usize,
}

impl Tables {
    /// The tables of `f`, with phase 85's `sets`, under `-maxrregcount`.
    pub(super) fn compute(
        f: &Function,
        (cfg, dt): (&ControlFlowGraph, &DominatorTree),
        sets: &AccumSetPool,
        maxrregcount: Option<u32>,
    ) -> Tables {
        let reg_sets = sets_of_reg(f, sets);
        let kinds = RegKinds::new(f, &reg_sets);
        let regs = InstRegs::compute(f, &kinds);
        // One pass over the layout, from the tables just made (not the
        // instructions: see `InstRegs::compute`).
        let mut fragment_sets = FxHashSet::default();
        let mut pos = ori_ir::sized_map(f.insts.len());
        let mut exposed = ori_ir::sized_map(f.vregs.len());
        let mut wgmmas = Vec::new();
        for &b in f.layout.blocks() {
            let mut arrived = false;
            for (k, &i) in f.layout.block_insts(b).iter().enumerate() {
                pos[i] = k as u32;
                let op = regs.opcode(i);
                if op == Opcode::WgmmaMmaAsync {
                    wgmmas.push(i);
                    for &r in regs.frags(i) {
                        fragment_sets.extend(reg_sets[r].iter().copied());
                    }
                    // Registers of a wgmma with no arrive before it in its
                    // block.
                    if !arrived {
                        for &r in regs.accs(i).iter().chain(regs.frags(i)) {
                            exposed[r] = true;
                        }
                    }
                }
                arrived |= op.is_arrive();
            }
        }
        let mut wait_above = ori_ir::sized_map(f.insts.len());
        let mut waited = false;
        for b in crate::block_order::ptxas_block_order(f, cfg, dt) {
            for &i in f.layout.block_insts(b) {
                wait_above[i] = waited;
                waited |= regs.opcode(i) == Opcode::WgmmaWaitGroup;
            }
        }
        Tables {
            wgmmas,
            reg_sets,
            kinds,
            regs,
            fragment_sets,
            wait_above,
            pos,
            exposed,
            budget: super::budget::in_flight_budget(f, maxrregcount),
        }
    }
}

impl<'a> Walker<'a> {
    /// The wgmma in layout order, the rest of the walker freed.
    pub(super) fn into_wgmmas(self) -> Vec<Inst> {
        self.tables.wgmmas
    }

    /// The walker of `f`, with phase 85's `sets`, the tables made of them
    /// and the analyses `an`.
    pub(super) fn new(
        f: &'a Function,
        sets: &'a AccumSetPool,
        tables: Tables,
        an: &'a Analyses,
        module: &'a ori_ir::ModuleInfo,
        mode: Mode,
    ) -> Walker<'a> {
        Walker {
            f,
            sets,
            tables,
            an,
            module,
            mode,
            spare_counts: Default::default(),
            hoisted: SecondaryMap::new(),
            copy_shapes: std::cell::RefCell::new(CopyShapes::new(f.insts.len())),
        }
    }
}
