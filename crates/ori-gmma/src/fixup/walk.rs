//! The primary fixup's walk over one block (seed 003: `sub_ADEB40`): the
//! transfer function of [`State`] and, at each instruction, the rules that
//! decide an injection or a serialization, asked in one stated order.
//!
//! `solve` runs the walk over each block in the fixpoint: its first pass
//! records the first visits' decisions, its later rounds use a scratch
//! [`Plan`] that is thrown away (only the state out of the block matters);
//! then the converged states are visited to decide. The state depends on
//! the plan in one place only (R-first-visit's covered read,
//! [`Plan::state_from_plan`]), which the solver checks for.

use super::analyses::Analyses;
use super::inst_regs::InstRegs;
use super::plan::{Close, Plan, Seen, WaitAt};
use super::rules::{Mode, RuleId};
use super::state::{add_all, set_shape, shape_of, wgmma_shape, ArriveAt, State};
use cranelift_entity::packed_option::ReservedValue;

use cranelift_entity::{EntityRef, SecondaryMap};
use fxhash::FxHashSet;
use ori_ir::{
    AccumSet, AccumSetPool, Block, FuncKind, Function, Inst, InstData, Opcode, Operand, RegClass,
    VReg,
};
use smallvec::SmallVec;

/// The set id standing for the dummy wgmma of an empty group (no registers).
/// How many wgmma of one stage into one set make a chain
/// (R-kill-after-chain): the stage's issues are counted up to this.
const CHAIN: usize = 2;

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
    copy_shapes: std::cell::RefCell<CopyShapes>,
}

/// `Walker::copy_shape`'s answers, by instruction: a table of one word per
/// instruction (0: not asked yet; [`CopyShapes::NONE`]: not a copy that
/// sinks; `k`: `found[k - 1]`) read in the walk's own order, where a hash
/// map of the answers cost one cache miss per visit of every plain
/// instruction (a third of the walk's time on the generated 1M matmul).
struct CopyShapes {
    at: SecondaryMap<Inst, u32>,
    found: Vec<CopyShape>,
}

impl CopyShapes {
    const NONE: u32 = u32::MAX;

    fn get(&self, i: Inst) -> Option<Option<&CopyShape>> {
        match self.at[i] {
            0 => None,
            CopyShapes::NONE => Some(None),
            k => Some(self.found.get(k as usize - 1)),
        }
    }

    fn insert(&mut self, i: Inst, shape: Option<CopyShape>) {
        self.at[i] = match shape {
            None => CopyShapes::NONE,
            Some(s) => {
                self.found.push(s);
                self.found.len() as u32
            }
        };
    }
}

/// A copy of an accumulator: (destinations, source, where it is made,
/// whether that is the user's `wait_group 0`).
type CopyShape = (SmallVec<[VReg; 4]>, VReg, Inst, bool);

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
struct BlockCx {
    b: Block,
    /// A wgmma since the last commit or wait, in this ptxas block.
    block_wgmma: bool,
    /// An arrive after the last plain instruction, in this ptxas block.
    fresh_arrive: bool,
    /// Destination sets of the open stage's wgmma, one entry per wgmma.
    block_issues: SmallVec<[AccumSet; 8]>,
    /// A-fragment registers of the wgmma earlier in this PTX block.
    block_fragments: FxHashSet<VReg>,
    /// Accumulator registers a wgmma earlier in this PTX block wrote, with
    /// the number of wgmma that wrote each.
    block_wgmma_defs: RegCounts,
    /// A loop header that forgot an arrive R-arrive-kept would keep: the
    /// arrive still holds after the block unless a call intervened.
    restore_arrive: bool,
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
    fn incr(&mut self, r: VReg) {
        if self.counts[r] == 0 {
            self.touched.push(r);
        }
        self.counts[r] += 1;
    }

    fn get(&self, r: VReg) -> u32 {
        self.counts.get(r).copied().unwrap_or(0)
    }

