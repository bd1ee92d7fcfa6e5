//! The interpreter: each cluster of the grid (one CTA, or several that run
//! together: see [`cluster`]); in it, each warpgroup (128 threads in
//! lockstep) runs until it waits at a barrier or exits.
//!
//! Every instruction runs for all threads whose guard holds and that are
//! on its path: a divergent branch splits the warpgroup's threads, and the
//! two sides join again at the branch's immediate post-dominator
//! ([`crate::reconvergence`]). The scheduler runs one warpgroup at a time,
//! in a fixed order or, with a seed, a random one ([`Schedule`]).
//!
//! wgmma is asynchronous, as on the GPU: `wgmma.mma_async` computes its
//! result from its inputs at issue, but the result reaches the accumulator
//! registers only when a `wgmma.wait_group` retires its group;
//! `wgmma.commit_group` (and phase 87's `_warpgroup.commit_batch`) closes
//! the open group. A later wgmma accumulating into the same registers chains
//! on the pending result, as the hardware does. Any other instruction that
//! reads or writes a register a wgmma in flight will write is reported as
//! a hazard naming both (see [`hazards`]): the PTX ISA leaves such an
//! access undefined, and that is exactly what phase 87's waits are there to
//! prevent. The run goes on with the register as it was.

use crate::async_copy::{AsyncCopies, PendingCopy};
use crate::barriers::Barriers;
use crate::bit_ops;
use crate::matrix_fragments::{self, Rows};
use crate::mbarrier::MBarriers;
use crate::memory::{shared_vars, type_bytes, GlobalMemory, Shared};
use crate::proxy_fence::GenericWrites;
use crate::reconvergence::{Frame, LaneMask, PostDominators};
use crate::tensor_map::TensorMap;
use crate::tma_fill::{parity_aliased, Fill, Seen, TmaFills};
use crate::wgmma_math::{self, AOperand, Mma, WARPGROUP};
use cranelift_entity::EntityRef;
use fxhash::FxHashMap;
use ori_ir::WgmmaA;
use ori_ir::{AddrBase, Block, Function, Imm, Inst, InstData, Module, Opcode, Operand, VReg};
use std::collections::VecDeque;

pub use crate::error::{Fault, Hazard, HazardKind, HostError};

/// How to launch the kernel.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Kernel parameters in declaration order (pointers are global addresses).
    pub params: Vec<u64>,
    /// Size of `.extern .shared` arrays, in bytes.
    pub dynamic_shared: u64,
    /// Instructions (warpgroup steps) per CTA after which the run is stopped.
    pub step_limit: u64,
    /// CTAs in x, y, z (`%nctaid`); each runs in turn, with `%ctaid` set
    /// and shared memory of its own.
    pub grid: [u32; 3],
    /// Threads per CTA in x, y, z (`%ntid`), at most 1024: warpgroups of
    /// 128 threads (the last one possibly partial).
    pub block: [u32; 3],
    /// The bytes of array parameters by index (a `.param .b8 p[128]` tensor
    /// map); every other parameter takes its value from `params`.
    pub param_bytes: Vec<(usize, Vec<u8>)>,
    /// Report an async-proxy read of shared memory that a generic write
    /// left unfenced (see [`crate::proxy_fence`]); on by default.
    pub check_proxy: bool,
    /// Look for data races on shared memory between the warps of a CTA
    /// (and across a cluster's distributed shared memory), see
    /// [`crate::races`]; on by default.
    pub race_check: bool,
    /// The order warpgroups run in (see [`Schedule`]).
    pub schedule: Schedule,
    /// Stop at the first hazard the sanitizer finds (it becomes the run's
    /// error, [`Fault::Hazard`]); by default each is reported once per
    /// site in [`RunStats::hazards`] and the run goes on.
    pub stop_on_hazard: bool,
    /// The whole parameter space as bytes (a parameter block recorded on
    /// the GPU, a CUTLASS kernel's `Params`); `params` and `param_bytes`
    /// are then ignored. It must cover every declared parameter.
    pub param_block: Option<Vec<u8>>,
    /// CTAs per thread-block cluster in x, y, z (`%cluster_nctaid`); the
    /// grid must be a whole number of clusters, of at most 8 CTAs (the
    /// portable limit). The CTAs of a cluster run together, each with its
    /// own shared memory, which the others reach (see [`cluster`]).
    pub cluster: [u32; 3],
}

impl Default for Launch {
    fn default() -> Self {
        Launch {
            params: Vec::new(),
            dynamic_shared: 0,
            step_limit: 10_000_000,
            grid: [1, 1, 1],
            block: [WARPGROUP as u32, 1, 1],
            param_bytes: Vec::new(),
            check_proxy: true,
            stop_on_hazard: false,
            race_check: true,
            schedule: Schedule::Deterministic,
            param_block: None,
            cluster: [1, 1, 1],
        }
    }
}

