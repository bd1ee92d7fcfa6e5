//! `ori-gmma`: ptxas's two GMMA passes over the Ori IR.
//!
//! Phase 85 (`OriPropagateGmma`) finds each wgmma's accumulator register
//! sets and which are in flight where; phase 87 (`FixupGmmaSequence`)
//! legalizes the pipeline: it injects warpgroup arrives and waits where other
//! instructions touch in-flight registers, or serializes the pipeline with
//! ptxas's warnings. One file per concern, named for what it holds.

#![warn(missing_docs)]

pub mod accumulator_sets;
pub mod block_merging;
pub mod block_order;
pub mod dataflow;
pub mod dead_wgmma;
pub mod fixup;
pub mod fnv1a;
pub mod in_flight;
pub mod loops;
pub mod messages;
pub mod paired_conversions;
pub mod propagate_gmma;
pub mod register_budget;
pub mod report_order;
pub mod setmaxnreg;
pub mod uniformity;

pub use fixup::{FixupGmmaSequence, IsaStrictFixupGmmaSequence, RuleId};
pub use propagate_gmma::OriPropagateGmma;

/// The GMMA pipeline in ptxas's order.
pub fn pipeline() -> ori_ir::PassManager {
    let mut pm = ori_ir::PassManager::new();
    pm.add(Box::new(OriPropagateGmma));
    pm.add(Box::new(FixupGmmaSequence));
    pm
}

/// Phases 85 and 87, with phase 87 in ISA-strict mode (see
/// [`IsaStrictFixupGmmaSequence`]).
pub fn pipeline_isa_strict() -> ori_ir::PassManager {
    let mut pm = ori_ir::PassManager::new();
    pm.add(Box::new(OriPropagateGmma));
    pm.add(Box::new(IsaStrictFixupGmmaSequence));
    pm
}
