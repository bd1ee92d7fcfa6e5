//! The memory a host run sees: global buffers the caller allocates, and the
//! CTA's shared memory laid out from the module's `.shared` declarations.
//!
//! Addresses are plain 64-bit numbers as in PTX. Shared memory occupies the
//! window `[0, size)`, so the shared address of a variable is its offset
//! (what `mov.u32 %r, smem;` gives); global buffer `i` starts at
//! `(i + 1) << 40`, far above any shared address, which also lets generic
//! addresses be told apart. An access outside every buffer is an error, not
//! a silent read of zeros.

use crate::error::{Fault, Space};
use crate::wgmma_math::SharedMemory;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Where global buffers start: buffer `i` at `(i + 1) << GLOBAL_SHIFT`.
pub const GLOBAL_SHIFT: u32 = 40;

/// Global addresses below this are a null pointer's (plus an offset):
/// nothing is mapped there.
pub const NULL_LIMIT: u64 = 1 << 32;

/// One global buffer: its bytes in 64-bit words that CTAs running in
/// parallel read and write without a lock (relaxed atomics; a write of some
/// bytes of a word clears and sets only those, so threads writing different
/// bytes of one word compose).
#[derive(Debug, Default)]
struct Buffer {
    /// Its first byte's address.
    base: u64,
    words: Box<[AtomicU64]>,
    len: usize,
}

impl Clone for Buffer {
    fn clone(&self) -> Buffer {
        Buffer {
            base: self.base,
            words: self
                .words
                .iter()
                .map(|w| AtomicU64::new(w.load(Relaxed)))
                .collect(),
            len: self.len,
        }
    }
}

fn words_of(bytes: &[u8]) -> Box<[AtomicU64]> {
    bytes
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            AtomicU64::new(u64::from_le_bytes(w))
        })
        .collect()
}

/// Global memory: buffers the caller allocates and reads back, shared by the
/// CTAs of a run (which may run in parallel).
#[derive(Default, Debug, Clone)]
pub struct GlobalMemory {
    /// Buffer `i` of `alloc` is at `(i + 1) << GLOBAL_SHIFT`; buffers placed
    /// with `alloc_at` follow, found through `placed`.
    buffers: Vec<Buffer>,
    /// `(base, index)` of the buffers placed at given addresses, by base.
    placed: Vec<(u64, usize)>,
    /// How many buffers `alloc` made (they come first).
    allocated: usize,
    /// Held around an atomic read-modify-write (`atom`, `red`), so that
    /// those of different CTAs do not interleave.
    rmw: std::sync::Arc<std::sync::Mutex<()>>,
}

impl GlobalMemory {
    /// An empty global memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// A new buffer holding `bytes`; returns its address.
    ///
    /// Panics if called after [`GlobalMemory::alloc_at`] (allocate first,
    /// then place).
    pub fn alloc(&mut self, bytes: Vec<u8>) -> u64 {
        assert!(self.placed.is_empty(), "alloc after alloc_at");
        self.allocated += 1;
        let base = (self.allocated as u64) << GLOBAL_SHIFT;
        self.buffers.push(Buffer {
            base,
            words: words_of(&bytes),
            len: bytes.len(),
        });
        base
    }

    /// A buffer holding `bytes` at address `base` (a recorded kernel's
    /// parameter block points there): an error if it overlaps another or
    /// lies below the global window (shared memory and parameters).
    pub fn alloc_at(&mut self, base: u64, bytes: Vec<u8>) -> Result<(), String> {
        let end = base.checked_add(bytes.len() as u64).ok_or_else(|| {
            format!(
                "a buffer at {base:#x} of {} bytes wraps around",
                bytes.len()
            )
        })?;
        if base < 1 << GLOBAL_SHIFT {
            return Err(format!(
                "{base:#x} is below the global window (it starts at {:#x})",
                1u64 << GLOBAL_SHIFT
            ));
        }
        if let Some(b) = self
            .buffers
            .iter()
            .find(|b| base < b.base + b.len as u64 && b.base < end)
        {
            return Err(format!(
                "a buffer at {base:#x} overlaps the one at {:#x}",
                b.base
            ));
        }
        self.buffers.push(Buffer {
            base,
            words: words_of(&bytes),
            len: bytes.len(),
        });
        let at = self.placed.partition_point(|(b, _)| *b < base);
        self.placed.insert(at, (base, self.buffers.len() - 1));
        Ok(())
    }