/// The order in which a cluster's warpgroups run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Schedule {
    /// Each warpgroup runs until it blocks (a barrier, an incomplete
    /// mbarrier wait, the cluster barrier) or exits; the next is taken
    /// round robin. The same run every time.
    #[default]
    Deterministic,
    /// A pseudo-random ready warpgroup runs for a pseudo-random number of
    /// steps (1 to 64) before the next pick, from this seed: another
    /// interleaving per seed, the same one for the same seed (each
    /// cluster's stream is the seed mixed with the cluster's index), so a
    /// run that shows an order-dependent bug replays.
    Random {
        /// The seed.
        seed: u64,
    },
}

/// What a finished run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
    /// The hazards the sanitizer found, the first of each site (kind and
    /// lines), in grid order.
    pub hazards: Vec<Hazard>,
    /// Instructions executed (warpgroup steps).
    pub steps: u64,
    /// wgmma issued.
    pub wgmma: u64,
    /// Groups retired by waits.
    pub groups_retired: u64,
}

/// A write a wgmma in flight will make: each thread's new accumulators.
struct PendingMma {
    regs: Vec<VReg>,
    /// The lowest and highest of `regs`.
    span: (VReg, VReg),
    /// The new accumulators, register-major: `regs[j]` of thread `t` is
    /// `values[j * WARPGROUP + t]`.
    values: Vec<u32>,
    line: u32,
    /// The shared-memory granules it reads, in increasing order, each once
    /// (when the race detector runs):
    /// its reads last until a wait retires it.
    reads: Vec<u32>,
}

/// One warpgroup's own state: its threads' registers, its wgmma pipeline,
/// its `cp.async` groups, and where it is in the program.
#[derive(Default)]
struct Warpgroup {
    /// Its number in the CTA (thread `t` of it is CTA thread `128 index + t`).
    index: usize,
    /// Threads of it that exist (128, or fewer in the last one).
    live: usize,
    regs: LaneRegs,
    open: Vec<PendingMma>,
    committed: VecDeque<Vec<PendingMma>>,
    in_flight: wgmma::InFlight,
    copies: AsyncCopies,
    /// The reconvergence stack: the top runs (see [`crate::reconvergence`]);
    /// empty once every thread exited.
    stack: Vec<Frame>,
    /// Waiting at a barrier.
    waiting: bool,
    /// Yielded at an incomplete mbarrier wait (its line), when the
    /// mbarriers were at this epoch: it cannot progress until they change.
    yielded: Option<(u64, u32)>,
    /// The mbarrier (offset) of its last incomplete wait, for a deadlock
    /// report.
    waits_on: Option<u64>,
    /// The mbarrier phases it has seen complete (the TMA check).
    seen: Seen,
    /// Threads of it that arrived at the cluster barrier and have not
    /// waited yet, and the cluster barrier phase they arrived in.
    cluster_arrived: LaneMask,
    cluster_phase: u64,
    /// Blocked at `barrier.cluster.wait` (its line) while the cluster
    /// barrier was in this phase: it runs again once the phase completes.
    cluster_wait: Option<(u64, u32)>,
    /// wgmma operands it decoded (see [`operand_cache`]).
    operands: OperandCache,
    /// Value lists of retired wgmma, for the next results.
    spare_values: Vec<Vec<u32>>,
}

impl Warpgroup {
    /// Whether some thread of it has not exited.
    fn running(&self) -> bool {
        !self.stack.is_empty()
    }

    /// The threads running now.
    fn lanes(&self) -> LaneMask {
        self.stack.last().map_or(0, |f| f.lanes)
    }

    /// Control reaches block `b` (a jump or a fall-through; `None`: past the
    /// last block, which ends the threads): a frame whose reconvergence
    /// block that is ends, its threads joining the frame below.
    fn enter(&mut self, b: Option<Block>) {
        let Some(top) = self.stack.last_mut() else {
            return;
        };
        match b {
            Some(b) => top.at = (b, 0),
            None => {
                let gone = top.lanes;
                self.exit(gone);
                return;
            }
        }
        while let Some(top) = self.stack.last() {
            if top.until == Some(top.at.0) && top.at.1 == 0 {
                self.stack.pop();
            } else {
                break;
            }
        }
    }

    /// Threads `gone` exit: out of every frame; frames left empty end.
    fn exit(&mut self, gone: LaneMask) {
        for fr in &mut self.stack {
            fr.lanes &= !gone;
        }
        while self.stack.last().is_some_and(|f| f.lanes == 0) {
            self.stack.pop();
        }
        // A frame below may now be at its own reconvergence block.
        while let Some(top) = self.stack.last() {
            if top.until == Some(top.at.0) && top.at.1 == 0 {
                self.stack.pop();
            } else {
                break;
            }
        }
    }
}

