//! The sanitizer's race detector for shared memory: two accesses to the
//! same word by different warps, at least one a write, with no
//! happens-before between them, as Miri's data-race detector finds them
//! (vector clocks, after FastTrack: Flanagan and Freund, PLDI 2009).
//!
//! The agents are the warps of a cluster's CTAs (the 32 threads of a warp
//! run in lockstep here) and, per CTA, its copy engine, whose TMA loads
//! write shared memory. Each agent has a vector clock; its own entry
//! advances after each release. Happens-before comes from what the PTX
//! memory model makes synchronizing:
//!
//! * a CTA barrier (`bar.sync`, `barrier.sync`, `bar.arrive` with a
//!   count, named barriers): every arrival releases into the barrier, and
//!   the warps that wait there acquire it when it fills;
//! * an mbarrier: `arrive` (and a copy's `complete_tx`) releases into the
//!   phase in progress, a successful `try_wait`/`test_wait` acquires the
//!   phases completed;
//! * the cluster barrier: `barrier.cluster.arrive` releases,
//!   `barrier.cluster.wait` acquires;
//! * a TMA load starts after what its issuing warp did, and its writes are
//!   the copy engine's; a `cp.async` copy writes as its warp from its issue
//!   to its wait;
//! * `wgmma.wait_group` (`.sync.aligned`, executed by the four warps of a
//!   warpgroup together, completing the warpgroup's wgmma and their
//!   shared-memory reads) orders what each warp of the warpgroup did before
//!   it with what any does after it. A wgmma's operand reads count as reads
//!   by each of the four warps.
//!
//! A location's shadow ([`crate::race_shadow`]) keeps its last write and
//! the reads since, each as an epoch (agent, clock) with its line and
//! thread; an access whose conflicting epoch is not covered by the agent's
//! clock is a race. Words are 4 bytes (each access notes the bytes it
//! touched).
//!
//! A wait acquires every phase completed when it looked, not only the one
//! its parity names: that may hide a race, never invent one (the
//! `parity-aliased` check covers a wait that is phases behind).

use crate::race_shadow::Shadow;
use fxhash::FxHashMap;

/// A vector clock over the cluster's agents.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VClock(Vec<u32>);

impl VClock {
    /// A clock of `n` agents, all zero.
    pub fn new(n: usize) -> VClock {
        VClock(vec![0; n])
    }

    /// Agent `a`'s entry.
    pub fn get(&self, a: usize) -> u32 {
        self.0.get(a).copied().unwrap_or(0)
    }

    /// Take the entry-wise maximum with `other` (an acquire).
    pub fn join(&mut self, other: &VClock) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (x, y) in self.0.iter_mut().zip(&other.0) {
            *x = (*x).max(*y);
        }
    }

    /// Advance agent `a`'s own entry (after a release).
    pub fn tick(&mut self, a: usize) {
        if self.0.len() <= a {
            self.0.resize(a + 1, 0);
        }
        self.0[a] += 1;
    }
}

/// One access as the shadow keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The agent (see [`Races::warp_agent`]).
    pub agent: u16,
    /// The agent's own clock at the access.
    pub clock: u32,
    /// PTX line.
    pub line: u32,
    /// The CTA thread (for the copy engine: the thread that issued the copy).
    pub thread: u32,
}

/// A barrier whose arrivals belong to phases: what the arrivals of each
/// phase released, the completed phases folded into one clock (a wait
/// acquires the phases completed when it looked, not the one in progress).
#[derive(Clone, Debug, Default)]
struct Phased {
    /// The join of phases `..upto`.
    folded: VClock,
    upto: u64,
    open: FxHashMap<u64, VClock>,
}

impl Phased {
    fn release(&mut self, phase: u64, clock: &VClock) {
        if phase < self.upto {
            // Late for a phase already folded (cannot happen in a run the
            // mbarrier accepted); keep it anyway.
            self.folded.join(clock);
        } else {
            self.open.entry(phase).or_default().join(clock);
        }
    }

    /// What a wait that saw phases `..completed` complete acquires.
    fn acquire(&mut self, completed: u64) -> &VClock {
        if completed > self.upto {
            let done: Vec<u64> = self
                .open
                .keys()
                .copied()
                .filter(|p| *p < completed)
                .collect();
            for p in done {
                if let Some(c) = self.open.remove(&p) {
                    self.folded.join(&c);
                }
            }
            self.upto = completed;
        }
        &self.folded
    }
}