    /// The buffer holding `addr`, and `addr`'s offset in it.
    #[inline]
    fn find(&self, addr: u64) -> Option<(&Buffer, usize)> {
        if let Some(i) = (addr >> GLOBAL_SHIFT).checked_sub(1) {
            if (i as usize) < self.allocated {
                let b = &self.buffers[i as usize];
                return Some((b, (addr - b.base) as usize));
            }
        }
        let at = self
            .placed
            .partition_point(|(b, _)| *b <= addr)
            .checked_sub(1)?;
        let b = &self.buffers[self.placed[at].1];
        Some((b, (addr - b.base) as usize))
    }

    /// The bytes of the buffer that starts at `addr` (a copy).
    pub fn buffer(&self, addr: u64) -> Option<Vec<u8>> {
        let (b, off) = self.find(addr)?;
        if off != 0 {
            return None;
        }
        let mut out: Vec<u8> = b
            .words
            .iter()
            .flat_map(|w| w.load(Relaxed).to_le_bytes())
            .collect();
        out.truncate(b.len);
        Some(out)
    }

    #[inline]
    fn locate(&self, addr: u64, len: usize) -> Result<(&Buffer, usize), Fault> {
        match self.find(addr) {
            Some((b, off)) if off.checked_add(len).is_some_and(|end| end <= b.len) => Ok((b, off)),
            // Nothing is mapped this low: a null pointer plus an offset.
            None if addr < NULL_LIMIT => Err(Fault::NullPointer { addr }),
            found => Err(Fault::OutOfBounds {
                space: Space::Global,
                addr,
                len,
                buffer: found.map(|(b, _)| b.base),
                size: found.map_or(0, |(b, _)| b.len as u64),
            }),
        }
    }

    /// Read `out.len()` bytes at `addr` into `out`.
    pub fn read_into(&self, addr: u64, out: &mut [u8]) -> Result<(), Fault> {
        let (b, off) = self.locate(addr, out.len())?;
        let mut at = off;
        for chunk in out.chunks_mut(8) {
            // The bytes of the one or two words this chunk spans.
            let (w, sh) = (at / 8, at % 8);
            let lo = b.words[w].load(Relaxed).to_le_bytes();
            if sh + chunk.len() <= 8 {
                chunk.copy_from_slice(&lo[sh..sh + chunk.len()]);
            } else {
                let hi = b.words[w + 1].load(Relaxed).to_le_bytes();
                let (first, n) = (8 - sh, chunk.len());
                chunk[..first].copy_from_slice(&lo[sh..]);
                chunk[first..].copy_from_slice(&hi[..n - first]);
            }
            at += chunk.len();
        }
        Ok(())
    }

    /// Read the 16 bytes at `addr` (a `cp.async` record), little-endian:
    /// two word loads where they start on a word. Inlined, so that the
    /// value stays in registers (a result passed through memory as two
    /// words and read back as one stalls the load).
    #[inline]
    pub fn read16(&self, addr: u64) -> Result<u128, Fault> {
        let (b, off) = self.locate(addr, 16)?;
        if off % 8 == 0 {
            let w = off / 8;
            let (lo, hi) = (b.words[w].load(Relaxed), b.words[w + 1].load(Relaxed));
            return Ok(u128::from(lo) | u128::from(hi) << 64);
        }
        let mut out = [0u8; 16];
        self.read_into(addr, &mut out)?;
        Ok(u128::from_le_bytes(out))
    }

    /// A hint that the bytes at `addr` are about to be read: asking for
    /// many lines before reading any lets their misses overlap. Nothing
    /// where `addr` is outside every buffer (the read says so).
    pub fn prefetch(&self, addr: u64) {
        #[cfg(target_arch = "x86_64")]
        if let Some(w) = self.find(addr).and_then(|(b, off)| b.words.get(off / 8)) {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // SAFETY: a prefetch reads nothing and cannot fault; the
            // address is that of a word of the buffer.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(w).cast::<i8>()) };
        }
    }

    /// Read `len` (1..=8) bytes, little-endian.
    pub fn read(&self, addr: u64, len: usize) -> Result<u64, Fault> {
        let (b, off) = self.locate(addr, len)?;
        let (w, sh) = (off / 8, (off % 8) * 8);
        let lo = b.words[w].load(Relaxed) >> sh;
        let v = if sh + 8 * len > 64 {
            lo | (b.words[w + 1].load(Relaxed) << (64 - sh))
        } else {
            lo
        };
        Ok(if len == 8 {
            v
        } else {
            v & ((1u64 << (8 * len)) - 1)
        })
    }

