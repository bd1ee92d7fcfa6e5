//! The sanitizer's TMA checks: shared memory read before the TMA load that
//! fills it completed on its mbarrier (as far as the reading warpgroup
//! knows), and an mbarrier wait that cannot tell two phases apart.
//!
//! A TMA load (`cp.async.bulk.tensor ... mbarrier::complete_tx`) lands at
//! some time before its mbarrier's phase completes; a thread may read the
//! bytes only after it has seen that phase complete (a successful
//! `mbarrier.try_wait`, or a CTA barrier after another warpgroup's). The
//! host backend lands copies at once, so a missing wait would go unseen:
//! each 16-byte granule a TMA fills remembers the mbarrier and the phase it
//! completes, each warpgroup the phases it has seen, and a read (`ld`,
//! `ldmatrix`, a wgmma operand) of a granule whose phase its warpgroup has
//! not seen stops the run. A generic write to the granule ends the check.
//!
//! A parity wait (`try_wait.parity P`) asks whether the last phase of
//! parity P completed. If the barrier is two or more phases past the last
//! one the waiting warpgroup saw, both parities have completed since and
//! the answer means nothing: the producer lapped the consumer (a stage was
//! refilled before it was read). That is reported too.

use fxhash::FxHashMap;

use crate::granules::{covered, covered_grown, GRANULE};

/// Where a granule's bytes came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fill {
    /// The mbarrier the load completes on.
    pub mbar: u64,
    /// The phase it completes (phases completed before it landed).
    pub phase: u64,
    /// The load's line.
    pub line: u32,
}

/// The TMA-filled granules of one CTA's shared memory.
#[derive(Clone, Debug, Default)]
pub struct TmaFills {
    /// Grown as far as a write reaches (past its end: none), so that a
    /// CTA touches only the tracking of the shared memory it writes.
    granules: Vec<Option<Fill>>,
    /// Granules in the CTA's shared memory.
    size: usize,
    /// How many of `granules` hold a fill (none: every read is ready).
    live: usize,
}

/// The phases of each mbarrier (by address) a warpgroup has seen complete.
pub type Seen = FxHashMap<u64, u64>;

impl TmaFills {
    /// Tracking for `size` bytes of shared memory.
    pub fn new(size: usize) -> TmaFills {
        TmaFills {
            granules: Vec::new(),
            size: size.div_ceil(GRANULE as usize),
            live: 0,
        }
    }

    fn range(&self, addr: u64, len: usize) -> std::ops::Range<usize> {
        covered(addr, len, self.granules.len())
    }

    /// The granules a write of these bytes covers, the table grown to hold them.
    fn range_to_write(&mut self, addr: u64, len: usize) -> std::ops::Range<usize> {
        covered_grown(&mut self.granules, self.size, addr, len)
    }

    /// A TMA load landed in these bytes.
    pub fn landed(&mut self, addr: u64, len: usize, fill: Fill) {
        for g in self.range_to_write(addr, len) {
            self.live += usize::from(self.granules[g].is_none());
            self.granules[g] = Some(fill);
        }
    }

    /// A generic write replaced these bytes.
    #[inline]
    pub fn overwritten(&mut self, addr: u64, len: usize) {
        if self.live == 0 {
            return;
        }
        for g in self.range(addr, len) {
            self.live -= usize::from(self.granules[g].is_some());
            self.granules[g] = None;
        }
    }

    /// Whether no granule holds a fill (every read is ready).
    pub fn empty(&self) -> bool {
        self.live == 0
    }

    /// The first granule of these bytes whose load a warpgroup that has
    /// seen `seen` may not read yet: its address and fill.
    pub fn unready(&self, addr: u64, len: usize, seen: &Seen) -> Option<(u64, Fill)> {
        if self.live == 0 {
            return None;
        }
        self.range(addr, len).find_map(|g| {
            let f = self.granules[g]?;
            (seen.get(&f.mbar).copied().unwrap_or(0) <= f.phase).then_some((g as u64 * GRANULE, f))
        })
    }
}

/// The phase-aliasing check of a parity wait by a warpgroup that has seen
/// `seen` phases of the mbarrier at `mbar`, now `completed` phases along.
pub fn parity_aliased(mbar: u64, completed: u64, seen: &Seen) -> Option<String> {
    let s = seen.get(&mbar).copied().unwrap_or(0);
    (completed >= s + 2).then(|| {
        format!(
            "a parity wait on the mbarrier at {mbar:#x}, which completed {} phases since this warpgroup last saw it \
             (phase {s}): both parities completed, so the wait cannot tell which (a producer lapped its consumer)",
            completed - s
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fill_is_readable_once_its_phase_was_seen() {
        let mut t = TmaFills::new(1024);
        let fill = Fill {
            mbar: 0x400,
            phase: 3,
            line: 12,
        };
        t.landed(0, 64, fill);
        let mut seen = Seen::default();
        assert_eq!(t.unready(16, 4, &seen), Some((16, fill)));
        seen.insert(0x400, 3);
        assert!(
            t.unready(16, 4, &seen).is_some(),
            "phase 3 not yet complete"
        );
        seen.insert(0x400, 4);
        assert_eq!(t.unready(0, 64, &seen), None);
        t.landed(64, 16, fill);
        t.overwritten(64, 16);
        assert_eq!(t.unready(64, 16, &Seen::default()), None);
    }

    #[test]
    fn two_phases_past_the_last_seen_alias() {
        let mut seen = Seen::default();
        assert!(parity_aliased(8, 1, &seen).is_none());
        assert!(parity_aliased(8, 2, &seen).is_some());
        seen.insert(8, 5);
        assert!(parity_aliased(8, 6, &seen).is_none());
        assert!(parity_aliased(8, 7, &seen).unwrap().contains("2 phases"));
    }
}
