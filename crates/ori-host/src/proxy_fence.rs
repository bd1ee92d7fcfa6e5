//! The sanitizer's proxy check: shared memory written through the generic
//! proxy and then read by the async proxy (wgmma's shared-memory operands,
//! a TMA store) with no `fence.proxy.async` in between.
//!
//! The PTX memory model keeps the two proxies apart: a `st.shared` (or a
//! non-bulk `cp.async`, or `stmatrix`) is a generic-proxy write, and wgmma
//! and TMA read through the async proxy, which need not see it until a
//! `fence.proxy.async` orders the two (PTX ISA 8.6 "Proxies", 9.7.13.4
//! `membar/fence`). On the GPU the missing fence shows up rarely and as
//! silently wrong tiles; here it stops the run, naming the read, the write
//! and the thread.
//!
//! Shared memory is tracked in 16-byte granules: each remembers the last
//! generic write to it (line, thread) and how many CTA barriers had
//! completed then. A fence by a thread makes visible to the async proxy the
//! writes that thread has observed: its own, and any write followed by a
//! barrier that completed since (Triton fences after `bar.sync`, CUTLASS
//! before it; both are correct and both pass). A TMA or bulk copy landing
//! in a granule is an async-proxy write and clears it.

use crate::granules::{covered, covered_grown, GRANULE};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Write {
    line: u32,
    thread: u32,
    barriers: u64,
    /// A non-bulk `cp.async` wrote it (the documented ISA hazard of
    /// Triton 3.6 and CUTLASS's cp.async mainloops when unfenced).
    copy: bool,
}

/// An unfenced generic write an async-proxy read found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unfenced {
    /// The granule's first byte.
    pub addr: u64,
    /// Line of the generic write.
    pub line: u32,
    /// CTA thread that wrote it.
    pub thread: u32,
    /// A non-bulk `cp.async` wrote it.
    pub copy: bool,
}

/// Generic-proxy writes to one CTA's shared memory not yet fenced.
#[derive(Clone, Debug, Default)]
pub struct GenericWrites {
    /// Grown as far as a write reaches (past its end: none), so that a
    /// CTA touches only the tracking of the shared memory it writes.
    granules: Vec<Option<Write>>,
    /// Granules in the CTA's shared memory.
    size: usize,
    /// How many of `granules` hold a write (none: every check passes, and
    /// a fence has nothing to clear).
    live: usize,
    /// The granules a write was noted in since the last fence (some may
    /// have been cleared since): what a fence looks at.
    written: Vec<u32>,
    /// CTA barriers completed so far.
    pub barriers: u64,
}

impl GenericWrites {
    /// Tracking for `size` bytes of shared memory.
    pub fn new(size: usize) -> GenericWrites {
        GenericWrites {
            granules: Vec::new(),
            size: size.div_ceil(GRANULE as usize),
            live: 0,
            written: Vec::new(),
            barriers: 0,
        }
    }

    fn range(&self, addr: u64, len: usize) -> std::ops::Range<usize> {
        covered(addr, len, self.granules.len())
    }

    /// The granules a write of these bytes covers, the table grown to hold them.
    fn range_to_write(&mut self, addr: u64, len: usize) -> std::ops::Range<usize> {
        covered_grown(&mut self.granules, self.size, addr, len)
    }

    /// Thread `thread` wrote `len` bytes at `addr` through the generic
    /// proxy (`copy`: with a non-bulk `cp.async`).
    #[inline]
    pub fn generic_write(&mut self, addr: u64, len: usize, line: u32, thread: u32, copy: bool) {
        let w = Write {
            line,
            thread,
            barriers: self.barriers,
            copy,
        };
        if len == GRANULE as usize && addr.is_multiple_of(GRANULE) {
            // One whole granule (a `cp.async` copy's) already tracked.
            let g = (addr / GRANULE) as usize;
            if let Some(slot) = self.granules.get_mut(g) {
                if slot.is_none() {
                    self.live += 1;
                    self.written.push(g as u32);
                }
                *slot = Some(w);
                return;
            }
        }
        for g in self.range_to_write(addr, len) {
            if self.granules[g].is_none() {
                self.live += 1;
                self.written.push(g as u32);
            }
            self.granules[g] = Some(w);
        }
    }

    /// An async-proxy write (a TMA or bulk copy landing) covered these bytes.
    pub fn async_write(&mut self, addr: u64, len: usize) {
        if self.live == 0 {
            return;
        }
        for g in self.range(addr, len) {
            self.live -= usize::from(self.granules[g].is_some());
            self.granules[g] = None;
        }
    }

    /// Whether no generic write is left unfenced (every check passes).
    pub fn clean(&self) -> bool {
        self.live == 0
    }

    /// `fence.proxy.async` by the threads `fencing` says: the writes they
    /// have observed become visible to the async proxy.
    pub fn fence(&mut self, fencing: impl Fn(u32) -> bool) {
        if self.live == 0 {
            self.written.clear();
            return;
        }
        let now = self.barriers;
        let granules = &mut self.granules;
        let live = &mut self.live;
        self.written.retain(|&g| {
            let slot = &mut granules[g as usize];
            match slot {
                Some(w) if w.barriers < now || fencing(w.thread) => {
                    *slot = None;
                    *live -= 1;
                    false
                }
                Some(_) => true,
                None => false,
            }
        });
    }

    /// The first unfenced generic write in these bytes, if any.
    pub fn check(&self, addr: u64, len: usize) -> Option<Unfenced> {
        if self.live == 0 {
            return None;
        }
        self.range(addr, len).find_map(|g| {
            self.granules[g].map(|w| Unfenced {
                addr: g as u64 * GRANULE,
                line: w.line,
                thread: w.thread,
                copy: w.copy,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_clears_its_own_writes_and_those_a_barrier_ordered() {
        let mut w = GenericWrites::new(1024);
        w.generic_write(0, 16, 10, 0, false);
        w.generic_write(16, 16, 11, 200, true);
        assert_eq!(w.check(0, 64).map(|u| u.line), Some(10));
        // Thread 0 fences before any barrier: only its own write clears.
        w.fence(|t| t < 128);
        assert_eq!(
            w.check(0, 64),
            Some(Unfenced {
                addr: 16,
                line: 11,
                thread: 200,
                copy: true
            })
        );
        // After a barrier, warpgroup 0's fence covers what thread 200 wrote.
        w.barriers += 1;
        w.fence(|t| t < 128);
        assert_eq!(w.check(0, 64), None);
        // A TMA landing clears too.
        w.generic_write(512, 40, 12, 3, false);
        w.async_write(512, 48);
        assert_eq!(w.check(500, 100), None);
    }
}
