//! Phase 87, FixupGmmaSequence: make the wgmma pipeline legal, or serialize it.
//!
//! The orchestrator (seed 003: `sub_AE4F70`) runs the steps in ptxas's order,
//! and this file follows it:
//!
//! 1. **Primary fixup** (`sub_ADEB40`), `Walker::plan`: a forward dataflow
//!    over the CFG (loops included) with the in-flight state of phase 85
//!    plus what ptxas tracks beside it (`State`), deciding where a
//!    `_warpgroup.arrive` (before a wgmma whose registers were written since
//!    the last arrive) and a `_warpgroup.wait` (before an instruction that
//!    reads an accumulator still in flight) go (`Plan`). The failures it
//!    finds itself (calls, injections into divergent code: C7509, C7518,
//!    C7520) end its walk; the later checks' failures (C7510, C7511, C7513,
//!    C7514, C7515) keep what it decided, as ptxas prints those advisories.
//! 2. **Late checks**: accumulator registers in flight must fit (C7511),
//!    reads ptxas will not protect (C7514), fresh values joining a stage in
//!    flight (C7515, `Walker::check_plain_joins`), waits injected into
//!    loops ptxas unrolls (C7514, `loops`).
//! 3. **Apply** (`run_fixup`): advisories (C7519, then C7517, each in
//!    program order), ori's own notes on what the ISA calls undefined, the
//!    injections, and on failure the serialization fallback (`sub_AE47B0`,
//!    [`serialize`]): every wgmma gets its own arrive, commit and wait.
//!
//! ptxas's phase 87 sees optimized code, so the walk models what it can name
//! of that: blocks as ptxas keeps them (`block_merging`), copies it
//! propagates, reads it schedules below a read-modify-write, callees it
//! inlines, guarded GMMA ops it branches around (front end). Every rule was
//! found on ptxas 13.0.88 and has a corpus case; `tests/corpus/README.md`
//! lists them (rules 1-31) and where ori still differs.

use crate::block_merging::PtxasBlocks;
use crate::in_flight::PipeState;
use crate::messages;
use crate::uniformity::Uniformity;
use cranelift_entity::SecondaryMap;
use fxhash::FxHashSet;
use ori_ir::consts::*;
use ori_ir::{
    Block, ControlFlowGraph, Diagnostic, Function, Inst, InstData, Note, Opcode, Operand, Pass,
    PassContext, Severity, Slot, VReg,
};
use smallvec::SmallVec;

/// Most accumulator registers that may be in flight at once before ptxas
/// gives up with C7511. Bounds observed on ptxas 13.0.88: 128 in flight
/// compile clean (one `m64n256k16.f32`, or 32 `n8` sets), 256 serialize.
pub const MAX_IN_FLIGHT_ACCUMULATOR_REGS: usize = 240;

/// Registers of the per-thread limit the pipeline cannot use for
/// accumulators in flight: the default budget (240) is 15 under ptxas's
/// 255-register ceiling, and the same margin fits every limit observed
/// (R-budget-under-limit: `.maxnreg 128` with two 64-register sets in
/// flight is C7511 in `tests/real/triton*/maxnreg128_mm_*`; one 128-register
/// set under `.maxnreg 168` or `-maxrregcount=168`, and 64 under `.maxnreg
/// 96`, are fine).
pub const LIMIT_MARGIN: usize = 15;

/// The accumulator registers that may be in flight in `f` under `.maxnreg`
/// and `-maxrregcount` (the lower of the two, when set).
/// The per-thread register limit the wgmma code runs under: the lower of
/// `.maxnreg` and `-maxrregcount`, raised to the largest
/// `setmaxnreg.inc` of the function (R-setmaxnreg: warp-specialized
/// kernels declare a small `.maxnreg` for their producer warps and raise
/// the consumers' with `setmaxnreg.inc` before their wgmma; Triton's `ws_*`
/// kernels, `.maxnreg 168` and `setmaxnreg.inc 232/256`, compile clean).
fn register_limit(f: &Function, maxrregcount: Option<u32>) -> Option<u32> {
    let limit = [f.max_regs, maxrregcount].into_iter().flatten().min()?;
    let raised = f
        .layout
        .all_insts()
        .filter(|i| &*f.insts[*i].name == "setmaxnreg" && f.insts[*i].has_mod("inc"))
        .filter_map(|i| match f.insts[i].slots.first().map(|s| &s.op) {
            Some(Operand::Imm(n)) => n.as_i64().and_then(|n| u32::try_from(n).ok()),
            _ => None,
        })
        .max();
    Some(raised.map_or(limit, |r| r.max(limit)))
}

/// **R-function-pressure** (C7512, seed 003 case 4: "the function's
/// overall register pressure"): under `.maxnreg` / `-maxrregcount`, the
/// accumulator and A-fragment registers live at once (backward liveness,
/// [`max_live`]) plus the 26 a wgmma needs beside its accumulators
/// (`register_budget`) must fit the limit. Found on
/// `tests/real/triton*/maxnreg128_attn_fwd_*`: S 32, O 64 and P 16 live
/// together, with 26 that is 138, over 128. The serialized form of
/// `c7511_maxrreg200_2x_n256` (two n256 sets, 282 over 200) is C7512 too;
/// one n256 set under 168 (154) is not (`attempt_c7512_maxrreg168_n256`).
/// Checked after the walk, so the budget's C7511 comes first; a wgmma that
/// does not fit at all is C7602's.
fn over_function_limit(
    f: &Function,
    sets: &[SmallVec<[VReg; 8]>],
    maxrregcount: Option<u32>,
) -> bool {
    if in_flight_budget(f, maxrregcount) == usize::MAX {
        return false;
    }
    let Some(limit) = register_limit(f, maxrregcount) else {
        return false;
    };
    let mut tracked: FxHashSet<VReg> = sets.iter().flatten().copied().collect();
    for i in f.layout.all_insts() {
        let d = &f.insts[i];
        if d.opcode == Opcode::WgmmaMmaAsync {
            tracked.extend(a_fragment_regs(d));
        }
    }
    max_live(f, &tracked) as u32 + crate::register_budget::WGMMA_REGISTER_OVERHEAD > limit
}

/// The most registers of `tracked` live at once anywhere in `f` (backward
/// liveness to the fixpoint, then one scan of each block). Warp-specialized
/// kernels give each role its own accumulator registers, which are never
/// live together (Triton's `ws_tma_device_*`: two 128-register sets, clean).
fn max_live(f: &Function, tracked: &FxHashSet<VReg>) -> usize {
    let cfg = ControlFlowGraph::compute(f);
    let relevant = |v: SmallVec<[VReg; 8]>| -> SmallVec<[VReg; 8]> {
        v.into_iter().filter(|r| tracked.contains(r)).collect()
    };
    // Per instruction: (defs that kill, uses), of tracked registers only.
    let effect = |i: Inst| {
        let d = &f.insts[i];
        let kills = if d.guard.is_some() {
            SmallVec::new()
        } else {
            relevant(d.defs())
        };
        (kills, relevant(d.uses()))
    };
    let mut live_in: SecondaryMap<Block, FxHashSet<VReg>> = SecondaryMap::new();
    let step = |live: &mut FxHashSet<VReg>, i: Inst| {
        let (kills, uses) = effect(i);
        for r in kills {
            live.remove(&r);
        }
        live.extend(uses);
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in cfg.rpo().iter().rev() {
            let mut live: FxHashSet<VReg> = FxHashSet::default();
            for &s in cfg.succs(b) {
                live.extend(live_in[s].iter().copied());
            }
            for &i in f.layout.block_insts(b).iter().rev() {
                step(&mut live, i);
            }
            if live.len() != live_in[b].len() {
                live_in[b] = live;
                changed = true;
            }
        }
    }
    let mut most = 0;
    for &b in cfg.rpo() {
        let mut live: FxHashSet<VReg> = FxHashSet::default();
        for &s in cfg.succs(b) {
            live.extend(live_in[s].iter().copied());
        }
        most = most.max(live.len());
        for &i in f.layout.block_insts(b).iter().rev() {
            step(&mut live, i);
            most = most.max(live.len());
        }
    }
    most
}

/// When some wgmma of `f` does not fit under the limit at all, register
/// allocation's fatal C7602 is what ptxas reports, and no C7511
/// (`err_c7602_second_mma_larger_maxrreg40`): the budget is then unlimited.
pub fn in_flight_budget(f: &Function, maxrregcount: Option<u32>) -> usize {
    let Some(limit) = register_limit(f, maxrregcount) else {
        return MAX_IN_FLIGHT_ACCUMULATOR_REGS;
    };
    let fatal = f.layout.all_insts().any(|i| {
        let d = &f.insts[i];
        let a_in_regs = matches!(d.slots.get(1).map(|s| &s.op), Some(Operand::Vector(_)));
        d.opcode == Opcode::WgmmaMmaAsync
            && crate::register_budget::wgmma_registers(&d.mods, a_in_regs)
                .is_some_and(|need| need > limit.max(crate::register_budget::MIN_REGISTERS_SM90))
    });
    if fatal {
        return usize::MAX;
    }
    MAX_IN_FLIGHT_ACCUMULATOR_REGS.min((limit as usize).saturating_sub(LIMIT_MARGIN))
}

/// The set id standing for the dummy wgmma of an empty group (no registers).
const DUMMY_GROUP_SET: u32 = u32::MAX;

/// The pass, as ptxas 13.0.88 runs it: where ptxas leaves an access that
/// the PTX ISA calls undefined (a write to a register of a wgmma still in
/// flight), ori leaves it too and says so in an ori-only note.
pub struct FixupGmmaSequence;

/// The pass in ISA-strict mode: the same decisions and messages as
/// [`FixupGmmaSequence`], plus the waits and arrives that make legal what
/// ptxas leaves undefined (each announced in an ori-only note). Every
/// function it leaves unserialized passes the independent hazard checker.
pub struct IsaStrictFixupGmmaSequence;

/// Why the pipeline was serialized, and where.
#[derive(Clone, Debug)]
pub struct Failure {
    /// Serialization code (C75xx).
    pub code: u32,
    /// The culprit instruction.
    pub inst: Option<Inst>,
    /// The register involved.
    pub reg: Option<VReg>,
    /// The wgmma it conflicts with.
    pub wgmma: Option<Inst>,
    /// C7511 from a shared accumulator register rather than from too many
    /// registers in flight (see `ori_ir::Serialization`).
    pub shared_accumulators: bool,
}

