//! The CTA's 16 named barriers (`bar.sync` / `barrier.sync`, `bar.arrive`,
//! PTX ISA 9.7.13.1), as the host backend's warpgroup scheduler sees them.
//!
//! A CTA of several warpgroups runs one warpgroup at a time, each until it
//! waits at a barrier or exits. A barrier counts arriving threads in whole
//! warps (the hardware's unit); it fills when the count reaches the thread
//! count the instruction names, or, without one, every thread of the CTA
//! that has not exited. Then every warpgroup waiting at it runs again and
//! the barrier starts over. Producer/consumer kernels use `bar.arrive`
//! (counted, never waits) with a count, and `bar.sync` on the other side.

use smallvec::SmallVec;

/// Named barriers per CTA (`bar.sync 0..15`).
pub const BARRIERS: usize = 16;

#[derive(Clone, Debug, Default)]
struct Slot {
    arrived: u32,
    count: Option<u32>,
    waiting: SmallVec<[usize; 8]>,
    /// Line of the first arrival, for a deadlock report.
    line: u32,
}

/// The barriers of one CTA.
#[derive(Clone, Debug, Default)]
pub struct Barriers {
    slots: [Slot; BARRIERS],
}

impl Barriers {
    /// Warpgroup `wg` arrives at barrier `id` with `threads` threads (whole
    /// warps), at source line `line`; `count` is the instruction's thread
    /// count, `wait` whether it blocks (`sync`) or not (`arrive`).
    pub fn arrive(
        &mut self,
        id: u32,
        wg: usize,
        threads: u32,
        count: Option<u32>,
        wait: bool,
        line: u32,
    ) -> Result<(), String> {
        let slot = self
            .slots
            .get_mut(id as usize)
            .ok_or_else(|| format!("barrier {id} does not exist (0..15)"))?;
        if let Some(c) = count {
            if c == 0 || c % 32 != 0 {
                return Err(format!(
                    "barrier {id}: a thread count of {c} is not a positive multiple of 32"
                ));
            }
        }
        if slot.arrived > 0 && slot.count != count {
            return Err(format!(
                "barrier {id}: arrivals disagree on the thread count ({:?} at line {}, {count:?} here)",
                slot.count, slot.line
            ));
        }
        if slot.arrived == 0 {
            slot.line = line;
        }
        slot.arrived += threads;
        slot.count = count;
        if wait {
            slot.waiting.push(wg);
        }
        Ok(())
    }

    /// Fill every barrier whose arrivals reached its count (`live` threads
    /// for one without a count): the warpgroups to run again.
    pub fn release(&mut self, live: u32) -> Vec<usize> {
        self.release_ids(live).1
    }

    /// [`Barriers::release`], with the ids of the barriers that filled.
    pub fn release_ids(&mut self, live: u32) -> (Vec<u32>, Vec<usize>) {
        let mut ids = Vec::new();
        let mut out = Vec::new();
        for (id, slot) in self.slots.iter_mut().enumerate() {
            if slot.arrived > 0 && slot.arrived >= slot.count.unwrap_or(live) {
                out.extend(slot.waiting.drain(..));
                *slot = Slot::default();
                ids.push(id as u32);
            }
        }
        (ids, out)
    }

    /// Barriers with waiting warpgroups: `(id, line of its first arrival,
    /// threads arrived, threads expected)`, for a deadlock report.
    pub fn stuck(&self, live: u32) -> Vec<(u32, u32, u32, u32)> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.waiting.is_empty())
            .map(|(id, s)| (id as u32, s.line, s.arrived, s.count.unwrap_or(live)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_barrier_fills_at_every_live_thread_or_its_count() {
        let mut b = Barriers::default();
        b.arrive(0, 0, 128, None, true, 10).unwrap();
        assert!(b.release(256).is_empty());
        b.arrive(0, 1, 128, None, true, 10).unwrap();
        assert_eq!(b.release(256), vec![0, 1]);
        // Producer/consumer: one side arrives, the other waits, count 256.
        b.arrive(1, 0, 128, Some(256), false, 20).unwrap();
        assert!(b.release(384).is_empty());
        b.arrive(1, 2, 128, Some(256), true, 21).unwrap();
        assert_eq!(b.release(384), vec![2]);
        // Starts over.
        b.arrive(1, 2, 128, Some(256), true, 21).unwrap();
        assert_eq!(b.stuck(384), vec![(1, 21, 128, 256)]);
    }

    #[test]
    fn bad_counts_and_ids_are_errors() {
        let mut b = Barriers::default();
        assert!(b.arrive(16, 0, 128, None, true, 1).is_err());
        assert!(b.arrive(0, 0, 128, Some(100), true, 1).is_err());
        b.arrive(2, 0, 128, Some(256), true, 1).unwrap();
        assert!(b.arrive(2, 1, 128, Some(384), true, 2).is_err());
    }
}
