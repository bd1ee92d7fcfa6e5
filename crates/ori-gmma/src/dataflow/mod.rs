//! Dataflow analysis on lattices, after `rustc_mir_dataflow`: the lattice
//! types a phase-87-style analysis is built of (`lattice`), and a generic
//! forward analysis iterated to its fixpoint with a cursor over the
//! results (`engine`).
//!
//! Phase 87's walk state (`fixup::state`) is a product of such lattices
//! joined field by field by hand; this module states the lattice laws and
//! the order independence they buy as tested properties, so that an
//! analysis built on it gives one answer whatever order its blocks are
//! visited in.

mod engine;
mod lattice;

pub use engine::{iterate_in_order, iterate_to_fixpoint, Analysis, Results, ResultsCursor};
pub use lattice::{Flat, JoinSemiLattice, Max, MayFlag, MaySet, MustFlag};

#[cfg(test)]
pub(crate) use engine::tests as engine_tests;
#[cfg(test)]
pub(crate) use lattice::tests as lattice_tests;
