//! Thread-block clusters: the CTAs of one cluster run together in one
//! scheduler, so that they can reach each other's shared memory
//! (distributed shared memory, `mapa`, `.shared::cluster` accesses),
//! arrive on each other's mbarriers, receive one TMA multicast load
//! together and meet at the cluster barrier (`barrier.cluster`).
//!
//! Each CTA keeps its own shared memory, mbarriers, sanitizer state and
//! warpgroups. The running CTA's memory state sits in the `Machine`'s
//! fields, as with one CTA; the cluster's other CTAs' state sits beside it
//! in `Machine::peers` (by rank) and is swapped in when one of their
//! warpgroups runs, as warpgroups are. A remote access goes to the peer by
//! rank. Clusters run in parallel across the cores, as CTAs did.
//!
//! Addresses: CTA rank `r`'s shared memory appears in the shared::cluster
//! window at `(r + 1) << WINDOW_SHIFT` (what `mapa` returns); the running
//! CTA's own shared::cta addresses (below `1 << WINDOW_SHIFT`) are valid
//! shared::cluster addresses of itself, as the PTX ISA says. Generic
//! addresses of shared memory are the same numbers, so a generic access
//! that falls in a peer's window reaches the peer too.

use super::*;

/// The most CTAs a cluster may have here: the portable limit (a launch
/// may ask sm_90 for 16 only with a non-portable attribute).
pub const MAX_CLUSTER: u32 = 8;

/// Rank `r`'s shared memory starts at `(r + 1) << WINDOW_SHIFT` of the
/// shared::cluster window (far above a CTA's 227 KiB).
pub const WINDOW_SHIFT: u32 = 24;

/// The shared::cluster address of `offset` in the shared memory of the
/// CTA of rank `rank` (what `mapa` gives).
pub fn cluster_address(rank: usize, offset: u64) -> u64 {
    ((rank as u64 + 1) << WINDOW_SHIFT) | (offset & ((1 << WINDOW_SHIFT) - 1))
}

/// What one CTA owns besides its warpgroups: its shared memory, its
/// mbarriers, the sanitizer's trackers of it, and where it is in the grid.
pub(super) struct CtaMemory {
    shared: Shared,
    mbarriers: MBarriers,
    proxy: GenericWrites,
    fills: TmaFills,
    cta_barriers: u64,
    ctaid: [u32; 3],
}

impl CtaMemory {
    fn new(size: usize, ctaid: [u32; 3]) -> Self {
        CtaMemory {
            shared: Shared::new(size),
            mbarriers: MBarriers::default(),
            proxy: GenericWrites::new(size),
            fills: TmaFills::new(size),
            cta_barriers: 0,
            ctaid,
        }
    }
}

/// The cluster barrier (`barrier.cluster`): the phase it is in, and the
/// line of its first wait (for a deadlock report). Which threads arrived
/// is kept by their warpgroups.
#[derive(Default)]
pub(super) struct ClusterBarrier {
    pub(super) phase: u64,
}

/// The CTAs of cluster `id` (its `%clusterid`), by rank: their `%ctaid`
/// (x fastest, as `%cluster_ctarank` counts).
fn members(id: [u32; 3], cluster: [u32; 3]) -> Vec<[u32; 3]> {
    let [cx, cy, cz] = cluster;
    (0..cz)
        .flat_map(|z| (0..cy).flat_map(move |y| (0..cx).map(move |x| [x, y, z])))
        .map(|[x, y, z]| [id[0] * cx + x, id[1] * cy + y, id[2] * cz + z])
        .collect()
}

