//! `ori-hazard`: an independent checker of the wgmma hazards phase 87 must remove.
//!
//! Phase 87 (FixupGmmaSequence) injects `_warpgroup.arrive`, `.commit_batch`
//! and `.wait` so that the wgmma pipeline obeys the PTX ISA. This crate
//! checks the result from the ISA text alone (seeds 000, 001, 004), reading
//! the IR through `ori-ir` and sharing no code with `ori-gmma`, so a bug in
//! the pass is not mirrored by the check. After phase 87, on every path:
//!
//! 1. no non-wgmma instruction touches an accumulator or A-fragment register
//!    of a wgmma that may still be in flight
//!    ([`HazardKind::AccumulatorAccessInFlight`],
//!    [`HazardKind::AFragmentWriteInFlight`]);
//! 2. every wgmma follows a fence since the function entry and since the last
//!    conflicting access to its registers ([`HazardKind::MissingFence`]);
//! 3. hence every accumulator read follows a wait that covers its group.
//!
//! `wgmma.fence` and `_warpgroup.arrive` are fences, `wgmma.commit_group` and
//! `_warpgroup.commit_batch` commits, `wgmma.wait_group N` and
//! `_warpgroup.wait N` waits (N is the wait's first operand,
//! `InstData::wait_count`). Two informational kinds
//! ([`HazardKind::AFragmentReadInFlight`], [`HazardKind::AFragmentReadUnfenced`])
//! cover plain reads of A fragments, undefined by the letter of the ISA but
//! accepted by ptxas 13.0.88; [`HazardKind::is_failing`] tells them apart.
//!
//! Scope: wgmma-to-wgmma accesses are governed by the fence rule only (the
//! fence "establishes an ordering between prior accesses to any warpgroup
//! registers and subsequent accesses to the same registers by a
//! wgmma.mma_async instruction"), so a fenced wgmma may follow an in-flight
//! one. Each function is checked on its own from an empty pipeline: PTX
//! registers are function-local, so a callee cannot touch the caller's
//! accumulators, and a call gets no fence or wait credit (see `roles`).
//! The `.aligned` uniformity rules and the async-proxy (shared memory)
//! fence are not register hazards and are not checked.

#![warn(missing_docs)]

pub mod bitset;
mod check;
pub mod hazard;
pub mod roles;
pub mod state;

pub use check::check_function;
pub use hazard::{Hazard, HazardKind};

use ori_ir::{FuncId, Module};

/// Check every function with a body; hazards per function, in module order.
pub fn check_module(m: &Module) -> Vec<(FuncId, Hazard)> {
    m.funcs
        .iter()
        .flat_map(|(id, f)| check_function(f).into_iter().map(move |h| (id, h)))
        .collect()
}