    fn remove(&mut self, r: VReg) {
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
    fn close_stage(&mut self) {
        self.block_wgmma = false;
        self.block_issues.clear();
    }
}

/// A plain instruction's register accesses, as ptxas sees them.
struct Access {
    defs: SmallVec<[VReg; 8]>,
    /// Reads, with a guarded instruction's definitions (a predicated write
    /// keeps the old value where the guard is false) and the accumulators
    /// behind live copies.
    uses: SmallVec<[VReg; 8]>,
    /// Every set in flight before the instruction.
    all: SmallVec<[AccumSet; 4]>,
    /// A register read of an open (uncommitted) set.
    read_open: Option<VReg>,
    /// A register read of any set in flight.
    read_any: Option<VReg>,
    /// Whether the instruction writes a register of a set in flight.
    defines_acc: bool,
    /// A pure read of the open stage with more wgmma of the stage to come.
    between: Option<VReg>,
}

/// Precedence of the rules for a plain instruction that reads an
/// accumulator in flight, stated once: the first rule that applies decides.
const READ_RULES: [RuleId; 7] = [
    RuleId::ReadBeforeRmw,
    RuleId::ReadBetweenWgmma,
    RuleId::UndefinedWrite,
    RuleId::ReadUnsureGroup,
    RuleId::DivergentStoreRun,
    RuleId::RefuseAfterUserWait,
    RuleId::WaitBeforeRead,
];

impl Walker<'_> {
    /// One walk over block `b` from `st`; records decisions in `plan`.
    pub(super) fn walk_block(&self, b: Block, mut st: State, plan: &mut Plan) -> State {
        let mut bx = self.enter_block(b, &mut st);
        let join_wait = self.join_needs_wait(b, &st);
        let last = self.f.layout.block_insts(b).last().copied();
        for &i in self.f.layout.block_insts(b) {
            let d = &self.f.insts[i];
            let at_branch = Some(i) == last && d.opcode == Opcode::Branch;
            if join_wait && at_branch && !st.mixed.is_empty() && !st.pipe.is_empty() {
                plan.wait(i, Close::for_open(&st.pipe), None, RuleId::JoinWaitLevels);
                st.retire_all();
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
                Opcode::Return => self.on_return(&bx, &mut st, plan, i),
                Opcode::Call => self.on_call(&mut bx, &mut st, plan, i),
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

    /// A wait an earlier visit decided before `i` stands on every later
    /// visit (R-first-visit), so where a back edge brings wgmmas open to it
    /// they are committed first, as [`Plan::wait`] upgrades a recorded wait
    /// (fuzz input `ok-hazard-unannounced-1331bb41`: a write and a read at a
    /// loop's top, the read's wait decided on the first visit, the loop's
    /// last wgmma open round the back edge). Only the edit changes: the
    /// decisions stay those of the visits (`heldout3_19` keeps its C7514
    /// from the converged state). Waits hoisted out of divergent code are
    /// made where they go (`make_hoisted_waits`).
    fn keep_recorded_wait(&self, st: &State, plan: &mut Plan, i: Inst) {
        if st.pipe.open.is_empty() || super::apply::hoist_to_uniform(self.f, self.an, i) != i {
            return;
        }
        plan.wait(i, Close::CommitBatch, None, RuleId::WaitBeforeRead);
    }

    /// **R-hoisted-wait-retires**: a wait hoisted out of divergent code to
    /// the end of uniform block `b` (`apply::hoist_to_uniform`) runs on
    /// every path out of `b`, so the groups it retires are retired at the
    /// join after the divergent code too: ptxas names the divergent reader
    /// once and waits for nothing more after the join
    /// (`c7517_divergent_read_after_loop_one_wait`). Made before `b`'s last
    /// instruction, where the edit puts it, naming the reader.
    fn make_hoisted_waits(&self, bx: &mut BlockCx, st: &mut State, plan: &mut Plan, b: Block) {
        for w in &self.hoisted[b] {
            // The stage open here is committed first, whatever the reader
            // saw below: a user's commit in the divergent code comes after
            // this point (fuzz input `ok-hazard-strict-df523a77`).
            let close = Close::for_open(&st.pipe);
            if close == Close::CommitBatch {
                bx.close_stage();
            }
            plan.wait(w.at, close, w.line, w.rule);
        }
        st.retire_all();
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
        }
    }

    /// **R-join-wait-levels.** Entered from uniform arms that each end in a
    /// wait of their own, at different levels: unless a read needs it
    /// first, ptxas waits at the end of this block, naming its branch
    /// (`heldout4_30`). With a wait on one side only, reads here are C7514
    /// instead (R-read-unsure-group).
    fn join_needs_wait(&self, b: Block, st: &State) -> bool {
        let f = self.f;
        let arm_waits = |p: &Block| {
            self.an.cfg.preds(*p).len() == 1
                && f.layout
                    .block_insts(*p)
                    .iter()
                    .any(|i| f.insts[*i].opcode == Opcode::WgmmaWaitGroup)
        };
        self.an.cfg.preds(b).len() > 1
            && !self.an.loops.header[b]
            && !st.mixed.is_empty()
            && !st.divergent_wait
            && self.an.cfg.preds(b).iter().all(arm_waits)
            && self.unwaited_use_after(b, &st.pipe.all())
    }

    /// **R-empty-group**'s arrive: the dummy wgmma of an empty group gets one
    /// when no arrive came since the start of its block (R-arrive-missing,
    /// without R-arrive-kept: generated pipeline `g1113`)
    /// or an accumulator register was written since the last arrive
    /// (`c7517_c7519_rmw_last_before_commit`); a plain instruction alone
    /// does not need it (`clean_empty_commits_after_plain_write`: a second
    /// and a third commit after the fence's group, with a store and a
    /// write of another register between, get no arrive).
    fn touched_needs_arrive(&self, st: &State) -> bool {
        st.touched.iter().any(|r| self.tables.kinds.tensor(*r))
    }

    /// **R-divergent-arrive** holds in kernels only: in a `.func` compiled
    /// as a function of its own (`-c`), ptxas 13.0.88 injects an arrive in
    /// divergent code (C7519) where a kernel serializes (C7520), for a wgmma,
    /// an empty group's dummy wgmma and a fence in divergent code alike
    /// (`c7519_func_divergent_*`); waits in divergent code still serialize
    /// there (C7518). Without `-c` a device function is compiled inlined
    /// into its kernels, so the kernel's rule applies
    /// (`c7520_inlined_callee_divergent_empty_commit`).
    fn arrives_check_divergence(&self) -> bool {
        self.f.kind == FuncKind::Entry || !self.module.compile_only
    }

    /// **R-arrive-kept**: ptxas forgets the arrive at a block boundary it
    /// keeps, unless no wgmma was issued since the arrive and block `b` is
    /// control-equivalent to the arrive's block (dominated by it and
    /// post-dominating it) and outside every run-time loop (a fence inside a
    /// loop does not serve a wgmma after it: generated pipeline `g1013`): a
    /// fence before a spin loop still serves the
    /// wgmma after the loop (`clean_fence_then_loop_then_wgmma`), not one
    /// in a branch arm (`c7519_mma_in_uniform_branch`) nor a second wgmma
    /// after the loop (`heldout5_30`).
    /// A loop header forgets it for its own instructions all the same
    /// (ptxas knows the back edge on its first visit:
    /// `c7519_loop_mma_fence_outside`,
    /// `c7519_loop_header_arrive_then_divergent_fence`), and passes it on
    /// when nothing in it used it (`restore_arrive`).
    fn arrive_kept(&self, b: Block, st: &State) -> bool {
        let ArriveAt::At(a) = st.arrive_block else {
            return false;
        };
        !st.no_arrive
            && !st.wgmma_since_arrive
            && !self.an.loops.runtime[a]
            && self.an.dt.dominates(a, b)
            && self.an.uni.post_dominates(b, a, 64)
    }

    /// A fence (or an injected arrive) orders everything before it.
    fn on_arrive(&self, bx: &mut BlockCx, st: &mut State, i: Inst) {
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
        self.wgmma_arrive(bx, st, plan, i, &accs);
        self.wgmma_transfer(bx, st, plan, i, &accs);
    }

    /// **R-overlapping-sets** and **R-fragment-from-wgmma**.
    fn wgmma_register_failures(&self, st: &State, plan: &mut Plan, i: Inst, accs: &[VReg]) {
        // Accumulator sets that overlap an in-flight one without starting at
        // the same register cannot be allocated in place (`heldout5_22`: n16
        // {f0..f7} then n32 {f4..f19}). Sets are compared by their lowest
        // register (sets are sorted by register id): CUTLASS writes its
        // accumulator vectors in descending order (`{%f2930, ..., %f2867}`),
        // so the first operand is not where the set starts.
        let flying = st.pipe.all();
        let lowest = accs.iter().min();
        let misaligned = accs.iter().any(|r| {
            self.tables.reg_sets[*r].iter().any(|s| {
                flying.contains(s) && self.sets.get(*s).and_then(|set| set.first()) != lowest
            })
        });
        if misaligned {
            let rule = RuleId::OverlappingSets;
            plan.fail(rule, Some(i), accs.first().copied(), st.last_wgmma);
        }
        // An A fragment a wgmma wrote since the last arrive: no injected
        // arrive can order it (`heldout5_28`, fixed only by wait + fence).
        let frag_from_wgmma = self
            .tables
            .regs
            .frags(i)
            .iter()
            .copied()
            .find(|r| self.hits(*r, &st.wgmma_sets_since_arrive));
        if let Some(r) = frag_from_wgmma {
            plan.fail(RuleId::FragmentFromWgmma, Some(i), Some(r), st.last_wgmma);
        }
    }

    /// A wgmma overwriting an accumulator whose old value lives on in a
    /// copy: the copy must be made first. In a committed group ptxas waits
    /// before this wgmma (**R-wait-before-copied-overwrite**); in the open
    /// stage it cannot (**R-copied-overwrite-in-stage**).
    fn wgmma_over_copy(&self, st: &mut State, plan: &mut Plan, i: Inst, accs: &[VReg]) {
        let all = st.pipe.all();
        let copied = st
            .aliases
            .iter()
            .map(|(_, s)| *s)
            .find(|s| accs.contains(s) && self.hits(*s, &all));
        let Some(src) = copied else { return };
        if self.hits(src, &st.pipe.open) {
            let rule = RuleId::CopiedOverwriteInStage;
            plan.fail(rule, Some(i), Some(src), st.last_wgmma);
        } else {
            plan.wait(i, Close::Nothing, None, RuleId::WaitBeforeCopiedOverwrite);
            st.retire_all();
            // The copy, made here, reads the register just before this
            // wgmma overwrites it: the ISA wants a fence between, ptxas
            // gives none.
            st.read_touched.insert(src);
        }
        st.aliases.retain(|(_, s)| !accs.contains(s));
    }

    /// **R-arrive-after-write**, **R-arrive-missing**, **R-divergent-arrive**
    /// and **R-undefined-arrive**: whether this wgmma needs an arrive.
    fn wgmma_arrive(
        &self,
        bx: &mut BlockCx,
        st: &mut State,
        plan: &mut Plan,
        i: Inst,
        accs: &[VReg],
    ) {
        let d = &self.f.insts[i];
        let mut regs: SmallVec<[VReg; 8]> = accs.iter().copied().collect();
        regs.extend(self.tables.regs.frags(i).iter().copied());
        // A write of any accumulator register after a wgmma of this arrive's
        // stage also needs a new arrive, whatever registers the next wgmma
        // uses (`heldout4_38`: an add into D between D's last wgmma and E's).
        let touched = regs.iter().any(|r| st.touched.contains(r))
            || (st.wgmma_since_arrive && st.touched.iter().any(|r| self.tables.kinds.tensor(*r)));
        // What the ISA also orders and ptxas 13.0.88 does not: a plain read
        // of the registers since the last arrive, or an accumulator last used
        // by a wgmma of another shape ("except when these are accumulator
        // register accesses across multiple wgmma.mma_async instructions of
        // the same shape").
        let shape = wgmma_shape(d);
        let isa_only = !(st.no_arrive || touched)
            && (regs.iter().any(|r| st.read_touched.contains(r))
                || accs
                    .iter()
                    .any(|r| shape_of(&st.shapes, *r).is_some_and(|s| s != shape)));
        let arrived = |bx: &mut BlockCx, st: &mut State| {
            st.touched.clear();
            st.read_touched.clear();
            st.shapes.clear();
            bx.fresh_arrive = true;
            st.arrive_block = ArriveAt::At(bx.b);
        };
        if isa_only {
            if plan.record(Seen::UbArrive, i) {
                plan.ub_arrives.push(i);
            }
            if RuleId::UndefinedArrive.injects_in(self.mode) {
                arrived(bx, st);
            }
        }
        if st.no_arrive || touched {
            let divergent = self.an.uni.inst_is_divergent(bx.b, i) || st.divergent_fence;
            // R-first-visit: an arrive decided here on the first visit
            // stands; the converged state's divergent fence round the back
            // edge does not take it back (`c7519_loop_header_arrive_then_
            // divergent_fence`).
            if divergent && self.arrives_check_divergence() && !plan.has_arrive(i) {
                plan.fail(RuleId::DivergentArrive, Some(i), None, None);
            } else if st.no_arrive {
                plan.arrive(i, RuleId::ArriveMissing);
            } else {
                plan.arrive(i, RuleId::ArriveAfterWrite);
            }
            arrived(bx, st);
            st.no_arrive = false;
            st.block_no_arrive = false;
        }
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
        if self.in_flight_exceeds(st, self.tables.budget) {
            plan.fail_budget(i);
        }
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
        }
        // R-empty-group: a commit with no wgmma before it in its own block.
        let empty_group = op == Opcode::WgmmaCommitGroup && !bx.block_wgmma;
        if empty_group && plan.first(Seen::EmptyCommit, i) {
            plan.empty_commits.push(i);
        }
        if op.is_commit()
            && !bx.block_wgmma
            && (st.block_no_arrive || self.touched_needs_arrive(st))
        {
            if (divergent || st.divergent_fence) && self.arrives_check_divergence() {
                plan.fail(RuleId::DivergentArrive, Some(i), None, None);
            } else {
                plan.arrive(i, RuleId::EmptyGroup);
            }
            bx.fresh_arrive = true;
            st.arrive_block = ArriveAt::At(bx.b);
            st.touched.clear();
            st.no_arrive = false;
            st.block_no_arrive = false;
        }
        // R-wait-closes-stage: ptxas closes a stage left open at a wait (the
        // last HGMMA carries gsb0, `attempt_c7516_no_commit`); ori writes
        // the commit out.
        if op.is_wait() && !st.pipe.open.is_empty() && plan.record(Seen::ImplicitCommit, i) {
            plan.implicit_commits.push(i);
        }
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

    /// **R-wait-at-exit**: nothing may stay in flight past the exit.
    fn on_return(&self, bx: &BlockCx, st: &mut State, plan: &mut Plan, i: Inst) {
        if st.pipe.is_empty() {
            return;
        }
        if st.divergent_wait && !st.mixed.is_empty() {
            // In flight here only on the paths that skipped a divergent
            // wait: the exit wait depends on it (probe d2).
            let rule = RuleId::ReadAfterDivergentWait;
            plan.fail(rule, Some(i), None, st.last_wgmma);
            return;
        }
        if self.f.layout.block_insts(bx.b)[0] == i {
            plan.bare_exit(bx.b, i);
        } else {
            plan.wait(i, Close::for_open(&st.pipe), None, RuleId::WaitAtExit);
        }
        st.retire_all();
    }

    /// A call: ptxas inlines a defined callee (without `-c`), whose body
    /// reads the arguments at the call's line.
    fn on_call(&self, bx: &mut BlockCx, st: &mut State, plan: &mut Plan, i: Inst) {
        let d = &self.f.insts[i];
        let callee = d.slots.iter().find_map(|s| match &s.op {
            Operand::Sym(n) => Some(&**n),
            _ => None,
        });
        let info = callee.and_then(|n| self.module.funcs.get(n).copied());
        let defined = matches!(info, Some((true, _)));
        let inlined = defined && !self.module.compile_only;
        let all = st.pipe.all();
        let passes_in_flight = self
            .tables
            .regs
            .uses(i)
            .iter()
            .copied()
            .find(|r| self.hits(*r, &all));
        let unsure = passes_in_flight.filter(|r| {
            st.partial_wait
                || self.tables.reg_sets[*r]
                    .iter()
                    .any(|s| st.mixed.contains(s))
        });
        if let Some(r) = unsure.filter(|_| defined) {
            // As for a plain read: ptxas does not strengthen a partial wait
            // for the inlined callee's reads (`heldout3_24`).
            plan.fail(
                RuleId::CallAfterPartialWait,
                Some(i),
                Some(r),
                st.last_wgmma,
            );
        } else if passes_in_flight.is_some() && inlined {
            let close = Close::for_open(&st.pipe);
            if close == Close::CommitBatch {
                bx.close_stage();
            }
            plan.wait(i, close, None, RuleId::WaitAtCall);
            st.retire_all();
        }
        if !inlined {
            // R-extern-call: inside an open stage ptxas answers C7520.
            let rule = if st.pipe.open.is_empty() {
                RuleId::ExternCall
            } else {
                RuleId::ExternCallInStage
            };
            plan.fail(rule, Some(i), None, None);
        } else if info == Some((true, true)) {
            // R-call-crosses-pipeline: ptxas inlines the callee, whose commits
            // and waits close this block's stage, so a commit after the call
            // is empty (`c7510_call_pipeline_func_inside_pipeline`).
            let rule = RuleId::CallCrossesPipeline;
            plan.fail(rule, Some(i), None, st.last_wgmma);
            bx.close_stage();
        } else {
            // R-call-ends-block: the inlined body ends ptxas's block even
            // when it has no pipeline, so a commit right after the call
            // closes an empty group (`c7519_commit_after_inlined_call`).
            bx.close_stage();
        }
        st.touched.clear();
        st.no_arrive = true;
        st.block_no_arrive = true;
        bx.restore_arrive = false;
        bx.fresh_arrive = false;
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
        if self.copy_rule(bx.b, st, plan, i, &acc) {
            return;
        }
        let (failed, sunk_kill) = self.kill_rules(bx, st, plan, i, &acc);
        let waited = self.read_rules(bx, st, plan, i, &acc);
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
        let read_any = uses.iter().copied().find(|r| self.hits(*r, &all));
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

    /// **R-copy-propagation** and **R-unpack-sinks-to-wait**: a copy of an
    /// in-flight accumulator is no read; ori moves it down to where its
    /// value is first needed. Returns whether the instruction was one.
    fn copy_rule(&self, b: Block, st: &mut State, plan: &mut Plan, i: Inst, acc: &Access) -> bool {
        let d = &self.f.insts[i];
        let copy = self
            .copy_shape(b, i)
            .filter(|(_, s, _, _)| self.hits(*s, &acc.all));
        let Some((dsts, src, end, to_wait)) = copy else {
            return false;
        };
        let rule = if to_wait {
            RuleId::UnpackSinksToWait
        } else {
            RuleId::CopyPropagation
        };
        if plan.record(Seen::CopySink, i) {
            plan.copy_sinks.push((i, end, rule));
        }
        if to_wait {
            // A copy whose value lives out of the block sinks to the user's
            // `wait_group 0`, and a wait is injected before it there (two
            // WARPGROUP.DEPBAR in the SASS); C7517 names the line of the
            // instruction just before the user's wait.
            let line = self.line_before(b, end).unwrap_or(d.line);
            plan.wait(end, Close::for_open(&st.pipe), Some(line), rule);
        }
        for dst in dsts {
            st.aliases.push((dst, src));
            st.read_touched.insert(dst);
        }
        true
    }

    /// Where the copy `i` (if it is one: `accumulator_copy`) must be
    /// made, found once per run: its destinations, its source, the
    /// instruction it sinks to and whether that is the user's
    /// `wait_group 0`. The answer depends on the block's instructions only,
    /// and the walk asks on every visit (a Triton f16-accumulator epilogue
    /// unpacks every accumulator register, each a scan down its block).
    fn copy_shape(&self, b: Block, i: Inst) -> Option<CopyShape> {
        if let Some(known) = self.copy_shapes.borrow().get(i) {
            return known.cloned();
        }
        let shape = self.accumulator_copy(i).and_then(|(dsts, src)| {
            match self.copy_end(b, i, &dsts, src) {
                Some(end) => Some((dsts, src, end, false)),
                None => self
                    .retiring_wait_after(b, i, &dsts, src)
                    .map(|w| (dsts, src, w, true)),
            }
        });
        self.copy_shapes.borrow_mut().insert(i, shape.clone());
        shape
    }

    /// **R-kill-before-chain** and **R-kill-after-chain**: a write that
    /// kills an accumulator (its old value unread). Found on ptxas 13.0.88
    /// (probes n1, n3, n9, n13): when a later wgmma of the block takes the
    /// register as accumulator, C7511, even across commits and waits when a
    /// single wgmma wrote it (after two or more ptxas keeps the chain,
    /// `heldout3_30`); when no later wgmma does but two or more wgmma of the
    /// open stage chained into it, C7515; after a single wgmma, the write is
    /// moved past the wait and nothing is said. Returns (serialized here,
    /// the kill was sunk past a commit or wait of its block).
    fn kill_rules(
        &self,
        bx: &BlockCx,
        st: &State,
        plan: &mut Plan,
        i: Inst,
        acc: &Access,
    ) -> (bool, bool) {
        let b = bx.b;
        let kill_chain = acc.defs.iter().copied().find(|r| {
            bx.block_wgmma_defs.get(*r) == 1
                && !acc.uses.contains(r)
                && self.wgmma_later_in_block_using(b, i, *r)
        });
        let kill_open = || {
            acc.defs
                .iter()
                .copied()
                .find(|r| self.hits(*r, &st.pipe.open) && !acc.uses.contains(r))
        };
        let fail = |plan: &mut Plan, rule, r| {
            plan.fail(rule, Some(i), Some(r), st.last_wgmma);
            (true, false)
        };
        if let Some(r) = kill_chain {
            return fail(plan, RuleId::KillBeforeChain, r);
        }
        let Some(r) = kill_open() else {
            return (false, false);
        };
        let chained = |s: &AccumSet| bx.block_issues.iter().filter(|x| *x == s).count() >= CHAIN;
        if self.wgmma_later_using(b, i, r) {
            fail(plan, RuleId::KillBeforeChain, r)
        } else if self.tables.reg_sets[r].iter().any(chained) {
            fail(plan, RuleId::KillAfterChain, r)
        } else {
            (false, self.sync_later_in_block(b, i))
        }
    }

    /// Whether `rule` of [`READ_RULES`] applies to the plain instruction
    /// `i`, and with which register and rule (R-read-unsure-group becomes
    /// R-read-after-divergent-wait when the wait was divergent).
    fn read_rule_applies(
        &self,
        rule: RuleId,
        bx: &BlockCx,
        st: &State,
        i: Inst,
        acc: &Access,
    ) -> Option<(RuleId, VReg)> {
        let in_any = |r: VReg, ids: &[AccumSet]| self.hits(r, ids);
        let committed = acc.read_any.filter(|_| acc.read_open.is_none());
        match rule {
            RuleId::ReadBeforeRmw => {
                let r = acc.between?;
                self.rmw_later(bx.b, i, &st.pipe.open)?;
                Some((rule, r))
            }
            RuleId::ReadBetweenWgmma => acc.between.map(|r| (rule, r)),
            // After a partial wait, a read of a set that a retired group also
            // wrote passes ptxas 13.0.88 unchecked, though a group still in
            // flight writes it too (`heldout_04`).
            RuleId::UndefinedWrite => committed
                .filter(|r| st.partial_wait && in_any(*r, &st.retired) && !in_any(*r, &st.mixed))
                .map(|r| (rule, r)),
            // A read of a group a partial wait left in flight, or one in flight
            // on some paths only (a wait in one arm of a branch).
            RuleId::ReadUnsureGroup => committed
                .filter(|r| st.partial_wait || in_any(*r, &st.mixed))
                .map(|r| match st.divergent_wait {
                    true => (RuleId::ReadAfterDivergentWait, r),
                    false => (rule, r),
                }),
            // ptxas turns a run of stores under one divergent predicate into
            // a branch around them (`heldout_26`; one store alone gets its
            // wait, C7517).
            RuleId::DivergentStoreRun => acc
                .read_any
                .filter(|_| self.an.uni.guard_is_divergent(i))
                .filter(|_| self.in_store_run(bx.b, i))
                .map(|r| (rule, r)),
            RuleId::RefuseAfterUserWait => acc
                .read_any
                .filter(|_| (st.user_waited || self.tables.wait_above[i]) && !acc.defines_acc)
                .map(|r| (rule, r)),
            RuleId::WaitBeforeRead => acc.read_any.map(|r| (rule, r)),
            _ => None,
        }
    }

    /// The first of [`READ_RULES`] that applies decides. Returns whether a
    /// wait now covers the instruction.
    fn read_rules(
        &self,
        bx: &mut BlockCx,
        st: &mut State,
        plan: &mut Plan,
        i: Inst,
        acc: &Access,
    ) -> bool {
        let Some((rule, r)) = READ_RULES
            .iter()
            .find_map(|&rule| self.read_rule_applies(rule, bx, st, i, acc))
        else {
            return false;
        };
        // R-first-visit: a wait decided here on the first visit stands, so
        // the converged visit sees the read covered
        // (`c7517_loop_commits_then_read_own_wait`: the back edge brings the
        // set retired by that very wait, which a fresh look would call in
        // flight on some paths only).
        if plan.has_wait(i) && matches!(rule, RuleId::ReadUnsureGroup) {
            plan.state_from_plan = true;
            let close = Close::for_open(&st.pipe);
            if close == Close::CommitBatch {
                bx.close_stage();
            }
            plan.wait(i, close, None, RuleId::WaitBeforeRead);
            st.retire_all();
            return true;
        }
        match rule {
            RuleId::ReadBeforeRmw | RuleId::WaitBeforeRead => {
                if self.wait_unplaceable(bx.b, st) {
                    let rule = RuleId::DivergentHoist;
                    plan.fail(rule, Some(i), Some(r), st.last_wgmma);
                    return false;
                }
                self.wait_before_read(bx, st, plan, i, acc, rule);
                true
            }
            RuleId::UndefinedWrite => {
                // The ISA-strict wait retires committed groups only: the
                // wgmmas still open here are committed first, as for a write
                // (`in_flight_write_rules`).
                let close = Close::for_open(&st.pipe);
                plan.undefined_write(i, r, close);
                let strict = rule.injects_in(self.mode);
                if strict && !self.strict_wait_placeable(plan, i, r, st) {
                    return false;
                }
                if strict {
                    if close == Close::CommitBatch {
                        bx.close_stage();
                    }
                    st.retire_all();
                    st.retired.clear();
                }
                strict
            }
            _ => {
                plan.fail(rule, Some(i), Some(r), st.last_wgmma);
                false
            }
        }
    }

    /// **R-divergent-hoist**: whether the wait for an instruction of block
    /// `b` cannot be placed. ptxas hoists the waits of divergent code to the
    /// end of the nearest uniform dominator; it serializes instead (C7518)
    /// when the climb there passes the divergent header of a run-time loop
    /// holding `b` (`c7518_divergent_loop_read_only`, `..._read_then_mma`),
    /// or when the wgmma last issued on the way lies below that point, in
    /// divergent code (`c7518_divergent_wgmma_then_read`). A read in a
    /// divergent branch of a stage issued in uniform code gets its hoisted
    /// wait (C7517).
    fn wait_unplaceable(&self, b: Block, st: &State) -> bool {
        let (uni, loops, dt) = (&self.an.uni, &self.an.loops, &self.an.dt);
        let (passed, target) = self.an.climb_to_uniform(b);
        if passed.iter().any(|h| loops.header[*h] && loops.runtime[*h]) {
            return true;
        }
        let Some(h) = target.filter(|_| !passed.is_empty()) else {
            return false;
        };
        let issued_below = |w: Inst| {
            self.f
                .layout
                .inst_block(w)
                .is_some_and(|wb| wb != h && uni.divergent_block[wb] && dt.dominates(h, wb))
        };
        st.last_wgmma.is_some_and(issued_below)
    }

    /// In ISA-strict mode, whether the wait the ISA wants before `i` has a
    /// legal place: not where ptxas could not hoist it to uniform code
    /// (R-divergent-hoist), where the only legal form left is the
    /// serialized one (ptxas 13.0.88 leaves the access as it is; this
    /// serialization is ori's, in ISA-strict mode only), nor where a wgmma
    /// may issue between that place and `i` (the hoisted wait would retire
    /// nothing of it: fuzz input `hazard-strict-db7824e8`).
    fn strict_wait_placeable(&self, plan: &mut Plan, i: Inst, r: VReg, st: &State) -> bool {
        let Some(b) = self.f.layout.inst_block(i) else {
            return true;
        };
        if !self.wait_unplaceable(b, st) && !self.wgmma_after_hoist(b, i) {
            return true;
        }
        plan.fail(RuleId::DivergentHoist, Some(i), Some(r), st.last_wgmma);
        false
    }

    /// **R-wait-before-read**, **R-read-before-rmw** (and
    /// **R-hoist-commit**, **R-rmw-twice**): a wait before the reader; in divergent code ptxas hoists it to uniform
    /// code but still names the reader's line.
    fn wait_before_read(
        &self,
        bx: &mut BlockCx,
        st: &mut State,
        plan: &mut Plan,
        i: Inst,
        acc: &Access,
        rule: RuleId,
    ) {
        // The same accumulator rewritten in place a second time in one chain
        // (after a wgmma that took the first rewrite): C7515 (`heldout5_33`;
        // other registers each time are fine).
        let in_place = || acc.defs.iter().copied().filter(|r| acc.uses.contains(r));
        if let Some(r) = in_place().find(|r| st.rmw_regs.contains(r)) {
            plan.fail(RuleId::RmwTwice, Some(i), Some(r), st.last_wgmma);
        }
        for r in in_place() {
            if self.tables.kinds.tensor(r) && !st.rmw_regs.contains(&r) {
                st.rmw_regs.push(r);
            }
        }
        let hoist = || {
            self.commit_after_reads(bx.b, i)
                .filter(|_| !acc.defines_acc)
        };
        let close = if st.pipe.open.is_empty() {
            Close::Nothing
        } else if let Some(c) = hoist() {
            Close::Hoist(c)
        } else {
            bx.close_stage();
            Close::CommitBatch
        };
        plan.wait(i, close, None, rule);
        st.retire_all();
    }

    /// **R-loop-carried-fragment** and **R-undefined-write**: a write to a
    /// register of a wgmma that may still be in flight, which no rule above
    /// handled: undefined behaviour by the PTX ISA ("accessing the
    /// accumulator register or the input register containing the fragments
    /// of matrix A ... without first performing a wgmma.wait_group ... is
    /// undefined behavior"), left alone by ptxas 13.0.88 unless it is an A
    /// fragment rewritten, in a run-time loop, after the wgmma of its own
    /// block that reads it (seed 003: "in the same basic block and after the
    /// WGMMA"): the next iteration's wgmma reads the same register, which
    /// ptxas cannot rename (C7513, `heldout2_13`; a load at the loop top is
    /// fine, `heldout_29`; ptxas is also clean when it unrolls the loop,
    /// which ori does not model).
    fn in_flight_write_rules(
        &self,
        bx: &mut BlockCx,
        st: &mut State,
        plan: &mut Plan,
        i: Inst,
        acc: &Access,
    ) {
        let all = st.pipe.all();
        let Some(r) = acc
            .defs
            .iter()
            .copied()
            .find(|r| self.hits(*r, &all) || st.a_frags.iter().any(|(x, _)| x == r))
        else {
            return;
        };
        let fragment = bx.block_fragments.contains(&r) && !self.tables.kinds.tensor(r);
        if fragment && self.an.loops.runtime[bx.b] {
            plan.fail(RuleId::LoopCarriedFragment, Some(i), Some(r), st.last_wgmma);
            return;
        }
        let close = Close::for_open(&st.pipe);
        plan.undefined_write(i, r, close);
        if RuleId::UndefinedWrite.injects_in(self.mode)
            && self.strict_wait_placeable(plan, i, r, st)
        {
            if close == Close::CommitBatch {
                bx.close_stage();
            }
            st.retire_all();
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
                .all(|u| !st.touched.contains(u) && !tensor(u));
        // ptxas sinks the kill past the wait, so it touches nothing before
        // the next wgmma; ISA-strict mode waits before the write instead,
        // which then needs the arrive like any other write.
        // (The ISA still wants a fence between the write and a later wgmma
        // that reads it: R-undefined-arrive announces it.)
        let sunk = sunk_kill && self.mode == Mode::Ptxas;
        if sunk {
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
    /// Whether a `wgmma.wait_group` of the user's comes earlier in the
    /// function's layout: ptxas's refusal (R-refuse-after-user-wait) also
    /// follows the file order, not only paths (`heldout5_37`: an exit block
    /// laid out after the main path's wait).
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
    pub(super) fn compute(f: &Function, sets: &AccumSetPool, maxrregcount: Option<u32>) -> Tables {
        let reg_sets = sets_of_reg(f, sets);
        let kinds = RegKinds::new(f, &reg_sets);
        let regs = InstRegs::compute(f, &kinds);
        // One pass over the layout, from the tables just made (not the
        // instructions: see `InstRegs::compute`).
        let mut fragment_sets = FxHashSet::default();
        let mut wait_above = ori_ir::sized_map(f.insts.len());
        let mut pos = ori_ir::sized_map(f.insts.len());
        let mut exposed = ori_ir::sized_map(f.vregs.len());
        let mut wgmmas = Vec::new();
        let mut waited = false;
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
                wait_above[i] = waited;
                waited |= op == Opcode::WgmmaWaitGroup;
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
            copy_shapes: std::cell::RefCell::new(CopyShapes {
                at: ori_ir::sized_map(f.insts.len()),
                found: Vec::new(),
            }),
        }
    }
}
