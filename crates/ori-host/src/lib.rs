//! `ori-host`: the host backend behind `ori run`. It runs a kernel's whole
//! grid on the CPU with the GPU's semantics (wgmma asynchronous, TMA,
//! mbarriers, warpgroups and barriers), so that a kernel author (or a test)
//! can get the GPU's answer without a GPU, before and after ori's passes,
//! with every hazard the sanitizer finds on the way named by its two lines.
//!
//! * `exec`: the interpreter and scheduler: clusters of CTAs in parallel,
//!   in a cluster one warpgroup (128 threads in lockstep) at a time until a
//!   barrier, an mbarrier wait or its exit (or, with `Schedule::Random`,
//!   seeded interleavings); `exec::cluster`: the CTAs of a
//!   cluster, distributed shared memory, the cluster barrier, multicast.
//! * `wgmma_math`: what one wgmma computes, from the ISA's register-fragment
//!   layouts and shared-memory matrix descriptors; `mma_arith`: the tensor
//!   core's own truncating sum (found by probing an H100), which
//!   `wgmma_fused` applies to a wgmma's operands (`wgmma_exact`: its
//!   shortcut where f32 holds every partial sum).
//! * `reconvergence`: where divergent threads meet again.
//! * `barriers`, `mbarrier`: the CTA's named barriers and its mbarriers.
//! * `async_copy`, `tensor_map`: `cp.async` groups; TMA and the tensor-map
//!   layout (established on an H100's driver).
//! * `matrix_fragments`, `warp_shuffle`, `bit_ops`, `numbers`: `ldmatrix`,
//!   `shfl.sync`, `bfe`/`prmt`/`lop3`, the element formats.
//! * `proxy_fence`, `tma_fill`, `races`, `race_shadow`: the sanitizer's checks (async
//!   proxy fences, TMA readiness and mbarrier parity, data races on shared
//!   memory between warps with vector clocks); `error`: what a run reports
//!   as data, its hazards (each site once, the run going on) and the typed
//!   fault that stops it (`docs/sanitizer.md` lists both).
//! * `memory`, `npy`: global buffers, shared memory, `.npy` files.
//!
//! Checked against an H100: `tests/host/` holds kernels, inputs and the
//! GPU's outputs (`tests/host_backend.rs`, `tests/host_triton.rs` compare).

#![warn(missing_docs)]

pub mod async_copy;
pub mod barriers;
pub mod bit_ops;
pub mod error;
pub mod exec;
pub mod granules;
pub mod matrix_fragments;
pub mod mbarrier;
pub mod memory;
pub mod mma_arith;
#[cfg(test)]
mod mma_recorded;
pub mod mufu;
pub mod npy;
pub mod numbers;
pub mod proxy_fence;
pub mod race_shadow;
pub mod races;
pub mod reconvergence;
pub mod tensor_map;
pub mod tma_fill;
pub mod warp_shuffle;
pub mod wgmma_exact;
pub mod wgmma_fused;
pub mod wgmma_math;

pub use error::{Fault, Hazard, HazardKind, HostError};
pub use exec::{run, run_with_progress, Launch, RunStats, Schedule};
pub use memory::GlobalMemory;
