//! A fixed-size dense bitset over small indices.
//!
//! The checker's states are sets of wgmma instructions (open, and one per
//! committed group) numbered densely per function; a word-array bitset makes
//! every join and every "is any of these in flight" question a few word
//! operations, which keeps each fixpoint round linear in the function size.

/// A set of indices below a fixed capacity.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    /// An empty set able to hold indices `0..len`.
    pub fn new(len: usize) -> Self {
        BitSet {
            words: vec![0; len.div_ceil(64)],
        }
    }

    /// Add `k`; returns whether it was absent.
    pub fn insert(&mut self, k: usize) -> bool {
        let (w, b) = (k / 64, 1u64 << (k % 64));
        let was = self.words[w] & b != 0;
        self.words[w] |= b;
        !was
    }

    /// Whether `k` is in the set.
    pub fn contains(&self, k: usize) -> bool {
        self.words
            .get(k / 64)
            .is_some_and(|w| w & (1u64 << (k % 64)) != 0)
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|w| *w == 0)
    }

    /// Remove every element.
    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }

    /// `self |= other`; returns whether `self` grew.
    pub fn union_with(&mut self, other: &BitSet) -> bool {
        let mut changed = false;
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            let n = *a | *b;
            changed |= n != *a;
            *a = n;
        }
        changed
    }

    /// The smallest element of `self & other`, if any.
    pub fn first_common(&self, other: &BitSet) -> Option<usize> {
        self.words
            .iter()
            .zip(&other.words)
            .enumerate()
            .find_map(|(k, (a, b))| {
                let x = a & b;
                (x != 0).then(|| k * 64 + x.trailing_zeros() as usize)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_and_intersection() {
        let mut a = BitSet::new(130);
        let mut b = BitSet::new(130);
        assert!(a.is_empty());
        assert!(a.insert(3));
        assert!(!a.insert(3));
        b.insert(129);
        assert_eq!(a.first_common(&b), None);
        assert!(a.union_with(&b));
        assert!(!a.union_with(&b));
        assert!(a.contains(129) && a.contains(3) && !a.contains(4));
        assert_eq!(a.first_common(&b), Some(129));
        a.clear();
        assert!(a.is_empty());
    }
}