/// A race found: the access now and the earlier one it conflicts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Race {
    /// The byte offset of the word in its CTA's shared memory.
    pub addr: u64,
    /// Whether the access now is a write.
    pub write: bool,
    /// The earlier access.
    pub earlier: Access,
    /// Whether the earlier access was a write.
    pub earlier_write: bool,
}

/// The race detector of one cluster.
#[derive(Clone, Debug, Default)]
pub struct Races {
    /// Warps per CTA (the copy engine is agent `warps` of its CTA).
    warps: usize,
    /// Bytes of each CTA's shared memory: an access past them is not
    /// tracked (the access itself is an error).
    shared: usize,
    /// Each agent's clock, by agent.
    clocks: Vec<VClock>,
    /// Each CTA's shadow ([`crate::race_shadow`]), by rank.
    shadows: Vec<Shadow>,
    /// What each CTA barrier holds of its arrivals' clocks since it last
    /// filled: by rank and barrier id, with the warps waiting there.
    barriers: FxHashMap<(usize, u32), (VClock, Vec<usize>)>,
    /// What each mbarrier (by rank and offset) holds of its releases.
    mbarriers: FxHashMap<(usize, u64), Phased>,
    /// What the cluster barrier holds of its arrivals.
    cluster: Phased,
}

impl Races {
    /// A detector for `ctas` CTAs of `warps` warps each, with `shared`
    /// bytes of shared memory each.
    pub fn new(ctas: usize, warps: usize, shared: usize) -> Races {
        let n = ctas * (warps + 1);
        let clocks = (0..n)
            .map(|a| {
                let mut c = VClock::new(n);
                c.tick(a);
                c
            })
            .collect();
        Races {
            warps,
            clocks,
            shadows: vec![Shadow::default(); ctas],
            shared,
            ..Races::default()
        }
    }

    /// The agent of warp `warp` of the CTA of rank `rank`.
    pub fn warp_agent(&self, rank: usize, warp: usize) -> usize {
        rank * (self.warps + 1) + warp
    }

    /// Whether `agent` is a copy engine.
    pub fn is_engine(&self, agent: usize) -> bool {
        agent % (self.warps + 1) == self.warps
    }

    /// The agent of the copy engine of the CTA of rank `rank`.
    pub fn copy_agent(&self, rank: usize) -> usize {
        rank * (self.warps + 1) + self.warps
    }

    /// `agent` accesses `len` bytes at `addr` of rank `rank`'s shared
    /// memory (a write or a read) at `line`, as CTA thread `thread`: the
    /// first race it makes, if any. The shadow keeps the access.
    pub fn access(
        &mut self,
        rank: usize,
        addr: u64,
        len: usize,
        write: bool,
        who: Access,
    ) -> Option<Race> {
        let agent = usize::from(who.agent);
        let clock = self.clocks.get(agent)?;
        let shadow = self.shadows.get_mut(rank)?;
        if addr.checked_add(len as u64)? > self.shared as u64 {
            return None;
        }
        let now = Access {
            clock: clock.get(agent),
            ..who
        };
        shadow.access((addr, len.max(1) as u64), write, now, clock)
    }

    /// Each of `whos` (warps of the running CTA) reads the 16-byte granule
    /// at `addr` of rank `rank`'s shared memory in turn: the race each
    /// makes, as [`Races::access`] answers them one by one.
    pub fn read_granule<const N: usize>(
        &mut self,
        rank: usize,
        addr: u64,
        whos: [Access; N],
    ) -> [Option<Race>; N] {
        let known = whos
            .iter()
            .all(|w| usize::from(w.agent) < self.clocks.len());
        let (Some(shadow), true, true) = (
            self.shadows.get_mut(rank),
            known,
            addr.checked_add(16)
                .is_some_and(|e| e <= self.shared as u64),
        ) else {
            return [None; N];
        };
        let nows = stamped(&self.clocks, whos);
        shadow.read_granule(addr, nows)
    }