/// Walk state at a program point.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
struct State {
    pipe: PipeState,
    /// Registers accessed by non-wgmma instructions since the last arrive.
    touched: FxHashSet<VReg>,
    /// No arrive (fence) seen yet on some path.
    no_arrive: bool,
    /// The wgmma that last wrote each in-flight set (for messages).
    last_wgmma: Option<Inst>,
    /// A partial `wait_group N > 0` left committed groups in flight.
    partial_wait: bool,
    /// Sets in flight on some incoming paths and retired on others.
    mixed: SmallVec<[u32; 4]>,
    /// Sets written by a group a wait retired, while others stay in flight.
    retired: SmallVec<[u32; 4]>,
    /// A wgmma since the last commit or wait, in this ptxas block.
    block_wgmma: bool,
    /// An arrive after the last plain instruction, in this ptxas block.
    fresh_arrive: bool,
    /// Destination sets of the wgmma of the open stage, one entry per wgmma,
    /// in this ptxas block.
    block_issues: SmallVec<[u32; 8]>,
    /// A-fragment registers of wgmmas that may be in flight (until a wait
    /// retires everything).
    /// With the number of commits since the wgmma that reads each (capped),
    /// so that a wait retiring that group releases it (`heldout5_15`:
    /// double-buffered fragments under `wait_group 1`).
    a_frags: SmallVec<[(VReg, u32); 8]>,
    /// Accumulator registers read by non-wgmma instructions since the last
    /// arrive (the ISA orders them before a later wgmma; ptxas does not).
    read_touched: FxHashSet<VReg>,
    /// The last wait on some path here was in divergent code.
    divergent_wait: bool,
    /// A wgmma issued since the last arrive, on some path.
    wgmma_since_arrive: bool,
    /// A `wgmma.wait_group` of the user's ran on some path from the entry.
    user_waited: bool,
    /// Accumulator sets wgmma wrote since the last arrive.
    wgmma_sets_since_arrive: SmallVec<[u32; 4]>,
    /// Accumulators rewritten in place (with a wait) since the last user
    /// commit, and taken by a wgmma since.
    rmw_regs: SmallVec<[VReg; 8]>,
    /// Committed groups that came into the header of a loop that commits in
    /// flight: ptxas cannot count how old they are, so only a `wait_group 0`
    /// retires them (`heldout5_20`: a store of such a set after `wait_group
    /// 1` is C7514). A loop that commits nothing keeps their age.
    sticky: SmallVec<[u32; 4]>,
    /// Live copies `(dst, src)` made by `mov dst, src` of an accumulator in
    /// flight. ptxas propagates such copies before phase 87 (a copy between
    /// the last wgmma and the commit, stored after the wait, compiles clean:
    /// `heldout_14`), so the copy is no read; its uses are.
    aliases: SmallVec<[(VReg, VReg); 4]>,
    /// A fence in divergent code arrived on some path here: an arrive injected
    /// for the other paths depends on divergent control flow (C7520).
    divergent_fence: bool,
    /// Shape (`m << 20 | n << 8 | k`) of the wgmma that last used each
    /// accumulator register since the last arrive; 0 where paths disagree.
    shapes: SmallVec<[(VReg, u32); 8]>,
}

/// A wgmma's shape as one number (`m << 20 | n << 8 | k`), 0 if unknown.
fn wgmma_shape(d: &InstData) -> u32 {
    ori_ir::WgmmaForm::decode(&d.mods)
        .map(|w| (w.m << 20) | (w.n << 8) | w.k)
        .unwrap_or(0)
}

/// Add `src` to `dst`; returns whether `dst` grew.
fn add_all<A: smallvec::Array>(
    dst: &mut SmallVec<A>,
    src: impl IntoIterator<Item = A::Item>,
) -> bool
where
    A::Item: PartialEq,
{
    let mut ch = false;
    for s in src {
        if !dst.contains(&s) {
            dst.push(s);
            ch = true;
        }
    }
    ch
}

/// `dst |= src`; returns whether `dst` changed.
fn or_into(dst: &mut bool, src: bool) -> bool {
    let ch = src && !*dst;
    *dst |= src;
    ch
}

/// `dst &= src`; returns whether `dst` changed.
fn and_into(dst: &mut bool, src: bool) -> bool {
    let ch = *dst && !src;
    *dst &= src;
    ch
}

impl State {
    /// A wait covered everything: nothing is in flight any more.
    fn retire_all(&mut self) {
        self.pipe = PipeState::default();
        self.aliases.clear();
        self.partial_wait = false;
        self.mixed.clear();
        self.a_frags.clear();
    }

    fn join(&mut self, o: &State) -> bool {
        let (mine, theirs) = (self.pipe.all(), o.pipe.all());
        let differ = mine
            .iter()
            .filter(|s| !theirs.contains(s))
            .chain(theirs.iter().filter(|s| !mine.contains(s)))
            .copied()
            .collect::<SmallVec<[u32; 4]>>();
        let mut ch = add_all(&mut self.mixed, differ);
        ch |= add_all(&mut self.mixed, o.mixed.iter().copied());
        ch |= add_all(&mut self.retired, o.retired.iter().copied());
        ch |= self.pipe.join(&o.pipe);
        for r in &o.touched {
            ch |= self.touched.insert(*r);
        }
        ch |= or_into(&mut self.no_arrive, o.no_arrive);
        ch |= add_all(&mut self.aliases, o.aliases.iter().copied());
        ch |= add_all(
            &mut self.wgmma_sets_since_arrive,
            o.wgmma_sets_since_arrive.iter().copied(),
        );
        ch |= add_all(&mut self.sticky, o.sticky.iter().copied());
        ch |= add_all(&mut self.rmw_regs, o.rmw_regs.iter().copied());
        ch |= or_into(&mut self.user_waited, o.user_waited);
        ch |= or_into(&mut self.wgmma_since_arrive, o.wgmma_since_arrive);
        ch |= or_into(&mut self.divergent_wait, o.divergent_wait);
        ch |= or_into(&mut self.divergent_fence, o.divergent_fence);
        ch |= or_into(&mut self.partial_wait, o.partial_wait);
        if self.last_wgmma.is_none() && o.last_wgmma.is_some() {
            self.last_wgmma = o.last_wgmma;
        }
        ch |= and_into(&mut self.block_wgmma, o.block_wgmma);
        ch |= and_into(&mut self.fresh_arrive, o.fresh_arrive);
        for r in &o.read_touched {
            ch |= self.read_touched.insert(*r);
        }
        for (r, s) in &o.shapes {
            match self.shapes.iter_mut().find(|(x, _)| x == r) {
                Some(e) if e.1 != *s && e.1 != 0 => {
                    e.1 = 0;
                    ch = true;
                }
                Some(_) => {}
                None => {
                    self.shapes.push((*r, *s));
                    ch = true;
                }
            }
        }
        ch |= add_all(&mut self.a_frags, o.a_frags.iter().copied());
        for s in &o.block_issues {
            let (mine, theirs) = (
                self.block_issues.iter().filter(|x| *x == s).count(),
                o.block_issues.iter().filter(|x| *x == s).count(),
            );
            if theirs > mine {
                self.block_issues.push(*s);
                ch = true;
            }
        }
        ch
    }
}

/// How an injected wait closes the wgmmas still open (uncommitted) before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Close {
    /// Nothing is open.
    Nothing,
    /// Insert a `_warpgroup.commit_batch` before the wait.
    CommitBatch,
    /// Move the user's `wgmma.commit_group` that follows (past plain reads
    /// only) up to the wait: a commit carries the open accumulators, so ptxas's
    /// scheduler may move accumulator reads below it but not writes.
    Hoist(Inst),
}

impl Close {
    /// A commit before the wait when wgmma are still open.
    fn for_open(pipe: &PipeState) -> Close {
        if pipe.open.is_empty() {
            Close::Nothing
        } else {
            Close::CommitBatch
        }
    }
}

/// One injected wait: before `at`, whose line the advisory names.
#[derive(Clone, Copy, Debug)]
struct WaitAt {
    at: Inst,
    close: Close,
    /// The line C7517 names when it is not `at`'s (R-unpack-sinks-to-wait).
    line: Option<u32>,
}

/// Kinds of decision, for [`Plan::first`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Seen {
    Arrive,
    UbArrive,
    EmptyCommit,
    ImplicitCommit,
    CopySink,
    Sink,
    UbWrite,
    Wait,
}

/// Decisions of the primary fixup.
#[derive(Default, Debug)]
struct Plan {
    /// Decisions already recorded.
    seen: FxHashSet<(Seen, Inst)>,
    /// Arrives to inject before these wgmmas (or empty commits).
    arrives: Vec<Inst>,
    /// Waits to inject.
    waits: Vec<WaitAt>,
    /// The user's commits that close an empty group (ptxas gives each a dummy wgmma).
    empty_commits: Vec<Inst>,
    /// Pure reads moved below a later read-modify-write: (reader, rmw).
    sinks: Vec<(Inst, Inst)>,
    /// Copies of in-flight accumulators moved down to where their value is
    /// first needed: (copy, the instruction it goes before).
    copy_sinks: Vec<(Inst, Inst)>,
    /// User waits reached with wgmmas still open on some path: ptxas closes
    /// the stage there (the last HGMMA carries `gsb0`); ori adds the commit.
    implicit_commits: Vec<Inst>,
    /// Writes to registers of a wgmma that may still be in flight, which
    /// ptxas 13.0.88 leaves as they are (undefined behaviour by the PTX ISA):
    /// (instruction, register, close needed for a wait).
    ub_writes: Vec<(Inst, VReg, Close)>,
    /// wgmmas the ISA wants an arrive before and ptxas 13.0.88 gives none
    /// (a plain read of their registers, or an accumulator of another shape,
    /// since the last arrive).
    ub_arrives: Vec<Inst>,
    /// Blocks holding only a `ret`, reached with accumulators in flight: ptxas
    /// turns a branch to such a block into a predicated exit at the branch, so
    /// the wait goes before the branches of the in-flight predecessors
    /// (resolved after the fixpoint, from the predecessors' exit states).
    bare_exits: Vec<Block>,
    failure: Option<Failure>,
}

impl Plan {
    /// Whether the primary walk still records injections. A failure the primary
    /// fixup detects itself (calls, divergence) ends its walk, so ptxas 13.0.88
    /// prints no advisory for later points; the register-resource and
    /// accumulator-read failures (C7511, C7514, C7515) come from the later
    /// validation steps, after every injection of the walk was made and
    /// announced; so does C7510, which ptxas finds on the inlined callee.
    fn injecting(&self) -> bool {
        self.failure.as_ref().is_none_or(|f| {
            matches!(
                f.code,
                C7510_CROSSES_CALL
                    | C7511_PIPELINE_REGISTERS
                    | C7513_DEFINES_INPUTS
                    | C7514_READS_ACCUMULATORS
                    | C7515_DEFINES_ACCUMULATORS
            )
        })
    }