/// The cluster special registers of a CTA at `ctaid` (`None` for any
/// other register).
pub(super) fn special(s: &str, ctaid: [u32; 3], grid: [u32; 3], cluster: [u32; 3]) -> Option<u64> {
    let dim = |k: usize| (u64::from(ctaid[k]), u64::from(cluster[k].max(1)));
    let (x, y, z) = (dim(0), dim(1), dim(2));
    Some(match s {
        "%cluster_ctaid.x" => x.0 % x.1,
        "%cluster_ctaid.y" => y.0 % y.1,
        "%cluster_ctaid.z" => z.0 % z.1,
        "%cluster_nctaid.x" => x.1,
        "%cluster_nctaid.y" => y.1,
        "%cluster_nctaid.z" => z.1,
        "%cluster_ctarank" => x.0 % x.1 + x.1 * (y.0 % y.1 + y.1 * (z.0 % z.1)),
        "%cluster_nctarank" => x.1 * y.1 * z.1,
        "%clusterid.x" => x.0 / x.1,
        "%clusterid.y" => y.0 / y.1,
        "%clusterid.z" => z.0 / z.1,
        "%nclusterid.x" => u64::from(grid[0]) / x.1,
        "%nclusterid.y" => u64::from(grid[1]) / y.1,
        "%nclusterid.z" => u64::from(grid[2]) / z.1,
        // A launch with a cluster shape is an explicit cluster launch.
        "%is_explicit_cluster" => u64::from(cluster != [1, 1, 1]),
        _ => return None,
    })
}

/// A CTA's warpgroups and named barriers, as the scheduler keeps them
/// while another CTA runs.
struct CtaRun {
    wgs: Vec<Warpgroup>,
    barriers: Barriers,
    /// The warpgroup to try first.
    next: usize,
}

/// The function, its shared-memory layout (each variable's address, and
/// the bytes a CTA has) and its warpgroups' size, checked.
struct Prepared<'a> {
    f: &'a Function,
    shared_addr: FxHashMap<String, u64>,
    top: u64,
    threads: usize,
}

fn prepare<'a>(m: &'a Module, name: &str, launch: &Launch) -> Res<Prepared<'a>> {
    let f = m
        .by_name
        .get(name)
        .map(|id| &m.funcs[*id])
        .filter(|f| f.has_body)
        .ok_or_else(|| format!("no function '{name}' with a body"))?;
    if launch.param_block.is_none() && f.params.len() != launch.params.len() {
        return Err(fault!(
            "'{name}' takes {} parameters, the launch gives {}",
            f.params.len(),
            launch.params.len()
        ));
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
        return Err(fault!(
            "{top} bytes of shared memory; a CTA of sm_90 has at most {MAX_SHARED}"
        ));
    }
    let [bx, by, bz] = launch.block;
    let threads = (bx as usize) * (by as usize) * (bz as usize);
    if threads == 0 || threads > 1024 {
        return Err(fault!("a CTA of {bx}x{by}x{bz} threads (1 to 1024)"));
    }
    Ok(Prepared {
        f,
        shared_addr,
        top,
        threads,
    })
}

