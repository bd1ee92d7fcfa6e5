//! The A-fragment registers of wgmmas still in flight.
//!
//! A wgmma reads its A fragment asynchronously, so the registers stay taken
//! until a `wgmma.wait_group` retires its group, even past their last read
//! in program order. Triton's software-pipelined attention issues P*V,
//! commits it, and waits for it only after the next iteration's Q*K^T: the
//! P fragment (16 registers) is held beside the next S (32) and O (64),
//! 138 with the 26 a wgmma needs, over `.maxnreg 128`
//! (`tests/real/triton*/maxnreg128_attn_fwd_*`, C7512).

use fxhash::FxHashSet;
use ori_ir::{InstData, Opcode, VReg};

/// Groups followed one by one; older ones are merged (a loop that commits
/// without waiting would otherwise grow the state forever).
const MAX_GROUPS: usize = 8;

/// The fragments of the committed groups in flight (oldest first) and of
/// the wgmmas not committed yet, each sorted.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub(super) struct Pending {
    groups: Vec<Vec<VReg>>,
    open: Vec<VReg>,
}

fn union(into: &mut Vec<VReg>, from: &[VReg]) {
    into.extend_from_slice(from);
    into.sort_unstable();
    into.dedup();
}

impl Pending {
    /// The state after `d`: a wgmma adds its fragment (of `tracked`), a
    /// commit closes the open group, `wait_group N` keeps the N youngest.
    pub(super) fn step(&mut self, d: &InstData, tracked: &FxHashSet<VReg>) {
        if d.opcode == Opcode::WgmmaMmaAsync {
            let frag: Vec<VReg> = d
                .wgmma_fragment_regs()
                .into_iter()
                .filter(|r| tracked.contains(r))
                .collect();
            union(&mut self.open, &frag);
        } else if d.opcode.is_commit() {
            self.groups.push(std::mem::take(&mut self.open));
            if self.groups.len() > MAX_GROUPS {
                let oldest = self.groups.remove(0);
                union(&mut self.groups[0], &oldest);
            }
        } else if d.opcode.is_wait() {
            let keep = d.wait_count().map_or(0, |n| n.max(0) as usize);
            let drop = self.groups.len().saturating_sub(keep);
            self.groups.drain(..drop);
        }
    }

    /// Join with the state of another path: the one holding more
    /// registers. Paths that meet hold their fragments in turn, not
    /// together: CUTLASS's FMHA reaches its next Q*K^T wait from the masked
    /// and the unmasked loop, each with its own P*V in flight, and ptxas
    /// counts one (`cutlass_examples/fmha_fwd_e4m3_d256_pingpong`, clean).
    /// Ties go to the larger state in a total order, so the join does not
    /// depend on the order of the paths.
    pub(super) fn join(&mut self, other: &Pending) {
        if other.key() > self.key() {
            *self = other.clone();
        }
    }

    fn key(&self) -> (usize, &[Vec<VReg>], &[VReg]) {
        let held = self.groups.iter().map(Vec::len).sum::<usize>() + self.open.len();
        (held, &self.groups, &self.open)
    }

    /// Whether `self` holds more than `other` (the order of [`Pending::join`]).
    pub(super) fn exceeds(&self, other: &Pending) -> bool {
        self.key() > other.key()
    }

    /// Every register in flight.
    pub(super) fn regs(&self) -> impl Iterator<Item = VReg> + '_ {
        self.groups.iter().flatten().chain(&self.open).copied()
    }

    /// Whether nothing is in flight.
    pub(super) fn is_empty(&self) -> bool {
        self.open.is_empty() && self.groups.iter().all(Vec::is_empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_entity::EntityRef;

    fn regs(ks: &[usize]) -> Vec<VReg> {
        ks.iter().map(|&k| VReg::new(k)).collect()
    }

    #[test]
    fn paths_that_meet_hold_the_larger_state_not_both() {
        let one = Pending {
            groups: vec![regs(&[1, 2, 3, 4])],
            open: Vec::new(),
        };
        let other = Pending {
            groups: vec![regs(&[5, 6])],
            open: Vec::new(),
        };
        let (mut a, mut b) = (one.clone(), other.clone());
        a.join(&other);
        b.join(&one);
        assert_eq!((&a, &b), (&one, &one));
        assert_eq!(a.regs().count(), 4);
        assert!(one.exceeds(&other) && !other.exceeds(&one) && !one.exceeds(&one));
    }
}