    /// Whether `(kind, i)` is new: each decision is recorded once, however
    /// many fixpoint rounds reach it (a set, so that this stays O(1)).
    fn first(&mut self, kind: Seen, i: Inst) -> bool {
        self.seen.insert((kind, i))
    }

    /// A wait before `at` whose C7517 names `line` (R-unpack-sinks-to-wait).
    fn wait_named_at(&mut self, at: Inst, close: Close, line: u32) {
        if self.injecting() && self.first(Seen::Wait, at) {
            self.waits.push(WaitAt {
                at,
                close,
                line: Some(line),
            });
        }
    }

    fn wait(&mut self, at: Inst, close: Close) {
        if self.injecting() && self.first(Seen::Wait, at) {
            self.waits.push(WaitAt {
                at,
                close,
                line: None,
            });
        }
    }
}

struct Walker<'a> {
    f: &'a Function,
    sets: &'a [SmallVec<[VReg; 8]>],
    /// For each register, the accumulator sets containing it.
    reg_sets: SecondaryMap<VReg, SmallVec<[u32; 2]>>,
    uni: Uniformity,
    cfg: ControlFlowGraph,
    blocks: PtxasBlocks,
    /// Blocks of loops with a run-time trip count (see `loops`).
    in_loop: SecondaryMap<Block, bool>,
    /// Targets of back edges.
    loop_header: SecondaryMap<Block, bool>,
    /// Accumulator registers that may be in flight ([`in_flight_budget`]).
    budget: usize,
    /// Heads of loops that commit a group (see `loops::committing_loop_headers`).
    committing_loop_header: SecondaryMap<Block, bool>,
    /// Back edges of the loops ptxas keeps (see `loops::kept_back_edges`).
    kept_back_edges: FxHashSet<(Block, Block)>,
    /// Accumulator sets holding a register some wgmma reads as an A fragment.
    fragment_sets: FxHashSet<u32>,
    /// Whether a `wgmma.wait_group` of the user's comes earlier in the
    /// function's layout: ptxas's refusal (rule 27) also follows the file
    /// order, not only paths (`heldout5_37`: an exit block laid out after
    /// the main path's wait).
    wait_above: SecondaryMap<Inst, bool>,
    module: &'a ori_ir::ModuleInfo,
    /// Also make legal what ptxas leaves undefined (see [`IsaStrictFixupGmmaSequence`]).
    isa_strict: bool,
    /// Each instruction's index in its block.
    pos: SecondaryMap<Inst, u32>,
    /// Registers of a wgmma with no arrive before it in its block: only these
    /// need to stay in `touched` / `read_touched` / `shapes` across blocks.
    exposed: SecondaryMap<VReg, bool>,
}

fn exposed_regs(f: &Function) -> SecondaryMap<VReg, bool> {
    let mut out = SecondaryMap::new();
    for &b in f.layout.blocks() {
        for &i in f.layout.block_insts(b) {
            let d = &f.insts[i];
            if d.opcode.is_arrive() {
                break;
            }
            if d.opcode == Opcode::WgmmaMmaAsync {
                for r in accumulator_regs(d).into_iter().chain(a_fragment_regs(d)) {
                    out[r] = true;
                }
            }
        }
    }
    out
}

/// Registers a wgmma reads as a fragment (A fragment, sparse metadata):
/// ptxas fences both alike.
fn a_fragment_regs(d: &InstData) -> SmallVec<[VReg; 4]> {
    d.wgmma_fragment_regs()
}

fn accumulator_regs(d: &InstData) -> SmallVec<[VReg; 4]> {
    d.slots.first().map(|s| s.op.regs()).unwrap_or_default()
}