    /// Write the low `len` (1..=8) bytes of `v`, little-endian.
    pub fn write(&self, addr: u64, len: usize, v: u64) -> Result<(), Fault> {
        let (b, off) = self.locate(addr, len)?;
        let (w, sh) = (off / 8, (off % 8) * 8);
        let bits = if len == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * len)) - 1
        };
        let (v, bits) = (v & bits, bits);
        let put = |word: &AtomicU64, mask: u64, val: u64| {
            if mask == u64::MAX {
                word.store(val, Relaxed);
            } else {
                word.fetch_and(!mask, Relaxed);
                word.fetch_or(val & mask, Relaxed);
            }
        };
        put(&b.words[w], bits << sh, v << sh);
        if sh + 8 * len > 64 {
            put(&b.words[w + 1], bits >> (64 - sh), v >> (64 - sh));
        }
        Ok(())
    }

    /// Write `bytes` at `addr` (a vector store), or nothing and an error
    /// if they are not all inside one buffer. Words they cover whole are
    /// stored at once; the bytes of the others as [`GlobalMemory::write`] does.
    pub fn write_span(&self, addr: u64, bytes: &[u8]) -> Result<(), Fault> {
        let (b, off) = self.locate(addr, bytes.len())?;
        let mut at = 0;
        while at < bytes.len() {
            let (w, sh) = ((off + at) / 8, (off + at) % 8);
            let n = (8 - sh).min(bytes.len() - at);
            let mut word = [0u8; 8];
            word[sh..sh + n].copy_from_slice(&bytes[at..at + n]);
            let v = u64::from_le_bytes(word);
            if n == 8 {
                b.words[w].store(v, Relaxed);
            } else {
                let mask = (u64::MAX >> (64 - 8 * n)) << (8 * sh);
                b.words[w].fetch_and(!mask, Relaxed);
                b.words[w].fetch_or(v & mask, Relaxed);
            }
            at += n;
        }
        Ok(())
    }

    /// Run `f` with every other atomic read-modify-write of the run held off.
    pub fn atomically<T>(&self, f: impl FnOnce() -> T) -> T {
        let _held = self.rmw.lock().unwrap_or_else(|e| e.into_inner());
        f()
    }
}

fn le(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |acc, b| (acc << 8) | u64::from(*b))
}

/// The CTA's shared memory.
#[derive(Debug, Clone)]
pub struct Shared {
    bytes: Vec<u8>,
    /// Writes so far: what was read of it is still what it holds while
    /// this stays the same (wgmma's decoded operands are kept on that).
    version: u64,
}

impl Shared {
    /// `size` bytes of zeros.
    pub fn new(size: usize) -> Self {
        Shared {
            bytes: vec![0; size],
            version: 0,
        }
    }

    /// All its bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// How many writes it has had (see `version`).
    pub fn version(&self) -> u64 {
        self.version
    }

    fn range(&self, addr: u64, len: usize) -> Result<std::ops::Range<usize>, Fault> {
        let a = addr as usize;
        if addr < (1 << GLOBAL_SHIFT) && a + len <= self.bytes.len() {
            Ok(a..a + len)
        } else {
            Err(Fault::OutOfBounds {
                space: Space::Shared,
                addr,
                len,
                buffer: None,
                size: self.bytes.len() as u64,
            })
        }
    }

    /// Read `len` (1..=8) bytes, little-endian.
    pub fn read(&self, addr: u64, len: usize) -> Result<u64, Fault> {
        Ok(le(&self.bytes[self.range(addr, len)?]))
    }

    /// Write `bytes` at `addr`.
    #[inline]
    pub fn write_bytes(&mut self, addr: u64, bytes: &[u8]) -> Result<(), Fault> {
        let r = self.range(addr, bytes.len())?;
        self.version += 1;
        let dst = &mut self.bytes[r];
        match <&[u8; 16]>::try_from(bytes) {
            // A cp.async record: a fixed-size move, not a call (both
            // sides must have a length known at compile time; `dst` has
            // the 16 bytes of `bytes`).
            Ok(b16) => {
                if let Some(d16) = dst.first_chunk_mut::<16>() {
                    *d16 = *b16;
                }
            }
            Err(_) => dst.copy_from_slice(bytes),
        }
        Ok(())
    }

    /// Write the low `len` bytes of `v`, little-endian.
    pub fn write(&mut self, addr: u64, len: usize, v: u64) -> Result<(), Fault> {
        let r = self.range(addr, len)?;
        self.version += 1;
        self.bytes[r].copy_from_slice(&v.to_le_bytes()[..len]);
        Ok(())
    }
}

impl SharedMemory for Shared {
    fn granule(&self, addr: u32) -> Result<[u8; 16], String> {
        let r = self.range(u64::from(addr), 16).map_err(|e| e.to_string())?;
        let mut g = [0u8; 16];
        g.copy_from_slice(&self.bytes[r]);
        Ok(g)
    }
}

