//! Join-semilattices: the values a dataflow analysis keeps per program
//! point, after `rustc_mir_dataflow::lattice`.
//!
//! A join-semilattice has a partial order, a least element (`bottom`: what
//! no path has brought yet) and a least upper bound (`join`) for any two
//! elements. Joining is what happens where control flow merges, so its
//! laws are what make a fixpoint independent of the order in which blocks
//! are visited: `join` must be idempotent, commutative and associative, and
//! bottom its identity (`tests` checks the laws for every lattice here).
//! Each lattice says in its type what it answers: "on some path" (a
//! [`MaySet`] or [`MayFlag`]), "on every path" ([`MustFlag`]), "the one
//! value every path agrees on" ([`Flat`]), "the largest" ([`Max`]).

use cranelift_entity::EntityRef;
use std::marker::PhantomData;

/// A join-semilattice with a least element.
pub trait JoinSemiLattice: Eq {
    /// The least element: the value of a program point no path reached.
    fn bottom() -> Self;

    /// `self := self ⊔ other`; whether `self` changed.
    fn join(&mut self, other: &Self) -> bool;
}

/// A set of entities that holds on *some* path: join is union. A bit set
/// over the entity's index, so a join is a few word operations and
/// equality ignores the words no element reached.
#[derive(Clone, Debug)]
pub struct MaySet<E> {
    words: Vec<u64>,
    _entity: PhantomData<E>,
}

impl<E: EntityRef> MaySet<E> {
    /// Whether `e` is in the set.
    pub fn contains(&self, e: E) -> bool {
        let i = e.index();
        self.words
            .get(i / 64)
            .is_some_and(|w| w >> (i % 64) & 1 != 0)
    }

    /// Add `e`; whether it was new.
    pub fn insert(&mut self, e: E) -> bool {
        let i = e.index();
        if self.words.len() <= i / 64 {
            self.words.resize(i / 64 + 1, 0);
        }
        let (w, bit) = (&mut self.words[i / 64], 1u64 << (i % 64));
        let new = *w & bit == 0;
        *w |= bit;
        new
    }

    /// Remove `e`; whether it was there.
    pub fn remove(&mut self, e: E) -> bool {
        let i = e.index();
        let Some(w) = self.words.get_mut(i / 64) else {
            return false;
        };
        let bit = 1u64 << (i % 64);
        let had = *w & bit != 0;
        *w &= !bit;
        had
    }

    /// The elements, in index order.
    pub fn iter(&self) -> impl Iterator<Item = E> + '_ {
        self.words.iter().enumerate().flat_map(|(k, &w)| {
            (0..64)
                .filter(move |b| w >> b & 1 != 0)
                .map(move |b| E::new(k * 64 + b))
        })
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// The words up to the last one with an element.
    fn significant(&self) -> &[u64] {
        let n = self
            .words
            .iter()
            .rposition(|&w| w != 0)
            .map_or(0, |k| k + 1);
        &self.words[..n]
    }
}

impl<E: EntityRef> FromIterator<E> for MaySet<E> {
    fn from_iter<I: IntoIterator<Item = E>>(it: I) -> Self {
        let mut s = Self::bottom();
        for e in it {
            s.insert(e);
        }
        s
    }
}

impl<E: EntityRef> PartialEq for MaySet<E> {
    fn eq(&self, o: &Self) -> bool {
        self.significant() == o.significant()
    }
}

impl<E: EntityRef> Eq for MaySet<E> {}

impl<E: EntityRef> JoinSemiLattice for MaySet<E> {
    fn bottom() -> Self {
        MaySet {
            words: Vec::new(),
            _entity: PhantomData,
        }
    }

    fn join(&mut self, other: &Self) -> bool {
        let theirs = other.significant();
        if self.words.len() < theirs.len() {
            self.words.resize(theirs.len(), 0);
        }
        let mut changed = false;
        for (mine, &t) in self.words.iter_mut().zip(theirs) {
            changed |= t & !*mine != 0;
            *mine |= t;
        }
        changed
    }
}

/// A fact that holds on *some* path: join is `or`, bottom `false`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MayFlag(pub bool);

impl JoinSemiLattice for MayFlag {
    fn bottom() -> Self {
        MayFlag(false)
    }

    fn join(&mut self, other: &Self) -> bool {
        let changed = other.0 && !self.0;
        self.0 |= other.0;
        changed
    }
}

/// A fact that holds on *every* path: join is `and`, and bottom `true` (no
/// path yet contradicts it), so that joining in the first path gives that
/// path's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MustFlag(pub bool);

impl JoinSemiLattice for MustFlag {
    fn bottom() -> Self {
        MustFlag(true)
    }

    fn join(&mut self, other: &Self) -> bool {
        let changed = self.0 && !other.0;
        self.0 &= other.0;
        changed
    }
}

/// The flat lattice over `T`: no value yet, one value every path agrees
/// on, or `Top` where paths disagree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flat<T> {
    /// No path brought a value yet.
    Bottom,
    /// Every path brought this value.
    Elem(T),
    /// Paths disagree.
    Top,
}

impl<T: Clone + Eq> JoinSemiLattice for Flat<T> {
    fn bottom() -> Self {
        Flat::Bottom
    }

