//! The interpreter: each CTA of the grid in turn; in a CTA, each warpgroup
//! (128 threads in lockstep) runs until it waits at a barrier or exits.
//!
//! Every instruction runs for all threads whose guard holds; branches must
//! be uniform (the same way for every thread), which is what wgmma code
//! needs anyway (`wgmma.*` are `.sync.aligned`). A divergent branch is an
//! error, not a silently wrong answer.
//!
//! wgmma is asynchronous, as on the GPU: `wgmma.mma_async` computes its
//! result from its inputs at issue, but the result reaches the accumulator
//! registers only when a `wgmma.wait_group` retires its group;
//! `wgmma.commit_group` (and phase 87's `_warpgroup.commit_batch`) closes
//! the open group. A later wgmma accumulating into the same registers chains
//! on the pending result, as the hardware does. Any other instruction that
//! reads or writes a register a wgmma in flight will write is stopped with
//! an error naming both: the PTX ISA leaves such an access undefined, and
//! that is exactly what phase 87's waits are there to prevent.

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
use fxhash::{FxHashMap, FxHashSet};
use ori_ir::wgmma_form::{Family, WgmmaForm};
use ori_ir::{AddrBase, Block, Function, Imm, Inst, InstData, Module, Opcode, Operand, VReg};
use std::collections::VecDeque;

/// A run that stopped: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostError {
    /// PTX line of the instruction (0 when none).
    pub line: u32,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: {}", self.line, self.message)
        } else {
            f.write_str(&self.message)
        }
    }
}

impl std::error::Error for HostError {}

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
    /// Stop at an async-proxy read of shared memory that a generic write
    /// left unfenced (see [`crate::proxy_fence`]); on by default.
    pub check_proxy: bool,
    /// The whole parameter space as bytes (a parameter block recorded on
    /// the GPU, a CUTLASS kernel's `Params`); `params` and `param_bytes`
    /// are then ignored. It must cover every declared parameter.
    pub param_block: Option<Vec<u8>>,
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
            param_block: None,
        }
    }
}

/// What a finished run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
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
    values: Vec<Vec<u32>>,
    line: u32,
}

/// One warpgroup's own state: its threads' registers, its wgmma pipeline,
/// its `cp.async` groups, and where it is in the program.
#[derive(Default)]
struct Warpgroup {
    /// Its number in the CTA (thread `t` of it is CTA thread `128 index + t`).
    index: usize,
    /// Threads of it that exist (128, or fewer in the last one).
    live: usize,
    regs: Vec<Vec<u64>>,
    open: Vec<PendingMma>,
    committed: VecDeque<Vec<PendingMma>>,
    in_flight: FxHashMap<VReg, u32>,
    copies: AsyncCopies,
    /// The reconvergence stack: the top runs (see [`crate::reconvergence`]);
    /// empty once every thread exited.
    stack: Vec<Frame>,
    /// Waiting at a barrier.
    waiting: bool,
    /// Yielded at an incomplete mbarrier wait (its line), when the
    /// mbarriers were at this epoch: it cannot progress until they change.
    yielded: Option<(u64, u32)>,
    /// The mbarrier phases it has seen complete (the TMA check).
    seen: Seen,
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
    /// Whether the proxy check stops the run.
    check_proxy: bool,
    shared_addr: FxHashMap<String, u64>,
    shared: Shared,
    global: &'a GlobalMemory,
    /// The warpgroup running now (the others wait in `run_cta`).
    wg: Warpgroup,
    /// Where divergent threads meet again.
    pdom: PostDominators,
    stats: RunStats,
    ctaid: [u32; 3],
    grid: [u32; 3],
    block: [u32; 3],
}

type Res<T> = Result<T, String>;

/// Run entry `name` of `m` with `launch`, on `global`: every CTA of the
/// grid, one after another (x fastest). An error names the CTA it stopped in.
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
        return Err(HostError {
            line: 0,
            message: format!("an empty grid {gx},{gy},{gz}"),
        });
    }
    // Every CTA, in parallel across the cores; a CTA's shared memory and
    // warpgroups are its own, global memory is shared (see `memory`). The
    // error reported is the first CTA's in x-fastest order.
    let done = std::sync::atomic::AtomicU64::new(0);
    let ctas: Vec<[u32; 3]> = (0..gz)
        .flat_map(|z| (0..gy).flat_map(move |y| (0..gx).map(move |x| [x, y, z])))
        .collect();
    let results: Vec<Result<RunStats, HostError>> = ctas
        .par_iter()
        .map(|&[x, y, z]| {
            let one = run_cta(m, name, launch, global, [x, y, z]).map_err(|e| {
                if launch.grid == [1, 1, 1] {
                    e
                } else {
                    HostError {
                        line: e.line,
                        message: format!("CTA ({x},{y},{z}): {}", e.message),
                    }
                }
            });
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(n, total_ctas);
            one
        })
        .collect();
    let mut total = RunStats::default();
    for r in results {
        let one = r?;
        total.steps += one.steps;
        total.wgmma += one.wgmma;
        total.groups_retired += one.groups_retired;
    }
    Ok(total)
}

/// The most shared memory a CTA of sm_90 has (227 KiB).
pub const MAX_SHARED: u64 = 227 * 1024;

/// The most parameter bytes a kernel may have (CUDA 12.1+ on Hopper).
pub const MAX_PARAMS: u64 = 32764;