/// A CTA's warpgroups of `threads` threads, each at the entry.
fn warpgroups(f: &Function, threads: usize) -> Vec<Warpgroup> {
    let entry = f.layout.blocks().first().copied();
    (0..threads.div_ceil(WARPGROUP))
        .map(|k| Warpgroup {
            index: k,
            live: (threads - k * WARPGROUP).min(WARPGROUP),
            regs: LaneRegs::new(f.vregs.len()),
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
        .collect()
}

/// One cluster of the grid (its `%clusterid` is `id`): its CTAs together,
/// one warpgroup at a time. An error names the CTA it stopped in (but in
/// a grid of one CTA).
pub(super) fn run_cluster(
    m: &Module,
    name: &str,
    launch: &Launch,
    global: &GlobalMemory,
    lane_ops: &[Option<LaneOp>],
    id: [u32; 3],
) -> Result<RunStats, HostError> {
    let ctas = members(id, launch.cluster);
    let named = |ctaid: [u32; 3], e: HostError| {
        if launch.grid == [1, 1, 1] {
            e
        } else {
            e.in_cta(ctaid)
        }
    };
    let fail = |fault: Fault| named(ctas[0], HostError::new(0, Fault::Launch(fault.to_string())));
    let p = prepare(m, name, launch).map_err(fail)?;
    let (param_at, param_mem) = param_space(p.f, launch).map_err(fail)?;
    let size = p.top as usize;
    let mut peers: Vec<CtaMemory> = ctas.iter().map(|&c| CtaMemory::new(size, c)).collect();
    // Rank 0 starts in the machine; its slot holds nothing meanwhile.
    peers[0] = CtaMemory::new(0, ctas[0]);
    let mut mach = Machine {
        f: p.f,
        param_at,
        param_mem,
        mbarriers: MBarriers::default(),
        proxy: GenericWrites::new(size),
        fills: TmaFills::new(size),
        cta_barriers: 0,
        line: 0,
        check_proxy: launch.check_proxy,
        reports: hazards::Reports {
            stop: launch.stop_on_hazard,
            ..Default::default()
        },
        races: launch
            .race_check
            .then(|| crate::races::Races::new(ctas.len(), p.threads.div_ceil(32), size)),
        shared_addr: p.shared_addr,
        shared: Shared::new(size),
        global,
        wg: Warpgroup::default(),
        pdom: PostDominators::compute(p.f, &ori_ir::ControlFlowGraph::compute(p.f)),
        lane_ops,
        lane_scratch: Box::new([[0; WARPGROUP]; 4]),
        stats: RunStats::default(),
        ctaid: ctas[0],
        grid: launch.grid,
        block: launch.block,
        cluster: launch.cluster,
        rank: 0,
        peers,
        cluster_bar: ClusterBarrier::default(),
    };
    let mut runs: Vec<CtaRun> = ctas
        .iter()
        .map(|_| CtaRun {
            wgs: warpgroups(p.f, p.threads),
            barriers: Barriers::default(),
            next: 0,
        })
        .collect();
    let limit = launch.step_limit.saturating_mul(ctas.len() as u64);
    let [nx, ny, _] = launch.grid.map(u64::from);
    let [cx, cy, _] = launch.cluster.map(u64::from);
    let index = u64::from(id[0]) + nx / cx * (u64::from(id[1]) + ny / cy * u64::from(id[2]));
    let mut order = interleave::Order::new(launch.schedule, index);
    match schedule(&mut mach, &mut runs, limit, &mut order) {
        Ok(()) => {
            mach.stats.hazards = std::mem::take(&mut mach.reports.hazards);
            Ok(mach.stats)
        }
        Err(e) => Err(HostError {
            hazards: std::mem::take(&mut mach.reports.hazards),
            ..named(mach.ctaid, e)
        }),
    }
}

/// The live threads of a CTA's warpgroups, in whole warps (what a CTA
/// barrier without a count waits for).
fn live_threads(wgs: &[Warpgroup]) -> u32 {
    wgs.iter()
        .filter(|w| w.running())
        .map(|w| (w.live.div_ceil(32) * 32) as u32)
        .sum()
}

/// After a CTA barrier or a cluster barrier: what each warpgroup of the
/// CTA has seen of its mbarriers passes to all (a phase one waited for is
/// complete for all after).
fn share_seen(wgs: &mut [Warpgroup]) {
    let mut all = Seen::default();
    for w in wgs.iter() {
        for (&m, &p) in &w.seen {
            let e = all.entry(m).or_insert(0);
            *e = (*e).max(p);
        }
    }
    for w in wgs.iter_mut() {
        w.seen.clone_from(&all);
    }
}

/// Let the warpgroups the running CTA's filled barriers hold run again.
fn release_barriers(mach: &mut Machine<'_>, run: &mut CtaRun) {
    let (ids, released) = run.barriers.release_ids(live_threads(&run.wgs));
    if let Some(r) = mach.races.as_mut() {
        for id in ids {
            r.barrier_filled(mach.rank, id);
        }
    }
    if !released.is_empty() {
        mach.cta_barriers += 1;
        share_seen(&mut run.wgs);
    }
    for k in released {
        run.wgs[k].waiting = false;
    }
}

/// The threads of a warpgroup that have not exited (the bottom frame of
/// its reconvergence stack holds every one).
fn not_exited(w: &Warpgroup) -> LaneMask {
    w.stack.first().map_or(0, |f| f.lanes)
}

/// `(threads arrived in the cluster barrier's phase, threads not exited)`.
fn cluster_count(phase: u64, runs: &[CtaRun]) -> (u32, u32) {
    let mut arrived = 0;
    let mut live = 0;
    for w in runs.iter().flat_map(|r| &r.wgs) {
        let here = not_exited(w);
        if w.cluster_phase == phase {
            arrived += (w.cluster_arrived & here).count_ones();
        }
        live += here.count_ones();
    }
    (arrived, live)
}

/// Complete the cluster barrier's phase once every thread of the cluster
/// that has not exited arrived in it.
fn settle_cluster_barrier(mach: &mut Machine<'_>, runs: &mut [CtaRun]) {
    let phase = mach.cluster_bar.phase;
    let (arrived, live) = cluster_count(phase, runs);
    if arrived == 0 || arrived < live {
        return;
    }
    mach.cluster_bar.phase += 1;
    // An ordering point for every CTA of the cluster.
    for (r, run) in runs.iter_mut().enumerate() {
        share_seen(&mut run.wgs);
        if r == mach.rank {
            mach.cta_barriers += 1;
        } else {
            mach.peers[r].cta_barriers += 1;
        }
    }
}

/// The next warpgroup that can run, looking at CTA `first` first, each
/// CTA from its `next` (or, in a random order, any ready one):
/// `(rank, warpgroup)`.
fn pick(
    mach: &Machine<'_>,
    runs: &[CtaRun],
    first: usize,
    order: &mut interleave::Order,
) -> Option<(usize, usize)> {
    let mut ready = ready_warpgroups(mach, runs, first);
    let n = ready.clone().count();
    match order.choose(n) {
        None => ready.next(),
        Some(k) => ready.nth(k),
    }
}

/// The warpgroups that can run, CTA `first` first, each CTA from its `next`.
fn ready_warpgroups<'r>(
    mach: &'r Machine<'_>,
    runs: &'r [CtaRun],
    first: usize,
) -> impl Iterator<Item = (usize, usize)> + Clone + 'r {
    let n = runs.len();
    let phase = mach.cluster_bar.phase;
    (0..n).map(move |j| (first + j) % n).flat_map(move |r| {
        let epoch = if r == mach.rank {
            mach.mbarriers.epoch
        } else {
            mach.peers[r].mbarriers.epoch
        };
        let run = &runs[r];
        let m = run.wgs.len();
        (0..m)
            .map(move |j| (run.next + j) % m)
            .filter_map(move |k| {
                let w = &run.wgs[k];
                let ready = w.running()
                    && !w.waiting
                    && w.yielded.is_none_or(|(e, _)| e != epoch)
                    && w.cluster_wait.is_none_or(|(p, _)| p != phase);
                ready.then_some((r, k))
            })
    })
}

