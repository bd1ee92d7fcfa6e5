//! Accumulator collection and the interned register-set table.
//!
//! `collect_accumulators` is the seed's `sub_ADA740`: the register operands
//! of an instruction that are not immediates and whose class is 6.
//! `AccumSetTable` interns each distinct set once, keyed by its FNV-1a hash
//! (collisions resolved by comparing members), so a wgmma's source and
//! destination sets become 24-bit indices packed into tagged 32-bit words:
//! `0x90000000 | idx` (source) and `0x10000000 | idx` (destination).

use crate::fnv1a::fnv1a_regs;
use cranelift_entity::EntityRef;
use hashbrown::HashTable;
use ori_ir::consts::OPERAND_TAG_IMMEDIATE;
use ori_ir::{AccumSet, AccumSetPool, Function, InstData, RegClass, VReg};

/// Which operands to collect from.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Access {
    /// Operands the instruction reads.
    Read,
    /// Operands the instruction writes.
    Written,
}

/// The class-6 registers of `d` that it reads or writes (seed `sub_ADA740`),
/// sorted and without duplicates, into `out` (cleared first: a walk over
/// many wgmmas reuses one buffer, as an m64n256 f32 accumulator's 128
/// registers are past any inline size). For a wgmma whose `scale-d` is the
/// immediate 0, the accumulator is not read.
pub fn collect_accumulators(f: &Function, d: &InstData, access: Access, out: &mut Vec<VReg>) {
    out.clear();
    let scale_d_zero =
        access == Access::Read && d.wgmma_operands().is_some_and(|w| w.scale_d_is_zero());
    for (k, s) in d.slots.iter().enumerate() {
        if s.op.ori_tag() == OPERAND_TAG_IMMEDIATE {
            continue;
        }
        let wanted = match access {
            Access::Read => s.role.uses() && !(k == 0 && scale_d_zero),
            Access::Written => s.role.defines(),
        };
        if wanted {
            s.op.for_each_reg(&mut |r| {
                if f.vregs[r].class == RegClass::Tensor {
                    out.push(r)
                }
            });
        }
    }
    out.sort_unstable();
    out.dedup();
}

/// Interned accumulator register sets.
///
/// Each set is in the table once, beside its FNV-1a hash (a rehash never
/// recomputes it): 8 bytes an entry. A map from hash to a vector of sets
/// took 24, and with a fresh set per wgmma (200k sets in the 1M-instruction
/// one-block bench kernel) its random probes left the cache: interning was
/// 27% of phase 85 there and grew faster than the input.
#[derive(Default, Debug)]
pub struct AccumSetTable {
    by_hash: HashTable<(u32, AccumSet)>,
    sets: AccumSetPool,
}

/// The table's 64-bit hash of a set's FNV-1a hash: the table reads its
/// control bytes from the top bits, which a 32-bit value leaves zero.
fn spread(h: u32) -> u64 {
    u64::from(h).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

impl AccumSetTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The set of these registers, made if new.
    pub fn intern(&mut self, set: &[VReg]) -> AccumSet {
        let h = fnv1a_regs(set.iter().map(|r| r.index() as u32));
        let sets = &self.sets;
        if let Some(&(_, i)) = self
            .by_hash
            .find(spread(h), |&(eh, i)| eh == h && &sets[i] == set)
        {
            return i;
        }
        let i = self.sets.push(set);
        self.by_hash
            .insert_unique(spread(h), (h, i), |&(eh, _)| spread(eh));
        i
    }

    /// The registers of a set.
    pub fn get(&self, set: AccumSet) -> Option<&[VReg]> {
        self.sets.get(set)
    }

    /// Number of distinct sets.
    pub fn len(&self) -> usize {
        self.sets.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// Consume the table, giving the sets.
    pub fn into_sets(self) -> AccumSetPool {
        self.sets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(ids: &[usize]) -> Vec<VReg> {
        ids.iter().map(|i| VReg::new(*i)).collect()
    }

    #[test]
    fn equal_sets_share_an_index() {
        let mut t = AccumSetTable::new();
        let a = t.intern(&v(&[1, 2, 3]));
        let b = t.intern(&v(&[4, 5]));
        assert_eq!(t.intern(&v(&[1, 2, 3])), a);
        assert_ne!(a, b);
        assert_eq!(t.len(), 2);
    }
}