struct Machine<'a> {
    f: &'a Function,
    /// Each parameter's offset in the parameter space.
    param_at: FxHashMap<&'a str, u64>,
    /// The parameter space: every parameter's bytes, laid out as declared.
    param_mem: Vec<u8>,
    mbarriers: MBarriers,
    /// Generic-proxy writes to shared memory not yet fenced (the sanitizer).
    proxy: GenericWrites,
    /// Shared memory TMA loads filled, with the mbarrier phase that makes
    /// it readable (the sanitizer).
    fills: TmaFills,
    /// CTA barriers completed.
    cta_barriers: u64,
    /// Line of the instruction running.
    line: u32,
    /// Whether the proxy check is on.
    check_proxy: bool,
    /// What the sanitizer found (see [`hazards`]).
    reports: hazards::Reports,
    /// The race detector, when the launch asks for it (see [`crate::races`]).
    races: Option<crate::races::Races>,
    shared_addr: FxHashMap<String, u64>,
    shared: Shared,
    global: &'a GlobalMemory,
    /// The warpgroup running now (the others wait in `run_cluster`).
    wg: Warpgroup,
    /// Where divergent threads meet again.
    pdom: PostDominators,
    /// The instructions `lane_ops` runs, by `Inst` (see [`LaneOp`]).
    lane_ops: &'a [Option<LaneOp>],
    /// Their result and immediate rows, reused from step to step.
    lane_scratch: Box<[[u64; WARPGROUP]; 4]>,
    stats: RunStats,
    ctaid: [u32; 3],
    grid: [u32; 3],
    block: [u32; 3],
    /// The cluster's shape, the running CTA's rank in it, the memory of its
    /// other CTAs (`peers[rank]` holds nothing while `rank` runs: its state
    /// is the fields above) and its barrier (see [`cluster`]).
    cluster: [u32; 3],
    rank: usize,
    peers: Vec<cluster::CtaMemory>,
    cluster_bar: cluster::ClusterBarrier,
}

type Res<T> = Result<T, Fault>;

/// `Err` of a [`Fault::Invalid`] with a formatted message.
macro_rules! fault {
    ($($t:tt)*) => {
        $crate::error::Fault::Invalid(format!($($t)*))
    };
}

// What each instruction does, by family; this module keeps the machine,
// the scheduler and the step that dispatches to them.
mod alu;
pub mod cluster;
mod hazards;
mod indexed_branch;
mod int_arith;
mod interleave;
mod lane_ops;
mod lane_regs;
mod memory_ops;
mod operand_cache;
mod race_hooks;
mod sync_ops;
mod warp_mma;
mod warp_ops;
mod wgmma;

use alu::AluShape;
use lane_ops::LaneOp;
use lane_regs::LaneRegs;
use memory_ops::Access;
use operand_cache::OperandCache;

/// Run entry `name` of `m` with `launch`, on `global`: every cluster of
/// the grid, in parallel (the first error in x-fastest order is reported).
/// An error names the CTA it stopped in.
pub fn run(
    m: &Module,
    name: &str,
    launch: &Launch,
    global: &GlobalMemory,
) -> Result<RunStats, HostError> {
    run_with_progress(m, name, launch, global, &|_, _| {})
}