impl Walker<'_> {
    /// Sets in `ids` that contain `r`.
    fn hits(&self, r: VReg, ids: &[u32]) -> bool {
        self.reg_sets[r].iter().any(|s| ids.contains(s))
    }

    /// Whether another wgmma follows `at` in block `b` before the next commit or wait.
    fn wgmma_later(&self, b: Block, at: Inst) -> bool {
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
    fn unwaited_use_after(&self, b: Block, sets: &[u32]) -> bool {
        let mut seen = FxHashSet::default();
        let mut work: Vec<Block> = self.cfg.succs(b).to_vec();
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
                let touches = d
                    .uses()
                    .iter()
                    .chain(d.defs().iter())
                    .any(|r| self.hits(*r, sets));
                if touches {
                    return true;
                }
            }
            if !stopped {
                work.extend(self.cfg.succs(blk).iter().copied());
            }
        }
        false
    }

    /// Whether an instruction after `at` in block `b`, before the next wgmma,
    /// reads and redefines a register of the open sets (a read-modify-write,
    /// which gets a wait).
    fn rmw_later(&self, b: Block, at: Inst, open: &[u32]) -> Option<Inst> {
        let after = self.after_in_block(b, at)?;
        let reader = &self.f.insts[at];
        let (r_defs, r_uses) = (reader.defs(), reader.uses());
        for &i in after {
            let d = &self.f.insts[i];
            if d.opcode.is_gmma_family() || d.opcode.is_terminator() || d.opcode == Opcode::Call {
                return None;
            }
            let (defs, uses) = (d.defs(), d.uses());
            // The reader must be free to move below `i`.
            let depends = defs
                .iter()
                .any(|r| r_defs.contains(r) || r_uses.contains(r))
                || uses.iter().any(|r| r_defs.contains(r));
            if defs.iter().any(|r| self.hits(*r, open) && uses.contains(r)) {
                return (!depends).then_some(i);
            }
            if depends {
                return None;
            }
        }
        None
    }

    /// Whether instruction `at` of block `b` is a guarded store next to another
    /// store under the same guard.
    fn in_store_run(&self, b: Block, at: Inst) -> bool {
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
    fn copy_end(&self, b: Block, at: Inst, dsts: &[VReg], src: VReg) -> Option<Inst> {
        let insts = self.f.layout.block_insts(b);
        let pos = self.position(insts, at)?;
        for &i in &insts[pos + 1..] {
            let d = &self.f.insts[i];
            if d.opcode == Opcode::Call || d.opcode.is_terminator() {
                return None;
            }
            let (defs, uses) = (d.defs(), d.uses());
            let touches_copy = dsts.iter().any(|r| uses.contains(r) || defs.contains(r));
            if touches_copy || defs.contains(&src) {
                return Some(i);
            }
        }
        None
    }

    /// The instructions after `at` in its block `b`.
    fn after_in_block(&self, b: Block, at: Inst) -> Option<&[Inst]> {
        let insts = self.f.layout.block_insts(b);
        self.position(insts, at).map(|k| &insts[k + 1..])
    }

    /// The index of `at` in its block's `insts` (O(1): the positions are
    /// numbered once per run).
    fn position(&self, insts: &[Inst], at: Inst) -> Option<usize> {
        let k = self.pos[at] as usize;
        (insts.get(k) == Some(&at)).then_some(k)
    }

    /// Whether a commit or wait follows `at` in block `b`.
    fn sync_later_in_block(&self, b: Block, at: Inst) -> bool {
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
    fn wgmma_later_in_block_using(&self, b: Block, at: Inst, r: VReg) -> bool {
        let insts = self.f.layout.block_insts(b);
        let Some(pos) = self.position(insts, at) else {
            return false;
        };
        insts[pos + 1..].iter().any(|&i| {
            let d = &self.f.insts[i];
            d.opcode == Opcode::WgmmaMmaAsync && accumulator_regs(d).contains(&r)
        })
    }

    /// The first `wait_group 0` after the copy `at` in block `b`, with
    /// nothing between that touches the copy or redefines its source.
    fn retiring_wait_after(&self, b: Block, at: Inst, dsts: &[VReg], src: VReg) -> Option<Inst> {
        for &i in self.after_in_block(b, at)? {
            let d = &self.f.insts[i];
            if d.opcode.is_wait() && d.wait_count() == Some(0) {
                return Some(i);
            }
            let (defs, uses) = (d.defs(), d.uses());
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
    fn line_before(&self, b: Block, at: Inst) -> Option<u32> {
        let insts = self.f.layout.block_insts(b);
        let k = self.position(insts, at)?;
        k.checked_sub(1).map(|p| self.f.insts[insts[p]].line)
    }

    /// `(dsts, src)` when `d` is a plain unguarded `mov` of an accumulator
    /// register into registers of another class: a copy, or the unpack
    /// `mov.b32 {lo, hi}, acc` of a packed f16x2 accumulator (ptxas folds
    /// both into the uses: `heldout2_08`).
    fn accumulator_copy(&self, d: &InstData) -> Option<(SmallVec<[VReg; 4]>, VReg)> {
        if &*d.name != "mov" || d.guard.is_some() {
            return None;
        }
        let (defs, uses) = (d.defs(), d.uses());
        let tensor = |r: &VReg| self.f.vregs[*r].class == ori_ir::RegClass::Tensor;
        match uses.as_slice() {
            [src] if tensor(src) && !defs.is_empty() && !defs.iter().any(tensor) => {
                Some((defs.iter().copied().collect(), *src))
            }
            _ => None,
        }
    }

    /// Whether a wgmma later in block `b`, before the next commit or wait,
    /// takes `r` as an accumulator.
    fn wgmma_later_using(&self, b: Block, at: Inst, r: VReg) -> bool {
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
    fn commit_after_reads(&self, b: Block, at: Inst) -> Option<Inst> {
        let insts = self.f.layout.block_insts(b);
        let pos = self.position(insts, at)?;
        for &i in &insts[pos + 1..] {
            let d = &self.f.insts[i];
            if d.opcode == Opcode::WgmmaCommitGroup {
                return Some(i);
            }
            if d.opcode.is_gmma_family()
                || d.opcode == Opcode::Call
                || d.defs().iter().any(|r| !self.reg_sets[*r].is_empty())
            {
                return None;
            }
        }
        None
    }

    fn in_flight_regs(&self, s: &State) -> usize {
        let mut regs: FxHashSet<VReg> = FxHashSet::default();
        for id in s.pipe.all() {
            if let Some(set) = self.sets.get(id as usize) {
                regs.extend(set.iter().copied());
            }
        }
        regs.len()
    }

    fn fail(
        plan: &mut Plan,
        code: u32,
        inst: Option<Inst>,
        reg: Option<VReg>,
        wgmma: Option<Inst>,
    ) {
        if plan.failure.is_none() {
            plan.failure = Some(Failure {
                code,
                inst,
                reg,
                wgmma,
                shared_accumulators: false,
            });
        }
    }

    /// **R-budget-before-reads.** Too many accumulator registers in flight
    /// (C7511): ptxas's register check comes before its check of reads
    /// between wgmma, so this C7511 replaces a C7514 found earlier in the
    /// walk (Triton's `max_num_imprecise_acc` kernels issue each wgmma into a
    /// fresh set of 64 registers and add it into the main accumulator before
    /// the next wgmma: ptxas says C7511, not C7514).
    fn fail_budget(plan: &mut Plan, at: Inst) {
        if plan
            .failure
            .as_ref()
            .is_some_and(|f| f.code == C7514_READS_ACCUMULATORS)
        {
            plan.failure = None;
        }
        Self::fail(plan, C7511_PIPELINE_REGISTERS, Some(at), None, None);
    }

    /// `fail` for a C7511 that comes from a register written by something
    /// else between wgmma accumulating into it (or from overlapping sets),
    /// not from the number of registers in flight: its advice differs.
    fn fail_shared_set(plan: &mut Plan, inst: Inst, reg: Option<VReg>, wgmma: Option<Inst>) {
        Self::fail(plan, C7511_PIPELINE_REGISTERS, Some(inst), reg, wgmma);
        if let Some(f) = plan.failure.as_mut().filter(|f| f.inst == Some(inst)) {
            f.shared_accumulators = true;
        }
    }

    /// One walk over block `b` from `st`; records decisions in `plan`.
    fn walk_block(&self, b: Block, mut st: State, plan: &mut Plan) -> State {
        let f = self.f;
        // ptxas looks at commits block by block: a commit with no wgmma before it
        // in its own block closes an empty group, which gets a dummy
        // `HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT` (seen in SASS) and, unless
        // an arrive comes after the last other instruction of the block, an
        // injected arrive (C7519 at the commit; probes n4, n10).
        if self.blocks.starts_block(b) {
            // ptxas forgets the arrive at a block boundary (see `block_merging`).
            st.no_arrive = true;
            st.block_wgmma = false;
            st.fresh_arrive = false;
            st.block_issues.clear();
        }
        let State {
            block_wgmma,
            fresh_arrive,
            block_issues,
            ..
        } = &mut st;
        let (mut block_wgmma, mut fresh_arrive) = (*block_wgmma, *fresh_arrive);
        let mut block_issues = std::mem::take(block_issues);
        // A-fragment registers of the wgmma earlier in this PTX block.
        let mut block_fragments: SmallVec<[VReg; 8]> = SmallVec::new();
        if self.committing_loop_header[b] {
            for g in st.pipe.groups.clone() {
                add_all(&mut st.sticky, g);
            }
        }
        // Accumulator registers whose value a wgmma earlier in this PTX block wrote.
        // With the number of wgmma that wrote each.
        let mut block_wgmma_defs: SmallVec<[(VReg, u32); 16]> = SmallVec::new();
        // Entered from uniform arms that each end in a wait of their own, at
        // different levels: unless a read needs it first, ptxas waits at the
        // end of this block, naming its branch (`heldout4_30`). With a wait
        // on one side only, reads here are C7514 instead (rule 15).
        let arm_waits = |p: &Block| {
            self.cfg.preds(*p).len() == 1
                && f.layout
                    .block_insts(*p)
                    .iter()
                    .any(|i| f.insts[*i].opcode == Opcode::WgmmaWaitGroup)
        };
        let mixed_join = self.cfg.preds(b).len() > 1
            && !self.loop_header[b]
            && !st.mixed.is_empty()
            && !st.divergent_wait
            && self.cfg.preds(b).iter().all(arm_waits)
            && self.unwaited_use_after(b, &st.pipe.all());
        let last = f.layout.block_insts(b).last().copied();
        for &i in f.layout.block_insts(b) {
            let d = &f.insts[i];
            if mixed_join
                && Some(i) == last
                && d.opcode == Opcode::Branch
                && !st.mixed.is_empty()
                && !st.pipe.is_empty()
            {
                let close = Close::for_open(&st.pipe);
                plan.wait(i, close);
                st.retire_all();
            }
            match d.opcode {
                op if op.is_arrive() => {
                    fresh_arrive = true;
                    st.wgmma_since_arrive = false;
                    st.wgmma_sets_since_arrive.clear();
                    st.read_touched.clear();
                    st.shapes.clear();
                    // A fence in divergent code is fine for the wgmma it guards
                    // (`attempt_c7520_divergent_fence_mma` compiles clean); it only
                    // matters when a path around it needs an injected arrive.
                    st.divergent_fence = self.uni.inst_is_divergent(b, d);
                    st.touched.clear();
                    st.no_arrive = false;
                }
                Opcode::WgmmaMmaAsync => {
                    let accs = accumulator_regs(d);
                    // Accumulator sets that overlap an in-flight one without
                    // starting at the same register cannot be allocated in place
                    // (C7511; `heldout5_22`: n16 {f0..f7} then n32 {f4..f19}).
                    // Sets are compared by their lowest register (sets are
                    // sorted by register id): CUTLASS writes its accumulator
                    // vectors in descending order (`{%f2930, ..., %f2867}`),
                    // so the first operand is not where the set starts.
                    let flying = st.pipe.all();
                    let lowest = accs.iter().min();
                    let misaligned = accs.iter().any(|r| {
                        self.reg_sets[*r].iter().any(|s| {
                            flying.contains(s)
                                && self.sets.get(*s as usize).and_then(|set| set.first()) != lowest
                        })
                    });
                    if misaligned {
                        Self::fail_shared_set(plan, i, accs.first().copied(), st.last_wgmma);
                    }
                    // An A fragment a wgmma wrote since the last arrive: no
                    // injected arrive can order it, ptxas serializes (C7513;
                    // `heldout5_28`, fixed only by wait + wgmma.fence).
                    let frag_from_wgmma = a_fragment_regs(d)
                        .into_iter()
                        .find(|r| self.hits(*r, &st.wgmma_sets_since_arrive));
                    if let Some(r) = frag_from_wgmma {
                        Self::fail(plan, C7513_DEFINES_INPUTS, Some(i), Some(r), st.last_wgmma);
                    }
                    // A wgmma overwriting an accumulator whose old value lives on in
                    // a copy: the copy must be made first. In a committed group
                    // ptxas waits before this wgmma (`c7517_read_acc_after_commit_then_mma`
                    // names its line); in the open stage it cannot (C7514).
                    let all = st.pipe.all();
                    let copied = st
                        .aliases
                        .iter()
                        .map(|(_, s)| *s)
                        .find(|s| accs.contains(s) && self.hits(*s, &all));
                    if let Some(src) = copied {
                        if self.hits(src, &st.pipe.open) {
                            Self::fail(
                                plan,
                                C7514_READS_ACCUMULATORS,
                                Some(i),
                                Some(src),
                                st.last_wgmma,
                            );
                        } else {
                            plan.wait(i, Close::Nothing);
                            st.retire_all();
                            // The copy, made here, reads the register just before
                            // this wgmma overwrites it: the ISA wants a fence
                            // between, ptxas gives none.
                            st.read_touched.insert(src);
                        }
                        st.aliases.retain(|(_, s)| !accs.contains(s));
                    }
                    let mut regs = accumulator_regs(d);
                    regs.extend(a_fragment_regs(d));
                    // A write of any accumulator register after a wgmma of this
                    // arrive's stage also needs a new arrive, whatever registers
                    // the next wgmma uses (`heldout4_38`: an add into D between
                    // D's last wgmma and E's).
                    let f = self.f;
                    let touched = regs.iter().any(|r| st.touched.contains(r))
                        || (st.wgmma_since_arrive
                            && st
                                .touched
                                .iter()
                                .any(|r| f.vregs[*r].class == ori_ir::RegClass::Tensor));
                    // What the ISA also orders and ptxas 13.0.88 does not: a plain
                    // read of the registers since the last arrive, or an accumulator
                    // last used by a wgmma of another shape ("except when these are
                    // accumulator register accesses across multiple wgmma.mma_async
                    // instructions of the same shape").
                    let shape = wgmma_shape(d);
                    let isa_only = !(st.no_arrive || touched)
                        && (regs.iter().any(|r| st.read_touched.contains(r))
                            || accumulator_regs(d)
                                .iter()
                                .any(|r| st.shapes.iter().any(|(x, s)| x == r && *s != shape)));
                    if isa_only {
                        if plan.injecting() && plan.first(Seen::UbArrive, i) {
                            plan.ub_arrives.push(i);
                        }
                        if self.isa_strict {
                            st.touched.clear();
                            st.read_touched.clear();
                            st.shapes.clear();
                            fresh_arrive = true;
                        }
                    }
                    if st.no_arrive || touched {
                        if self.uni.inst_is_divergent(b, d) || st.divergent_fence {
                            Self::fail(plan, C7520_WGAR_DIVERGENT, Some(i), None, None);
                        } else if plan.injecting() && plan.first(Seen::Arrive, i) {
                            plan.arrives.push(i);
                        }
                        st.touched.clear();
                        st.read_touched.clear();
                        st.shapes.clear();
                        st.no_arrive = false;
                        fresh_arrive = true;
                    }
                    for r in accumulator_regs(d) {
                        match st.shapes.iter_mut().find(|(x, _)| *x == r) {
                            Some(e) => e.1 = shape,
                            None => st.shapes.push((r, shape)),
                        }
                    }
                    block_wgmma = true;
                    st.wgmma_since_arrive = true;
                    block_fragments.extend(a_fragment_regs(d));
                    for r in accumulator_regs(d) {
                        match block_wgmma_defs.iter_mut().find(|(x, _)| *x == r) {
                            Some(e) => e.1 += 1,
                            None => block_wgmma_defs.push((r, 1)),
                        }
                    }
                    let reader = 0;
                    for r in a_fragment_regs(d) {
                        if !st.a_frags.contains(&(r, reader)) {
                            st.a_frags.push((r, reader));
                        }
                    }
                    st.pipe.transfer(d);
                    if let Some(w) = d.accum {
                        let set = crate::accumulator_sets::word_index(w.dst);
                        st.mixed.retain(|s| *s != set);
                        block_issues.push(set);
                        // Only sets some wgmma also reads as A fragments can
                        // matter, which keeps the state small.
                        if self.fragment_sets.contains(&set) {
                            add_all(&mut st.wgmma_sets_since_arrive, [set]);
                        }
                    }
                    st.last_wgmma = Some(i);
                    if self.in_flight_regs(&st) > self.budget {
                        Self::fail_budget(plan, i);
                    }
                }
                op if op.is_commit() || op.is_wait() => {
                    // A user commit or wait in divergent code is fine by itself
                    // (`attempt_c7520_divergent_fence_mma` compiles clean): what
                    // fails is an injection it forces there, an arrive for the
                    // dummy wgmma of an empty commit (C7520), or a wait later
                    // that depends on which path waited (C7518).
                    let divergent = self.uni.inst_is_divergent(b, d);
                    if op.is_wait() {
                        st.divergent_wait = divergent;
                        st.user_waited |= d.opcode == Opcode::WgmmaWaitGroup;
                    }
                    let empty_group = d.opcode == Opcode::WgmmaCommitGroup && !block_wgmma;
                    if empty_group && plan.first(Seen::EmptyCommit, i) {
                        plan.empty_commits.push(i);
                    }
                    if op.is_commit() && !block_wgmma && !fresh_arrive {
                        if divergent {
                            Self::fail(plan, C7520_WGAR_DIVERGENT, Some(i), None, None);
                        } else if plan.injecting() && plan.first(Seen::Arrive, i) {
                            plan.arrives.push(i);
                        }
                        fresh_arrive = true;
                        st.touched.clear();
                        st.no_arrive = false;
                    }
                    if op.is_wait() && !st.pipe.open.is_empty() {
                        // ptxas closes a stage left open at a wait (the last HGMMA
                        // carries gsb0, probe `attempt_c7516_no_commit`); ori writes
                        // the commit out.
                        if plan.injecting() && plan.first(Seen::ImplicitCommit, i) {
                            plan.implicit_commits.push(i);
                        }
                    }
                    block_wgmma = false;
                    block_issues.clear();
                    // Sets of the groups this wait retires (a wait closes an open
                    // stage first, as ptxas does).
                    let mut groups = st.pipe.groups.clone();
                    if (op.is_wait() && !st.pipe.open.is_empty()) || op.is_commit() {
                        if op.is_wait() {
                            groups.push(st.pipe.open.clone());
                        }
                        // One commit more since each fragment's wgmma (capped
                        // like the groups of `in_flight`, so the state is finite
                        // and the fixpoint converges).
                        for (_, age) in st.a_frags.iter_mut() {
                            *age = (*age + 1).min(crate::in_flight::MAX_GROUPS as u32 + 1);
                        }
                        st.a_frags.sort_unstable();
                        st.a_frags.dedup();
                    }
                    if d.opcode == Opcode::WgmmaCommitGroup {
                        st.rmw_regs.clear();
                    }
                    st.pipe.transfer(d);
                    if empty_group {
                        // The dummy wgmma of an empty group is in flight like any
                        // other: a `ret` after `wait_group 1` waits for it
                        // (`heldout3_38`).
                        if let Some(g) = st.pipe.groups.last_mut() {
                            // Sets stay sorted (`in_flight::union_into`).
                            if let Err(at) = g.binary_search(&DUMMY_GROUP_SET) {
                                g.insert(at, DUMMY_GROUP_SET);
                            }
                        }
                    }
                    if op.is_wait() && d.wait_count().unwrap_or(0) > 0 && !st.sticky.is_empty() {
                        let all = st.pipe.all();
                        let mut kept: SmallVec<[u32; 4]> = st
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
                    } else if op.is_wait() {
                        st.sticky.clear();
                    }
                    if op.is_wait() {
                        let done = groups.len().saturating_sub(st.pipe.groups.len());
                        for g in &groups[..done] {
                            add_all(&mut st.retired, g.iter().copied());
                        }
                    }
                    if st.pipe.is_empty() {
                        st.a_frags.clear();
                        st.retired.clear();
                    }
                    if op.is_wait() {
                        st.partial_wait = d.wait_count().unwrap_or(0) > 0 && !st.pipe.is_empty();
                        let all = st.pipe.all();
                        // A copy of a value the wait made final is an ordinary
                        // register from here on (`tests/triton2/accread_partial_*`).
                        st.aliases.retain(|(_, src)| self.hits(*src, &all));
                        // `wait_group N` keeps the N newest groups: fragments
                        // whose wgmma is at most N commits old.
                        let keep = d.wait_count().unwrap_or(0).max(0) as u32;
                        st.a_frags.retain(|(_, age)| *age <= keep);
                        st.mixed.retain(|s| all.contains(s));
                    }
                }
                Opcode::Return => {
                    // Nothing may stay in flight past the exit: ptxas waits before it
                    // (C7517 naming the `ret` line).
                    if !st.pipe.is_empty() && st.divergent_wait && !st.mixed.is_empty() {
                        // In flight here only on the paths that skipped a divergent
                        // wait: the exit wait depends on it (probe d2).
                        Self::fail(plan, C7518_WGDP_DIVERGENT, Some(i), None, st.last_wgmma);
                    } else if !st.pipe.is_empty() {
                        if f.layout.block_insts(b)[0] == i {
                            if !plan.bare_exits.contains(&b) {
                                plan.bare_exits.push(b);
                            }
                        } else {
                            let close = Close::for_open(&st.pipe);
                            plan.wait(i, close);
                        }
                        st.retire_all();
                    }
                }
                Opcode::Call => {
                    let callee = d.slots.iter().find_map(|s| match &s.op {
                        Operand::Sym(n) => Some(n.to_string()),
                        _ => None,
                    });
                    let info = callee.and_then(|n| self.module.funcs.get(&n).copied());
                    // ptxas inlines a defined callee: its body reads the arguments
                    // at the call's line, so accumulators passed in flight get a
                    // wait there (`heldout_35`).
                    let all = st.pipe.all();
                    let passes_in_flight = d.uses().iter().copied().find(|r| self.hits(*r, &all));
                    let unsure = passes_in_flight.filter(|r| {
                        st.partial_wait || self.reg_sets[*r].iter().any(|s| st.mixed.contains(s))
                    });
                    if let Some(r) = unsure.filter(|_| matches!(info, Some((true, _)))) {
                        // As for a plain read: ptxas does not strengthen a partial
                        // wait for the inlined callee's reads (`heldout3_24`).
                        Self::fail(
                            plan,
                            C7514_READS_ACCUMULATORS,
                            Some(i),
                            Some(r),
                            st.last_wgmma,
                        );
                    } else if passes_in_flight.is_some()
                        && !self.module.compile_only
                        && matches!(info, Some((true, _)))
                    {
                        let close = if st.pipe.open.is_empty() {
                            Close::Nothing
                        } else {
                            block_wgmma = false;
                            block_issues.clear();
                            Close::CommitBatch
                        };
                        plan.wait(i, close);
                        st.retire_all();
                    }
                    match info {
                        // ptxas -c, or no body in the module: an extern call. Inside an
                        // open stage ptxas 13.0.88 answers C7520, elsewhere C7509.
                        _ if self.module.compile_only || !matches!(info, Some((true, _))) => {
                            let code = if st.pipe.open.is_empty() {
                                C7509_EXTERN_CALLS
                            } else {
                                C7520_WGAR_DIVERGENT
                            };
                            Self::fail(plan, code, Some(i), None, None);
                        }
                        // A callee with a pipeline of its own: the pipeline crosses the call.
                        Some((true, true)) => {
                            Self::fail(plan, C7510_CROSSES_CALL, Some(i), None, st.last_wgmma);
                            // ptxas inlines the callee: its commits and waits close
                            // this block's stage, so a commit after the call is empty
                            // (`c7510_call_pipeline_func_inside_pipeline`).
                            block_wgmma = false;
                            block_issues.clear();
                        }
                        _ => {}
                    }
                    st.touched.clear();
                    st.no_arrive = true;
                    fresh_arrive = false;
                }
                _ => {
                    fresh_arrive = false;
                    let all = st.pipe.all();
                    let defs = d.defs();
                    // A predicated write keeps the old value where the guard is false:
                    // it reads the register as well (ptxas 13.0.88 waits before it).
                    let mut uses = d.uses();
                    if d.guard.is_some() {
                        uses.extend(defs.iter().copied());
                    }
                    // Copies of in-flight accumulators (see `State::aliases`): a use
                    // of the copy reads the accumulator; so does overwriting it
                    // while the copy lives.
                    for &(dst, src) in &st.aliases {
                        if uses.contains(&dst) || defs.contains(&src) {
                            uses.push(src);
                        }
                    }
                    st.aliases
                        .retain(|(dst, src)| !defs.contains(dst) && !defs.contains(src));
                    let copy = self
                        .accumulator_copy(d)
                        .filter(|(_, s)| self.hits(*s, &all))
                        .and_then(|(dsts, src)| match self.copy_end(b, i, &dsts, src) {
                            Some(end) => Some((dsts, src, end, false)),
                            None => self
                                .retiring_wait_after(b, i, &dsts, src)
                                .map(|w| (dsts, src, w, true)),
                        });
                    if let Some((dsts, src, end, to_wait)) = copy {
                        // ori writes the propagation out: the copy moves down to
                        // just before `end`, after any wait injected there.
                        if plan.injecting() && plan.first(Seen::CopySink, i) {
                            plan.copy_sinks.push((i, end));
                        }
                        if to_wait {
                            // R-unpack-sinks-to-wait: a copy whose value lives out
                            // of the block sinks to the user's `wait_group 0`, and
                            // a wait is injected before it there (two
                            // WARPGROUP.DEPBAR in the SASS); C7517 names the line
                            // of the instruction just before the user's wait.
                            let line = self.line_before(b, end).unwrap_or(d.line);
                            plan.wait_named_at(end, Close::for_open(&st.pipe), line);
                        }
                        for dst in dsts {
                            st.aliases.push((dst, src));
                            st.read_touched.insert(dst);
                        }
                        continue;
                    }
                    let open = &st.pipe.open;
                    let read_open = uses.iter().copied().find(|r| self.hits(*r, open));
                    let read_any = uses.iter().copied().find(|r| self.hits(*r, &all));
                    let defines_acc = defs.iter().any(|r| self.hits(*r, &all));
                    // A write that kills an open accumulator (its old value unread).
                    // Found on ptxas 13.0.88 (probes n1, n3, n9, n13): when a later
                    // wgmma of the block takes the register as accumulator, ptxas
                    // makes its injections, then runs out of pipeline registers
                    // (C7511); when no later wgmma does but two or more wgmma of the
                    // block's open stage chained into it, C7515; after a single
                    // wgmma, the write is moved past the wait and nothing is said.
                    let kill_open = defs
                        .iter()
                        .copied()
                        .find(|r| self.hits(*r, open) && !uses.contains(r));
                    let mut waited = false;
                    let mut failed_here = false;
                    // A kill ptxas moves past the wait touches nothing here.
                    let mut sunk_kill = false;
                    // The same holds across commits and waits: a kill of a value a
                    // wgmma of this block wrote, with a later wgmma of the block
                    // accumulating into the register, is C7511 even when the
                    // first wgmma was waited for (the serialized form of
                    // `c7511_def_acc_between_mma` still gets C7511 from ptxas).
                    let kill_chain = defs.iter().copied().find(|r| {
                        // Written by exactly one wgmma: after two or more,
                        // ptxas keeps the chain (`heldout3_30`, `heldout3_32`).
                        block_wgmma_defs.contains(&(*r, 1))
                            && !uses.contains(r)
                            && self.wgmma_later_in_block_using(b, i, *r)
                    });
                    if let Some(r) = kill_chain {
                        failed_here = true;
                        Self::fail_shared_set(plan, i, Some(r), st.last_wgmma);
                    } else if let Some(r) = kill_open {
                        failed_here = true;
                        if self.wgmma_later_using(b, i, r) {
                            Self::fail_shared_set(plan, i, Some(r), st.last_wgmma);
                        } else if self.reg_sets[r]
                            .iter()
                            .any(|s| block_issues.iter().filter(|x| *x == s).count() >= 2)
                        {
                            Self::fail(
                                plan,
                                C7515_DEFINES_ACCUMULATORS,
                                Some(i),
                                Some(r),
                                st.last_wgmma,
                            );
                        } else {
                            failed_here = false;
                            // Moved past a commit or wait of its own block.
                            sunk_kill = self.sync_later_in_block(b, i);
                        }
                    }
                    let sink_below = read_open
                        .filter(|_| !defines_acc && self.wgmma_later(b, i))
                        .and_then(|_| self.rmw_later(b, i, open));
                    if let Some(rmw) = sink_below {
                        // ptxas's scheduler puts this pure read below the
                        // read-modify-write that follows, under the wait the RMW
                        // gets (SASS of `c7517_c7519_read_then_rmw_between_mma`).
                        if plan.injecting() && plan.first(Seen::Sink, i) {
                            plan.sinks.push((i, rmw));
                        }
                    } else if let Some(r) =
                        read_open.filter(|_| !defines_acc && self.wgmma_later(b, i))
                    {
                        // A pure read of an open set with more wgmma to come in the stage:
                        // no wait can split it (C7514).
                        Self::fail(
                            plan,
                            C7514_READS_ACCUMULATORS,
                            Some(i),
                            Some(r),
                            st.last_wgmma,
                        );
                    } else if let Some(r) = read_any.filter(|r| {
                        read_open.is_none()
                            && st.partial_wait
                            && self.reg_sets[*r].iter().any(|s| st.retired.contains(s))
                            && !self.reg_sets[*r].iter().any(|s| st.mixed.contains(s))
                    }) {
                        // After a partial wait, a read of a set that a retired group
                        // also wrote passes ptxas 13.0.88 unchecked, though a group
                        // still in flight writes it too (`heldout_04`): undefined
                        // by the ISA, announced (and fixed in ISA-strict mode).
                        if plan.injecting() && plan.first(Seen::UbWrite, i) {
                            plan.ub_writes.push((i, r, Close::Nothing));
                        }
                        waited = self.isa_strict;
                        if self.isa_strict {
                            st.retire_all();
                            st.retired.clear();
                        }
                    } else if let Some(r) = read_any.filter(|r| {
                        read_open.is_none()
                            && (st.partial_wait
                                || self.reg_sets[*r].iter().any(|s| st.mixed.contains(s)))
                    }) {
                        // A read of a group a partial wait left in flight, or one in
                        // flight on some paths only (a wait in one arm of a branch):
                        // ptxas does not strengthen the user's wait (C7514); when
                        // the arm that waited is divergent, the wait this read would
                        // need depends on it (C7518).
                        let code = if st.divergent_wait {
                            C7518_WGDP_DIVERGENT
                        } else {
                            C7514_READS_ACCUMULATORS
                        };
                        Self::fail(plan, code, Some(i), Some(r), st.last_wgmma);
                    } else if let Some(r) = read_any.filter(|_| {
                        d.guard.is_some_and(|g| self.uni.divergent_reg[g.reg])
                            && self.in_store_run(b, i)
                    }) {
                        // ptxas turns a run of stores under one divergent predicate
                        // into a branch around them, so the wait they need would sit
                        // in divergent code (`heldout_26`: C7518; one predicated
                        // store alone gets its wait, C7517).
                        Self::fail(plan, C7518_WGDP_DIVERGENT, Some(i), Some(r), st.last_wgmma);
                    } else if let Some(r) =
                        read_any.filter(|_| (st.user_waited || self.wait_above[i]) && !defines_acc)
                    {
                        // A pure read that needs a wait after a `wgmma.wait_group`
                        // of the user's on some path from the entry: ptxas refuses
                        // to add one (C7514; `heldout3_19`, whose unrolled first
                        // iteration still gets its C7517).
                        Self::fail(
                            plan,
                            C7514_READS_ACCUMULATORS,
                            Some(i),
                            Some(r),
                            st.last_wgmma,
                        );
                    } else if read_any.is_some()
                        && !(read_open.is_some() && !defines_acc && self.wgmma_later(b, i))
                    {
                        waited = true;
                        // The same accumulator rewritten in place a second time
                        // in one chain (after a wgmma that took the first
                        // rewrite): C7515 (`heldout5_33`; other registers each
                        // time are fine).
                        let again = defs
                            .iter()
                            .copied()
                            .find(|r| uses.contains(r) && st.rmw_regs.contains(r));
                        if let Some(r) = again {
                            Self::fail(
                                plan,
                                C7515_DEFINES_ACCUMULATORS,
                                Some(i),
                                Some(r),
                                st.last_wgmma,
                            );
                        }
                        for r in defs.iter().copied().filter(|r| uses.contains(r)) {
                            if f.vregs[r].class == ori_ir::RegClass::Tensor
                                && !st.rmw_regs.contains(&r)
                            {
                                st.rmw_regs.push(r);
                            }
                        }
                        // A wait before the reader; in divergent code ptxas hoists it to
                        // uniform code but still names the reader's line.
                        let close = if st.pipe.open.is_empty() {
                            Close::Nothing
                        } else if let Some(c) =
                            self.commit_after_reads(b, i).filter(|_| !defines_acc)
                        {
                            Close::Hoist(c)
                        } else {
                            // The wait closes the stage here: a commit later in the
                            // block closes an empty group (probe n10).
                            block_wgmma = false;
                            block_issues.clear();
                            Close::CommitBatch
                        };
                        plan.wait(i, close);
                        st.retire_all();
                    }
                    // A write to a register of a wgmma that may still be in flight,
                    // which no rule above handled: undefined behaviour by the PTX ISA
                    // ("accessing the accumulator register or the input register
                    // containing the fragments of matrix A ... without first performing
                    // a wgmma.wait_group ... is undefined behavior"), left alone by
                    // ptxas 13.0.88. ori says so, and in ISA-strict mode waits first.
                    let in_flight_write = (!waited && !failed_here)
                        .then(|| {
                            defs.iter().copied().find(|r| {
                                self.hits(*r, &st.pipe.all())
                                    || st.a_frags.iter().any(|(x, _)| x == r)
                            })
                        })
                        .flatten();
                    let loop_carried_fragment = in_flight_write.filter(|r| {
                        block_fragments.contains(r)
                            && self.f.vregs[*r].class != ori_ir::RegClass::Tensor
                            && self.in_loop[b]
                    });
                    if let Some(r) = loop_carried_fragment {
                        // An A fragment rewritten, in a run-time loop, after the
                        // wgmma of its own block that reads it and while that may
                        // be in flight (seed 003: "in the same basic block and after
                        // the WGMMA"): the next iteration's wgmma reads the same
                        // register, which ptxas cannot rename (C7513, `heldout2_13`;
                        // a load at the loop top is fine, `heldout_29`; ptxas is
                        // also clean when it unrolls the loop, which ori does not
                        // model).
                        Self::fail(plan, C7513_DEFINES_INPUTS, Some(i), Some(r), st.last_wgmma);
                    } else if let Some(r) = in_flight_write {
                        let close = Close::for_open(&st.pipe);
                        if plan.injecting() && plan.first(Seen::UbWrite, i) {
                            plan.ub_writes.push((i, r, close));
                        }
                        if self.isa_strict {
                            if close == Close::CommitBatch {
                                block_wgmma = false;
                                block_issues.clear();
                            }
                            st.retire_all();
                        }
                    }
                    let f = self.f;
                    st.read_touched.extend(
                        uses.iter()
                            .copied()
                            .filter(|r| f.vregs[*r].class == ori_ir::RegClass::Tensor),
                    );
                    block_wgmma_defs.retain(|(r, _)| !defs.contains(r));
                    // A later wgmma needs an arrive after writes to its registers. Plain
                    // reads do not count, of A fragments or of accumulators: on ptxas
                    // 13.0.88 `commit; add f0, d0, d1; wgmma {d..}` gets a wait before
                    // the add and no arrive before the wgmma. Nor does a write of an
                    // A fragment between an arrive and the first wgmma after it
                    // (`attempt_c7513_def_rega_after_fence` compiles clean, while
                    // `heldout_09` and `heldout_12` get C7519).
                    // R-copy-is-no-write: a plain copy (`mov`, also the unpack
                    // `mov.b64 {lo, hi}, x`) of registers not written since the
                    // last arrive gives its destination no new value; ptxas
                    // coalesces it, and a wgmma taking it (CUTLASS's sparse
                    // metadata, unpacked from a 64-bit load before the fence)
                    // needs no arrive (`tests/real/cutlass/sparse_*`).
                    let plain_copy = !self.isa_strict
                        && &*d.name == "mov"
                        && d.guard.is_none()
                        && !uses.is_empty()
                        && d.slots
                            .iter()
                            .all(|s| !matches!(s.op, ori_ir::Operand::Imm(_)))
                        && uses.iter().all(|u| {
                            !st.touched.contains(u) && f.vregs[*u].class != ori_ir::RegClass::Tensor
                        });
                    for &r in defs.iter().filter(|_| !sunk_kill && !plain_copy) {
                        if f.vregs[r].class == ori_ir::RegClass::Tensor || st.wgmma_since_arrive {
                            st.touched.insert(r);
                        } else {
                            st.read_touched.insert(r);
                        }
                    }
                }
            }
        }
        st.block_wgmma = block_wgmma;
        st.fresh_arrive = fresh_arrive;
        st.block_issues = block_issues;
        st
    }

    /// C7515 at a join (not a loop header) where one path brings an
    /// accumulator set in flight and another path, in blocks of its own
    /// (not dominating the join) where the set was never issued, wrote some
    /// of its registers with a plain instruction: ptxas merges a fresh value
    /// into the accumulator registers while the group is in flight (Triton's
    /// zero-trip block around a `wait_group 1` mainloop:
    /// `tests/triton2/accread_partial_*`, `tests/triton/fp8e4m3_128x256x128_*`).
    /// A write before the split is the same value on every path, and a path
    /// that issued the set joins a value the wgmma chain produced
    /// (`c7517_uniform_branch_read_acc`). Only joins with a set in flight are
    /// looked at, and only the straight-line blocks above each predecessor
    /// up to the join's dominator, so the cost stays linear.
    fn check_plain_joins(&self, outs: &SecondaryMap<Block, Option<State>>, plan: &mut Plan) {
        if plan.failure.is_some() {
            return;
        }
        let dt = ori_ir::DominatorTree::compute(&self.cfg);
        for &j in self.cfg.rpo() {
            let preds = self.cfg.preds(j);
            if preds.len() < 2 || preds.iter().any(|p| dt.dominates(j, *p)) {
                continue;
            }
            let mut flying: SmallVec<[u32; 4]> = SmallVec::new();
            for p in preds {
                if let Some(o) = &outs[*p] {
                    add_all(&mut flying, o.pipe.all());
                }
            }
            if flying.is_empty() {
                continue;
            }
            for &p in preds {
                let carries = outs[p].as_ref().is_some_and(|o| !o.pipe.is_empty());
                if carries {
                    continue;
                }
                let Some(at) = self.fresh_write_above(p, j, &flying, &dt) else {
                    continue;
                };
                // The written set must never have been issued on the way here.
                let sets: SmallVec<[u32; 4]> = self.f.insts[at]
                    .defs()
                    .iter()
                    .flat_map(|r| self.reg_sets[*r].iter().copied())
                    .collect();
                let mut up = Some(p);
                let mut issued_above = false;
                while let Some(b) = up {
                    if self.f.layout.block_insts(b).iter().any(|i| {
                        let d = &self.f.insts[*i];
                        d.opcode == Opcode::WgmmaMmaAsync
                            && d.accum.is_some_and(|w| {
                                sets.contains(&crate::accumulator_sets::word_index(w.dst))
                            })
                    }) {
                        issued_above = true;
                        break;
                    }
                    up = dt.idom(b).filter(|x| *x != b);
                }
                if !issued_above {
                    Self::fail(plan, C7515_DEFINES_ACCUMULATORS, Some(at), None, None);
                    // ptxas sees the fresh value at this join, not a wait to add.
                    plan.waits
                        .retain(|w| self.f.layout.inst_block(w.at) != Some(j));
                    return;
                }
            }
        }
    }

    /// A plain write of a register of `sets` in the straight-line blocks from
    /// `p` up to (not including) a block dominating `j`, none of which issues
    /// a wgmma.
    fn fresh_write_above(
        &self,
        mut p: Block,
        j: Block,
        sets: &[u32],
        dt: &ori_ir::DominatorTree,
    ) -> Option<Inst> {
        let mut found = None;
        loop {
            if dt.dominates(p, j) {
                return found;
            }
            for &i in self.f.layout.block_insts(p) {
                let d = &self.f.insts[i];
                if d.opcode == Opcode::WgmmaMmaAsync {
                    return None;
                }
                if d.opcode == Opcode::Generic && d.defs().iter().any(|r| self.hits(*r, sets)) {
                    found.get_or_insert(i);
                }
            }
            match self.cfg.preds(p) {
                [q] => p = *q,
                _ => return found,
            }
        }
    }

    fn plan(&self) -> Plan {
        let mut plan = Plan::default();
        // `None`: not reached yet (the bottom of the lattice), so that the first
        // path into a block does not count as differing from an empty state.
        let mut entry: SecondaryMap<Block, Option<State>> = SecondaryMap::new();
        let mut outs: SecondaryMap<Block, Option<State>> = SecondaryMap::new();
        let mut first_seen: SecondaryMap<Block, Option<State>> = SecondaryMap::new();
        let Some(&first) = self.cfg.rpo().first() else {
            return plan;
        };
        entry[first] = Some(State {
            no_arrive: true,
            ..State::default()
        });
        // Fixpoint over the CFG (loops included): states only grow.
        let mut changed = true;
        let mut rounds = 0;
        while changed && rounds < 64 {
            changed = false;
            rounds += 1;
            for &b in self.cfg.rpo() {
                let Some(start) = entry[b].clone() else {
                    continue;
                };
                if rounds == 1 {
                    first_seen[b] = Some(start.clone());
                }
                let mut scratch = Plan::default();
                let mut out = self.walk_block(b, start, &mut scratch);
                let ex = &self.exposed;
                out.touched.retain(|r| ex[*r]);
                out.read_touched.retain(|r| ex[*r]);
                out.shapes.retain(|(r, _)| ex[*r]);
                outs[b] = Some(out.clone());
                for &s in self.cfg.succs(b) {
                    // R-kept-loop-back-edge: what the user's waits taught the
                    // walk does not go round a loop ptxas keeps (see `loops`).
                    let kept_back = self.kept_back_edges.contains(&(b, s));
                    let carried = if kept_back && out.user_waited {
                        let mut o = out.clone();
                        o.user_waited = false;
                        std::borrow::Cow::Owned(o)
                    } else {
                        std::borrow::Cow::Borrowed(&out)
                    };
                    match &mut entry[s] {
                        Some(e) => changed |= e.join(&carried),
                        slot @ None => {
                            *slot = Some(carried.into_owned());
                            changed = true;
                        }
                    }
                }
            }
        }
        // Decide (R-first-visit): ptxas judges each block on its first pass,
        // with the state its forward edges bring, and again once the states
        // converged; a decision is never taken back. Both visits are made
        // here over solved states, not while the fixpoint still moves:
        // `heldout_30`, `heldout3_17`, `heldout4_34`, `heldout5_20` get
        // their C7514 from the first visit (on the converged state the set
        // was also retired by the previous iteration's group, which passes
        // unchecked), `c7514_loop_pure_read_before_commit` its C7517 from
        // the first visit and its C7514 from the converged one.
        for &b in self.cfg.rpo() {
            if let Some(start) = first_seen[b].clone() {
                self.walk_block(b, start, &mut plan);
            }
        }
        for &b in self.cfg.rpo() {
            if let Some(start) = entry[b].clone() {
                self.walk_block(b, start, &mut plan);
            }
        }
        self.check_plain_joins(&outs, &mut plan);
        for b in std::mem::take(&mut plan.bare_exits) {
            let ret = self.f.layout.block_insts(b)[0];
            for &p in self.cfg.preds(b) {
                let Some(out) = &outs[p] else { continue };
                if out.pipe.is_empty() {
                    continue;
                }
                let close = Close::for_open(&out.pipe);
                let last = self.f.layout.block_insts(p).last().copied();
                match last.filter(|l| self.f.insts[*l].opcode == Opcode::Branch) {
                    Some(br) => plan.wait(br, close),
                    None => plan.wait(ret, close),
                }
            }
        }
        plan
    }
}

fn internal(name: &str, slots: Vec<Slot>, line: u32) -> InstData {
    InstData::new("_warpgroup", &[name], slots, line)
}

fn wait0(line: u32) -> InstData {
    internal(
        "wait",
        vec![Slot::use_(Operand::Imm(ori_ir::Imm::Int(0)))],
        line,
    )
}

/// Serialization fallback (seed `sub_AE47B0`): drop every arrive, commit and
/// wait (injected or written), then give every wgmma its own arrive before
/// and commit + wait 0 after. The commits in `empty` close empty groups:
/// ptxas has made each a dummy wgmma by then, and serializes it like the
/// others (`c7520_divergent_commit`: ARRIVE, HGMMA.64x8x16.F16, DEPBAR), so
/// they stay, between an arrive and a wait.
pub fn serialize(f: &mut Function, empty: &[Inst], why: ori_ir::Serialization) {
    // One rebuild per block (`Layout::begin_batch`); the queries below see
    // the original order, which has the same wgmmas and empty commits.
    f.layout.begin_batch();
    let injected: Vec<Inst> = f
        .layout
        .all_insts()
        .filter(|i| {
            let op = f.insts[*i].opcode;
            (op.is_arrive() || op.is_wait() || op.is_commit()) && !empty.contains(i)
        })
        .collect();
    for i in injected {
        f.layout.remove_inst(i);
    }
    for &c in empty {
        if f.layout.inst_block(c).is_some() {
            let line = f.insts[c].line;
            f.insert_before(c, internal("arrive", vec![], line));
            f.insert_after(c, wait0(line));
        }
    }
    let wgmmas: Vec<Inst> = f
        .layout
        .all_insts()
        .filter(|i| f.insts[*i].opcode == Opcode::WgmmaMmaAsync)
        .collect();
    for w in wgmmas {
        let line = f.insts[w].line;
        f.insert_before(w, internal("arrive", vec![], line));
        let c = f.insert_after(w, internal("commit_batch", vec![], line));
        f.insert_after(c, wait0(line));
    }
    f.layout.end_batch();
    f.serialized = Some(why);
}

/// Where a wait for instruction `i` goes: before `i` in uniform code, else
/// before the terminator of the nearest dominating uniform block.
fn hoist_to_uniform(f: &Function, uni: &Uniformity, dt: &ori_ir::DominatorTree, i: Inst) -> Inst {
    let Some(mut b) = f.layout.inst_block(i) else {
        return i;
    };
    if !uni.divergent_block[b] {
        return i;
    }
    while uni.divergent_block[b] {
        match dt.idom(b) {
            Some(p) if p != b => b = p,
            _ => return i,
        }
    }
    f.layout.block_insts(b).last().copied().unwrap_or(i)
}

fn describe(f: &Function, i: Inst) -> String {
    let mut s = String::new();
    ori_ir::write::write_inst(&mut s, f, &f.insts[i]);
    s
}

impl Pass for FixupGmmaSequence {
    fn name(&self) -> &'static str {
        "FixupGmmaSequence"
    }

    fn phase(&self) -> u32 {
        PHASE_FIXUP_GMMA_SEQUENCE
    }

    fn run(&self, f: &mut Function, cx: &mut PassContext<'_>) {
        run_fixup(f, cx, false)
    }
}

impl Pass for IsaStrictFixupGmmaSequence {
    fn name(&self) -> &'static str {
        "FixupGmmaSequence"
    }

    fn phase(&self) -> u32 {
        PHASE_FIXUP_GMMA_SEQUENCE
    }

    fn run(&self, f: &mut Function, cx: &mut PassContext<'_>) {
        run_fixup(f, cx, true)
    }
}

fn run_fixup(f: &mut Function, cx: &mut PassContext<'_>, isa_strict: bool) {
    {
        let Some(facts) = f.gmma.clone() else { return };
        let calls_pipeline = f.insts.values().any(|d| {
            d.opcode == Opcode::Call
                && d.slots.iter().any(|s| matches!(&s.op, Operand::Sym(n) if cx.module.funcs.get(&**n).is_some_and(|x| x.1)))
        });
        // A function with no GMMA op of its own matters only for the calls it
        // makes to functions with a pipeline, and not under `-c`, where ptxas
        // 13.0.88 keeps callees apart (`clean_func_with_pipeline_c`).
        let has_gmma = f.insts.values().any(|d| d.opcode.is_gmma_family());
        if !has_gmma && (cx.module.compile_only || !calls_pipeline) {
            return;
        }
        let cfg = ControlFlowGraph::compute(f);
        let uni = Uniformity::compute(f, &cfg);
        let mut reg_sets: SecondaryMap<VReg, SmallVec<[u32; 2]>> = SecondaryMap::new();
        for (k, set) in facts.sets.iter().enumerate() {
            for r in set {
                reg_sets[*r].push(k as u32);
            }
        }
        let dt = ori_ir::DominatorTree::compute(&cfg);
        let mut fragment_sets = FxHashSet::default();
        for d in f.insts.values() {
            if d.opcode == Opcode::WgmmaMmaAsync {
                for r in a_fragment_regs(d) {
                    fragment_sets.extend(reg_sets[r].iter().copied());
                }
            }
        }
        let walker = Walker {
            f,
            sets: &facts.sets,
            reg_sets,
            uni,
            blocks: PtxasBlocks::compute(f, &cfg),
            in_loop: crate::loops::runtime_loop_blocks(f, &cfg, &dt),
            kept_back_edges: crate::loops::kept_back_edges(f, &cfg, &dt),
            committing_loop_header: crate::loops::committing_loop_headers(f, &cfg, &dt),
            budget: in_flight_budget(f, cx.module.maxrregcount),
            wait_above: {
                let mut m = SecondaryMap::new();
                let mut seen = false;
                for i in f.layout.all_insts() {
                    m[i] = seen;
                    seen |= f.insts[i].opcode == Opcode::WgmmaWaitGroup;
                }
                m
            },
            fragment_sets,
            loop_header: {
                let mut h = SecondaryMap::new();
                for &s in cfg.rpo() {
                    for &t in cfg.succs(s) {
                        if dt.dominates(t, s) {
                            h[t] = true;
                        }
                    }
                }
                h
            },
            cfg,
            module: cx.module,
            isa_strict,
            exposed: exposed_regs(f),
            pos: {
                let mut pos = SecondaryMap::new();
                for &b in f.layout.blocks() {
                    for (k, &i) in f.layout.block_insts(b).iter().enumerate() {
                        pos[i] = k as u32;
                    }
                }
                pos
            },
        };
        let mut plan = walker.plan();
        let (walker_cfg, walker_uni) = (walker.cfg, walker.uni);
        let dt = ori_ir::DominatorTree::compute(&walker_cfg);
        // A wait injected into a loop ptxas unrolls with a remainder is refused
        // by its late check (C7514; see `loops`): a small loop with a run-time
        // trip count (R-unrolled-loop-wait).
        if plan.failure.is_none() {
            let in_loop = crate::loops::unrolled_runtime_loop_blocks(f, &walker_cfg, &dt);
            let looped = plan.waits.iter().find(|w| {
                !f.insts[w.at].opcode.is_terminator()
                    && f.layout.inst_block(w.at).is_some_and(|b| in_loop[b])
            });
            if let Some(w) = looped {
                plan.failure = Some(Failure {
                    code: C7514_READS_ACCUMULATORS,
                    inst: Some(w.at),
                    reg: None,
                    wgmma: None,
                    shared_accumulators: false,
                });
            }
        }
        if plan.failure.is_none() && over_function_limit(f, &facts.sets, cx.module.maxrregcount) {
            plan.failure = Some(Failure {
                code: C7512_FUNCTION_REGISTERS,
                inst: None,
                reg: None,
                wgmma: None,
                shared_accumulators: false,
            });
        }
        let fname = f.name.to_string();
        let mut diags = Vec::new();
        // Advisories: arrives then waits, each in program order (as ptxas prints them).
        plan.arrives.sort_by_key(|i| f.layout.order_key(*i));
        plan.waits.sort_by_key(|w| f.layout.order_key(w.at));
        let advisory = |code: u32, i: Inst, message: String, why: &str, help: &str| {
            let line = f.insts[i].line;
            let mut d = Diagnostic::new(Severity::Info, Some(code), message);
            d.function = Some(fname.clone());
            d.culprit = Some(Note {
                line,
                inst: Some(describe(f, i)),
                text: why.into(),
            });
            d.help = Some(help.into());
            d
        };
        for &i in &plan.arrives {
            diags.push(advisory(
                C7519_ARRIVE_INJECTED,
                i,
                messages::arrive_injected(f.insts[i].line, &fname),
                "this wgmma uses registers accessed since the last warpgroup arrive",
                "put wgmma.fence between the last access of these registers and this wgmma",
            ));
        }
        for &WaitAt { at: i, line, .. } in &plan.waits {
            diags.push(advisory(
                C7517_WAIT_INJECTED,
                i,
                messages::wait_injected(line.unwrap_or(f.insts[i].line), &fname),
                "this instruction reads an accumulator of a wgmma still in flight",
                "put wgmma.commit_group + wgmma.wait_group before this instruction",
            ));
        }
        // ori's own notes go after everything ptxas prints. A serialized
        // function waits after every wgmma and arrives before each, so none
        // of what they point at remains.
        let mut notes = Vec::new();
        if plan.failure.is_some() {
            plan.ub_writes.clear();
            plan.ub_arrives.clear();
        }
        plan.ub_writes
            .sort_by_key(|(i, _, _)| f.layout.order_key(*i));
        // One ori-only note (no code, left out of ptxas's layout) per access.
        let note = |i: Inst, message: String, culprit: String, help: &str| {
            let mut d = Diagnostic::new(Severity::Note, None, message);
            d.function = Some(fname.clone());
            d.culprit = Some(Note {
                line: f.insts[i].line,
                inst: Some(describe(f, i)),
                text: culprit,
            });
            d.help = Some(help.into());
            d
        };
        for &(i, r, _) in &plan.ub_writes {
            notes.push(note(
                i,
                format!(
                    "line {}: this instruction accesses register {} of a wgmma that may still be in flight; the PTX ISA makes this undefined and ptxas 13.0.88 does not fix it{}",
                    f.insts[i].line,
                    f.vregs[r].name,
                    if isa_strict { "; ori waits before it (ISA-strict mode)" } else { "" }
                ),
                format!(
                    "{} {}",
                    if f.insts[i].defs().contains(&r) { "writes" } else { "reads" },
                    f.vregs[r].name
                ),
                "wgmma.commit_group + wgmma.wait_group before this write, or write another register",
            ));
        }
        plan.ub_arrives.sort_by_key(|i| f.layout.order_key(*i));
        for &i in &plan.ub_arrives {
            notes.push(note(
                i,
                format!(
                    "line {}: the PTX ISA wants a wgmma.fence before this wgmma (its registers were read, or used by a wgmma of another shape, since the last one); ptxas 13.0.88 gives none{}",
                    f.insts[i].line,
                    if isa_strict { "; ori arrives before it (ISA-strict mode)" } else { "" }
                ),
                "no fence since the last access of its registers".into(),
                "wgmma.fence before this wgmma",
            ));
        }
        // Apply the injections, all in one rebuild of each block they touch
        // (`Layout::begin_batch`): anchors are instructions already laid out,
        // and the one query made meanwhile (`hoist_to_uniform`: a block's
        // last instruction) does not see the insertions.
        f.layout.begin_batch();
        for &(reader, rmw) in &plan.sinks {
            f.layout.remove_inst(reader);
            f.layout.insert_after(reader, rmw);
        }
        for &w in &plan.implicit_commits {
            let line = f.insts[w].line;
            f.insert_before(w, internal("commit_batch", vec![], line));
        }
        if isa_strict && plan.failure.is_none() {
            for &(i, _, close) in &plan.ub_writes {
                plan.waits.push(WaitAt {
                    at: i,
                    close,
                    line: None,
                });
            }
        }
        for &WaitAt { at: i, close, .. } in &plan.waits {
            let line = f.insts[i].line;
            let at = hoist_to_uniform(f, &walker_uni, &dt, i);
            match close {
                Close::Nothing => {}
                Close::CommitBatch => {
                    f.insert_before(at, internal("commit_batch", vec![], line));
                }
                Close::Hoist(c) => {
                    f.layout.remove_inst(c);
                    f.layout.insert_before(c, at);
                }
            }
            f.insert_before(at, wait0(line));
        }
        for &(copy, end) in &plan.copy_sinks {
            f.layout.remove_inst(copy);
            f.layout.insert_before(copy, end);
        }
        // Arrives last, so that one before a wgmma that also waits comes
        // after the wait, next to the wgmma.
        for &i in &plan.arrives {
            let line = f.insts[i].line;
            f.insert_before(i, internal("arrive", vec![], line));
        }
        if isa_strict && plan.failure.is_none() {
            for &i in &plan.ub_arrives {
                let line = f.insts[i].line;
                f.insert_before(i, internal("arrive", vec![], line));
            }
        }
        f.layout.end_batch();
        if let Some(fail) = &plan.failure {
            let mut d = Diagnostic::new(
                Severity::Info,
                Some(fail.code),
                messages::serialization_message(fail.code, &fname),
            );
            d.function = Some(fname.clone());
            if let Some(i) = fail.inst {
                let reg = fail
                    .reg
                    .map(|r| format!(" (register {})", f.vregs[r].name))
                    .unwrap_or_default();
                d.culprit = Some(Note {
                    line: f.insts[i].line,
                    inst: Some(describe(f, i)),
                    text: format!("culprit{reg}"),
                });
            }
            if let Some(w) = fail.wgmma {
                d.related.push(Note {
                    line: f.insts[w].line,
                    inst: Some(describe(f, w)),
                    text: "in flight from this wgmma".into(),
                });
            }
            d.help = Some(
                if fail.shared_accumulators {
                    messages::C7511_SHARED_SET_HELP
                } else {
                    messages::help(fail.code)
                }
                .to_string(),
            );
            diags.push(d);
            serialize(
                f,
                &plan.empty_commits,
                ori_ir::Serialization {
                    code: fail.code,
                    shared_accumulators: fail.shared_accumulators,
                },
            );
        }
        cx.diags.extend(diags);
        cx.diags.extend(notes);
    }
}
