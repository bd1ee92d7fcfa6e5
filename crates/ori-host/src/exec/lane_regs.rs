//! A warpgroup's registers, register-major: the 128 lanes of one virtual
//! register are adjacent, so an instruction runs down one row per operand
//! for all its threads (structure of arrays) instead of jumping between
//! 128 separate register files.

use crate::wgmma_math::WARPGROUP;
use cranelift_entity::EntityRef;
use ori_ir::VReg;

/// Every register of every thread of a warpgroup.
#[derive(Default)]
pub(super) struct LaneRegs {
    vals: Vec<u64>,
}

impl LaneRegs {
    /// `count` registers, all zero.
    pub(super) fn new(count: usize) -> Self {
        LaneRegs {
            vals: vec![0; count * WARPGROUP],
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
        let at = r as usize * WARPGROUP;
        &mut self.vals[at..at + WARPGROUP]
    }
}
