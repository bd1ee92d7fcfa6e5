//! Where the interpreter tells the race detector ([`crate::races`]) what
//! happened: shared-memory accesses by a warp or by the copy engine, and
//! the synchronizations that order them. Each hook does nothing when the
//! launch did not ask for race detection.

use super::*;
use crate::races::{Access as Seen4, Race};

impl Machine<'_> {
    /// The race detector's agent for CTA thread `thread` of the running CTA.
    fn agent_of(&self, thread: u32) -> usize {
        self.races
            .as_ref()
            .map_or(0, |r| r.warp_agent(self.rank, thread as usize / 32))
    }

    /// CTA thread `thread` writes `len` bytes of shared memory at `addr`
    /// that hold `value` already: not a race with anything (the memory is
    /// the same whichever order), and not kept (a later access is checked
    /// against the write that put the value there). Else as
    /// [`Machine::race_access`].
    pub(super) fn race_write_value(
        &mut self,
        thread: u32,
        (addr, len): (u64, usize),
        value: u64,
    ) -> Res<()> {
        if self.races.is_none() {
            return Ok(());
        }
        let keep = if len >= 8 {
            u64::MAX
        } else {
            (1 << (8 * len)) - 1
        };
        if self.shared_read(addr, len).ok() == Some(value & keep) {
            return Ok(());
        }
        self.race_access(thread, false, (addr, len), true)
    }

    /// CTA thread `thread` of the running CTA (`engine`: its copy engine,
    /// for a copy that thread issued) accesses `len` bytes of shared memory
    /// at `addr` (a shared::cta, shared::cluster or generic address).
    #[inline]
    pub(super) fn race_access(
        &mut self,
        thread: u32,
        engine: bool,
        (addr, len): (u64, usize),
        write: bool,
    ) -> Res<()> {
        if self.races.is_none() {
            return Ok(());
        }
        let (peer, off) = self.locate(addr)?;
        self.race_located(thread, engine, (peer, off, len), write)
    }

    /// [`Machine::race_access`] at offset `off` of the shared memory of
    /// CTA rank `peer` (`None`: the running CTA), already located.
    fn race_located(
        &mut self,
        thread: u32,
        engine: bool,
        (peer, off, len): (Option<usize>, u64, usize),
        write: bool,
    ) -> Res<()> {
        let rank = peer.unwrap_or(self.rank);
        let Some(races) = self.races.as_mut() else {
            return Ok(());
        };
        let agent = if engine {
            races.copy_agent(rank)
        } else {
            races.warp_agent(self.rank, thread as usize / 32)
        };
        let who = Seen4 {
            agent: agent as u16,
            clock: 0,
            line: self.line,
            thread,
        };
        let race = races.access(rank, off, len, write, who);
        self.race_found(thread, peer, race)
    }

    /// Report `race`, found at an access by CTA thread `thread` to the
    /// shared memory of CTA rank `peer` (`None`: the running CTA), unless
    /// it is a read of what a TMA load wrote before its mbarrier phase was
    /// seen: the TMA check reports that, with the phase.
    #[inline]
    fn race_found(&mut self, thread: u32, peer: Option<usize>, race: Option<Race>) -> Res<()> {
        let Some(race) = race else {
            return Ok(());
        };
        let engine = self
            .races
            .as_ref()
            .is_some_and(|r| r.is_engine(race.earlier.agent.into()));
        if race.earlier_write && engine {
            return Ok(());
        }
        self.report_race(thread, peer, race)
    }

    fn report_race(&mut self, thread: u32, peer: Option<usize>, race: Race) -> Res<()> {
        let verb = |w: bool| if w { "write" } else { "read" };
        let whose = peer.map_or(String::new(), |r| format!(" of CTA rank {r}"));
        let e = race.earlier;
        let message = format!(
            "this {} of shared memory{whose} at {:#x} races with the {} at line {} by thread {} (warp {}): \
             no barrier, mbarrier wait or cluster barrier orders them",
            verb(race.write),
            race.addr,
            verb(race.earlier_write),
            e.line,
            e.thread,
            e.thread / 32
        );
        let lane = (thread as usize).saturating_sub(self.wg.index * WARPGROUP);
        self.report(hazards::Finding {
            kind: HazardKind::DataRace,
            other_line: e.line,
            lane,
            other_thread: Some(e.thread),
            addr: Some(race.addr),
            message,
        })
    }

    /// Lane `t` of the running warpgroup releases into the mbarrier at
    /// `mbar` (an arrive, or a `complete_tx` it does itself).
    pub(super) fn race_mbarrier_release(&mut self, t: usize, mbar: u64) -> Res<()> {
        if self.races.is_none() {
            return Ok(());
        }
        let (peer, off) = self.locate(mbar)?;
        let agent = self.agent_of((self.wg.index * WARPGROUP + t) as u32);
        let rank = peer.unwrap_or(self.rank);
        let phase = self.mbarrier_at(mbar, |m, a| Ok(m.phase(a)?))?;
        if let Some(r) = self.races.as_mut() {
            r.mbarrier_release(agent, (rank, off), phase);
        }
        Ok(())
    }

    /// The running CTA's copy engine completes bytes on phase `phase` of
    /// its mbarrier at offset `mbar` (after its writes).
    pub(super) fn race_copy_complete(&mut self, mbar: u64, phase: u64) {
        let rank = self.rank;
        if let Some(r) = self.races.as_mut() {
            let engine = r.copy_agent(rank);
            r.mbarrier_release(engine, (rank, mbar), phase);
        }
    }

    /// Lane `t` saw the running CTA's mbarrier at offset `mbar` with
    /// `completed` phases completed.
    pub(super) fn race_mbarrier_acquire(&mut self, t: usize, mbar: u64, completed: u64) {
        let agent = self.agent_of((self.wg.index * WARPGROUP + t) as u32);
        let rank = self.rank;
        if let Some(r) = self.races.as_mut() {
            r.mbarrier_acquire(agent, (rank, mbar), completed);
        }
    }

    /// Lane `t` starts a copy that lands in the shared memory at `dst`
    /// (the copy engine of that CTA comes after what `t` did).
    pub(super) fn race_copy_issued(&mut self, t: usize, dst: u64) -> Res<()> {
        if self.races.is_none() {
            return Ok(());
        }
        let rank = self.locate(dst)?.0.unwrap_or(self.rank);
        let agent = self.agent_of((self.wg.index * WARPGROUP + t) as u32);
        if let Some(r) = self.races.as_mut() {
            r.copy_issued(agent, rank);
        }
        Ok(())
    }

    /// The warps of the running warpgroup whose lanes are in `lanes`
    /// arrive at the cluster barrier in phase `phase` (`arrive`) or pass
    /// the wait of that phase.
    pub(super) fn race_cluster(&mut self, lanes: LaneMask, arrive: bool, phase: u64) {
        let base = self.wg.index * WARPGROUP;
        let warps: Vec<usize> = (0..WARPGROUP / 32)
            .filter(|w| (lanes >> (32 * w)) & 0xffff_ffff != 0)
            .map(|w| self.agent_of((base + 32 * w) as u32))
            .collect();
        if let Some(r) = self.races.as_mut() {
            for a in warps {
                if arrive {
                    r.cluster_arrive(a, phase);
                } else {
                    r.cluster_acquire(a, phase);
                }
            }
        }
    }

    /// The running warpgroup passes `wgmma.wait_group` (see
    /// [`crate::races`]): its warps' clocks join.
    pub(super) fn race_warpgroup_wait(&mut self) {
        let base = self.wg.index * WARPGROUP;
        let warps: Vec<usize> = (0..self.wg.live.div_ceil(32))
            .map(|w| self.agent_of((base + 32 * w) as u32))
            .collect();
        if let Some(r) = self.races.as_mut() {
            r.join_warps(&warps);
        }
    }

    /// A wait retires `group`: its wgmma's reads of shared memory end
    /// now, as reads by the warps of the warpgroup at this point (the
    /// async proxy may read until the wait).
    pub(super) fn race_retired_reads(&mut self, group: &[PendingMma]) -> Res<()> {
        if self.races.is_none() {
            return Ok(());
        }
        let line = self.line;
        for p in group {
            self.line = p.line;
            let raced = self.race_wgmma_reads(&p.reads);
            self.line = line;
            raced?;
        }
        Ok(())
    }

    /// A wgmma of the running warpgroup read the shared-memory granules
    /// (16 bytes) at `granules` (in increasing order, each once): reads by
    /// each of its four warps. Granules of the running CTA (all of them,
    /// where a descriptor gave them) are checked in one pass.
    pub(super) fn race_wgmma_reads(&mut self, granules: &[u32]) -> Res<()> {
        if self.races.is_none() {
            return Ok(());
        }
        // Offsets of the running CTA's shared memory locate to themselves:
        // those below the first shared::cluster window. The granules are
        // in increasing order, so the last says for all.
        let own = granules
            .last()
            .is_none_or(|&g| u64::from(g) >> cluster::WINDOW_SHIFT == 0);
        match own {
            true => self.race_own_granules(granules),
            false => self.race_granules_one_by_one(granules),
        }
    }

    /// The four warps of the running warpgroup as readers at this line.
    fn warpgroup_readers(&self) -> Option<[Seen4; WARPGROUP / 32]> {
        let base = (self.wg.index * WARPGROUP) as u32;
        let races = self.races.as_ref()?;
        Some(std::array::from_fn(|w| Seen4 {
            agent: races.warp_agent(self.rank, base as usize / 32 + w) as u16,
            clock: 0,
            line: self.line,
            thread: base + 32 * w as u32,
        }))
    }

    /// [`Machine::race_wgmma_reads`] of granules at offsets `offs` of the
    /// running CTA's shared memory.
    fn race_own_granules(&mut self, offs: &[u32]) -> Res<()> {
        let Some(whos) = self.warpgroup_readers() else {
            return Ok(());
        };
        let mut found = Vec::new();
        if let Some(races) = self.races.as_mut() {
            races.read_granules(self.rank, offs, whos, &mut found);
        }
        for (i, race) in found {
            self.race_found(whos[i].thread, None, Some(race))?;
        }
        Ok(())
    }

    /// [`Machine::race_wgmma_reads`] a granule at a time (some of them in
    /// another CTA's shared memory).
    fn race_granules_one_by_one(&mut self, granules: &[u32]) -> Res<()> {
        let base = (self.wg.index * WARPGROUP) as u32;
        for &g in granules.iter() {
            let (peer, off) = self.locate(u64::from(g))?;
            let rank = peer.unwrap_or(self.rank);
            let (line, own) = (self.line, self.rank);
            let Some(races) = self.races.as_mut() else {
                return Ok(());
            };
            let whos: [Seen4; WARPGROUP / 32] = std::array::from_fn(|w| Seen4 {
                agent: races.warp_agent(own, base as usize / 32 + w) as u16,
                clock: 0,
                line,
                thread: base + 32 * w as u32,
            });
            let found = races.read_granule(rank, off, whos);
            for (who, race) in whos.iter().zip(found) {
                self.race_found(who.thread, peer, race)?;
            }
        }
        Ok(())
    }
}