/// Every warpgroup of the cluster's CTAs, one at a time, each until it
/// waits at a barrier, yields or exits (round robin over the CTAs, and in
/// a CTA from its lowest warpgroup); a barrier that fills lets its
/// waiters run again. Correct kernels synchronize through barriers, so
/// this order computes what any order does; `order` may pick another
/// (see [`interleave`]).
fn schedule(
    mach: &mut Machine<'_>,
    runs: &mut [CtaRun],
    limit: u64,
    order: &mut interleave::Order,
) -> Result<(), HostError> {
    let n = runs.len();
    let mut first = 0;
    loop {
        let cur = mach.rank;
        release_barriers(mach, &mut runs[cur]);
        settle_cluster_barrier(mach, runs);
        let Some((r, k)) = pick(mach, runs, first, order) else {
            if runs.iter().all(|r| r.wgs.iter().all(|w| !w.running())) {
                return Ok(());
            }
            return Err(deadlock(mach, runs));
        };
        mach.switch_to(r);
        let run = &mut runs[r];
        run.next = k;
        run.wgs[k].yielded = None;
        run.wgs[k].cluster_wait = None;
        std::mem::swap(&mut mach.wg, &mut run.wgs[k]);
        let stop = run_warpgroup(mach, limit, order.slice());
        std::mem::swap(&mut mach.wg, &mut run.wgs[k]);
        let nw = run.wgs.len();
        // Next time, the next CTA first (the same warpgroup after an
        // arrival that does not wait: it runs on).
        first = (r + 1) % n;
        match stop? {
            Stop::Exit | Stop::Preempt => {}
            Stop::Yield(line) => run.wgs[k].yielded = Some((mach.mbarriers.epoch, line)),
            Stop::ClusterWait(line) => {
                run.wgs[k].cluster_wait = Some((mach.cluster_bar.phase, line))
            }
            Stop::Barrier(line, a) => {
                run.barriers
                    .arrive(a.id, k, a.threads, a.count, a.wait, line)
                    .map_err(|message| HostError::new(line, Fault::Invalid(message)))?;
                if let Some(races) = mach.races.as_mut() {
                    let warps: Vec<usize> = (0..WARPGROUP / 32)
                        .filter(|w| a.warps >> w & 1 == 1)
                        .map(|w| k * WARPGROUP / 32 + w)
                        .collect();
                    races.barrier_arrive(r, a.id, &warps, a.wait);
                }
                run.wgs[k].waiting = a.wait;
                if !a.wait {
                    first = r;
                    continue;
                }
            }
        }
        run.next = (k + 1) % nw;
    }
}