/// A `.shared` variable of the module: name, alignment, size (`None` for
/// `.extern .shared x[]`, whose size the launch gives).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedVar {
    /// Name.
    pub name: String,
    /// `.align` (bytes; the element size when absent).
    pub align: u64,
    /// Size in bytes.
    pub size: Option<u64>,
}

/// The `.shared` variables among the module's verbatim declarations
/// (`.shared .align 1024 .b8 smem[8192]`).
pub fn shared_vars(globals: &[Box<str>]) -> Vec<SharedVar> {
    let mut out = Vec::new();
    for g in globals {
        let words: Vec<&str> = g.split_whitespace().collect();
        if !words.contains(&".shared") {
            continue;
        }
        let align = words
            .iter()
            .position(|w| *w == ".align")
            .and_then(|i| words.get(i + 1)?.parse().ok());
        let elem = words
            .iter()
            .find_map(|w| type_bytes(w.strip_prefix('.')?))
            .unwrap_or(1);
        let Some(decl) = words.last() else { continue };
        let decl = decl.trim_end_matches(';');
        let (name, dims) = match decl.find('[') {
            Some(p) => (&decl[..p], &decl[p..]),
            None => (decl, ""),
        };
        let mut size = Some(elem);
        for d in dims.split('[').skip(1) {
            let d = d.trim_end_matches(']');
            size = if d.is_empty() {
                None
            } else {
                size.and_then(|s| Some(s * d.parse::<u64>().ok()?))
            };
        }
        out.push(SharedVar {
            name: name.to_string(),
            align: align.unwrap_or(elem),
            size,
        });
    }
    out
}

/// Bytes of a PTX scalar type (`b32` -> 4).
pub fn type_bytes(t: &str) -> Option<u64> {
    Some(match t {
        "b8" | "u8" | "s8" | "pred" => 1,
        "b16" | "u16" | "s16" | "f16" | "bf16" => 2,
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" | "tf32" => 4,
        "b64" | "u64" | "s64" | "f64" => 8,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_declarations_are_read() {
        let g: Vec<Box<str>> = vec![
            ".shared .align 1024 .b8 smem[8192]".into(),
            ".global .f32 x".into(),
            ".extern .shared .align 16 .b8 global_smem[]".into(),
            ".shared .f32 tile[2][4]".into(),
        ];
        let v = shared_vars(&g);
        assert_eq!(v.len(), 3);
        assert_eq!(
            v[0],
            SharedVar {
                name: "smem".into(),
                align: 1024,
                size: Some(8192)
            }
        );
        assert_eq!(v[1].size, None);
        assert_eq!(v[2].size, Some(32));
    }

    #[test]
    fn global_accesses_are_bounds_checked() {
        let mut g = GlobalMemory::new();
        let a = g.alloc(vec![1, 2, 3, 4]);
        assert_eq!(g.read(a, 4).unwrap(), 0x0403_0201);
        g.write(a + 2, 2, 0xbeef).unwrap();
        assert_eq!(g.buffer(a).unwrap(), &[1, 2, 0xef, 0xbe]);
        assert!(g.read(a + 2, 4).is_err());
        assert!(g.read(0x10, 4).is_err());
        // A span: whole words stored, the edges merged byte by byte.
        let s = g.alloc(vec![0xff; 24]);
        g.write_span(
            s + 3,
            &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
        )
        .unwrap();
        let mut want = vec![0xffu8; 24];
        want[3..19].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
        assert_eq!(g.buffer(s).unwrap(), want);
        assert!(g.write_span(s + 16, &[0; 16]).is_err());
        assert_eq!(g.buffer(s).unwrap(), want, "nothing written");
    }

    #[test]
    fn buffers_placed_at_recorded_addresses() {
        let mut g = GlobalMemory::new();
        let a = g.alloc(vec![9; 8]);
        let at = 0x7f00_0000_0000;
        g.alloc_at(at, vec![1, 2, 3, 4]).unwrap();
        g.alloc_at(at + 0x1000, vec![5; 16]).unwrap();
        assert_eq!(g.read(at + 1, 2).unwrap(), 0x0302);
        assert_eq!(g.read(at + 0x1008, 1).unwrap(), 5);
        assert_eq!(g.read(a, 1).unwrap(), 9);
        assert!(g.read(at + 4, 1).is_err());
        assert!(g
            .alloc_at(at + 2, vec![0; 4])
            .unwrap_err()
            .contains("overlaps"));
        assert!(g
            .alloc_at(0x100, vec![0; 4])
            .unwrap_err()
            .contains("below the global window"));
        assert_eq!(g.buffer(at + 0x1000).unwrap(), vec![5; 16]);
        assert!(g.buffer(at + 1).is_none());
    }
}
