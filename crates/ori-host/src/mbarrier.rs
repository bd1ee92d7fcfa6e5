//! `mbarrier`: the shared-memory barriers that TMA copies and warp-
//! specialized pipelines synchronize on (PTX ISA 9.7.13.15).
//!
//! An mbarrier counts down arrivals and transaction bytes in its current
//! phase: `init` sets the expected arrivals, each `arrive` takes one,
//! `expect_tx` adds bytes that copies (`complete_tx`, done by a TMA load)
//! take away. When both reach zero the phase completes: the phase number
//! advances and the counts start over. Waiters test a phase's parity
//! (`try_wait.parity P`: has the phase of parity P completed?) or the
//! phase an `arrive` returned (its state token). The object is opaque in
//! the ISA, so the host backend keeps its state beside shared memory, keyed
//! by address, and refuses an operation on an address never initialized.

use fxhash::FxHashMap;

/// One mbarrier's state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MBarrier {
    /// Arrivals each phase expects (`init`'s count).
    pub expected: u32,
    /// Arrivals still missing in the current phase.
    pub pending: u32,
    /// Transaction bytes expected and not yet completed (may go below zero
    /// when a copy completes before its `expect_tx`).
    pub tx: i64,
    /// Phases completed so far.
    pub phase: u64,
}

/// The mbarriers of one CTA.
#[derive(Clone, Debug, Default)]
pub struct MBarriers {
    by_addr: FxHashMap<u64, MBarrier>,
    /// Counts every change of any mbarrier (a waiter that saw no change
    /// since its last look cannot make progress by looking again).
    pub epoch: u64,
    /// Phases completed, over all mbarriers (each orders the memory
    /// accesses before its arrivals with the waits that see it).
    pub completed: u64,
}

impl MBarriers {
    /// `mbarrier.init [addr], count`.
    pub fn init(&mut self, addr: u64, count: u32) -> Result<(), String> {
        if count == 0 {
            return Err("mbarrier.init with a count of 0".into());
        }
        self.by_addr.insert(
            addr,
            MBarrier {
                expected: count,
                pending: count,
                tx: 0,
                phase: 0,
            },
        );
        self.epoch += 1;
        Ok(())
    }

    /// `mbarrier.inval [addr]`.
    pub fn inval(&mut self, addr: u64) {
        self.by_addr.remove(&addr);
        self.epoch += 1;
    }

    fn get(&mut self, addr: u64) -> Result<&mut MBarrier, String> {
        self.by_addr
            .get_mut(&addr)
            .ok_or_else(|| format!("no mbarrier was initialized at shared address {addr:#x}"))
    }

    /// The state of the mbarrier at `addr`, if one was initialized there.
    pub fn state(&self, addr: u64) -> Option<MBarrier> {
        self.by_addr.get(&addr).copied()
    }

    /// The phase of the mbarrier at `addr` (its state token).
    pub fn phase(&mut self, addr: u64) -> Result<u64, String> {
        Ok(self.get(addr)?.phase)
    }

    fn settle(&mut self, addr: u64) {
        if let Some(b) = self.by_addr.get_mut(&addr) {
            if b.pending == 0 && b.tx == 0 {
                b.phase += 1;
                b.pending = b.expected;
                self.completed += 1;
            }
        }
        self.epoch += 1;
    }

    /// `expect_tx` of `bytes` (also the `.expect_tx` of an arrive).
    pub fn expect_tx(&mut self, addr: u64, bytes: i64) -> Result<(), String> {
        self.get(addr)?.tx += bytes;
        self.epoch += 1;
        Ok(())
    }

    /// A copy delivered `bytes`.
    pub fn complete_tx(&mut self, addr: u64, bytes: i64) -> Result<(), String> {
        self.get(addr)?.tx -= bytes;
        self.settle(addr);
        Ok(())
    }

    /// `count` arrivals (`drop`: also expect that many fewer in later
    /// phases); returns the phase they arrived in (the state token).
    pub fn arrive(&mut self, addr: u64, count: u32, drop: bool) -> Result<u64, String> {
        let b = self.get(addr)?;
        if count > b.pending {
            return Err(format!(
                "mbarrier at {addr:#x}: {count} arrival(s) where its phase {} expects {} more",
                b.phase, b.pending
            ));
        }
        let phase = b.phase;
        b.pending -= count;
        if drop {
            b.expected = b.expected.saturating_sub(count);
        }
        self.settle(addr);
        Ok(phase)
    }

    /// Whether the phase of parity `parity` has completed (`try_wait.parity`).
    pub fn parity_done(&mut self, addr: u64, parity: u64) -> Result<bool, String> {
        Ok(self.get(addr)?.phase & 1 != parity & 1)
    }

    /// Whether the phase of `token` (from an arrive) has completed.
    pub fn token_done(&mut self, addr: u64, token: u64) -> Result<bool, String> {
        Ok(self.get(addr)?.phase > token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_needs_its_arrivals_and_its_bytes() {
        let mut m = MBarriers::default();
        m.init(64, 1).unwrap();
        assert!(!m.parity_done(64, 0).unwrap());
        // Producer: arrive and expect 32 KiB; the copies deliver them.
        assert_eq!(m.arrive(64, 1, false).unwrap(), 0);
        m.expect_tx(64, 32768).unwrap();
        // (arrive.expect_tx applies the bytes first; here the arrival came
        // first with nothing expected, which completes the phase.)
        assert!(m.parity_done(64, 0).unwrap());
        m.init(128, 1).unwrap();
        m.expect_tx(128, 32768).unwrap();
        m.arrive(128, 1, false).unwrap();
        assert!(!m.parity_done(128, 0).unwrap());
        m.complete_tx(128, 16384).unwrap();
        assert!(!m.parity_done(128, 0).unwrap());
        m.complete_tx(128, 16384).unwrap();
        assert!(m.parity_done(128, 0).unwrap());
        assert!(!m.parity_done(128, 1).unwrap());
        assert_eq!(m.phase(128).unwrap(), 1);
    }

    #[test]
    fn copies_may_land_before_their_expect_tx() {
        let mut m = MBarriers::default();
        m.init(0, 1).unwrap();
        m.complete_tx(0, 100).unwrap();
        assert!(!m.token_done(0, 0).unwrap());
        m.expect_tx(0, 100).unwrap();
        let t = m.arrive(0, 1, false).unwrap();
        assert!(m.token_done(0, t).unwrap());
    }

    #[test]
    fn misuse_is_an_error() {
        let mut m = MBarriers::default();
        assert!(m.arrive(8, 1, false).unwrap_err().contains("no mbarrier"));
        m.init(8, 2).unwrap();
        assert!(m
            .arrive(8, 3, false)
            .unwrap_err()
            .contains("expects 2 more"));
        assert!(m.init(16, 0).is_err());
        let e0 = m.epoch;
        m.arrive(8, 1, false).unwrap();
        assert!(m.epoch > e0);
    }
}
