//! The accumulator register sets of a function, in one pool.
//!
//! Phase 85 names each distinct set of class-6 registers a wgmma reads or
//! writes with an [`AccumSet`]. A set of an m64nNk16 f32 accumulator holds
//! N/2 registers (up to 128), so a small inline vector per set would spill
//! to the heap for nearly every real set: at a million instructions that
//! was one allocation (and one free) per wgmma. The pool keeps every set's
//! registers back to back in one vector, the way Cranelift's `ListPool`
//! keeps value lists; a set is its range there.

use crate::entities::{AccumSet, VReg};
use cranelift_entity::PrimaryMap;

/// Every accumulator set of a function, each sorted by register.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct AccumSetPool {
    /// All sets' registers, back to back.
    regs: Vec<VReg>,
    /// Where each set ends in `regs` (it starts where the previous ends).
    ends: PrimaryMap<AccumSet, u32>,
}

impl AccumSetPool {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a set (its registers as given) and name it.
    pub fn push(&mut self, set: &[VReg]) -> AccumSet {
        self.regs.extend_from_slice(set);
        self.ends.push(self.regs.len() as u32)
    }

    /// The registers of `set`, if it is one of this pool's.
    pub fn get(&self, set: AccumSet) -> Option<&[VReg]> {
        let end = *self.ends.get(set)? as usize;
        let start = match set.as_u32() {
            0 => 0,
            k => self.ends[AccumSet::from_u32(k - 1)] as usize,
        };
        Some(&self.regs[start..end])
    }

    /// Number of sets.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the pool holds no set.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Every set with its name, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = (AccumSet, &[VReg])> + '_ {
        let mut start = 0usize;
        self.ends.iter().map(move |(k, &end)| {
            let regs = &self.regs[start..end as usize];
            start = end as usize;
            (k, regs)
        })
    }
}

impl std::ops::Index<AccumSet> for AccumSetPool {
    type Output = [VReg];

    /// The registers of `set`; panics if the pool has no such set.
    fn index(&self, set: AccumSet) -> &[VReg] {
        self.get(set).expect("an accumulator set of this pool")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_entity::EntityRef;

    #[test]
    fn sets_keep_their_registers_and_order() {
        let v = |ids: &[usize]| ids.iter().map(|&i| VReg::new(i)).collect::<Vec<_>>();
        let mut p = AccumSetPool::new();
        let a = p.push(&v(&[1, 2, 3]));
        let e = p.push(&[]);
        let b = p.push(&v(&[7]));
        assert_eq!(p.len(), 3);
        assert_eq!(&p[a], v(&[1, 2, 3]).as_slice());
        assert!(p[e].is_empty());
        assert_eq!(&p[b], v(&[7]).as_slice());
        assert_eq!(p.get(AccumSet::new(3)), None);
        let all: Vec<_> = p.iter().map(|(k, r)| (k, r.len())).collect();
        assert_eq!(all, vec![(a, 3), (e, 0), (b, 1)]);
    }
}
