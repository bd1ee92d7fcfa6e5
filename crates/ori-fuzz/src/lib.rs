//! `ori-fuzz`: what the fuzz targets check, shared by `fuzz/` (cargo-fuzz,
//! libFuzzer, nightly) and `tests/fuzz_smoke.rs` (a bounded run on stable, in CI).
//!
//! Mutating bytes finds crashes in the front end but rarely gets a kernel
//! through it with its pipeline intact, so most of phases 85 and 87 would go
//! untested. [`pipeline::generate`] turns any byte string into a
//! *well-formed* PTX module with a random wgmma pipeline (shapes, accumulator
//! sets, fences, commits, waits, reads and writes of accumulators, loops,
//! branches, calls), so every input reaches the passes. [`check`] holds the
//! properties: no panic, no internal error, the verifier clean after every
//! pass, the independent hazard checker (`ori-hazard`) clean after phase 87
//! in ISA-strict mode and every hazard announced in ptxas mode, the fix-it
//! compiling again with nothing left to inject, and the `.ori` text form
//! round-tripping.

#![warn(missing_docs)]

pub mod check;
pub mod mutate;
pub mod pipeline;
