//! A warpgroup's registers, register-major: the 128 lanes of one virtual
//! register are adjacent, so an instruction runs down one row per operand
//! for all its threads (structure of arrays) instead of jumping between
//! 128 separate register files.
//!
//! A real kernel has hundreds of registers (a kilobyte a row), so a CTA's
//! register file is most of a megabyte. Clearing a fresh one for every
//! CTA would sweep the core's cache; instead each worker thread keeps the
//! files of its finished CTAs, and a new CTA's file is an old one with
//! only the rows the old CTA wrote cleared (every row starts at zero, as
//! before).

use crate::wgmma_math::WARPGROUP;
use cranelift_entity::EntityRef;
use ori_ir::VReg;
use std::cell::RefCell;

/// Every register of every thread of a warpgroup.
#[derive(Default)]
pub(super) struct LaneRegs {
    vals: Vec<u64>,
    /// One bit per register: written since the file was handed out.
    written: Vec<u64>,
}

thread_local! {
    /// Register files of finished warpgroups, with the rows they wrote.
    static SPARE: RefCell<Vec<LaneRegs>> = const { RefCell::new(Vec::new()) };
}

/// How many files a worker thread keeps (a CTA of 1024 threads has 8).
const SPARE_FILES: usize = 8;

impl LaneRegs {
    /// `count` registers, all zero.
    pub(super) fn new(count: usize) -> Self {
        let mut regs = SPARE.with(|s| s.borrow_mut().pop()).unwrap_or_default();
        let mut vals = std::mem::take(&mut regs.vals);
        for (w, &bits) in regs.written.iter().enumerate() {
            let mut left = bits;
            while left != 0 {
                let r = w * 64 + left.trailing_zeros() as usize;
                left &= left - 1;
                if let Some(row) = vals.get_mut(r * WARPGROUP..(r + 1) * WARPGROUP) {
                    row.fill(0);
                }
            }
        }
        vals.resize(count * WARPGROUP, 0);
        let mut written = std::mem::take(&mut regs.written);
        written.clear();
        written.resize(count.div_ceil(64), 0);
        LaneRegs { vals, written }
    }

    /// Note register `r` written.
    #[inline]
    fn mark(&mut self, r: usize) {
        if let Some(w) = self.written.get_mut(r / 64) {
            *w |= 1 << (r % 64);
        }
    }

    /// Register `r` of thread `t`.
    #[inline]
    pub(super) fn get(&self, t: usize, r: VReg) -> u64 {
        self.vals[r.index() * WARPGROUP + t]
    }

    /// Set register `r` of thread `t`.
    #[inline]
    pub(super) fn set(&mut self, t: usize, r: VReg, v: u64) {
        self.vals[r.index() * WARPGROUP + t] = v;
        self.mark(r.index());
    }

    /// Register number `r` of every thread.
    #[inline]
    pub(super) fn row(&self, r: u32) -> &[u64] {
        let at = r as usize * WARPGROUP;
        &self.vals[at..at + WARPGROUP]
    }

    /// Register number `r` of every thread, to write.
    #[inline]
    pub(super) fn row_mut(&mut self, r: u32) -> &mut [u64] {
        self.mark(r as usize);
        let at = r as usize * WARPGROUP;
        &mut self.vals[at..at + WARPGROUP]
    }
}

impl Drop for LaneRegs {
    /// Keep the file for the next CTA this thread runs.
    fn drop(&mut self) {
        if self.vals.capacity() == 0 {
            return;
        }
        // A thread being torn down has no further CTAs: then the file goes.
        let _ = SPARE.try_with(|s| {
            let mut s = s.borrow_mut();
            if s.len() < SPARE_FILES {
                s.push(LaneRegs {
                    vals: std::mem::take(&mut self.vals),
                    written: std::mem::take(&mut self.written),
                });
            }
        });
    }
}