/// [`run`], telling `progress(done, total)` after each CTA (for a progress
/// bar on long runs).
pub fn run_with_progress(
    m: &Module,
    name: &str,
    launch: &Launch,
    global: &GlobalMemory,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<RunStats, HostError> {
    use rayon::prelude::*;
    let [gx, gy, gz] = launch.grid;
    let total_ctas = u64::from(gx) * u64::from(gy) * u64::from(gz);
    if gx == 0 || gy == 0 || gz == 0 {
        return Err(HostError::new(
            0,
            Fault::Launch(format!("an empty grid {gx},{gy},{gz}")),
        ));
    }
    let [cx, cy, cz] = launch.cluster;
    let size = u64::from(cx) * u64::from(cy) * u64::from(cz);
    if size == 0
        || size > u64::from(cluster::MAX_CLUSTER)
        || gx % cx != 0
        || gy % cy != 0
        || gz % cz != 0
    {
        return Err(HostError::new(
            0,
            Fault::Launch(format!(
                "a cluster of {cx}x{cy}x{cz} CTAs for a grid of {gx}x{gy}x{gz}: the grid must be a whole number of clusters, of 1 to {} CTAs",
                cluster::MAX_CLUSTER
            )),
        ));
    }
    // Every cluster, in parallel across the cores; a CTA's shared memory
    // and warpgroups are its own (its cluster's CTAs reach its shared
    // memory), global memory is shared (see `memory`). The error reported
    // is the first cluster's in x-fastest order.
    let done = std::sync::atomic::AtomicU64::new(0);
    // The common integer instructions, decoded once for every CTA.
    let lane_ops = m
        .by_name
        .get(name)
        .map(|id| LaneOp::decode_function(&m.funcs[*id]))
        .unwrap_or_default();
    let [nx, ny, nz] = [gx / cx, gy / cy, gz / cz];
    let clusters: Vec<[u32; 3]> = (0..nz)
        .flat_map(|z| (0..ny).flat_map(move |y| (0..nx).map(move |x| [x, y, z])))
        .collect();
    let results: Vec<Result<RunStats, HostError>> = clusters
        .par_iter()
        .map(|&id| {
            let one = cluster::run_cluster(m, name, launch, global, &lane_ops, id);
            let n = done.fetch_add(size, std::sync::atomic::Ordering::Relaxed) + size;
            progress(n, total_ctas);
            one
        })
        .collect();
    let mut total = RunStats::default();
    let mut found = Vec::new();
    let mut first_error = None;
    for r in results {
        match r {
            Ok(one) => {
                total.steps += one.steps;
                total.wgmma += one.wgmma;
                total.groups_retired += one.groups_retired;
                found.extend(one.hazards);
            }
            Err(mut e) => {
                found.append(&mut e.hazards);
                first_error = first_error.or(Some(e));
            }
        }
    }
    let hazards = hazards::merge(found);
    match first_error {
        Some(e) => Err(HostError { hazards, ..e }),
        None => Ok(RunStats { hazards, ..total }),
    }
}

/// The most shared memory a CTA of sm_90 has (227 KiB).
pub const MAX_SHARED: u64 = 227 * 1024;

/// The most parameter bytes a kernel may have (CUDA 12.1+ on Hopper).
pub const MAX_PARAMS: u64 = 32764;

/// Generic addresses of the parameter space start here: above shared
/// memory, below the global buffers (`cvta.param` adds it).
pub const PARAM_GENERIC: u64 = 1 << 39;

/// Generic addresses of shared memory start here (`cvta.shared` adds it,
/// `cvta.to.shared` takes it away): the running CTA's shared::cta
/// addresses, then its cluster's shared::cluster window (see [`cluster`]).
/// Nothing is mapped below it, so that a generic access through a null
/// pointer (plus an offset) is an error, as on the GPU, rather than a
/// read of shared memory. Instructions that take a shared address accept
/// its generic form too.
pub const SHARED_GENERIC: u64 = 1 << 32;

/// A parameter's size and alignment from its declared type
/// (`.u64 .ptr .global .align 1`, `.b8 .align 64 [128]`).
fn param_size_align(ty: &str) -> (u64, u64) {
    let mut elem = 8;
    let mut align = None;
    let mut count = 1;
    let words: Vec<&str> = ty.split_whitespace().collect();
    for (k, w) in words.iter().enumerate() {
        if let Some(b) = type_bytes(w.trim_start_matches('.')) {
            elem = b;
        } else if *w == ".align" {
            align = words.get(k + 1).and_then(|a| a.parse().ok());
        } else if let Some(n) = w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            count = n.parse().unwrap_or(1);
        }
    }
    (elem * count, align.unwrap_or(elem).max(1))
}

/// The parameter space of `f` for `launch`: each parameter's offset, and
/// the bytes (scalars and pointers from `params`, arrays from `param_bytes`).
fn param_space<'f>(f: &'f Function, launch: &Launch) -> Res<(FxHashMap<&'f str, u64>, Vec<u8>)> {
    let mut at = FxHashMap::default();
    let mut mem = Vec::new();
    for (k, p) in f.params.iter().enumerate() {
        let (size, align) = param_size_align(&p.ty);
        let off = (mem.len() as u64).div_ceil(align) * align;
        if off + size > MAX_PARAMS {
            return Err(fault!(
                "the parameters of '{}' take more than the {MAX_PARAMS} bytes a kernel may have",
                f.name
            ));
        }
        mem.resize((off + size) as usize, 0);
        at.insert(&*p.name, off);
        if launch.param_block.is_some() {
            continue;
        }
        let o = off as usize;
        match launch.param_bytes.iter().find(|(j, _)| *j == k) {
            Some((_, bytes)) => {
                if bytes.len() as u64 != size {
                    return Err(fault!(
                        "parameter {k} ({}) is {size} bytes; {} given",
                        p.name,
                        bytes.len()
                    ));
                }
                mem[o..o + bytes.len()].copy_from_slice(bytes);
            }
            None => {
                let v = launch.params.get(k).copied().unwrap_or(0).to_le_bytes();
                let n = (size as usize).min(8);
                mem[o..o + n].copy_from_slice(&v[..n]);
            }
        }
    }
    if let Some(block) = &launch.param_block {
        if block.len() < mem.len() {
            return Err(fault!(
                "the parameter block is {} bytes; '{}' declares {}",
                block.len(),
                f.name,
                mem.len()
            ));
        }
        mem = block.clone();
    }
    Ok((at, mem))
}

/// Why a warpgroup stopped running (each with the line, but `Exit`).
enum Stop {
    /// Every thread of it exited.
    Exit,
    /// It arrived at a CTA barrier (and is past it).
    Barrier(u32, Arrival),
    /// It found an mbarrier wait incomplete (and is past it).
    Yield(u32),
    /// It waits at `barrier.cluster.wait` (and runs it again when it
    /// runs again).
    ClusterWait(u32),
    /// Its slice of a random schedule ran out (it is ready to go on).
    Preempt,
}

