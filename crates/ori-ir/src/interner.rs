//! The process-wide, append-only tables behind [`crate::Symbol`] (a name)
//! and [`crate::ModList`] (an instruction's modifier list).
//!
//! Both turn a value that a kernel repeats a million times (`f32`,
//! `mma_async.sync.aligned.m64n8k16.f32.f16.f16`) into a `u32`, so that an
//! instruction holds integers, not heap data. An id reads its value back
//! without a lock: values live in fixed chunks of write-once slots and are
//! never freed (the table is bounded by the distinct values a process
//! meets, not by how often it meets them). Interning takes a read lock, and
//! the write lock only for a value never seen before.

use crate::function::NameHasher;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash};
use std::sync::{OnceLock, RwLock};

/// log2 of the values in a table's first segment.
const BASE_BITS: u32 = 6;
/// Segments in a table: segment `k` holds `2^(BASE_BITS + k)` values, so
/// 18 segments hold 16M distinct values, and a process that interns a few
/// hundred (a CLI run on one kernel) allocates and touches a few kilobytes:
/// fixed-size chunks of 4,096 slots cost each run about a hundred page
/// faults before it read its input.
const SEGMENTS: usize = 18;

/// The segment of `id` and its place there.
#[inline]
fn locate(id: u32) -> (usize, usize) {
    let x = (id as u64 >> BASE_BITS) + 1;
    let seg = 63 - x.leading_zeros() as usize;
    let first = ((1u64 << seg) - 1) << BASE_BITS;
    (seg, (id as u64 - first) as usize)
}

/// value -> id, hashed like names.
pub(crate) type Ids<T> = HashMap<&'static T, u32, BuildHasherDefault<NameHasher>>;

/// One segment: its slots, each set once.
type Segment<T> = Box<[OnceLock<&'static T>]>;

/// One interning table: id -> value without locking, value -> id.
pub(crate) struct Interner<T: ?Sized + 'static> {
    segments: [OnceLock<Segment<T>>; SEGMENTS],
    ids: RwLock<Ids<T>>,
}

impl<T> Interner<T>
where
    T: ?Sized + Eq + Hash + Sync + 'static,
    Box<T>: for<'a> From<&'a T>,
{
    /// An empty table.
    pub(crate) fn new() -> Self {
        Interner {
            segments: std::array::from_fn(|_| OnceLock::new()),
            ids: RwLock::new(Ids::default()),
        }
    }

    /// The value of `id`, if it was given out.
    #[inline]
    pub(crate) fn get(&self, id: u32) -> Option<&'static T> {
        let (seg, at) = locate(id);
        self.segments.get(seg)?.get()?.get(at)?.get().copied()
    }

    /// The id of `v` (and the table's copy of it), adding it if it is new.
    pub(crate) fn intern(&self, v: &T) -> (&'static T, u32) {
        let found = self.ids.read().ok().and_then(|m| m.get(v).copied());
        if let Some(id) = found {
            if let Some(kept) = self.get(id) {
                return (kept, id);
            }
        }
        let mut m = self.ids.write().unwrap_or_else(|e| e.into_inner());
        if let Some((&k, &id)) = m.get_key_value(v) {
            return (k, id);
        }
        let id = u32::try_from(m.len())
            .ok()
            .filter(|&n| locate(n).0 < SEGMENTS)
            .expect("more than 16M distinct interned values in one process");
        let kept: &'static T = Box::leak(Box::<T>::from(v));
        let (seg, at) = locate(id);
        let len = 1usize << (BASE_BITS as usize + seg);
        let segment =
            self.segments[seg].get_or_init(|| (0..len).map(|_| OnceLock::new()).collect());
        let _ = segment[at].set(kept);
        m.insert(kept, id);
        (kept, id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_tile_the_ids() {
        assert_eq!(locate(0), (0, 0));
        assert_eq!(locate(63), (0, 63));
        assert_eq!(locate(64), (1, 0));
        assert_eq!(locate(191), (1, 127));
        assert_eq!(locate(192), (2, 0));
        let mut next = (0, 0);
        for id in 0..100_000u32 {
            let (seg, at) = locate(id);
            assert_eq!((seg, at), next, "id {id}");
            assert!(at < 1 << (BASE_BITS as usize + seg));
            next = if at + 1 == 1 << (BASE_BITS as usize + seg) {
                (seg + 1, 0)
            } else {
                (seg, at + 1)
            };
        }
        // The last id the table gives out is in its last segment.
        let last = (((1u64 << SEGMENTS) - 1) << BASE_BITS) - 1;
        assert_eq!(locate(last as u32).0, SEGMENTS - 1);
    }
}