    /// [`Races::read_granule`] for each of the granules at `addrs` (in
    /// increasing order) in turn: each race found goes to `found`, with
    /// the index of its reader in `whos`.
    pub fn read_granules<const N: usize>(
        &mut self,
        rank: usize,
        addrs: &[u32],
        whos: [Access; N],
        found: &mut Vec<(usize, Race)>,
    ) {
        let known = whos
            .iter()
            .all(|w| usize::from(w.agent) < self.clocks.len());
        let (Some(shadow), true) = (self.shadows.get_mut(rank), known) else {
            return;
        };
        // Past the end of shared memory is not tracked.
        let tracked = addrs.partition_point(|a| u64::from(*a) + 16 <= self.shared as u64);
        let nows = stamped(&self.clocks, whos);
        shadow.read_granules(&addrs[..tracked], &nows, found);
    }

    /// Warps `warps` of rank `rank` arrive at CTA barrier `id`: their
    /// clocks go into it (a release); `wait` says whether they wait there.
    pub fn barrier_arrive(&mut self, rank: usize, id: u32, warps: &[usize], wait: bool) {
        let n = self.clocks.len();
        for &w in warps {
            let a = self.warp_agent(rank, w);
            let slot = self
                .barriers
                .entry((rank, id))
                .or_insert_with(|| (VClock::new(n), Vec::new()));
            if let Some(c) = self.clocks.get_mut(a) {
                slot.0.join(c);
                c.tick(a);
            }
            if wait {
                slot.1.push(a);
            }
        }
    }

    /// CTA barrier `id` of rank `rank` filled: its waiters acquire what
    /// every arrival released, and it starts over.
    pub fn barrier_filled(&mut self, rank: usize, id: u32) {
        let Some((clock, waiters)) = self.barriers.remove(&(rank, id)) else {
            return;
        };
        for a in waiters {
            if let Some(c) = self.clocks.get_mut(a) {
                c.join(&clock);
            }
        }
    }

    /// `agent` releases into phase `phase` of the mbarrier at `mbar` of
    /// rank `rank` (an arrive, or a copy's complete_tx).
    pub fn mbarrier_release(&mut self, agent: usize, (rank, mbar): (usize, u64), phase: u64) {
        let Some(c) = self.clocks.get_mut(agent) else {
            return;
        };
        self.mbarriers
            .entry((rank, mbar))
            .or_default()
            .release(phase, c);
        c.tick(agent);
    }

    /// `agent` saw the mbarrier at `mbar` of rank `rank` with `completed`
    /// phases completed.
    pub fn mbarrier_acquire(&mut self, agent: usize, (rank, mbar): (usize, u64), completed: u64) {
        if let (Some(m), Some(c)) = (
            self.mbarriers.get_mut(&(rank, mbar)),
            self.clocks.get_mut(agent),
        ) {
            c.join(m.acquire(completed));
        }
    }

    /// The warps `agents` (of one warpgroup) pass a warpgroup-collective
    /// wait together: each has done what any did before it.
    pub fn join_warps(&mut self, agents: &[usize]) {
        let mut all = VClock::default();
        for &a in agents {
            if let Some(c) = self.clocks.get(a) {
                all.join(c);
            }
        }
        for &a in agents {
            if let Some(c) = self.clocks.get_mut(a) {
                c.join(&all);
            }
        }
    }

    /// `agent` arrives at the cluster barrier in phase `phase`.
    pub fn cluster_arrive(&mut self, agent: usize, phase: u64) {
        if let Some(c) = self.clocks.get_mut(agent) {
            self.cluster.release(phase, c);
            c.tick(agent);
        }
    }

    /// `agent` passed `barrier.cluster.wait` of phase `phase`.
    pub fn cluster_acquire(&mut self, agent: usize, phase: u64) {
        if let Some(c) = self.clocks.get_mut(agent) {
            c.join(self.cluster.acquire(phase + 1));
        }
    }

    /// `issuer` starts a copy on the copy engine of rank `rank`: the copy
    /// comes after what the issuer did.
    pub fn copy_issued(&mut self, issuer: usize, rank: usize) {
        let engine = self.copy_agent(rank);
        if issuer == engine || engine >= self.clocks.len() || issuer >= self.clocks.len() {
            return;
        }
        let from = self.clocks[issuer].clone();
        self.clocks[engine].join(&from);
    }
}