/// Generic addresses of the parameter space start here: above shared
/// memory, below the global buffers (`cvta.param` adds it).
pub const PARAM_GENERIC: u64 = 1 << 39;

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
            return Err(format!(
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
                    return Err(format!(
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
            return Err(format!(
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

/// One CTA of the grid.
fn run_cta(
    m: &Module,
    name: &str,
    launch: &Launch,
    global: &GlobalMemory,
    ctaid: [u32; 3],
) -> Result<RunStats, HostError> {
    let fail = |message: String| HostError { line: 0, message };
    let f = m
        .by_name
        .get(name)
        .map(|id| &m.funcs[*id])
        .filter(|f| f.has_body)
        .ok_or_else(|| fail(format!("no function '{name}' with a body")))?;
    if launch.param_block.is_none() && f.params.len() != launch.params.len() {
        return Err(fail(format!(
            "'{name}' takes {} parameters, the launch gives {}",
            f.params.len(),
            launch.params.len()
        )));
    }
    let mut shared_addr = FxHashMap::default();
    let mut top = 0u64;
    for v in shared_vars(&m.globals) {
        let align = v.align.max(1);
        top = top.div_ceil(align).saturating_mul(align);
        shared_addr.insert(v.name, top);
        top = top.saturating_add(v.size.unwrap_or(launch.dynamic_shared));
    }
    if top > MAX_SHARED {
        return Err(fail(format!(
            "{top} bytes of shared memory; a CTA of sm_90 has at most {MAX_SHARED}"
        )));
    }
    let (param_at, param_mem) = param_space(f, launch).map_err(fail)?;
    let [bx, by, bz] = launch.block;
    let threads = (bx as usize) * (by as usize) * (bz as usize);
    if threads == 0 || threads > 1024 {
        return Err(fail(format!("a CTA of {bx}x{by}x{bz} threads (1 to 1024)")));
    }
    let entry = f.layout.blocks().first().copied();
    let mut wgs: Vec<Warpgroup> = (0..threads.div_ceil(WARPGROUP))
        .map(|k| Warpgroup {
            index: k,
            live: (threads - k * WARPGROUP).min(WARPGROUP),
            regs: vec![vec![0; f.vregs.len()]; WARPGROUP],
            stack: entry
                .map(|b| Frame {
                    at: (b, 0),
                    lanes: LaneMask::MAX >> (WARPGROUP - (threads - k * WARPGROUP).min(WARPGROUP)),
                    until: None,
                })
                .into_iter()
                .collect(),
            ..Warpgroup::default()
        })
        .collect();
    let mut mach = Machine {
        f,
        param_at,
        param_mem,
        mbarriers: MBarriers::default(),
        proxy: GenericWrites::new(top as usize),
        fills: TmaFills::new(top as usize),
        cta_barriers: 0,
        line: 0,
        check_proxy: launch.check_proxy,
        shared_addr,
        shared: Shared::new(top as usize),
        global,
        wg: Warpgroup::default(),
        pdom: PostDominators::compute(f),
        stats: RunStats::default(),
        ctaid,
        grid: launch.grid,
        block: launch.block,
    };
    // One warpgroup at a time, each until it waits at a barrier or exits
    // (round robin from the lowest); a barrier that fills lets its waiters
    // run again. Correct kernels synchronize through barriers, so this
    // order computes what any order does.
    let mut barriers = Barriers::default();
    let mut next = 0;
    loop {
        let live_threads: u32 = wgs
            .iter()
            .filter(|w| w.running())
            .map(|w| (w.live.div_ceil(32) * 32) as u32)
            .sum();
        let released = barriers.release(live_threads);
        if !released.is_empty() {
            mach.cta_barriers += 1;
            // A CTA barrier passes on what each warpgroup has seen of the
            // mbarriers (a phase one waited for is complete for all after).
            let mut all = Seen::default();
            for w in &wgs {
                for (&m, &p) in &w.seen {
                    let e = all.entry(m).or_insert(0);
                    *e = (*e).max(p);
                }
            }
            for w in &mut wgs {
                w.seen.clone_from(&all);
            }
        }
        for k in released {
            wgs[k].waiting = false;
        }
        let n = wgs.len();
        let epoch = mach.mbarriers.epoch;
        let Some(k) = (0..n).map(|j| (next + j) % n).find(|&k| {
            wgs[k].running() && !wgs[k].waiting && wgs[k].yielded.is_none_or(|(e, _)| e != epoch)
        }) else {
            if wgs.iter().all(|w| !w.running()) {
                break;
            }
            if let Some((_, line)) = wgs.iter().find_map(|w| w.yielded.filter(|_| !w.waiting)) {
                return Err(HostError {
                    line,
                    message: "deadlock: every warpgroup still running waits, and this mbarrier wait's phase can no longer complete".into(),
                });
            }
            let (id, line, arrived, want) = barriers.stuck(live_threads)[0];
            return Err(HostError {
                line,
                message: format!(
                    "deadlock: every warpgroup still running waits at a barrier; barrier {id} has {arrived} of its {want} threads"
                ),
            });
        };
        next = k;
        wgs[k].yielded = None;
        std::mem::swap(&mut mach.wg, &mut wgs[k]);
        let stop = run_warpgroup(&mut mach, launch.step_limit);
        std::mem::swap(&mut mach.wg, &mut wgs[k]);
        let stop = stop?;
        if let Some((line, None)) = stop {
            wgs[k].yielded = Some((mach.mbarriers.epoch, line));
            next = (k + 1) % n;
            continue;
        }
        if let Some((line, Some(a))) = stop {
            barriers
                .arrive(a.id, k, a.threads, a.count, a.wait, line)
                .map_err(|message| HostError { line, message })?;
            wgs[k].waiting = a.wait;
            // An arrival that does not wait runs on.
            if !a.wait {
                continue;
            }
        }
        next = (k + 1) % n;
    }
    Ok(mach.stats)
}

/// Run the warpgroup in `mach.wg` from where it is until it exits (`None`),
/// reaches a barrier (its line and the arrival; it is then past it) or
/// yields at an incomplete mbarrier wait (its line and `None`).
fn run_warpgroup(
    mach: &mut Machine<'_>,
    step_limit: u64,
) -> Result<Option<(u32, Option<Arrival>)>, HostError> {
    let f = mach.f;
    while let Some(&Frame { at: (b, pos), .. }) = mach.wg.stack.last() {
        let insts = f.layout.block_insts(b);
        let Some(&i) = insts.get(pos) else {
            mach.wg.enter(f.layout.next_block(b));
            continue;
        };
        mach.stats.steps += 1;
        if mach.stats.steps > step_limit {
            return Err(HostError {
                line: 0,
                message: format!("stopped after {step_limit} steps (a loop that does not end?)"),
            });
        }
        let line = f.insts[i].line;
        let flow = mach
            .step(i)
            .map_err(|message| HostError { line, message })?;
        if let Some(top) = mach.wg.stack.last_mut() {
            top.at = (b, pos + 1);
        }
        match flow {
            Flow::Next => {}
            Flow::Jump(t) => mach.wg.enter(Some(t)),
            Flow::Exit(lanes) => mach.wg.exit(lanes),
            Flow::Diverge { target, taken } => diverge(mach, b, target, taken),
            Flow::Barrier(a) => return Ok(Some((line, Some(a)))),
            Flow::Yield => return Ok(Some((line, None))),
        }
    }
    Ok(None)
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
    /// Arrive at a barrier.
    Barrier(Arrival),
    /// An mbarrier wait that found its phase incomplete: let the other
    /// warpgroups run (the wait is retried by the kernel's own loop).
    Yield,
}

/// An arrival at barrier `id` with `threads` threads (`count` expected, or
/// every live thread), waiting there if `wait`.
struct Arrival {
    id: u32,
    count: Option<u32>,
    threads: u32,
    wait: bool,
}

/// What an `ld` or `st` is, read once for all its threads.
struct Access<'a> {
    /// Element width.
    bits: u32,
    /// State space (`generic` when none is written).
    space: &'a str,
    /// `ld` (else `st`).
    load: bool,
    /// The registers (or values) moved, one per vector element.
    parts: &'a [Operand],
    /// The address operand.
    addr_op: &'a Operand,
}

/// What `alu` needs of an instruction, read once for all its threads.
struct AluShape<'a> {
    /// The type suffix.
    ty: &'a str,
    /// Its width.
    bits: u32,
    /// The destination's width (`.wide` doubles it; `cvt` names it first).
    out_bits: u32,
    /// `mul.wide` / `mad.wide`.
    wide: bool,
    /// `mul.hi` / `mad.hi`.
    hi: bool,
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

/// The smaller (`min`) or larger of two integers of `bits` bits.
fn int_min_max(min: bool, a: u64, b: u64, bits: u32, signed: bool) -> u64 {
    let m = mask(bits);
    let less = if signed {
        sext(a, bits) < sext(b, bits)
    } else {
        a & m < b & m
    };
    if min == less {
        a & m
    } else {
        b & m
    }
}

/// `x + y` as an exact pair: the rounded sum and what rounding lost.
fn two_sum(x: f64, y: f64) -> (f64, f64) {
    let s = x + y;
    let bb = s - x;
    (s, (x - (s - bb)) + (y - bb))
}

/// The exact value `hi + lo` rounded to f32 toward zero (`rz`), minus
/// infinity (`rm`) or plus infinity (`rp`).
fn round_f32(hi: f64, lo: f64, mode: &str) -> f32 {
    let r = hi as f32;
    if !r.is_finite() && hi.is_finite() {
        // Past f32's range: the largest finite, or infinity, by direction.
        let toward_inf = match mode {
            "rp" => hi > 0.0,
            "rm" => hi < 0.0,
            _ => false,
        };
        return if toward_inf { r } else { f32::MAX.copysign(r) };
    }
    // Where r lies against the exact value (both sides exact in f64).
    let above = (f64::from(r) - hi) - lo;
    match mode {
        "rm" if above > 0.0 => r.next_down(),
        "rp" if above < 0.0 => r.next_up(),
        "rz" if above > 0.0 && r > 0.0 => r.next_down(),
        "rz" if above < 0.0 && r < 0.0 => r.next_up(),
        _ => r,
    }
}

/// `.ftz`: a subnormal f32 becomes a zero of its sign.
fn flush(x: f32, ftz: bool) -> f32 {
    if ftz && x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

fn as_f32(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

impl Machine<'_> {
    fn name(&self, r: VReg) -> &str {
        &self.f.vregs[r].name
    }

    /// Refuse a non-wgmma access to a register a wgmma in flight writes.
    fn check_not_in_flight(&self, d: &InstData) -> Res<()> {
        if self.wg.in_flight.is_empty() {
            return Ok(());
        }
        for r in d.uses().into_iter().chain(d.defs()) {
            if let Some(line) = self.wg.in_flight.get(&r) {
                return Err(format!(
                    "{} {} while the wgmma of line {line} that writes it is in flight \
                     (undefined in the PTX ISA: wait with wgmma.wait_group first)",
                    if d.defs().contains(&r) {
                        "writes"
                    } else {
                        "reads"
                    },
                    self.name(r)
                ));
            }
        }
        Ok(())
    }

    /// The threads of the warpgroup that run `d`: those of the running
    /// frame whose guard holds.
    fn active(&self, d: &InstData) -> [bool; WARPGROUP] {
        let lanes = self.wg.lanes();
        let mut act = [false; WARPGROUP];
        for (t, a) in act.iter_mut().enumerate() {
            *a = lanes & (1 << t) != 0
                && d.guard
                    .is_none_or(|g| (self.wg.regs[t][g.reg.index()] & 1 == 1) != g.negated);
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
            Operand::Reg(r) => self.wg.regs[t][r.index()],
            Operand::NotReg(r) => u64::from(self.wg.regs[t][r.index()] & 1 == 0),
            Operand::Imm(Imm::Int(v)) => *v as u64,
            Operand::Imm(Imm::Hex(v)) | Operand::Imm(Imm::F64(v)) => *v,
            Operand::Imm(Imm::F32(v)) => u64::from(*v),
            Operand::Special(s) => special(
                s,
                self.wg.index * WARPGROUP + t,
                self.ctaid,
                self.grid,
                self.block,
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
            other => return Err(format!("operand {other:?} is not a value")),
        })
    }

    /// A symbol's address: a shared variable's, or a parameter's in the
    /// parameter space.
    fn symbol(&self, s: &str) -> Res<u64> {
        self.shared_addr
            .get(s)
            .or_else(|| self.param_at.get(s))
            .copied()
            .ok_or_else(|| {
                format!("symbol '{s}' is not a shared variable or parameter the host backend knows")
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
            None => Err(format!(
                "parameter-space read of {len} bytes at {addr:#x} is past the parameters"
            )),
        }
    }

    /// Read `len` bytes (1..=8) at a generic address.
    fn generic_read(&mut self, addr: u64, len: usize) -> Res<u64> {
        if addr >= 1 << crate::memory::GLOBAL_SHIFT {
            self.global.read(addr, len)
        } else if addr >= PARAM_GENERIC {
            self.param_read(addr - PARAM_GENERIC, len)
        } else {
            self.shared.read(addr, len)
        }
    }

    /// An address operand: a kernel parameter's value (with the offset
    /// into it), or a memory address.
    fn address(&self, t: usize, op: &Operand) -> Res<(Option<u64>, u64)> {
        match op {
            Operand::Addr { base, offset } => Ok(match base {
                AddrBase::Reg(r) => (
                    None,
                    self.wg.regs[t][r.index()].wrapping_add(*offset as u64),
                ),
                AddrBase::Sym(s) => (None, self.symbol(s)?.wrapping_add(*offset as u64)),
                AddrBase::None => (None, *offset as u64),
            }),
            other => Err(format!("{other:?} is not an address")),
        }
    }

    fn set(&mut self, t: usize, op: &Operand, v: u64, bits: u32) -> Res<()> {
        match op {
            Operand::Reg(r) => {
                self.wg.regs[t][r.index()] = v & mask(bits);
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
            other => Err(format!("cannot write {other:?}")),
        }
    }

    fn load(&mut self, space: &str, addr: u64, len: usize) -> Res<u64> {
        match space {
            "param" => self.param_read(addr, len),
            "shared" => self.shared.read(addr, len),
            "global" => self.global.read(addr, len),
            _ => self.generic_read(addr, len),
        }
    }

    fn store(&mut self, space: &str, addr: u64, len: usize, v: u64) -> Res<()> {
        match space {
            "shared" => self.shared.write(addr, len, v),
            "global" => self.global.write(addr, len, v),
            _ if addr >= 1 << crate::memory::GLOBAL_SHIFT => self.global.write(addr, len, v),
            _ => self.shared.write(addr, len, v),
        }
    }

    fn step(&mut self, i: Inst) -> Res<Flow> {
        let f = self.f;
        let d = &f.insts[i];
        self.line = d.line;
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
                    self.retire(g);
                }
                return Ok(Flow::Next);
            }
            _ => {}
        }
        self.check_not_in_flight(d)?;
        match d.opcode {
            Opcode::Branch => {
                let target = d.branch_target().ok_or("branch without a target")?;
                let taken = mask_of(&self.active(d));
                let lanes = self.wg.lanes();
                return Ok(if taken == lanes {
                    Flow::Jump(target)
                } else if taken == 0 {
                    Flow::Next
                } else if d.has_mod("uni") {
                    return Err(
                        "bra.uni taken by some threads only: it promises a uniform branch".into(),
                    );
                } else {
                    Flow::Diverge { target, taken }
                });
            }
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
            "ld" | "st" => {
                // What every thread needs of the instruction, read once.
                let ty = type_of(d);
                let bits = bits_of(ty);
                let space = d
                    .mods
                    .iter()
                    .map(|m| &**m)
                    .find(|m| matches!(*m, "global" | "shared" | "param" | "local" | "const"))
                    .unwrap_or("generic");
                let vec_n = d
                    .mods
                    .iter()
                    .find_map(|m| m.strip_prefix('v')?.parse::<usize>().ok())
                    .unwrap_or(1);
                let load = name == "ld";
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
                    return Err(format!("{} values for .v{vec_n}", parts.len()));
                }
                let access = Access {
                    bits,
                    space,
                    load,
                    parts,
                    addr_op,
                };
                for t in (0..WARPGROUP).filter(|t| act[*t]) {
                    self.memory_op(t, &access)?;
                }
                return Ok(Flow::Next);
            }
            _ => {}
        }
        // What every thread's `alu` needs of the instruction, read once.
        let ty = type_of(d);
        let bits = bits_of(ty);
        let shape = AluShape {
            ty,
            bits,
            out_bits: match name {
                "mul" | "mad" if d.has_mod("wide") => 2 * bits,
                // `cvt.to.from`: the destination type comes first.
                "cvt" => d
                    .mods
                    .iter()
                    .find(|m| type_bytes(m).is_some())
                    .map_or(bits, |m| bits_of(m)),
                _ => bits,
            },
            wide: d.has_mod("wide"),
            hi: d.has_mod("hi"),
        };
        for t in (0..WARPGROUP).filter(|t| act[*t]) {
            self.alu(t, d, &shape)?;
        }
        Ok(Flow::Next)
    }

    fn retire(&mut self, group: Vec<PendingMma>) {
        for p in group {
            for (t, vals) in p.values.iter().enumerate() {
                for (r, v) in p.regs.iter().zip(vals) {
                    self.wg.regs[t][r.index()] = u64::from(*v);
                }
            }
        }
        // Rebuild what is still in flight from the groups that remain.
        self.wg.in_flight.clear();
        for p in self.wg.committed.iter().flatten().chain(&self.wg.open) {
            for r in &p.regs {
                self.wg.in_flight.insert(*r, p.line);
            }
        }
        self.stats.groups_retired += 1;
    }

    /// Thread `t`'s part of an `ld` or `st`.
    fn memory_op(&mut self, t: usize, x: &Access<'_>) -> Res<()> {
        let len = (x.bits / 8) as usize;
        let (_, addr) = self.address(t, x.addr_op)?;
        for (k, p) in x.parts.iter().enumerate() {
            let a = addr.wrapping_add((k * len) as u64);
            if x.load {
                if x.space == "shared" || (x.space == "generic" && a < PARAM_GENERIC) {
                    self.check_tma_ready("this load", a, len)?;
                }
                let v = self.load(x.space, a, len)?;
                self.set(t, p, v, x.bits)?;
            } else {
                let v = self.value(t, p)?;
                self.store(x.space, a, len, v)?;
                if x.space == "shared" || (x.space != "global" && a < PARAM_GENERIC) {
                    self.note_generic_write(t, a, len);
                }
            }
        }
        Ok(())
    }

    fn alu(&mut self, t: usize, d: &InstData, shape: &AluShape<'_>) -> Res<()> {
        let (ty, bits) = (shape.ty, shape.bits);
        let signed = ty.starts_with('s');
        let float = ty.starts_with('f') && ty != "f16x2";
        let name = &*d.name;
        let src = |k: usize| -> Res<u64> {
            let s = d
                .slots
                .get(k)
                .ok_or_else(|| format!("{name}: operand {k} missing"))?;
            self.value(t, &s.op)
        };
        let dst = &d
            .slots
            .first()
            .ok_or_else(|| format!("{name}: no operands"))?
            .op;
        let m = mask(bits);
        let v: u64 = match name {
            // `mov.b32 %r, {%h0, %h1}`: pack the elements, each of
            // bits / n bits, the first lowest.
            "mov" => match &op(d, 1)? {
                Operand::Vector(parts) => {
                    let w = bits / parts.len() as u32;
                    let mut out = 0u64;
                    for (k, e) in parts.iter().enumerate() {
                        out |= (self.value(t, e)? & mask(w)) << (w * k as u32);
                    }
                    out
                }
                _ => src(1)?,
            },
            // The parameter space's generic window; shared and global
            // addresses are the same in both (see `memory`).
            "cvta" if d.has_mod("param") && !d.has_mod("to") => src(1)? + PARAM_GENERIC,
            "cvta" if d.has_mod("param") => src(1)?.wrapping_sub(PARAM_GENERIC),
            "cvta" => src(1)?,
            // Half precision, scalar and packed pairs: each element in f64
            // (the products and sums of two halves are exact there; fma has
            // one rounding, at the end), rounded to nearest even.
            "add" | "sub" | "mul" | "fma" | "min" | "max" | "neg" | "abs"
                if matches!(ty, "f16" | "bf16" | "f16x2" | "bf16x2") =>
            {
                let (elem, lanes) = match ty {
                    "f16x2" => ("f16", 2),
                    "bf16x2" => ("bf16", 2),
                    t => (t, 1),
                };
                let get = |x: u64, k: u32| -> f64 {
                    let h = ((x >> (16 * k)) & 0xffff) as u16;
                    if elem == "f16" {
                        f64::from(half::f16::from_bits(h).to_f32())
                    } else {
                        f64::from(half::bf16::from_bits(h).to_f32())
                    }
                };
                let put = |x: f64| -> u64 {
                    u64::from(if elem == "f16" {
                        half::f16::from_f64(x).to_bits()
                    } else {
                        half::bf16::from_f64(x).to_bits()
                    })
                };
                let n_src = match name {
                    "neg" | "abs" => 1,
                    "fma" => 3,
                    _ => 2,
                };
                let srcs: Vec<u64> = (1..=n_src).map(src).collect::<Res<_>>()?;
                let mut out = 0u64;
                for k in 0..lanes {
                    let x = |i: usize| get(srcs[i], k);
                    let r = match name {
                        "add" => x(0) + x(1),
                        "sub" => x(0) - x(1),
                        "mul" => x(0) * x(1),
                        "fma" => x(0).mul_add(x(1), x(2)),
                        "min" => x(0).min(x(1)),
                        "max" => x(0).max(x(1)),
                        "neg" => -x(0),
                        _ => x(0).abs(),
                    };
                    out |= put(r) << (16 * k);
                }
                out
            }
            "add" | "sub" | "mul" | "mad" | "fma" | "min" | "max" | "div" | "rem" if float => {
                if bits != 32 {
                    return Err(format!(
                        "{} on .{ty} is not supported by the host backend",
                        d.mnemonic()
                    ));
                }
                let ftz = d.has_mod("ftz");
                let (a, b) = (flush(as_f32(src(1)?), ftz), flush(as_f32(src(2)?), ftz));
                // Directed rounding (.rz, .rm, .rp): the exact result as
                // the f64 pair hi + lo (products of f32s are exact in f64,
                // sums are split by two-sum), rounded toward the mode.
                let directed = ["rz", "rm", "rp"].into_iter().find(|r| d.has_mod(r));
                if let Some(mode) = directed {
                    let (x, y) = (f64::from(a), f64::from(b));
                    let (hi, lo) = match name {
                        "add" => two_sum(x, y),
                        "sub" => two_sum(x, -y),
                        "mul" => (x * y, 0.0),
                        "mad" | "fma" => two_sum(x * y, f64::from(flush(as_f32(src(3)?), ftz))),
                        _ => {
                            return Err(format!(
                                "{} is not supported by the host backend",
                                d.mnemonic()
                            ))
                        }
                    };
                    return self.set(
                        t,
                        dst,
                        u64::from(flush(round_f32(hi, lo, mode), ftz).to_bits()),
                        32,
                    );
                }
                let r = match name {
                    "add" => a + b,
                    "sub" => a - b,
                    "mul" => a * b,
                    "mad" | "fma" => a.mul_add(b, flush(as_f32(src(3)?), ftz)),
                    "min" => a.min(b),
                    "max" => a.max(b),
                    "div" => a / b,
                    _ => a % b,
                };
                // .sat: clamped to [0, 1], NaN to 0.
                let r = if d.has_mod("sat") {
                    if r.is_nan() {
                        0.0
                    } else {
                        r.clamp(0.0, 1.0)
                    }
                } else {
                    r
                };
                u64::from(flush(r, ftz).to_bits())
            }
            // The special functions, computed correctly rounded in f32; the
            // GPU's `.approx` forms differ by up to a few ulp (its MUFU unit),
            // which is why kernels using them compare within a tolerance
            // (README, host backend).
            "ex2" | "lg2" | "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "tanh" if float => {
                if bits != 32 {
                    return Err(format!(
                        "{} on .{ty} is not supported by the host backend",
                        d.mnemonic()
                    ));
                }
                let ftz = d.has_mod("ftz");
                let a = flush(as_f32(src(1)?), ftz);
                let r = match name {
                    "ex2" => a.exp2(),
                    "lg2" => a.log2(),
                    "rcp" => 1.0 / a,
                    "sqrt" => a.sqrt(),
                    "rsqrt" => 1.0 / a.sqrt(),
                    "sin" => a.sin(),
                    "cos" => a.cos(),
                    _ => a.tanh(),
                };
                u64::from(flush(r, ftz).to_bits())
            }
            "add" => src(1)?.wrapping_add(src(2)?) & m,
            "sub" => src(1)?.wrapping_sub(src(2)?) & m,
            "mul" | "mad" => {
                let (a, b) = (src(1)?, src(2)?);
                let wide = shape.wide;
                let p: u128 = if signed {
                    (i128::from(sext(a, bits)) * i128::from(sext(b, bits))) as u128
                } else {
                    u128::from(a & m) * u128::from(b & m)
                };
                let r = if wide {
                    (p as u64) & mask(2 * bits)
                } else if shape.hi {
                    ((p >> bits) as u64) & m
                } else {
                    (p as u64) & m
                };
                let out_bits = if wide { 2 * bits } else { bits };
                if name == "mad" {
                    r.wrapping_add(src(3)?) & mask(out_bits)
                } else {
                    r
                }
            }
            "min" | "max" => int_min_max(name == "min", src(1)?, src(2)?, bits, signed),
            "div" | "rem" => {
                let (a, b) = (src(1)?, src(2)?);
                if b & m == 0 {
                    m // the ISA leaves it undefined; the GPU gives all ones
                } else if signed {
                    let (x, y) = (sext(a, bits), sext(b, bits));
                    (if name == "div" {
                        x.wrapping_div(y)
                    } else {
                        x.wrapping_rem(y)
                    }) as u64
                        & m
                } else if name == "div" {
                    (a & m) / (b & m)
                } else {
                    (a & m) % (b & m)
                }
            }
            "neg" if float => u64::from((-as_f32(src(1)?)).to_bits()),
            "abs" if float => u64::from(as_f32(src(1)?).abs().to_bits()),
            "neg" => src(1)?.wrapping_neg() & m,
            "abs" => sext(src(1)?, bits).unsigned_abs() & m,
            "and" => src(1)? & src(2)?,
            "or" => src(1)? | src(2)?,
            "xor" => src(1)? ^ src(2)?,
            "not" => !src(1)? & m,
            "popc" => u64::from((src(1)? & m).count_ones()),
            "clz" => u64::from((src(1)? & m).leading_zeros() - (64 - bits)),
            "brev" => (src(1)? & m).reverse_bits() >> (64 - bits),
            // bfind: the most significant bit that differs from the sign
            // (signed) or is set; all ones when none; .shiftamt: from the left.
            "bfind" => {
                let x = src(1)? & m;
                let x = if signed && x >> (bits - 1) & 1 == 1 {
                    !x & m
                } else {
                    x
                };
                if x == 0 {
                    0xffff_ffff
                } else {
                    let msb = u64::from(63 - x.leading_zeros());
                    if d.has_mod("shiftamt") {
                        u64::from(bits - 1) - msb
                    } else {
                        msb
                    }
                }
            }
            // dp4a / dp2a: byte (and half) dot products into a 32-bit sum.
            "dp4a" | "dp2a" => {
                let (a, b, c) = (src(1)? as u32, src(2)? as u32, src(3)? as u32);
                let kinds: Vec<&str> = d
                    .mods
                    .iter()
                    .map(|x| &**x)
                    .filter(|x| matches!(*x, "u32" | "s32"))
                    .collect();
                let (sa, sb) = (kinds.first() == Some(&"s32"), kinds.get(1) == Some(&"s32"));
                let byte = |v: u32, k: u32, signed: bool| -> i64 {
                    let x = (v >> (8 * k)) & 0xff;
                    if signed {
                        i64::from(x as u8 as i8)
                    } else {
                        i64::from(x)
                    }
                };
                let half = |v: u32, k: u32, signed: bool| -> i64 {
                    let x = (v >> (16 * k)) & 0xffff;
                    if signed {
                        i64::from(x as u16 as i16)
                    } else {
                        i64::from(x)
                    }
                };
                let mut acc = i64::from(c as i32);
                if name == "dp4a" {
                    for k in 0..4 {
                        acc += byte(a, k, sa) * byte(b, k, sb);
                    }
                } else {
                    let base = if d.has_mod("hi") { 2 } else { 0 };
                    for k in 0..2 {
                        acc += half(a, k, sa) * byte(b, base + k, sb);
                    }
                }
                (acc as u64) & 0xffff_ffff
            }
            // A cluster of one CTA: its own shared window is rank 0's.
            "mapa" => {
                let rank = src(2)?;
                if rank != 0 {
                    return Err(format!(
                        "{}: CTA rank {rank} of the cluster; the host backend runs clusters of one CTA",
                        d.mnemonic()
                    ));
                }
                src(1)?
            }
            "shl" => {
                let s = src(2)? & 0xffff_ffff;
                if s >= u64::from(bits) {
                    0
                } else {
                    (src(1)? << s) & m
                }
            }
            "shr" => {
                let (a, s) = (src(1)?, src(2)? & 0xffff_ffff);
                if signed {
                    (sext(a, bits) >> s.min(u64::from(bits) - 1)) as u64 & m
                } else if s >= u64::from(bits) {
                    0
                } else {
                    (a & m) >> s
                }
            }
            "selp" => {
                if src(3)? & 1 == 1 {
                    src(1)?
                } else {
                    src(2)?
                }
            }
            "setp" => return self.setp(t, d, ty, bits),
            "bfe" => bit_ops::bfe(src(1)?, src(2)?, src(3)?, bits, signed),
            "bfi" => bit_ops::bfi(src(1)?, src(2)?, src(3)?, src(4)?, bits),
            "prmt" => {
                let mode = d.mods.first().map(|m| &**m).filter(|m| *m != "b32");
                u64::from(bit_ops::prmt(
                    src(1)? as u32,
                    src(2)? as u32,
                    src(3)? as u32,
                    mode,
                )?)
            }
            "lop3" => bit_ops::lop3(src(1)?, src(2)?, src(3)?, src(4)? as u8, bits),
            "cvt" => cvt(d, &|k| src(k))?,
            _ => {
                return Err(format!(
                    "{} is not supported by the host backend",
                    d.mnemonic()
                ))
            }
        };
        self.set(t, dst, v, shape.out_bits)
    }

    fn setp(&mut self, t: usize, d: &InstData, ty: &str, bits: u32) -> Res<()> {
        let cmp = d.mods.first().map_or("", |m| &**m);
        let (a, b) = (self.value(t, op(d, 1)?)?, self.value(t, op(d, 2)?)?);
        let r = if ty.starts_with('f') {
            let (x, y) = match bits {
                64 => (f64::from_bits(a), f64::from_bits(b)),
                32 => (f64::from(as_f32(a)), f64::from(as_f32(b))),
                _ => {
                    return Err(format!(
                        "setp.{cmp}.{ty} is not supported by the host backend"
                    ))
                }
            };
            let unordered = x.is_nan() || y.is_nan();
            // Ordered comparisons are false on a NaN (`ne` too, unlike
            // Rust's `!=`); the `u` forms are true on one.
            let (base, or_nan) = match cmp.strip_suffix('u') {
                Some(b) => (b, true),
                None => (cmp, false),
            };
            let ordered = match base {
                "eq" => x == y,
                "ne" => x != y && !unordered,
                "lt" => x < y,
                "le" => x <= y,
                "gt" => x > y,
                "ge" => x >= y,
                "num" => !unordered,
                "nan" => unordered,
                _ => {
                    return Err(format!(
                        "setp.{cmp}.{ty} is not supported by the host backend"
                    ))
                }
            };
            ordered || (or_nan && unordered)
        } else {
            let ord = if ty.starts_with('s') {
                sext(a, bits).cmp(&sext(b, bits))
            } else {
                (a & mask(bits)).cmp(&(b & mask(bits)))
            };
            use std::cmp::Ordering::*;
            match cmp {
                "eq" => ord == Equal,
                "ne" => ord != Equal,
                "lt" | "lo" => ord == Less,
                "le" | "ls" => ord != Greater,
                "gt" | "hi" => ord == Greater,
                "ge" | "hs" => ord != Less,
                _ => {
                    return Err(format!(
                        "setp.{cmp}.{ty} is not supported by the host backend"
                    ))
                }
            }
        };
        match op(d, 0)? {
            Operand::PredPair(p, q) => {
                self.wg.regs[t][p.index()] = u64::from(r);
                self.wg.regs[t][q.index()] = u64::from(!r);
            }
            op => self.set(t, op, u64::from(r), 1)?,
        }
        Ok(())
    }

    /// `bar{.cta}.sync|arrive a{, b}` and `barrier{.cta}.sync{.aligned}|arrive`:
    /// an arrival the scheduler in `run_cta` counts (see [`crate::barriers`]).
    /// `bar.warp.sync` and the cluster barriers of a one-CTA cluster pass.
    fn barrier(&mut self, d: &InstData, act: &[bool]) -> Res<Flow> {
        let mods: Vec<&str> = d.mods.iter().map(|m| &**m).collect();
        if mods.first() == Some(&"warp") || mods.first() == Some(&"cluster") {
            return Ok(Flow::Next);
        }
        let wait = if mods.contains(&"sync") {
            true
        } else if mods.contains(&"arrive") {
            false
        } else {
            return Err(format!(
                "{} is not supported by the host backend",
                d.mnemonic()
            ));
        };
        let uniform = |k: usize| -> Res<Option<u32>> {
            let Some(o) = d.slots.get(k).map(|s| &s.op) else {
                return Ok(None);
            };
            let mut v = None;
            for t in (0..WARPGROUP).filter(|t| act[*t]) {
                let x = self.value(t, o)? as u32;
                if v.is_some_and(|y| y != x) {
                    return Err(format!(
                        "{}: operand {} differs between threads",
                        d.mnemonic(),
                        k + 1
                    ));
                }
                v = Some(x);
            }
            Ok(v)
        };
        let id = uniform(0)?.unwrap_or(0);
        let count = uniform(1)?;
        let warps = (0..WARPGROUP / 32).filter(|w| act[w * 32..w * 32 + 32].iter().any(|a| *a));
        Ok(Flow::Barrier(Arrival {
            id,
            count,
            threads: 32 * warps.count() as u32,
            wait,
        }))
    }

    /// Bring the proxy tracker's count of ordering events (CTA barriers and
    /// mbarrier phases completed) up to date.
    fn sync_proxy_order(&mut self) {
        self.proxy.barriers = self.cta_barriers + self.mbarriers.completed;
    }

    /// Thread `t` of the running warpgroup wrote shared memory through the
    /// generic proxy.
    fn note_generic_write(&mut self, t: usize, addr: u64, len: usize) {
        self.fills.overwritten(addr, len);
        self.sync_proxy_order();
        let thread = (self.wg.index * WARPGROUP + t) as u32;
        self.proxy.generic_write(addr, len, self.line, thread);
    }

    /// An async-proxy read (`what`) of shared memory must not find an
    /// unfenced generic write.
    fn check_async_read(&self, what: &str, addr: u64, len: usize) -> Res<()> {
        if !self.check_proxy {
            return Ok(());
        }
        match self.proxy.check(addr, len) {
            None => Ok(()),
            Some(u) => Err(format!(
                "{what} reads shared memory at {:#x} that thread {} wrote at line {} through the generic proxy, \
                 with no fence.proxy.async since: the async proxy may not see the write",
                u.addr, u.thread, u.line
            )),
        }
    }

    /// `atom` and `red` on global or shared memory, thread by thread in
    /// lane order (which is one of the orders the GPU may pick): `add`
    /// (integers, f32, f64, f16, bf16 and their x2 pairs, `.v2`/`.v4`
    /// vectors), `min`, `max`, `inc`, `dec`, `and`, `or`, `xor`, `exch`,
    /// `cas`. `atom` returns the old value.
    fn atomic(&mut self, d: &InstData, act: &[bool]) -> Res<()> {
        let mods: Vec<&str> = d.mods.iter().map(|m| &**m).collect();
        let what = [
            "add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas",
        ]
        .into_iter()
        .find(|o| mods.contains(o))
        .ok_or_else(|| format!("{}: no operation", d.mnemonic()))?;
        let ty = type_of(d);
        let bits = bits_of(ty);
        let len = (bits / 8) as usize;
        let space = if mods.iter().any(|m| m.starts_with("shared")) {
            "shared"
        } else if mods.contains(&"global") {
            "global"
        } else {
            ""
        };
        let is_atom = &*d.name == "atom";
        let (addr_k, val_k) = if is_atom { (1, 2) } else { (0, 1) };
        let unsupported = || format!("{} is not supported by the host backend", d.mnemonic());
        // One element: the new value from the old one and the operand(s).
        let apply = |old: u64, b: u64, c: u64| -> Result<u64, String> {
            let m = mask(bits);
            let signed = ty.starts_with('s');
            let fadd = |elem: &str, o: u64, x: u64| -> Option<u64> {
                Some(match elem {
                    "f16" => u64::from(
                        half::f16::from_f32(
                            half::f16::from_bits(o as u16).to_f32()
                                + half::f16::from_bits(x as u16).to_f32(),
                        )
                        .to_bits(),
                    ),
                    "bf16" => u64::from(
                        half::bf16::from_f32(
                            half::bf16::from_bits(o as u16).to_f32()
                                + half::bf16::from_bits(x as u16).to_f32(),
                        )
                        .to_bits(),
                    ),
                    "f32" => u64::from((as_f32(o) + as_f32(x)).to_bits()),
                    "f64" => (f64::from_bits(o) + f64::from_bits(x)).to_bits(),
                    _ => return None,
                })
            };
            Ok(match what {
                "add" => match ty {
                    "f16x2" | "bf16x2" => {
                        let e = &ty[..ty.len() - 2];
                        let lo = fadd(e, old & 0xffff, b & 0xffff).ok_or_else(unsupported)?;
                        let hi = fadd(e, old >> 16, b >> 16).ok_or_else(unsupported)?;
                        (hi << 16) | lo
                    }
                    t if t.starts_with('f') || t == "bf16" => {
                        fadd(t, old, b).ok_or_else(unsupported)?
                    }
                    _ => old.wrapping_add(b) & m,
                },
                "min" | "max" if ty.starts_with('f') => {
                    let (x, y) = (as_f32(old), as_f32(b));
                    u64::from(if what == "min" { x.min(y) } else { x.max(y) }.to_bits())
                }
                "min" | "max" => int_min_max(what == "min", old, b, bits, signed),
                "inc" => {
                    if old & m >= b & m {
                        0
                    } else {
                        (old + 1) & m
                    }
                }
                "dec" => {
                    if old & m == 0 || old & m > b & m {
                        b & m
                    } else {
                        (old - 1) & m
                    }
                }
                "and" => old & b,
                "or" => old | b,
                "xor" => old ^ b,
                "exch" => b & m,
                _ => {
                    if old & m == b & m {
                        c & m
                    } else {
                        old & m
                    }
                }
            })
        };
        for t in (0..WARPGROUP).filter(|t| act[*t]) {
            let (_, addr) = self.address(t, op(d, addr_k)?)?;
            let vals: Vec<Operand> = match op(d, val_k)? {
                Operand::Vector(v) => v.to_vec(),
                o => vec![o.clone()],
            };
            let c = if what == "cas" {
                self.value(t, op(d, val_k + 1)?)?
            } else {
                0
            };
            let mut olds = Vec::with_capacity(vals.len());
            for (k, vo) in vals.iter().enumerate() {
                let a = addr + (k * len) as u64;
                let b = self.value(t, vo)?;
                let global_space = space == "global"
                    || (space.is_empty() && a >= 1 << crate::memory::GLOBAL_SHIFT);
                let old = if global_space {
                    // Other CTAs may run at the same time: one at a time.
                    let g = self.global;
                    g.atomically(|| -> Res<u64> {
                        let old = g.read(a, len)?;
                        g.write(a, len, apply(old, b, c)?)?;
                        Ok(old)
                    })?
                } else {
                    let old = self.load(space, a, len)?;
                    let new = apply(old, b, c)?;
                    self.store(space, a, len, new)?;
                    old
                };
                if space == "shared" || (space.is_empty() && a < PARAM_GENERIC) {
                    self.note_generic_write(t, a, len);
                }
                olds.push(old);
            }
            if is_atom {
                match op(d, 0)?.clone() {
                    Operand::Vector(parts) => {
                        for (p, old) in parts.iter().zip(olds) {
                            self.set(t, p, old, bits)?;
                        }
                    }
                    o => self.set(t, &o, olds[0], bits)?,
                }
            }
        }
        Ok(())
    }

    /// A read of shared memory a TMA load filled must come after the
    /// reading warpgroup saw the load's mbarrier phase complete.
    fn check_tma_ready(&self, what: &str, addr: u64, len: usize) -> Res<()> {
        match self.fills.unready(addr, len, &self.wg.seen) {
            None => Ok(()),
            Some((at, f)) => Err(format!(
                "{what} reads shared memory at {at:#x} that the TMA load of line {} fills, before this warpgroup \
                 saw phase {} of its mbarrier (at {:#x}) complete: wait on the mbarrier first",
                f.line, f.phase, f.mbar
            )),
        }
    }

    /// The `mbarrier` family (see [`crate::mbarrier`]), for each active
    /// thread: `init`, `inval`, `expect_tx`, `complete_tx`, `arrive`
    /// (`.expect_tx`, a count, `arrive_drop`), `try_wait` / `test_wait`
    /// (`.parity` or a state token). A wait that fails yields.
    fn mbarrier_op(&mut self, d: &InstData, act: &[bool]) -> Res<Flow> {
        let what = d.mods.first().map_or("", |m| &**m);
        let mut incomplete = false;
        for t in (0..WARPGROUP).filter(|t| act[*t]) {
            let addr = |m: &Self, k: usize| -> Res<u64> { Ok(m.address(t, op(d, k)?)?.1) };
            match what {
                "init" => {
                    let (a, n) = (addr(self, 0)?, self.value(t, op(d, 1)?)?);
                    self.mbarriers.init(a, n as u32)?;
                }
                "inval" => {
                    let a = addr(self, 0)?;
                    self.mbarriers.inval(a);
                }
                "expect_tx" | "complete_tx" => {
                    let (a, n) = (addr(self, 0)?, self.value(t, op(d, 1)?)? as i64);
                    if what == "expect_tx" {
                        self.mbarriers.expect_tx(a, n)?;
                    } else {
                        self.mbarriers.complete_tx(a, n)?;
                    }
                }
                "arrive" | "arrive_drop" => {
                    let a = addr(self, 1)?;
                    let mut count = 1;
                    if d.has_mod("expect_tx") {
                        let n = self.value(t, op(d, 2)?)? as i64;
                        self.mbarriers.expect_tx(a, n)?;
                    } else if d.slots.len() > 2 {
                        count = self.value(t, op(d, 2)?)? as u32;
                    }
                    let token = self.mbarriers.arrive(a, count, what == "arrive_drop")?;
                    let dst = op(d, 0)?.clone();
                    self.set(t, &dst, token, 64)?;
                }
                "try_wait" | "test_wait" => {
                    let a = addr(self, 1)?;
                    let x = self.value(t, op(d, 2)?)?;
                    let completed = self.mbarriers.phase(a)?;
                    let done = if d.has_mod("parity") {
                        if let Some(msg) = parity_aliased(a, completed, &self.wg.seen) {
                            return Err(msg);
                        }
                        self.mbarriers.parity_done(a, x)?
                    } else {
                        self.mbarriers.token_done(a, x)?
                    };
                    if done {
                        let e = self.wg.seen.entry(a).or_insert(0);
                        *e = (*e).max(completed);
                    }
                    incomplete |= !done;
                    let dst = op(d, 0)?.clone();
                    self.set(t, &dst, u64::from(done), 1)?;
                }
                _ => {
                    return Err(format!(
                        "{} is not supported by the host backend",
                        d.mnemonic()
                    ))
                }
            }
        }
        Ok(if incomplete { Flow::Yield } else { Flow::Next })
    }

    /// Copy `len` bytes between a generic (or shared) address and a buffer.
    fn read_bytes(&mut self, addr: u64, out: &mut [u8]) -> Res<()> {
        for (k, b) in out.iter_mut().enumerate() {
            *b = self.generic_read(addr + k as u64, 1)? as u8;
        }
        Ok(())
    }

    fn write_bytes(&mut self, addr: u64, bytes: &[u8]) -> Res<()> {
        for (k, b) in bytes.iter().enumerate() {
            self.store("", addr + k as u64, 1, u64::from(*b))?;
        }
        Ok(())
    }

    /// `cp.async.bulk`: TMA tensor copies (`.tensor.Nd`, tiled, through a
    /// tensor map; see [`crate::tensor_map`]) and plain bulk copies, in
    /// either direction, for each active thread. A load lands at once and
    /// completes its bytes on its mbarrier; a store is written at once, so
    /// `commit_group` / `wait_group` have nothing left to wait for.
    fn bulk_copy(&mut self, d: &InstData, act: &[bool]) -> Res<()> {
        let mods: Vec<&str> = d.mods.iter().map(|m| &**m).collect();
        if mods
            .iter()
            .any(|m| matches!(*m, "commit_group" | "wait_group" | "prefetch"))
        {
            return Ok(());
        }
        if mods
            .iter()
            .any(|m| m.starts_with("multicast") || *m == "im2col")
        {
            return Err(format!(
                "{} is not supported by the host backend",
                d.mnemonic()
            ));
        }
        let shared_at = mods.iter().position(|m| m.starts_with("shared"));
        let global_at = mods.iter().position(|m| *m == "global");
        let load = match (shared_at, global_at) {
            (Some(s), Some(g)) => s < g,
            _ => {
                return Err(format!(
                    "{}: no direction (shared and global)",
                    d.mnemonic()
                ))
            }
        };
        let tensor = mods.contains(&"tensor");
        for t in (0..WARPGROUP).filter(|t| act[*t]) {
            if tensor {
                self.tensor_copy(t, d, load)?;
            } else {
                let (_, dst) = self.address(t, op(d, 0)?)?;
                let (_, src) = self.address(t, op(d, 1)?)?;
                let n = self.value(t, op(d, 2)?)?;
                if n % 16 != 0 || n > MAX_SHARED {
                    return Err(format!(
                        "{}: a bulk copy of {n} bytes (a multiple of 16, at most the {MAX_SHARED} bytes of shared memory)",
                        d.mnemonic()
                    ));
                }
                let n = n as usize;
                let mut buf = vec![0u8; n];
                if !load {
                    self.check_async_read("this bulk copy", src, n)?;
                }
                self.read_bytes(src, &mut buf)?;
                self.write_bytes(dst, &buf)?;
                if load {
                    self.proxy.async_write(dst, n);
                    let (_, mbar) = self.address(t, op(d, 3)?)?;
                    let phase = self.mbarriers.phase(mbar)?;
                    self.fills.landed(
                        dst,
                        n,
                        Fill {
                            mbar,
                            phase,
                            line: self.line,
                        },
                    );
                    self.mbarriers.complete_tx(mbar, n as i64)?;
                }
            }
        }
        Ok(())
    }

    /// One thread's `cp.async.bulk.tensor`: the box at the coordinates,
    /// between global memory and shared memory (swizzled as the map says;
    /// out-of-bounds elements read as zero or NaN and are not written).
    fn tensor_copy(&mut self, t: usize, d: &InstData, load: bool) -> Res<()> {
        let (map_op, mem_op) = if load {
            (op(d, 1)?, op(d, 0)?)
        } else {
            (op(d, 0)?, op(d, 1)?)
        };
        let Operand::Vector(parts) = map_op else {
            return Err(format!(
                "{}: no [tensor map, {{coordinates}}] operand",
                d.mnemonic()
            ));
        };
        let map_addr = self.value(t, &parts[0])?;
        let coords: Vec<i64> = match parts.get(1) {
            Some(Operand::Vector(c)) => c
                .iter()
                .map(|o| self.value(t, o).map(|v| i64::from(v as u32 as i32)))
                .collect::<Res<_>>()?,
            Some(o) => vec![i64::from(self.value(t, o)? as u32 as i32)],
            None => return Err(format!("{}: no coordinates", d.mnemonic())),
        };
        let mut bytes = [0u8; 128];
        self.read_bytes(map_addr, &mut bytes)?;
        let tm = TensorMap::decode(&bytes);
        if let Some(why) = tm.unsupported() {
            return Err(format!("{}: the tensor map at {map_addr:#x} has {why}, which the host backend does not support", d.mnemonic()));
        }
        if tm.tf32 {
            return Err(format!(
                "{}: tf32 tensor maps (rounding in flight) are not supported by the host backend",
                d.mnemonic()
            ));
        }
        if coords.len() != tm.rank {
            return Err(format!(
                "{}: {} coordinates for a rank-{} tensor map",
                d.mnemonic(),
                coords.len(),
                tm.rank
            ));
        }
        let (_, smem) = self.address(t, mem_op)?;
        let fill = if load {
            let (_, mbar) = self.address(t, op(d, 2)?)?;
            Some(Fill {
                mbar,
                phase: self.mbarriers.phase(mbar)?,
                line: self.line,
            })
        } else {
            None
        };
        let esz = crate::tensor_map::elem_bytes(tm.elem_code).unwrap_or(1);
        let n: Vec<usize> = (0..tm.rank).map(|k| tm.box_elems(k)).collect();
        let total: usize = n.iter().product();
        let nan: u64 = match tm.elem_code {
            6 | 10 => 0x7fff,
            7 | 8 => 0x7fff_ffff,
            9 => 0x7fff_ffff_ffff_ffff,
            _ => 0,
        };
        for idx in 0..total {
            let mut rest = idx;
            let mut inside = true;
            let mut gaddr = tm.address;
            for k in 0..tm.rank {
                let i = rest % n[k];
                rest /= n[k];
                let g = coords[k] + i as i64;
                if g < 0 || g as u64 >= tm.dims[k] {
                    inside = false;
                    continue;
                }
                gaddr += if k == 0 {
                    g as u64 * esz as u64
                } else {
                    g as u64 * tm.strides[k - 1]
                };
            }
            let saddr = tm.swizzled(smem, (idx * esz) as u64);
            if !load {
                self.check_async_read("this TMA store", saddr, esz)?;
            }
            if load {
                let v = if inside {
                    self.global.read(gaddr, esz)?
                } else if tm.oob_nan {
                    nan
                } else {
                    0
                };
                self.shared.write(saddr, esz, v)?;
                self.proxy.async_write(saddr, esz);
                if let Some(f) = fill {
                    self.fills.landed(saddr, esz, f);
                }
            } else if inside {
                let v = self.shared.read(saddr, esz)?;
                self.global.write(gaddr, esz, v)?;
            }
        }
        if load {
            let (_, mbar) = self.address(t, op(d, 2)?)?;
            self.mbarriers.complete_tx(mbar, tm.box_bytes() as i64)?;
        }
        Ok(())
    }

    /// `tensormap.replace.tile.FIELD [map], {ord,} value` (on a map in
    /// shared or global memory) and `tensormap.cp_fenceproxy [dst], [src],
    /// size` (the copy of a map to global memory), for each active thread.
    fn tensormap_op(&mut self, d: &InstData, act: &[bool]) -> Res<()> {
        let what = d.mods.first().map_or("", |m| &**m);
        for t in (0..WARPGROUP).filter(|t| act[*t]) {
            match what {
                "replace" => {
                    let field = d.mods.get(2).map_or("", |m| &**m);
                    let (_, at) = self.address(t, op(d, 0)?)?;
                    let (ord, v) = if d.slots.len() > 2 {
                        (
                            self.value(t, op(d, 1)?)? as usize,
                            self.value(t, op(d, 2)?)?,
                        )
                    } else {
                        (0, self.value(t, op(d, 1)?)?)
                    };
                    let mut bytes = [0u8; 128];
                    self.read_bytes(at, &mut bytes)?;
                    crate::tensor_map::replace(&mut bytes, field, ord, v)?;
                    self.write_bytes(at, &bytes)?;
                }
                "cp_fenceproxy" => {
                    let (_, dst) = self.address(t, op(d, 0)?)?;
                    let (_, src) = self.address(t, op(d, 1)?)?;
                    let n = self.value(t, op(d, 2)?)?;
                    if n != 128 {
                        return Err(format!(
                            "{}: a tensor map is 128 bytes, not {n}",
                            d.mnemonic()
                        ));
                    }
                    let n = n as usize;
                    let mut buf = vec![0u8; n];
                    self.read_bytes(src, &mut buf)?;
                    self.write_bytes(dst, &buf)?;
                }
                _ => {
                    return Err(format!(
                        "{} is not supported by the host backend",
                        d.mnemonic()
                    ))
                }
            }
        }
        Ok(())
    }

    /// `cp.async`: copies (read now, landing at a wait), `commit_group`,
    /// `wait_group N`, `wait_all` (see [`crate::async_copy`]).
    fn async_copy(&mut self, d: &InstData, act: &[bool]) -> Res<()> {
        let what = d.mods.get(1).map_or("", |m| &**m);
        let everyone = self.all_live(act);
        let landed = match what {
            "commit_group" | "wait_group" | "wait_all" if !everyone => {
                return Err(format!(
                    "{} with some threads of the warpgroup inactive: the host backend keeps one group list per warpgroup",
                    d.mnemonic()
                ))
            }
            "commit_group" => {
                self.wg.copies.commit();
                return Ok(());
            }
            "wait_group" => {
                let n = match op(d, 0)? {
                    Operand::Imm(i) => i.as_i64().filter(|n| *n >= 0),
                    _ => None,
                };
                let n = n.ok_or("cp.async.wait_group takes a non-negative immediate")?;
                self.wg.copies.wait(n as usize)
            }
            "wait_all" => self.wg.copies.wait_all(),
            "ca" | "cg" => {
                for t in (0..WARPGROUP).filter(|t| act[*t]) {
                    let c = self.read_copy(t, d)?;
                    self.wg.copies.issue(c);
                }
                return Ok(());
            }
            _ => {
                return Err(format!(
                    "{} is not supported by the host backend",
                    d.mnemonic()
                ))
            }
        };
        for c in landed {
            for (k, chunk) in c.bytes.chunks(8).enumerate() {
                let mut w = [0u8; 8];
                w[..chunk.len()].copy_from_slice(chunk);
                self.shared
                    .write(c.dst + 8 * k as u64, chunk.len(), u64::from_le_bytes(w))?;
            }
            // cp.async writes through the generic proxy.
            self.fills.overwritten(c.dst, c.bytes.len());
            self.sync_proxy_order();
            self.proxy
                .generic_write(c.dst, c.bytes.len(), c.line, c.thread);
        }
        Ok(())
    }

    /// Thread `t`'s `cp.async.{ca,cg}.shared.global [dst], [src], cp-size
    /// {, src-size | ignore-src}`: its bytes, read from global memory now.
    fn read_copy(&mut self, t: usize, d: &InstData) -> Res<PendingCopy> {
        let (_, dst) = self.address(t, op(d, 0)?)?;
        let (_, src) = self.address(t, op(d, 1)?)?;
        let size = match op(d, 2)? {
            Operand::Imm(i) => i.as_i64().filter(|n| matches!(n, 4 | 8 | 16)),
            _ => None,
        }
        .ok_or("cp.async: the copy size must be the immediate 4, 8 or 16")?
            as usize;
        let read = match d.slots.get(3).map(|s| &s.op) {
            None => size,
            // `ignore-src`: a predicate; true reads nothing.
            Some(Operand::Reg(r) | Operand::NotReg(r)) if &*self.f.vregs[*r].ty == "pred" => {
                if self.value(t, &d.slots[3].op)? & 1 == 1 {
                    0
                } else {
                    size
                }
            }
            Some(o) => {
                let n = self.value(t, o)? as usize;
                if n > size {
                    return Err(format!(
                        "cp.async: src-size {n} is larger than the copy ({size})"
                    ));
                }
                n
            }
        };
        let mut bytes: smallvec::SmallVec<[u8; 16]> = smallvec::smallvec![0; size];
        // Eight bytes at a time (a 16-byte copy is two reads).
        for k in (0..read).step_by(8) {
            let n = (read - k).min(8);
            let v = self.global.read(src + k as u64, n)?;
            bytes[k..k + n].copy_from_slice(&v.to_le_bytes()[..n]);
        }
        Ok(PendingCopy {
            dst,
            bytes,
            line: self.line,
            thread: (self.wg.index * WARPGROUP + t) as u32,
        })
    }

    /// The warp collectives, warp by warp over the active lanes:
    /// `shfl.sync` (see [`crate::warp_shuffle`]), `vote.sync.{all,any,uni,
    /// ballot}`, `elect.sync` (the lowest active lane of the member mask),
    /// `activemask`, `redux.sync.{add,min,max,and,or,xor}`.
    fn warp_collective(&mut self, d: &InstData, act: &[bool]) -> Res<()> {
        let name = &*d.name;
        let first = d.mods.first().map_or("", |m| &**m);
        // Each operation's member-mask operand.
        let mask_at = match name {
            "shfl" => Some(4),
            "vote" | "redux" => Some(2),
            "elect" => Some(1),
            _ => None,
        };
        for warp in 0..WARPGROUP / 32 {
            let lanes: Vec<usize> = (0..32).map(|l| warp * 32 + l).collect();
            let active: u32 = lanes
                .iter()
                .enumerate()
                .filter(|(_, t)| act[**t])
                .fold(0, |m, (l, _)| m | (1 << l));
            if active == 0 {
                continue;
            }
            let lane_of = |t: usize| (t % 32) as u32;
            if let Some(k) = mask_at {
                for &t in lanes.iter().filter(|t| act[**t]) {
                    let member = self.value(t, op(d, k)?)? as u32;
                    if member & (1 << lane_of(t)) == 0 {
                        return Err(format!(
                            "{}: thread {} runs it outside its member mask {member:#x}",
                            d.mnemonic(),
                            self.wg.index * WARPGROUP + t
                        ));
                    }
                }
            }
            match name {
                "shfl" => {
                    let mode = d
                        .mods
                        .get(1)
                        .and_then(|m| crate::warp_shuffle::Mode::parse(m))
                        .ok_or_else(|| format!("{}: no shuffle mode", d.mnemonic()))?;
                    let src = op(d, 1)?;
                    let a: Vec<u64> = lanes
                        .iter()
                        .map(|&t| if act[t] { self.value(t, src) } else { Ok(0) })
                        .collect::<Res<_>>()?;
                    for &t in lanes.iter().filter(|t| act[**t]) {
                        let b = self.value(t, op(d, 2)?)? as u32;
                        let c = self.value(t, op(d, 3)?)? as u32;
                        let (j, ok) = crate::warp_shuffle::source_lane(mode, lane_of(t), b, c);
                        if active & (1 << j) == 0 {
                            return Err(format!(
                                "{}: lane {} reads lane {j}, which is not active",
                                d.mnemonic(),
                                lane_of(t)
                            ));
                        }
                        match op(d, 0)? {
                            Operand::PredPair(r, p) => {
                                let (r, p) = (*r, *p);
                                self.set(t, &Operand::Reg(r), a[j as usize], 32)?;
                                self.set(t, &Operand::Reg(p), u64::from(ok), 1)?;
                            }
                            o => {
                                let o = o.clone();
                                self.set(t, &o, a[j as usize], 32)?;
                            }
                        }
                    }
                }
                "vote" => {
                    let mut ballot = 0u32;
                    for &t in lanes.iter().filter(|t| act[**t]) {
                        if self.value(t, op(d, 1)?)? & 1 == 1 {
                            ballot |= 1 << lane_of(t);
                        }
                    }
                    let kind = d.mods.get(1).map_or("", |m| &**m);
                    let v = match kind {
                        "ballot" => u64::from(ballot),
                        "all" => u64::from(ballot == active),
                        "any" => u64::from(ballot != 0),
                        "uni" => u64::from(ballot == 0 || ballot == active),
                        _ => {
                            return Err(format!(
                                "{} is not supported by the host backend",
                                d.mnemonic()
                            ))
                        }
                    };
                    let bits = if kind == "ballot" { 32 } else { 1 };
                    let dst = op(d, 0)?.clone();
                    for &t in lanes.iter().filter(|t| act[**t]) {
                        self.set(t, &dst, v, bits)?;
                    }
                }
                "elect" => {
                    let leader = active.trailing_zeros();
                    let dst = op(d, 0)?.clone();
                    for &t in lanes.iter().filter(|t| act[**t]) {
                        let me = u64::from(lane_of(t) == leader);
                        match &dst {
                            Operand::PredPair(r, p) => {
                                self.set(t, &Operand::Reg(*r), u64::from(leader), 32)?;
                                self.set(t, &Operand::Reg(*p), me, 1)?;
                            }
                            o => self.set(t, o, me, 1)?,
                        }
                    }
                }
                "activemask" => {
                    let dst = op(d, 0)?.clone();
                    for &t in lanes.iter().filter(|t| act[**t]) {
                        self.set(t, &dst, u64::from(active), 32)?;
                    }
                }
                _ => {
                    // redux.sync.op.type: over the active lanes.
                    let ty = type_of(d);
                    let signed = ty.starts_with('s');
                    let vals: Vec<u64> = lanes
                        .iter()
                        .filter(|t| act[**t])
                        .map(|&t| self.value(t, op(d, 1)?).map(|v| v & 0xffff_ffff))
                        .collect::<Res<_>>()?;
                    let key = |v: u64| {
                        if signed {
                            i64::from(v as u32 as i32)
                        } else {
                            v as i64
                        }
                    };
                    let v = match first {
                        "add" => vals.iter().fold(0u64, |a, v| a.wrapping_add(*v)) & 0xffff_ffff,
                        "min" => *vals.iter().min_by_key(|v| key(**v)).unwrap_or(&0),
                        "max" => *vals.iter().max_by_key(|v| key(**v)).unwrap_or(&0),
                        "and" => vals.iter().fold(0xffff_ffff, |a, v| a & v),
                        "or" => vals.iter().fold(0, |a, v| a | v),
                        "xor" => vals.iter().fold(0, |a, v| a ^ v),
                        _ => {
                            return Err(format!(
                                "{} is not supported by the host backend",
                                d.mnemonic()
                            ))
                        }
                    };
                    let dst = op(d, 0)?.clone();
                    for &t in lanes.iter().filter(|t| act[**t]) {
                        self.set(t, &dst, v, 32)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// `ldmatrix` / `stmatrix` `.m8n8.{x1,x2,x4}{.trans}.shared.b16`: warp by
    /// warp, lanes `8i..8i+7` give matrix `i`'s row addresses (see
    /// [`crate::matrix_fragments`]).
    fn matrix_move(&mut self, d: &InstData, act: &[bool]) -> Res<()> {
        let load = &*d.name == "ldmatrix";
        let has = |m: &str| d.has_mod(m);
        if !has("m8n8") || !has("b16") {
            return Err(format!(
                "{} is not supported by the host backend (m8n8 .b16 only)",
                d.mnemonic()
            ));
        }
        if !act.iter().all(|a| *a) {
            return Err(format!(
                "{} with inactive threads (it is .aligned)",
                d.mnemonic()
            ));
        }
        let num = [("x1", 1), ("x2", 2), ("x4", 4)]
            .iter()
            .find(|(m, _)| has(m))
            .map(|(_, n)| *n)
            .ok_or("ldmatrix/stmatrix without .x1, .x2 or .x4")?;
        let trans = has("trans");
        let (regs_op, addr_op) = if load {
            (op(d, 0)?, op(d, 1)?)
        } else {
            (op(d, 1)?, op(d, 0)?)
        };
        let regs: Vec<Operand> = match regs_op {
            Operand::Vector(v) => v.to_vec(),
            o => vec![o.clone()],
        };
        if regs.len() != num {
            return Err(format!("{} registers for .x{num}", regs.len()));
        }
        for warp in 0..WARPGROUP / 32 {
            for (i, reg) in regs.iter().enumerate() {
                let mut addrs = [0u64; 8];
                for (j, a) in addrs.iter_mut().enumerate() {
                    *a = self.address(warp * 32 + 8 * i + j, addr_op)?.1;
                }
                if load {
                    for a in addrs {
                        self.check_tma_ready(&format!("this {}", d.mnemonic()), a, 16)?;
                    }
                }
                let mut rows: Rows = [[0; 16]; 8];
                for (row, a) in rows.iter_mut().zip(addrs) {
                    for (k, b) in row.iter_mut().enumerate() {
                        *b = self.shared.read(a + k as u64, 1)? as u8;
                    }
                }
                for lane in 0..32 {
                    let t = warp * 32 + lane;
                    if load {
                        let v = matrix_fragments::fragment(&rows, lane, trans);
                        self.set(t, reg, u64::from(v), 32)?;
                    } else {
                        let v = self.value(t, reg)? as u32;
                        matrix_fragments::scatter(&mut rows, lane, trans, v);
                    }
                }
                if !load {
                    for (j, (row, a)) in rows.iter().zip(addrs).enumerate() {
                        for (k, b) in row.iter().enumerate() {
                            self.shared.write(a + k as u64, 1, u64::from(*b))?;
                        }
                        self.note_generic_write(warp * 32 + 8 * i + j, a, 16);
                    }
                }
            }
        }
        Ok(())
    }

    /// Issue a wgmma: compute its result now, make it pending in the open group.
    fn mma(&mut self, d: &InstData) -> Res<()> {
        if self.wg.live < WARPGROUP {
            return Err(format!(
                "wgmma.mma_async needs the 128 threads of a warpgroup; warpgroup {} of this CTA has {}",
                self.wg.index, self.wg.live
            ));
        }
        let form = WgmmaForm::decode(&d.mods[..]).map_err(|e| format!("{e:?}"))?;
        let regs = |op: &Operand| -> Res<Vec<VReg>> {
            match op {
                Operand::Vector(v) => v
                    .iter()
                    .map(|e| match e {
                        Operand::Reg(r) => Ok(*r),
                        other => Err(format!("{other:?} in a wgmma register list")),
                    })
                    .collect(),
                other => Err(format!("{other:?} where a register list belongs")),
            }
        };
        let dregs = regs(op(d, 0)?)?;
        let a_regs = match op(d, 1)? {
            Operand::Vector(_) => Some(regs(op(d, 1)?)?),
            _ => None,
        };
        // Inputs must not be in flight; the accumulators may (chaining).
        for op in d.slots.iter().skip(1).map(|s| &s.op) {
            let mut bad = None;
            op.for_each_reg(&mut |r| {
                if self.wg.in_flight.contains_key(&r) {
                    bad = Some(r);
                }
            });
            if let Some(r) = bad {
                return Err(format!(
                    "wgmma reads {} while the wgmma of line {} that writes it is in flight",
                    self.name(r),
                    self.wg.in_flight[&r]
                ));
            }
        }
        let imm = |k: usize| -> Res<i64> {
            match d.slots.get(k).map(|s| &s.op) {
                Some(Operand::Imm(i)) => i.as_i64().ok_or_else(|| "bad immediate".to_string()),
                None => Ok(0),
                Some(other) => Err(format!("{other:?} where an immediate belongs")),
            }
        };
        let uniform = |vals: Vec<u64>, what: &str| -> Res<u64> {
            match vals.windows(2).all(|w| w[0] == w[1]) {
                true => Ok(vals.first().copied().unwrap_or(0)),
                false => Err(format!("{what} differs between threads of the warpgroup")),
            }
        };
        let all =
            |op: &Operand| -> Res<Vec<u64>> { (0..WARPGROUP).map(|t| self.value(t, op)).collect() };
        let scale_d = uniform(all(op(d, 3)?)?, "scale-d")? & 1 == 1;
        let b_desc = uniform(all(op(d, 2)?)?, "the B descriptor")?;
        let (negate_a, negate_b, trans_a, trans_b) = match (form.family, a_regs.is_some()) {
            (Family::Half, false) => (imm(4)? == -1, imm(5)? == -1, imm(6)? == 1, imm(7)? == 1),
            (Family::Half, true) => (imm(4)? == -1, imm(5)? == -1, false, imm(6)? == 1),
            (Family::Tf32 | Family::Fp8, _) => (imm(4)? == -1, imm(5)? == -1, false, false),
            _ => (false, false, false, false),
        };
        // C: the newest pending value of each accumulator, else the
        // register (the source of each of `dregs`, found once for all threads).
        let pending: Vec<&PendingMma> = self
            .wg
            .committed
            .iter()
            .flatten()
            .chain(&self.wg.open)
            .collect();
        let source: Vec<Option<(usize, usize)>> = dregs
            .iter()
            .map(|r| {
                pending
                    .iter()
                    .enumerate()
                    .rev()
                    .find_map(|(k, p)| p.regs.iter().position(|x| x == r).map(|j| (k, j)))
            })
            .collect();
        let c: Vec<Vec<u32>> = (0..WARPGROUP)
            .map(|t| {
                dregs
                    .iter()
                    .zip(&source)
                    .map(|(r, src)| match *src {
                        Some((k, j)) => pending[k].values[t][j],
                        None => self.wg.regs[t][r.index()] as u32,
                    })
                    .collect()
            })
            .collect();
        let a_vals: Vec<Vec<u32>>;
        let a = match &a_regs {
            Some(ar) => {
                a_vals = (0..WARPGROUP)
                    .map(|t| {
                        ar.iter()
                            .map(|r| self.wg.regs[t][r.index()] as u32)
                            .collect()
                    })
                    .collect();
                AOperand::Regs(&a_vals)
            }
            None => AOperand::Desc(uniform(all(op(d, 1)?)?, "the A descriptor")?),
        };
        let mma = Mma {
            form,
            a,
            b_desc,
            scale_d,
            negate_a,
            negate_b,
            trans_a,
            trans_b,
        };
        let checked = ProxyChecked {
            shared: &self.shared,
            proxy: &self.proxy,
            found: std::cell::Cell::new(None),
            fills: &self.fills,
            seen: &self.wg.seen,
            unready: std::cell::Cell::new(None),
        };
        let values = wgmma_math::compute(&mma, &c, &checked)?;
        if let Some((at, f)) = checked.unready.get() {
            return Err(format!(
                "this wgmma reads shared memory at {at:#x} that the TMA load of line {} fills, before this warpgroup \
                 saw phase {} of its mbarrier (at {:#x}) complete: wait on the mbarrier first",
                f.line, f.phase, f.mbar
            ));
        }
        if let Some(u) = checked.found.get().filter(|_| self.check_proxy) {
            return Err(format!(
                "this wgmma reads shared memory at {:#x} that thread {} wrote at line {} through the generic proxy, \
                 with no fence.proxy.async since: the async proxy may not see the write",
                u.addr, u.thread, u.line
            ));
        }
        let unique: FxHashSet<VReg> = dregs.iter().copied().collect();
        if unique.len() != dregs.len() {
            return Err("a register appears twice among the accumulators".into());
        }
        for r in &dregs {
            self.wg.in_flight.insert(*r, d.line);
        }
        self.wg.open.push(PendingMma {
            regs: dregs,
            values,
            line: d.line,
        });
        self.stats.wgmma += 1;
        Ok(())
    }
}

/// Shared memory as wgmma reads it, noting the first byte an unfenced
/// generic write left (see [`crate::proxy_fence`]).
struct ProxyChecked<'a> {
    shared: &'a Shared,
    proxy: &'a GenericWrites,
    found: std::cell::Cell<Option<crate::proxy_fence::Unfenced>>,
    /// The TMA check: fills, what the warpgroup has seen, the first read
    /// of a fill it may not read yet.
    fills: &'a TmaFills,
    seen: &'a Seen,
    unready: std::cell::Cell<Option<(u64, Fill)>>,
}

impl wgmma_math::SharedMemory for ProxyChecked<'_> {
    fn read_bits(&self, addr: u32, bits: u32) -> Result<u32, String> {
        let (a, n) = (u64::from(addr), (bits / 8) as usize);
        if self.found.get().is_none() {
            self.found.set(self.proxy.check(a, n));
        }
        if self.unready.get().is_none() {
            self.unready.set(self.fills.unready(a, n, self.seen));
        }
        self.shared.read_bits(addr, bits)
    }
}

/// Operand `k` of `d`, or an error naming the instruction.
fn op(d: &InstData, k: usize) -> Res<&Operand> {
    d.slots
        .get(k)
        .map(|s| &s.op)
        .ok_or_else(|| format!("{}: operand {} missing", d.mnemonic(), k + 1))
}

/// A special register for CTA thread `t` (linear: x fastest).
fn special(s: &str, t: usize, ctaid: [u32; 3], grid: [u32; 3], block: [u32; 3]) -> Res<u64> {
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
        // A grid runs as clusters of one CTA.
        "%cluster_ctarank" | "%cluster_ctaid.x" | "%cluster_ctaid.y" | "%cluster_ctaid.z" => 0,
        "%cluster_nctarank" | "%cluster_nctaid.x" | "%cluster_nctaid.y" | "%cluster_nctaid.z" => 1,
        "%clusterid.x" => u64::from(ctaid[0]),
        "%clusterid.y" => u64::from(ctaid[1]),
        "%clusterid.z" => u64::from(ctaid[2]),
        "%nclusterid.x" => u64::from(grid[0]),
        "%nclusterid.y" => u64::from(grid[1]),
        "%nclusterid.z" => u64::from(grid[2]),
        "%is_explicit_cluster" => 0,
        _ => {
            return Err(format!(
                "special register {s} is not supported by the host backend"
            ))
        }
    })
}

/// `cvt`: integer widening and narrowing, and the float conversions an
/// epilogue uses (f32 <-> f16, f16x2 packing, integer <-> f32).
fn cvt(d: &InstData, src: &dyn Fn(usize) -> Res<u64>) -> Res<u64> {
    use crate::numbers::{decode_fp8, encode_fp8};
    let is_type =
        |m: &str| type_bytes(m).is_some() || matches!(m, "e4m3x2" | "e5m2x2" | "e4m3" | "e5m2");
    let types: Vec<&str> = d.mods.iter().map(|m| &**m).filter(|m| is_type(m)).collect();
    let [to, from] = types[..] else {
        return Err(format!("{}: two types expected", d.mnemonic()));
    };
    let unsupported = || format!("{} is not supported by the host backend", d.mnemonic());
    let satfinite = d.has_mod("satfinite");
    let v = src(1)?;
    let (tb, fb) = (bits_of(to), bits_of(from));
    // Integer and bit types (`s32`, `u8`, `b16`), not `bf16`.
    let int = |t: &str| {
        t.starts_with('s')
            || t.starts_with('u')
            || (t.starts_with('b') && t[1..].starts_with(|c: char| c.is_ascii_digit()))
    };
    // A scalar float's value, and a value rounded (nearest even) into one.
    let value = |t: &str, bits: u64| -> Option<f64> {
        Some(match t {
            "f16" => f64::from(half::f16::from_bits(bits as u16).to_f32()),
            "bf16" => f64::from(half::bf16::from_bits(bits as u16).to_f32()),
            "f32" => f64::from(as_f32(bits)),
            "f64" => f64::from_bits(bits),
            "e4m3" => decode_fp8(bits as u8, true),
            "e5m2" => decode_fp8(bits as u8, false),
            _ => return None,
        })
    };
    let round_into = |t: &str, x: f64| -> Option<u64> {
        let clamp = |max: f64| {
            if satfinite && !x.is_nan() {
                x.clamp(-max, max)
            } else {
                x
            }
        };
        Some(match t {
            "f16" => u64::from(half::f16::from_f64(clamp(65504.0)).to_bits()),
            "bf16" => u64::from(half::bf16::from_f64(clamp(3.3895313892515355e38)).to_bits()),
            "f32" => u64::from((x as f32).to_bits()),
            "f64" => x.to_bits(),
            "e4m3" => u64::from(encode_fp8(x, true, satfinite)),
            "e5m2" => u64::from(encode_fp8(x, false, satfinite)),
            _ => return None,
        })
    };
    // Packed pairs: the element of each half (the first source is the high one).
    let pair = |t: &str| -> Option<(&'static str, u32)> {
        Some(match t {
            "f16x2" => ("f16", 16),
            "bf16x2" => ("bf16", 16),
            "e4m3x2" => ("e4m3", 8),
            "e5m2x2" => ("e5m2", 8),
            _ => return None,
        })
    };
    if let Some((elem, w)) = pair(to) {
        let (hi, lo) = match (from, pair(from)) {
            ("f32", _) => (f64::from(as_f32(v)), f64::from(as_f32(src(2)?))),
            (_, Some((felem, fw))) => {
                let part =
                    |k: u32| value(felem, (v >> (fw * k)) & mask(fw)).ok_or_else(unsupported);
                (part(1)?, part(0)?)
            }
            _ => return Err(unsupported()),
        };
        let (h, l) = (
            round_into(elem, hi).ok_or_else(unsupported)?,
            round_into(elem, lo).ok_or_else(unsupported)?,
        );
        return Ok((h << w) | l);
    }
    // tf32 is an f32 with the low 13 mantissa bits zero; `.rna` rounds
    // to nearest, ties away from zero (a NaN or infinity stays one).
    if (to, from) == ("tf32", "f32") {
        if !d.has_mod("rna") {
            return Err(unsupported());
        }
        let b = v as u32;
        let r = if (b & 0x7f80_0000) == 0x7f80_0000 {
            b
        } else {
            b.wrapping_add(0x1000) & !0x1fff
        };
        return Ok(u64::from(r));
    }
    if int(to) && int(from) {
        return Ok(if from.starts_with('s') {
            (sext(v, fb) as u64) & mask(tb)
        } else {
            v & mask(fb) & mask(tb)
        });
    }
    if int(from) {
        // Integer to float: exact in f64 for 32-bit sources, then one rounding.
        let x = if from.starts_with('s') {
            sext(v, fb) as f64
        } else {
            (v & mask(fb)) as f64
        };
        return round_into(to, x).ok_or_else(unsupported);
    }
    let x = value(from, v).ok_or_else(unsupported)?;
    // .sat on a float destination: clamped to [0, 1], NaN to 0.
    let x = if d.has_mod("sat") && !int(to) {
        if x.is_nan() {
            0.0
        } else {
            x.clamp(0.0, 1.0)
        }
    } else {
        x
    };
    if int(to) {
        // Float to integer: the rounding modifier, then saturation (NaN is 0).
        let r = if d.has_mod("rni") {
            x.round_ties_even()
        } else if d.has_mod("rmi") {
            x.floor()
        } else if d.has_mod("rpi") {
            x.ceil()
        } else {
            x.trunc()
        };
        return Ok(if to.starts_with('s') {
            let (lo, hi) = (-(2f64.powi(tb as i32 - 1)), 2f64.powi(tb as i32 - 1) - 1.0);
            (r.clamp(lo, hi) as i64 as u64) & mask(tb)
        } else {
            (r.clamp(0.0, 2f64.powi(tb as i32) - 1.0) as u64) & mask(tb)
        });
    }
    round_into(to, x).ok_or_else(unsupported)
}