/// Run the warpgroup in `mach.wg` from where it is until it exits,
/// reaches a barrier, yields at an incomplete mbarrier wait or blocks at
/// the cluster barrier (see [`Stop`]).
fn run_warpgroup(
    mach: &mut Machine<'_>,
    step_limit: u64,
    mut slice: u64,
) -> Result<Stop, HostError> {
    let f = mach.f;
    while let Some(&Frame { at: (b, pos), .. }) = mach.wg.stack.last() {
        if slice == 0 {
            return Ok(Stop::Preempt);
        }
        slice -= 1;
        let insts = f.layout.block_insts(b);
        let Some(&i) = insts.get(pos) else {
            mach.wg.enter(f.layout.next_block(b));
            continue;
        };
        mach.stats.steps += 1;
        if mach.stats.steps > step_limit {
            return Err(HostError::new(0, Fault::StepLimit(step_limit)));
        }
        let line = f.insts[i].line;
        let flow = mach.step(i).map_err(|fault| HostError::new(line, fault))?;
        if let Flow::ClusterWait = flow {
            return Ok(Stop::ClusterWait(line));
        }
        if let Some(top) = mach.wg.stack.last_mut() {
            top.at = (b, pos + 1);
        }
        match flow {
            Flow::Next => {}
            Flow::Jump(t) => mach.wg.enter(Some(t)),
            Flow::Exit(lanes) => mach.wg.exit(lanes),
            Flow::Diverge { target, taken } => diverge(mach, b, target, taken),
            Flow::Scatter(sides) => indexed_branch::scatter(mach, b, &sides),
            Flow::Barrier(a) => return Ok(Stop::Barrier(line, a)),
            Flow::Yield => return Ok(Stop::Yield(line)),
            Flow::ClusterWait => {}
        }
    }
    Ok(Stop::Exit)
}

/// The threads of a branch at the end of block `b` split: `taken` go to
/// `target`, the others fall through; all meet at `b`'s immediate
/// post-dominator. The frame on top becomes the join (it waits there with
/// every thread), the fall-through side is pushed under the taken side,
/// which runs first. A side that starts at the join block just waits there;
/// a frame already joining at that block is reused, so a loop whose threads
/// leave one by one does not grow the stack.
fn diverge(mach: &mut Machine<'_>, b: Block, target: Block, taken: LaneMask) {
    let f = mach.f;
    let join = mach.pdom.ipdom(b);
    let fall = f.layout.next_block(b);
    let Some(top) = mach.wg.stack.last_mut() else {
        return;
    };
    let rest = top.lanes & !taken;
    if join.is_some() && top.until == join {
        // Already a frame that ends at `join`: it splits in place.
        mach.wg.stack.pop();
    } else if let Some(j) = join {
        // The join: every thread of the frame, waiting at `j`. (Without a
        // join the frame keeps its threads until both sides exit.)
        top.at = (j, 0);
    }
    match fall {
        Some(fb) if Some(fb) != join => mach.wg.stack.push(Frame {
            at: (fb, 0),
            lanes: rest,
            until: join,
        }),
        Some(_) => {}
        // Falling off the end: those threads are done.
        None => mach.wg.exit(rest),
    }
    if Some(target) != join {
        mach.wg.stack.push(Frame {
            at: (target, 0),
            lanes: taken,
            until: join,
        });
    }
}

enum Flow {
    Next,
    Jump(Block),
    /// Threads of the running frame leave the kernel (`exit`, `ret` in an entry).
    Exit(LaneMask),
    /// A branch that only some threads take.
    Diverge {
        target: Block,
        taken: LaneMask,
    },
    /// A `brx.idx` whose threads go several ways (`indexed_branch`).
    Scatter(indexed_branch::Sides),
    /// Arrive at a barrier.
    Barrier(Arrival),
    /// An mbarrier wait that found its phase incomplete: let the other
    /// warpgroups run (the wait is retried by the kernel's own loop).
    Yield,
    /// `barrier.cluster.wait` before its phase completed: the warpgroup
    /// stays at it until the whole cluster arrived.
    ClusterWait,
}

/// An arrival at barrier `id` with `threads` threads (`count` expected, or
/// every live thread), waiting there if `wait`.
struct Arrival {
    id: u32,
    count: Option<u32>,
    threads: u32,
    wait: bool,
    /// The warps of the warpgroup that arrive (bit `w`: warp `w` of it).
    warps: u32,
}

/// The type suffix of an instruction: its last modifier that names a type.
fn type_of(d: &InstData) -> &str {
    d.mods
        .iter()
        .rev()
        .map(|m| &**m)
        .find(|m| type_bytes(m).is_some())
        .unwrap_or("b32")
}