/// Each of `whos` with its agent's clock now: the access as the shadow
/// records it, and the clock it is judged against.
fn stamped<const N: usize>(clocks: &[VClock], whos: [Access; N]) -> [(Access, &VClock); N] {
    whos.map(|who| {
        let clock = &clocks[usize::from(who.agent)];
        let now = Access {
            clock: clock.get(who.agent.into()),
            ..who
        };
        (now, clock)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(r: &Races, rank: usize, warp: usize, line: u32) -> Access {
        Access {
            agent: r.warp_agent(rank, warp) as u16,
            clock: 0,
            line,
            thread: 32 * warp as u32,
        }
    }

    #[test]
    fn a_barrier_orders_a_write_before_another_warps_read() {
        let mut r = Races::new(1, 4, 1024);
        let w0 = at(&r, 0, 0, 10);
        assert_eq!(r.access(0, 64, 4, true, w0), None);
        // Warp 1 reads with no barrier between: a race naming line 10.
        let race = r.access(0, 64, 4, false, at(&r, 0, 1, 20)).unwrap();
        assert_eq!(
            (race.earlier.line, race.earlier_write, race.addr),
            (10, true, 64)
        );
        // Both arrive at barrier 0 and wait: ordered after.
        r.barrier_arrive(0, 0, &[0, 1, 2, 3], true);
        r.barrier_filled(0, 0);
        assert_eq!(r.access(0, 64, 4, false, at(&r, 0, 2, 30)), None);
        // The same warp is never a race with itself; another word is apart.
        assert_eq!(r.access(0, 64, 4, true, at(&r, 0, 2, 31)), None);
        assert_eq!(r.access(0, 68, 4, true, at(&r, 0, 3, 32)), None);
        // Warp 3 overwrites what warp 2 wrote after the barrier: WAW.
        let race = r.access(0, 66, 4, true, at(&r, 0, 3, 33)).unwrap();
        assert_eq!((race.earlier.line, race.addr), (31, 64));
    }

    #[test]
    fn a_write_after_unordered_reads_is_a_race_until_an_mbarrier_orders_it() {
        let mut r = Races::new(1, 2, 1024);
        assert_eq!(r.access(0, 0, 16, false, at(&r, 0, 0, 5)), None);
        let tma = Access {
            agent: r.copy_agent(0) as u16,
            clock: 0,
            line: 9,
            thread: 32,
        };
        // Warp 1 issues a TMA load into the tile warp 0 still reads.
        r.copy_issued(r.warp_agent(0, 1), 0);
        let race = r.access(0, 8, 4, true, tma).unwrap();
        assert_eq!((race.earlier.line, race.earlier_write), (5, false));
        // Warp 0 releases the stage on an mbarrier that warp 1 waits for
        // before the next load: ordered.
        assert_eq!(r.access(0, 64, 16, false, at(&r, 0, 0, 6)), None);
        r.mbarrier_release(r.warp_agent(0, 0), (0, 0x100), 0);
        r.mbarrier_acquire(r.warp_agent(0, 1), (0, 0x100), 1);
        r.copy_issued(r.warp_agent(0, 1), 0);
        assert_eq!(r.access(0, 64, 16, true, tma), None);
    }

    #[test]
    fn an_access_past_shared_memory_is_not_tracked() {
        // (The access itself is the error; the shadow must not grow to it.)
        let mut r = Races::new(1, 1, 1024);
        assert_eq!(r.access(0, 1 << 40, 4, true, at(&r, 0, 0, 1)), None);
        assert_eq!(r.access(0, u64::MAX - 2, 4, true, at(&r, 0, 0, 1)), None);
        assert!(r.shadows[0].is_empty());
    }

    #[test]
    fn the_cluster_barrier_orders_accesses_across_ctas() {
        let mut r = Races::new(2, 1, 1024);
        assert_eq!(r.access(1, 0, 4, true, at(&r, 0, 0, 3)), None);
        assert!(r.access(1, 0, 4, false, at(&r, 1, 0, 4)).is_some());
        r.cluster_arrive(r.warp_agent(0, 0), 0);
        r.cluster_arrive(r.warp_agent(1, 0), 0);
        r.cluster_acquire(r.warp_agent(1, 0), 0);
        // An arrival in the next phase is not acquired by a wait of this one.
        assert_eq!(r.access(1, 8, 4, false, at(&r, 0, 0, 6)), None);
        r.cluster_arrive(r.warp_agent(0, 0), 1);
        r.cluster_acquire(r.warp_agent(1, 0), 0);
        assert!(r.access(1, 8, 4, true, at(&r, 1, 0, 7)).is_some());
        assert_eq!(r.access(1, 0, 4, true, at(&r, 1, 0, 5)), None);
    }
}
