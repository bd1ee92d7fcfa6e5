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

/// log2 of the values per chunk of a table.
pub(crate) const CHUNK_BITS: u32 = 12;
/// Values per chunk.
pub(crate) const CHUNK_LEN: usize = 1 << CHUNK_BITS;
/// Chunks in a table: room for 16M distinct values.
const CHUNKS: usize = 4096;

/// value -> id, hashed like names.
pub(crate) type Ids<T> = HashMap<&'static T, u32, BuildHasherDefault<NameHasher>>;

/// One chunk: `CHUNK_LEN` slots, each set once.
type Chunk<T> = Box<[OnceLock<&'static T>]>;

/// One interning table: id -> value without locking, value -> id.
pub(crate) struct Interner<T: ?Sized + 'static> {
    chunks: Box<[OnceLock<Chunk<T>>]>,
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
            chunks: (0..CHUNKS).map(|_| OnceLock::new()).collect(),
            ids: RwLock::new(Ids::default()),
        }
    }

    /// The value of `id`, if it was given out.
    pub(crate) fn get(&self, id: u32) -> Option<&'static T> {
        let i = id as usize;
        self.chunks
            .get(i >> CHUNK_BITS)?
            .get()
            .and_then(|c| c[i & (CHUNK_LEN - 1)].get())
            .copied()
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
            .filter(|&n| (n as usize) < CHUNKS * CHUNK_LEN)
            .expect("more than 16M distinct interned values in one process");
        let kept: &'static T = Box::leak(Box::<T>::from(v));
        let chunk = self.chunks[id as usize >> CHUNK_BITS]
            .get_or_init(|| (0..CHUNK_LEN).map(|_| OnceLock::new()).collect());
        let _ = chunk[id as usize & (CHUNK_LEN - 1)].set(kept);
        m.insert(kept, id);
        (kept, id)
    }
}