/// Why no warpgroup of the cluster can run: an mbarrier wait whose phase
/// can no longer complete, the cluster barrier, or a CTA barrier. The
/// machine is switched to the CTA named.
fn deadlock(mach: &mut Machine<'_>, runs: &[CtaRun]) -> HostError {
    for (r, run) in runs.iter().enumerate() {
        if let Some((line, on)) = run.wgs.iter().find_map(|w| {
            w.yielded
                .filter(|_| !w.waiting)
                .map(|(_, l)| (l, w.waits_on))
        }) {
            mach.switch_to(r);
            let state = on.and_then(|a| Some((a, mach.mbarriers.state(a)?)));
            let why = match state {
                Some((a, b)) => format!(
                    ": the mbarrier at {a:#x} is in phase {} with {} of its {} arrivals and {} transaction bytes still expected",
                    b.phase, b.pending, b.expected, b.tx
                ),
                None => String::new(),
            };
            return HostError::new(
                line,
                Fault::Deadlock(format!("deadlock: every warpgroup still running waits, and this mbarrier wait's phase can no longer complete{why}")),
            );
        }
    }
    for (r, run) in runs.iter().enumerate() {
        if let Some((_, line)) = run.wgs.iter().find_map(|w| w.cluster_wait) {
            let (arrived, live) = cluster_count(mach.cluster_bar.phase, runs);
            mach.switch_to(r);
            return HostError::new(
                line,
                Fault::Deadlock(format!(
                    "deadlock: every warpgroup still running waits; barrier.cluster.wait has {arrived} of the cluster's {live} threads arrived"
                )),
            );
        }
    }
    for (r, run) in runs.iter().enumerate() {
        let live = live_threads(&run.wgs);
        if let Some(&(id, line, arrived, want)) = run.barriers.stuck(live).first() {
            mach.switch_to(r);
            return HostError::new(
                line,
                Fault::Deadlock(format!(
                    "deadlock: every warpgroup still running waits at a barrier; barrier {id} has {arrived} of its {want} threads"
                )),
            );
        }
    }
    HostError::new(
        0,
        Fault::Deadlock("deadlock: no warpgroup of the cluster can run".into()),
    )
}

