//! A set of registers that is small almost everywhere and huge in a few
//! places: the walk state's registers touched since the last arrive.
//!
//! Phase 87 keeps three walk states per block (the first-pass entry, the
//! converged entry and the exit, `solve`), and almost every one holds a few
//! registers or none. As hash sets they were the biggest single cost of
//! the pass on a kernel of a million instructions: about 820,000 table
//! clones, 123 MB at the peak, and a fifth of the pass's time in hashing,
//! rehashing and freeing. Kept inline and scanned while small, and a hash
//! set only past [`INLINE`] registers (a straight-line block of thousands
//! of touched registers stays linear), a state costs no allocation in the
//! common case. Equality is set equality whatever the representation.

use fxhash::FxHashSet;
use ori_ir::VReg;
use smallvec::SmallVec;

/// Registers kept inline, and scanned linearly, before the set becomes a
/// hash set.
const INLINE: usize = 8;

/// A set of virtual registers.
#[derive(Debug)]
pub(super) enum RegSet {
    /// At most [`INLINE`] registers, unordered, without duplicates.
    Small(SmallVec<[VReg; INLINE]>),
    /// More.
    Large(FxHashSet<VReg>),
}

impl Clone for RegSet {
    fn clone(&self) -> RegSet {
        match self {
            // One `memcpy` (`SmallVec`'s `clone` copies one by one).
            RegSet::Small(v) => RegSet::Small(SmallVec::from_slice(v)),
            RegSet::Large(h) => RegSet::Large(h.clone()),
        }
    }
}

impl Default for RegSet {
    fn default() -> RegSet {
        RegSet::Small(SmallVec::new())
    }
}

impl RegSet {
    /// Add `r`; whether it was new.
    pub(super) fn insert(&mut self, r: VReg) -> bool {
        match self {
            RegSet::Small(v) => {
                if v.contains(&r) {
                    return false;
                }
                if v.len() < INLINE {
                    v.push(r);
                } else {
                    let mut h: FxHashSet<VReg> = v.iter().copied().collect();
                    h.insert(r);
                    *self = RegSet::Large(h);
                }
                true
            }
            RegSet::Large(h) => h.insert(r),
        }
    }

    /// Whether `r` is in the set.
    pub(super) fn contains(&self, r: &VReg) -> bool {
        match self {
            RegSet::Small(v) => v.contains(r),
            RegSet::Large(h) => h.contains(r),
        }
    }

    /// Empty the set (back to the inline form).
    pub(super) fn clear(&mut self) {
        *self = RegSet::default();
    }

    /// Keep the registers `keep` accepts.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&VReg) -> bool) {
        match self {
            RegSet::Small(v) => v.retain(|r| keep(r)),
            RegSet::Large(h) => {
                h.retain(|r| keep(r));
                if h.len() <= INLINE {
                    *self = RegSet::Small(h.iter().copied().collect());
                }
            }
        }
    }

    /// Number of registers.
    pub(super) fn len(&self) -> usize {
        match self {
            RegSet::Small(v) => v.len(),
            RegSet::Large(h) => h.len(),
        }
    }

    /// The registers, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &VReg> {
        let (small, large) = match self {
            RegSet::Small(v) => (Some(v.iter()), None),
            RegSet::Large(h) => (None, Some(h.iter())),
        };
        small
            .into_iter()
            .flatten()
            .chain(large.into_iter().flatten())
    }
}

impl Extend<VReg> for RegSet {
    fn extend<I: IntoIterator<Item = VReg>>(&mut self, regs: I) {
        for r in regs {
            self.insert(r);
        }
    }
}

impl PartialEq for RegSet {
    fn eq(&self, o: &RegSet) -> bool {
        self.len() == o.len() && self.iter().all(|r| o.contains(r))
    }
}

impl Eq for RegSet {}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_entity::EntityRef;

    fn r(n: usize) -> VReg {
        VReg::new(n)
    }

    /// The set behaves as a hash set through both forms and back.
    #[test]
    fn agrees_with_a_hash_set() {
        let mut s = RegSet::default();
        let mut h = FxHashSet::default();
        // A deterministic walk of inserts, with repeats, past the inline size.
        for k in 0..200usize {
            let x = r((k * 37) % 29);
            assert_eq!(s.insert(x), h.insert(x), "insert {k}");
            assert_eq!(s.len(), h.len());
            assert!(s.contains(&x));
        }
        assert!(matches!(s, RegSet::Large(_)));
        let mut items: Vec<VReg> = s.iter().copied().collect();
        items.sort();
        let mut want: Vec<VReg> = h.iter().copied().collect();
        want.sort();
        assert_eq!(items, want);
        s.retain(|x| x.index() < 5);
        h.retain(|x| x.index() < 5);
        assert!(matches!(s, RegSet::Small(_)));
        assert_eq!(s.len(), h.len());
        assert!((0..29).all(|k| s.contains(&r(k)) == h.contains(&r(k))));
        s.clear();
        assert_eq!(s.len(), 0);
        assert!(!s.contains(&r(1)));
    }

    /// Equality ignores order and form.
    #[test]
    fn equality_is_set_equality() {
        let mut a = RegSet::default();
        let mut b = RegSet::default();
        a.extend([r(1), r(2), r(3)]);
        b.extend([r(3), r(1), r(2)]);
        assert_eq!(a, b);
        let big: Vec<VReg> = (0..20).map(r).collect();
        let mut c = RegSet::default();
        c.extend(big.iter().copied());
        c.retain(|x| [1, 2, 3].contains(&x.index()));
        assert_eq!(a, c);
        b.insert(r(4));
        assert_ne!(a, b);
    }
}
