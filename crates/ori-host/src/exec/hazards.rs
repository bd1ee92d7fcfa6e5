//! The sanitizer's reports: each check that finds a hazard hands it here,
//! where it is kept once per site (its kind and its two lines) and the run
//! goes on, or, when the launch asks to stop at the first hazard
//! ([`Launch::stop_on_hazard`]), becomes the run's error.
//!
//! Going on is what a user of a sanitizer expects (compute-sanitizer
//! reports and lets the kernel finish): the host backend has already done
//! what the GPU does in the common case (the write is in shared memory,
//! the copy has landed), so the outputs are the GPU's and every hazard of
//! the run is seen, not only the first.

use super::*;

/// A hazard about to be reported, without the CTA (the machine knows it).
pub(super) struct Finding {
    pub(super) kind: HazardKind,
    pub(super) other_line: u32,
    /// Thread of the running warpgroup (0..128) that found it.
    pub(super) lane: usize,
    pub(super) other_thread: Option<u32>,
    pub(super) addr: Option<u64>,
    pub(super) message: String,
}

/// What the sanitizer found in one cluster's run: hazards, once per site.
#[derive(Default)]
pub(super) struct Reports {
    pub(super) hazards: Vec<Hazard>,
    pub(super) sites: fxhash::FxHashSet<(HazardKind, u32, u32)>,
    /// Stop at the first hazard (it becomes the run's error).
    pub(super) stop: bool,
}

impl Reports {
    /// Keep `h` unless its site was reported; with `stop`, it is the error.
    pub(super) fn add(&mut self, h: Hazard) -> Res<()> {
        if self.stop {
            return Err(Fault::Hazard(Box::new(h)));
        }
        if self.sites.insert(h.site()) {
            self.hazards.push(h);
        }
        Ok(())
    }
}

/// Keep the first hazard of each site among `all` (clusters' reports in
/// grid order), in order.
pub(super) fn merge(all: impl IntoIterator<Item = Hazard>) -> Vec<Hazard> {
    let mut seen = fxhash::FxHashSet::default();
    all.into_iter().filter(|h| seen.insert(h.site())).collect()
}

impl Machine<'_> {
    /// Report `f`, found by the running instruction.
    pub(super) fn report(&mut self, f: Finding) -> Res<()> {
        let h = Hazard {
            kind: f.kind,
            line: self.line,
            other_line: f.other_line,
            cta: self.ctaid,
            thread: (self.wg.index * WARPGROUP + f.lane) as u32,
            other_thread: f.other_thread,
            addr: f.addr,
            message: f.message,
        };
        self.reports.add(h)
    }

    /// An async-proxy read (`what`, by lane `lane`) of shared memory must
    /// not find an unfenced generic write.
    pub(super) fn check_async_read(
        &mut self,
        what: &str,
        lane: usize,
        addr: u64,
        len: usize,
    ) -> Res<()> {
        if !self.check_proxy || self.proxy.clean() {
            return Ok(());
        }
        let (None, addr) = self.locate(addr)? else {
            // A peer's shared memory: its tracker is not checked from here.
            return Ok(());
        };
        match self.proxy.check(addr, len) {
            None => Ok(()),
            Some(u) => self.unfenced(what, lane, u),
        }
    }

    /// Report the unfenced generic write `u` an async-proxy read found.
    pub(super) fn unfenced(
        &mut self,
        what: &str,
        lane: usize,
        u: crate::proxy_fence::Unfenced,
    ) -> Res<()> {
        let (kind, writer) = if u.copy {
            (HazardKind::UnfencedAsyncCopy, "cp.async")
        } else {
            (HazardKind::UnfencedGenericWrite, "generic-proxy write")
        };
        self.report(Finding {
            kind,
            other_line: u.line,
            lane,
            other_thread: Some(u.thread),
            addr: Some(u.addr),
            message: format!(
                "{what} reads shared memory at {:#x} that thread {} wrote at line {} through the generic proxy \
                 ({writer}), with no fence.proxy.async since: the async proxy may not see the write",
                u.addr, u.thread, u.line
            ),
        })
    }

    /// A read of shared memory a TMA load filled must come after the
    /// reading warpgroup saw the load's mbarrier phase complete.
    pub(super) fn check_tma_ready(
        &mut self,
        what: &str,
        lane: usize,
        addr: u64,
        len: usize,
    ) -> Res<()> {
        if self.fills.empty() {
            return Ok(());
        }
        let (None, addr) = self.locate(addr)? else {
            // A peer's shared memory: its mbarriers are not this warpgroup's
            // to have seen.
            return Ok(());
        };
        match self.fills.unready(addr, len, &self.wg.seen) {
            None => Ok(()),
            Some((at, f)) => self.unready(what, lane, at, f),
        }
    }

    /// Report a read at `at` of the TMA fill `f` not yet seen complete.
    pub(super) fn unready(&mut self, what: &str, lane: usize, at: u64, f: Fill) -> Res<()> {
        self.report(Finding {
            kind: HazardKind::TmaNotReady,
            other_line: f.line,
            lane,
            other_thread: None,
            addr: Some(at),
            message: format!(
                "{what} reads shared memory at {at:#x} that the TMA load of line {} fills, before this warpgroup \
                 saw phase {} of its mbarrier (at {:#x}) complete: wait on the mbarrier first",
                f.line, f.phase, f.mbar
            ),
        })
    }

    /// A non-wgmma access to a register a wgmma in flight writes: reported
    /// (the access sees the register as it was, as if the wgmma had not
    /// written it yet).
    pub(super) fn check_not_in_flight(&mut self, d: &InstData) -> Res<()> {
        if self.wg.in_flight.is_empty() {
            return Ok(());
        }
        let found = d
            .uses()
            .into_iter()
            .chain(d.defs())
            .find_map(|r| self.wg.in_flight.get(&r).map(|line| (r, line)));
        let Some((r, line)) = found else {
            return Ok(());
        };
        let verb = if d.defs().contains(&r) {
            "writes"
        } else {
            "reads"
        };
        let message = format!(
            "{verb} {} while the wgmma of line {line} that writes it is in flight \
             (undefined in the PTX ISA: wait with wgmma.wait_group first)",
            self.name(r)
        );
        self.report(Finding {
            kind: HazardKind::WgmmaInFlight,
            other_line: line,
            lane: 0,
            other_thread: None,
            addr: None,
            message,
        })
    }
}
