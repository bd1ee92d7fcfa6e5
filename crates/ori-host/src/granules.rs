//! Shared memory in 16-byte granules, as the sanitizer's trackers see it.
//!
//! Both the proxy-fence check (`proxy_fence`: which granules the generic
//! proxy wrote since a fence) and the TMA-fill check (`tma_fill`: which
//! granules a TMA load filled, on which mbarrier phase) keep one optional
//! record per granule, in a table that grows only as far as writes reach.
//! The granule arithmetic they share lives here, so that the two cannot
//! disagree on which bytes a granule covers.

use std::ops::Range;

/// Bytes per tracked granule: the unit of wgmma's and TMA's shared-memory
/// reads (16-byte core-matrix rows).
pub const GRANULE: u64 = 16;

/// The granules that `len` bytes at `addr` touch (at least one), cut off at
/// `limit` granules.
pub fn covered(addr: u64, len: usize, limit: usize) -> Range<usize> {
    let lo = (addr / GRANULE) as usize;
    let hi = ((addr + len.max(1) as u64 - 1) / GRANULE) as usize + 1;
    lo.min(limit)..hi.min(limit)
}

/// [`covered`] for a write into `table` of a tracker of `size` granules:
/// the table grown (with no records) to hold every granule written.
pub fn covered_grown<T: Clone>(
    table: &mut Vec<Option<T>>,
    size: usize,
    addr: u64,
    len: usize,
) -> Range<usize> {
    let r = covered(addr, len, size);
    if table.len() < r.end {
        table.resize(r.end, None);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn granules_cover_every_byte_written() {
        assert_eq!(covered(0, 16, 100), 0..1);
        assert_eq!(covered(15, 2, 100), 0..2);
        assert_eq!(covered(32, 0, 100), 2..3);
        assert_eq!(covered(1600, 64, 100), 100..100);
        let mut t: Vec<Option<u8>> = Vec::new();
        assert_eq!(covered_grown(&mut t, 8, 40, 40), 2..5);
        assert_eq!(t.len(), 5);
        // Past the tracker's size: nothing covered, and the table never
        // grows beyond it.
        assert_eq!(covered_grown(&mut t, 8, 200, 16), 8..8);
        assert!(t.len() <= 8);
    }
}