fn bits_of(ty: &str) -> u32 {
    type_bytes(ty).map_or(32, |b| b as u32 * 8)
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

fn sext(v: u64, bits: u32) -> i64 {
    let s = 64 - bits;
    ((v << s) as i64) >> s
}

fn as_f32(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

impl Machine<'_> {
    fn name(&self, r: VReg) -> &str {
        &self.f.vregs[r].name
    }

    /// The threads of the warpgroup that run `d`: those of the running
    /// frame whose guard holds.
    fn active(&self, d: &InstData) -> [bool; WARPGROUP] {
        let lanes = self.wg.lanes();
        let mut act = [false; WARPGROUP];
        for (t, a) in act.iter_mut().enumerate() {
            *a = lanes & (1 << t) != 0
                && d.guard
                    .is_none_or(|g| (self.wg.regs.get(t, g.reg) & 1 == 1) != g.negated);
        }
        act
    }

    /// Whether every thread of the warpgroup that exists is in `act`
    /// (what `.aligned` instructions need).
    fn all_live(&self, act: &[bool]) -> bool {
        act[..self.wg.live].iter().all(|a| *a)
    }
}

/// The lanes set in `act`.
fn mask_of(act: &[bool]) -> LaneMask {
    act.iter()
        .enumerate()
        .filter(|(_, a)| **a)
        .fold(0, |m, (t, _)| m | (1 << t))
}

impl Machine<'_> {
    /// The value of a source operand for thread `t`.
    fn value(&self, t: usize, op: &Operand) -> Res<u64> {
        Ok(match op {
            Operand::Reg(r) => self.wg.regs.get(t, *r),
            Operand::NotReg(r) => u64::from(self.wg.regs.get(t, *r) & 1 == 0),
            Operand::Imm(Imm::Int(v)) => *v as u64,
            Operand::Imm(Imm::Hex(v)) | Operand::Imm(Imm::F64(v)) => *v,
            Operand::Imm(Imm::F32(v)) => u64::from(*v),
            Operand::Special(s) => special(
                s,
                self.wg.index * WARPGROUP + t,
                self.ctaid,
                self.grid,
                self.block,
                self.cluster,
            )?,
            Operand::Sym(s) => self.symbol(s)?,
            Operand::Vector(v) => {
                // `{lo, hi}` packs two 32-bit values into 64 bits.
                let mut out = 0u64;
                for (k, e) in v.iter().enumerate() {
                    out |= (self.value(t, e)? & 0xffff_ffff) << (32 * k);
                }
                out
            }
            other => return Err(fault!("operand {other:?} is not a value")),
        })
    }

    /// [`Machine::value`], with a register read inline (the operand of
    /// nearly every per-thread read in a hot loop).
    #[inline]
    fn value_fast(&self, t: usize, op: &Operand) -> Res<u64> {
        match op {
            Operand::Reg(r) => Ok(self.wg.regs.get(t, *r)),
            _ => self.value(t, op),
        }
    }

    /// A symbol's address: a shared variable's, or a parameter's in the
    /// parameter space.
    fn symbol(&self, s: &str) -> Res<u64> {
        self.shared_addr
            .get(s)
            .or_else(|| self.param_at.get(s))
            .copied()
            .ok_or_else(|| {
                fault!("symbol '{s}' is not a shared variable or parameter the host backend knows")
            })
    }

    /// Read `len` bytes of the parameter space at `addr`.
    fn param_read(&self, addr: u64, len: usize) -> Res<u64> {
        let a = addr as usize;
        match self.param_mem.get(a..a + len) {
            Some(b) => Ok(b
                .iter()
                .rev()
                .fold(0u64, |acc, x| (acc << 8) | u64::from(*x))),
            None => Err(fault!(
                "parameter-space read of {len} bytes at {addr:#x} is past the parameters"
            )),
        }
    }

    /// The state space a generic address points into, and the address in
    /// it (see [`SHARED_GENERIC`]): below the shared window nothing is
    /// mapped, and an access there is a null pointer's.
    fn resolve_generic(&self, addr: u64) -> Res<(&'static str, u64)> {
        Ok(if addr >= 1 << crate::memory::GLOBAL_SHIFT {
            ("global", addr)
        } else if addr >= PARAM_GENERIC {
            ("param", addr - PARAM_GENERIC)
        } else if addr >= SHARED_GENERIC {
            ("shared", addr - SHARED_GENERIC)
        } else {
            return Err(Fault::NullPointer { addr });
        })
    }

    /// `space` with a generic access (`"generic"` or `""`) resolved to the
    /// space its address points into.
    fn resolve<'s>(&self, space: &'s str, addr: u64) -> Res<(&'s str, u64)> {
        match space {
            "" | "generic" => self.resolve_generic(addr),
            "local" | "const" => Err(Fault::Unsupported(format!(
                "{space} memory is not supported by the host backend"
            ))),
            _ => Ok((space, addr)),
        }
    }

    /// An address operand: a kernel parameter's value (with the offset
    /// into it), or a memory address.
    #[inline(always)]
    fn address(&self, t: usize, op: &Operand) -> Res<(Option<u64>, u64)> {
        match op {
            Operand::Addr { base, offset } => Ok(match base {
                AddrBase::Reg(r) => (None, self.wg.regs.get(t, *r).wrapping_add(*offset as u64)),
                AddrBase::Sym(s) => (None, self.symbol(s)?.wrapping_add(*offset as u64)),
                AddrBase::None => (None, *offset as u64),
            }),
            other => Err(fault!("{other:?} is not an address")),
        }
    }

    fn set(&mut self, t: usize, op: &Operand, v: u64, bits: u32) -> Res<()> {
        match op {
            Operand::Reg(r) => {
                self.wg.regs.set(t, *r, v & mask(bits));
                Ok(())
            }
            Operand::Sink => Ok(()),
            Operand::Vector(parts) => {
                // `mov.b64 {lo, hi}, x`: unpack.
                let w = bits / parts.len() as u32;
                for (k, p) in parts.iter().enumerate() {
                    self.set(t, p, (v >> (w * k as u32)) & mask(w), w)?;
                }
                Ok(())
            }
            other => Err(fault!("cannot write {other:?}")),
        }
    }

    fn load(&mut self, space: &str, addr: u64, len: usize) -> Res<u64> {
        let (space, addr) = self.resolve(space, addr)?;
        match space {
            "param" => self.param_read(addr, len),
            "shared" => self.shared_read(addr, len),
            _ => Ok(self.global.read(addr, len)?),
        }
    }

    fn store(&mut self, space: &str, addr: u64, len: usize, v: u64) -> Res<()> {
        let (space, addr) = self.resolve(space, addr)?;
        match space {
            "shared" => self.shared_write(addr, len, v),
            "param" => Err(fault!(
                "a store to the parameter space at {addr:#x} (kernel parameters are read-only)"
            )),
            _ => Ok(self.global.write(addr, len, v)?),
        }
    }

    /// `bra`: a jump when every live thread takes it, a divergence when
    /// some do (refused for `bra.uni`).
    fn branch(&mut self, d: &InstData) -> Res<Flow> {
        let target = d.branch_target().ok_or("branch without a target")?;
        let taken = mask_of(&self.active(d));
        let lanes = self.wg.lanes();
        Ok(if taken == lanes {
            Flow::Jump(target)
        } else if taken == 0 {
            Flow::Next
        } else if d.has_mod("uni") {
            return Err("bra.uni taken by some threads only: it promises a uniform branch".into());
        } else {
            Flow::Diverge { target, taken }
        })
    }

    /// `ld` and `st` of any state space and vector width, for each active
    /// thread; what every thread needs of the instruction is read once.
    fn load_store(&mut self, d: &InstData, act: &[bool]) -> Res<Flow> {
        let ty = type_of(d);
        let bits = bits_of(ty);
        let space = d
            .mods
            .iter()
            .map(|m| &**m)
            .find_map(|m| match m {
                "global" | "shared" | "param" | "local" | "const" => Some(m),
                // Both windows: a peer's address goes to the peer (`cluster`).
                "shared::cta" | "shared::cluster" => Some("shared"),
                _ => None,
            })
            .unwrap_or("generic");
        let vec_n = d
            .mods
            .iter()
            .find_map(|m| m.strip_prefix('v')?.parse::<usize>().ok())
            .unwrap_or(1);
        let load = &*d.name == "ld";
        let (data, addr_op) = if load {
            (op(d, 0)?, op(d, 1)?)
        } else {
            (op(d, 1)?, op(d, 0)?)
        };
        let parts: &[Operand] = match data {
            Operand::Vector(v) => v,
            o => std::slice::from_ref(o),
        };
        if parts.len() != vec_n {
            return Err(fault!("{} values for .v{vec_n}", parts.len()));
        }
        let access = Access {
            bits,
            space,
            load,
            parts,
            addr_op,
            synchronizing: d
                .mods
                .iter()
                .any(|m| matches!(&**m, "volatile" | "relaxed" | "acquire" | "release")),
        };
        for t in (0..WARPGROUP).filter(|t| act[*t]) {
            self.memory_op(t, &access)?;
        }
        Ok(Flow::Next)
    }

    fn step(&mut self, i: Inst) -> Res<Flow> {
        let f = self.f;
        let d = &f.insts[i];
        self.line = d.line;
        if let Some(Some(op)) = self.lane_ops.get(i.index()) {
            self.run_lane_op(d, op)?;
            return Ok(Flow::Next);
        }
        let name = &*d.name;
        let first = d.mods.first().map_or("", |m| &**m);
        match (name, first) {
            ("wgmma", "mma_async") => return self.mma(d).map(|()| Flow::Next),
            ("wgmma", "fence") | ("_warpgroup", "arrive") => return Ok(Flow::Next),
            ("wgmma", "commit_group") | ("_warpgroup", "commit_batch") => {
                let g = std::mem::take(&mut self.wg.open);
                self.wg.committed.push_back(g);
                return Ok(Flow::Next);
            }
            ("wgmma", "wait_group") | ("_warpgroup", "wait") => {
                let n = d.wait_count().unwrap_or(0).max(0) as usize;
                while self.wg.committed.len() > n {
                    let g = self.wg.committed.pop_front().unwrap_or_default();
                    self.race_retired_reads(&g)?;
                    self.retire(g);
                }
                self.race_warpgroup_wait();
                return Ok(Flow::Next);
            }
            _ => {}
        }
        self.check_not_in_flight(d)?;
        match d.opcode {
            Opcode::Branch => return self.branch(d),
            Opcode::IndexedBranch => return self.indexed_branch(d),
            Opcode::Return => return Ok(Flow::Exit(mask_of(&self.active(d)))),
            _ => {}
        }
        let act = self.active(d);
        match (name, first) {
            ("mbarrier", _) => return self.mbarrier_op(d, &act),
            ("atom" | "red", _) => return self.atomic(d, &act).map(|()| Flow::Next),
            ("cp", "async") if d.mods.get(1).is_some_and(|m| &**m == "bulk") => {
                return self.bulk_copy(d, &act).map(|()| Flow::Next)
            }
            ("tensormap", _) => return self.tensormap_op(d, &act).map(|()| Flow::Next),
            ("prefetch", _) | ("prefetchu", _) => return Ok(Flow::Next),
            ("cp", "async") => return self.async_copy(d, &act).map(|()| Flow::Next),
            ("ldmatrix" | "stmatrix", _) => return self.matrix_move(d, &act).map(|()| Flow::Next),
            ("mma", _) => return self.warp_mma(d, &act).map(|()| Flow::Next),
            ("shfl" | "vote" | "elect" | "activemask" | "redux", _) => {
                return self.warp_collective(d, &act).map(|()| Flow::Next)
            }
            _ => {}
        }
        match name {
            "bar" | "barrier" => return self.barrier(d, &act),
            "fence" if d.has_mod("proxy") && d.has_mod("async") => {
                self.sync_proxy_order();
                let base = (self.wg.index * WARPGROUP) as u32;
                self.proxy.fence(|t| {
                    t >= base && t < base + WARPGROUP as u32 && act[(t - base) as usize]
                });
                return Ok(Flow::Next);
            }
            // griddepcontrol: programmatic dependent launch, one grid here.
            "fence" | "membar" | "nop" | "setmaxnreg" | "griddepcontrol" => return Ok(Flow::Next),
            "exit" => return Ok(Flow::Exit(mask_of(&act))),
            "ld" | "st" => return self.load_store(d, &act),
            _ => {}
        }
        // What every thread's `alu` needs of the instruction, read once.
        let shape = AluShape::of(d);
        for t in (0..WARPGROUP).filter(|t| act[*t]) {
            self.alu(t, d, &shape)?;
        }
        Ok(Flow::Next)
    }
}