impl Machine<'_> {
    /// Exchange the running CTA's memory state with `peers[r]`'s.
    fn swap_memory(&mut self, r: usize) {
        let p = &mut self.peers[r];
        std::mem::swap(&mut self.shared, &mut p.shared);
        std::mem::swap(&mut self.mbarriers, &mut p.mbarriers);
        std::mem::swap(&mut self.proxy, &mut p.proxy);
        std::mem::swap(&mut self.fills, &mut p.fills);
        std::mem::swap(&mut self.cta_barriers, &mut p.cta_barriers);
        std::mem::swap(&mut self.ctaid, &mut p.ctaid);
    }

    /// Make the CTA of rank `r` the running one.
    pub(super) fn switch_to(&mut self, r: usize) {
        if r != self.rank {
            self.swap_memory(self.rank);
            self.swap_memory(r);
            self.rank = r;
        }
    }

    /// Run `op` with the CTA of rank `r` as the running one (its shared
    /// memory, mbarriers and trackers in the machine's fields), then come
    /// back. `op` gets offsets in that CTA's shared memory.
    pub(super) fn on_cta<T>(&mut self, r: usize, op: impl FnOnce(&mut Self) -> T) -> T {
        let home = self.rank;
        self.switch_to(r);
        let out = op(self);
        self.switch_to(home);
        out
    }

    /// Where a shared-window address points: `None` for the running CTA
    /// (its own shared::cta addresses, or its own rank's cluster window),
    /// else the peer's rank; and the offset in that CTA's shared memory.
    #[inline]
    pub(super) fn locate(&self, addr: u64) -> Res<(Option<usize>, u64)> {
        // A generic address of shared memory (see `SHARED_GENERIC`).
        let addr = if (SHARED_GENERIC..PARAM_GENERIC).contains(&addr) {
            addr - SHARED_GENERIC
        } else {
            addr
        };
        let w = addr >> WINDOW_SHIFT;
        if w == 0 || addr >= PARAM_GENERIC {
            return Ok((None, addr));
        }
        let r = (w - 1) as usize;
        if r >= self.peers.len() {
            return Err(fault!(
                "shared address {addr:#x} is outside shared memory (in the shared::cluster window of CTA rank {r}; the cluster has {} CTAs)",
                self.peers.len()
            ));
        }
        let off = addr & ((1 << WINDOW_SHIFT) - 1);
        Ok(((r != self.rank).then_some(r), off))
    }

    /// Read `len` bytes of shared memory, the running CTA's or a peer's.
    #[inline]
    pub(super) fn shared_read(&self, addr: u64, len: usize) -> Res<u64> {
        match self.locate(addr)? {
            (None, a) => Ok(self.shared.read(a, len)?),
            (Some(r), a) => Ok(self.peers[r].shared.read(a, len)?),
        }
    }

    /// Write `len` bytes of shared memory, the running CTA's or a peer's.
    #[inline]
    pub(super) fn shared_write(&mut self, addr: u64, len: usize, v: u64) -> Res<()> {
        match self.locate(addr)? {
            (None, a) => Ok(self.shared.write(a, len, v)?),
            (Some(r), a) => Ok(self.peers[r].shared.write(a, len, v)?),
        }
    }

    /// `op` on the mbarriers that hold the mbarrier at `addr` (the running
    /// CTA's or a peer's), with its offset there.
    pub(super) fn mbarrier_at<T>(
        &mut self,
        addr: u64,
        op: impl FnOnce(&mut MBarriers, u64) -> Res<T>,
    ) -> Res<T> {
        match self.locate(addr)? {
            (None, a) => op(&mut self.mbarriers, a),
            (Some(r), a) => op(&mut self.peers[r].mbarriers, a),
        }
    }

    /// The offset of an mbarrier `what` may only use in the running CTA.
    pub(super) fn local_mbarrier(&self, addr: u64, what: &str) -> Res<u64> {
        match self.locate(addr)? {
            (None, a) => Ok(a),
            (Some(r), _) => Err(fault!(
                "{what} on the mbarrier at {addr:#x}, in CTA rank {r}'s shared memory: only arrive, expect_tx and complete_tx reach a peer's mbarrier"
            )),
        }
    }

    /// `mapa`: the shared::cluster (or generic) address of `addr`'s
    /// variable in the CTA of rank `rank`.
    pub(super) fn mapa(&self, addr: u64, rank: u64) -> Res<u64> {
        if rank >= self.peers.len() as u64 {
            return Err(fault!(
                "mapa: CTA rank {rank} of a cluster of {} CTAs",
                self.peers.len()
            ));
        }
        let (_, off) = self.locate(addr)?;
        Ok(cluster_address(rank as usize, off))
    }

    /// `getctarank`: the rank of the CTA whose shared memory `addr` is in.
    pub(super) fn ctarank_of(&self, addr: u64) -> Res<u64> {
        Ok(self.locate(addr)?.0.unwrap_or(self.rank) as u64)
    }

    /// `barrier.cluster.arrive{.release|.relaxed}{.aligned}` (counted, never
    /// blocks) and `barrier.cluster.wait{.acquire}{.aligned}` (blocks until
    /// every thread of the cluster that has not exited arrived in the
    /// phase this thread arrived in; the scheduler completes phases).
    pub(super) fn cluster_barrier(&mut self, d: &InstData, act: &[bool]) -> Res<Flow> {
        let lanes = mask_of(act);
        let phase = self.cluster_bar.phase;
        if d.has_mod("arrive") {
            if self.wg.cluster_arrived & lanes != 0 {
                return Err(fault!(
                    "{}: threads that arrived at the cluster barrier arrive again before their barrier.cluster.wait",
                    d.mnemonic()
                ));
            }
            if self.wg.cluster_arrived != 0 && self.wg.cluster_phase != phase {
                return Err(Fault::Unsupported(format!(
                    "{}: threads of one warpgroup in two phases of the cluster barrier (not supported by the host backend)",
                    d.mnemonic()
                )));
            }
            self.wg.cluster_arrived |= lanes;
            self.wg.cluster_phase = phase;
            self.race_cluster(lanes, true, phase);
            return Ok(Flow::Next);
        }
        if !d.has_mod("wait") {
            return Err(Fault::Unsupported(format!(
                "{} is not supported by the host backend",
                d.mnemonic()
            )));
        }
        if lanes & !self.wg.cluster_arrived != 0 {
            return Err(fault!(
                "{}: threads wait at the cluster barrier without a barrier.cluster.arrive first",
                d.mnemonic()
            ));
        }
        if phase > self.wg.cluster_phase {
            self.wg.cluster_arrived &= !lanes;
            self.race_cluster(lanes, false, self.wg.cluster_phase);
            Ok(Flow::Next)
        } else {
            Ok(Flow::ClusterWait)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clusters_are_ranked_x_fastest() {
        assert_eq!(
            members([1, 0, 0], [2, 2, 1]),
            vec![[2, 0, 0], [3, 0, 0], [2, 1, 0], [3, 1, 0]]
        );
        let reg = |s, c| special(s, c, [4, 4, 1], [2, 2, 1]).unwrap();
        assert_eq!(reg("%cluster_ctarank", [3, 1, 0]), 3);
        assert_eq!(reg("%cluster_ctaid.y", [3, 1, 0]), 1);
        assert_eq!(reg("%clusterid.x", [3, 1, 0]), 1);
        assert_eq!(reg("%nclusterid.y", [3, 1, 0]), 2);
        assert_eq!(reg("%cluster_nctarank", [0, 0, 0]), 4);
        assert_eq!(reg("%is_explicit_cluster", [0, 0, 0]), 1);
        assert_eq!(
            special("%is_explicit_cluster", [0; 3], [4, 1, 1], [1, 1, 1]),
            Some(0)
        );
        assert_eq!(special("%tid.x", [0; 3], [4, 1, 1], [1, 1, 1]), None);
        assert_eq!(cluster_address(1, 0x400), 0x200_0400);
    }
}