    fn join(&mut self, other: &Self) -> bool {
        let new = match (&*self, other) {
            (_, Flat::Bottom) | (Flat::Top, _) => return false,
            (Flat::Bottom, o) => o.clone(),
            (Flat::Elem(a), Flat::Elem(b)) if a == b => return false,
            _ => Flat::Top,
        };
        *self = new;
        true
    }
}

/// The largest value any path brought (a count, an age); bottom is
/// `T::default()`, which must be `T`'s least value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Max<T>(pub T);

impl<T: Ord + Copy + Default> JoinSemiLattice for Max<T> {
    fn bottom() -> Self {
        Max(T::default())
    }

    fn join(&mut self, other: &Self) -> bool {
        let changed = other.0 > self.0;
        if changed {
            self.0 = other.0;
        }
        changed
    }
}

/// The product of lattices, field by field: `join_fields!(self, other;
/// a, b, c)` joins each named field and says whether any changed. A
/// struct of lattice fields implements [`JoinSemiLattice`] with it, so
/// its join is the product's by construction.
#[macro_export]
macro_rules! join_fields {
    ($self:ident, $other:ident; $($field:ident),+ $(,)?) => {{
        let mut changed = false;
        $(changed |= $crate::dataflow::JoinSemiLattice::join(&mut $self.$field, &$other.$field);)+
        changed
    }};
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ori_ir::AccumSet;

    /// A deterministic generator (splitmix64): property tests need no
    /// crate, and a failure reproduces from its seed.
    pub(crate) struct Rng(pub u64);

    impl Rng {
        pub(crate) fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        pub(crate) fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    /// The join laws for `L` over values `gen` draws: bottom is the
    /// identity; join is idempotent, commutative and associative; `join`
    /// reports a change exactly when the value changed; the result is an
    /// upper bound of both.
    fn laws<L: JoinSemiLattice + Clone + std::fmt::Debug>(mut gen: impl FnMut(&mut Rng) -> L) {
        let mut rng = Rng(0x5EED);
        let join = |a: &L, b: &L| {
            let mut x = a.clone();
            let changed = x.join(b);
            assert_eq!(changed, x != *a, "{a:?} ⊔ {b:?}: change reported wrongly");
            x
        };
        for _ in 0..2000 {
            let (a, b, c) = (gen(&mut rng), gen(&mut rng), gen(&mut rng));
            assert_eq!(join(&L::bottom(), &a), a, "bottom ⊔ a");
            assert_eq!(join(&a, &L::bottom()), a, "a ⊔ bottom");
            assert_eq!(join(&a, &a), a, "idempotent");
            assert_eq!(join(&a, &b), join(&b, &a), "commutative");
            assert_eq!(
                join(&join(&a, &b), &c),
                join(&a, &join(&b, &c)),
                "associative"
            );
            let ab = join(&a, &b);
            assert_eq!(join(&ab, &a), ab, "an upper bound of a");
            assert_eq!(join(&ab, &b), ab, "an upper bound of b");
        }
    }

    #[test]
    fn may_sets_are_a_lattice() {
        laws(|r| {
            let n = r.below(6);
            (0..n)
                .map(|_| AccumSet::new(r.below(150)))
                .collect::<MaySet<AccumSet>>()
        });
    }

    #[test]
    fn flags_are_lattices() {
        laws(|r| MayFlag(r.below(2) == 1));
        laws(|r| MustFlag(r.below(2) == 1));
    }

    #[test]
    fn flat_and_max_are_lattices() {
        laws(|r| match r.below(4) {
            0 => Flat::Bottom,
            1 => Flat::Top,
            _ => Flat::Elem(r.below(3)),
        });
        laws(|r| Max(r.below(5) as u32));
    }

    #[derive(Clone, Debug, PartialEq, Eq)]
    struct Product {
        sets: MaySet<AccumSet>,
        must: MustFlag,
        shape: Flat<u32>,
        age: Max<u8>,
    }

    impl JoinSemiLattice for Product {
        fn bottom() -> Self {
            Product {
                sets: MaySet::bottom(),
                must: MustFlag::bottom(),
                shape: Flat::bottom(),
                age: Max::bottom(),
            }
        }

        fn join(&mut self, other: &Self) -> bool {
            join_fields!(self, other; sets, must, shape, age)
        }
    }

    #[test]
    fn a_product_of_lattices_is_a_lattice() {
        laws(|r| Product {
            sets: (0..r.below(3))
                .map(|_| AccumSet::new(r.below(70)))
                .collect(),
            must: MustFlag(r.below(2) == 1),
            shape: [Flat::Bottom, Flat::Top, Flat::Elem(7), Flat::Elem(9)][r.below(4)],
            age: Max(r.below(4) as u8),
        });
    }

    #[test]
    fn may_set_equality_ignores_empty_words() {
        let mut a: MaySet<AccumSet> = [AccumSet::new(3), AccumSet::new(130)].into_iter().collect();
        let b: MaySet<AccumSet> = [AccumSet::new(3)].into_iter().collect();
        assert!(a.remove(AccumSet::new(130)));
        assert_eq!(a, b);
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![AccumSet::new(3)]);
    }
}