/// Operand `k` of `d`, or an error naming the instruction.
fn op(d: &InstData, k: usize) -> Res<&Operand> {
    d.slots
        .get(k)
        .map(|s| &s.op)
        .ok_or_else(|| fault!("{}: operand {} missing", d.mnemonic(), k + 1))
}

/// The registers of a register list (`{%r1, %r2, ...}`'s elements), for
/// `what` (the instruction, in an error).
fn registers(items: &[Operand], what: &str) -> Res<Vec<VReg>> {
    items
        .iter()
        .map(|e| match e {
            Operand::Reg(r) => Ok(*r),
            other => Err(fault!("{other:?} in the register list of {what}")),
        })
        .collect()
}

/// A special register for CTA thread `t` (linear: x fastest).
fn special(
    s: &str,
    t: usize,
    ctaid: [u32; 3],
    grid: [u32; 3],
    block: [u32; 3],
    cluster: [u32; 3],
) -> Res<u64> {
    if let Some(v) = cluster::special(s, ctaid, grid, cluster) {
        return Ok(v);
    }
    let t = t as u64;
    let [bx, by, bz] = block.map(u64::from);
    Ok(match s {
        "%tid.x" => t % bx,
        "%tid.y" => (t / bx) % by,
        "%tid.z" => t / (bx * by),
        "%ctaid.x" => u64::from(ctaid[0]),
        "%ctaid.y" => u64::from(ctaid[1]),
        "%ctaid.z" => u64::from(ctaid[2]),
        "%nctaid.x" => u64::from(grid[0]),
        "%nctaid.y" => u64::from(grid[1]),
        "%nctaid.z" => u64::from(grid[2]),
        "%ntid.x" => bx,
        "%ntid.y" => by,
        "%ntid.z" => bz,
        "%laneid" => t % 32,
        "%warpid" => t / 32,
        "%nwarpid" => 64,
        "%lanemask_eq" => 1 << (t % 32),
        "%lanemask_lt" => (1 << (t % 32)) - 1,
        "%lanemask_le" => (1 << (t % 32 + 1)) - 1,
        "%lanemask_gt" => !((1u64 << (t % 32 + 1)) - 1) & 0xffff_ffff,
        "%lanemask_ge" => !((1u64 << (t % 32)) - 1) & 0xffff_ffff,
        _ => {
            return Err(Fault::Unsupported(format!(
                "special register {s} is not supported by the host backend"
            )))
        }
    })
}
