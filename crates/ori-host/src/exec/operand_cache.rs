//! wgmma operands read from shared memory, kept decoded while shared
//! memory is unchanged.
//!
//! A pipeline issues several wgmma that read the same tile: Triton's 128-row
//! blocks run two M halves against the same B descriptor, CUTLASS's
//! warp-specialized kernels split N. Reading a descriptor's operand means
//! walking its layout a 16-byte granule at a time and decoding every
//! element to f64; this keeps what a warpgroup decoded, by descriptor and
//! form, for as long as shared memory sees no write of any kind (every
//! write through [`crate::memory::Shared`] counts: stores, atomics,
//! `stmatrix`, `cp.async` landing, TMA and bulk copies).
//!
//! Only reads the sanitizer found nothing wrong with are kept. Such a read
//! stays clean without a write: an unfenced generic write or a TMA fill
//! needs one, and the phases a warpgroup has seen only grow (the cache is
//! the warpgroup's own, since what it has seen is).

use crate::wgmma_math::{Mma, SharedMemory};
use ori_ir::wgmma_form::ElemType;
use std::rc::Rc;

/// The most operands kept (a pipeline stage of the widest kernels: 4 K
/// steps of A and B, both M halves, with room to spare).
const CAPACITY: usize = 16;

/// What an operand's values depend on besides shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct OperandKey {
    /// B (else A).
    b: bool,
    desc: u64,
    ty: ElemType,
    /// M or N, and K.
    shape: (u32, u32),
    mn_major: bool,
    negate: bool,
}

impl OperandKey {
    /// The A operand of `mma` (read through its descriptor `desc`).
    pub(super) fn a(mma: &Mma<'_>, desc: u64) -> Self {
        let f = &mma.form;
        OperandKey {
            b: false,
            desc,
            ty: f.atype,
            shape: (f.m, f.k),
            mn_major: mma.trans_a,
            negate: mma.negate_a,
        }
    }

    /// The B operand of `mma`.
    pub(super) fn b(mma: &Mma<'_>) -> Self {
        let f = &mma.form;
        OperandKey {
            b: true,
            desc: mma.b_desc,
            ty: f.btype,
            shape: (f.n, f.k),
            mn_major: mma.trans_b,
            negate: mma.negate_b,
        }
    }
}

/// One warpgroup's decoded operands.
#[derive(Default)]
pub(super) struct OperandCache {
    /// Shared memory's version the entries were read at.
    version: u64,
    /// Newest last.
    entries: Vec<(OperandKey, Rc<Vec<f64>>)>,
}

impl OperandCache {
    /// The operand `key` names, from the cache or from `read` (on `smem`,
    /// whose version is `version`); `clean` says after the read whether
    /// the sanitizer found nothing in it (only then is it kept).
    pub(super) fn get(
        &mut self,
        key: OperandKey,
        version: u64,
        smem: &dyn SharedMemory,
        read: impl FnOnce(&dyn SharedMemory) -> Result<Vec<f64>, String>,
        clean: impl FnOnce() -> bool,
    ) -> Result<Rc<Vec<f64>>, String> {
        if self.version != version {
            self.entries.clear();
            self.version = version;
        }
        if let Some((_, v)) = self.entries.iter().find(|(k, _)| *k == key) {
            return Ok(Rc::clone(v));
        }
        let v = Rc::new(read(smem)?);
        if clean() {
            if self.entries.len() == CAPACITY {
                self.entries.remove(0);
            }
            self.entries.push((key, Rc::clone(&v)));
        }
        Ok(v)
    }
}
