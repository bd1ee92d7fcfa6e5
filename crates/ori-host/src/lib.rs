//! `ori-host`: the host backend. It runs a kernel of one warpgroup on the
//! CPU with `wgmma.mma_async`'s semantics, so that a kernel author (or a
//! test) can check what a wgmma pipeline computes without a GPU, before and
//! after ori's passes.
//!
//! * `wgmma_math`: what one wgmma computes, from the ISA's register-fragment
//!   layouts and shared-memory matrix descriptors (all canonical layouts,
//!   all swizzles, transposes, register A, every dense type).
//! * `exec`: the interpreter: 128 threads in lockstep, uniform control flow,
//!   wgmma asynchronous (results land at `wgmma.wait_group`), any access to
//!   a register of a wgmma in flight refused with an error.
//! * `memory`: global buffers and the CTA's shared memory.
//! * `numbers`: the element formats (f16, bf16, tf32, e4m3, e5m2, s8/u8).
//!
//! Checked against an H100: `tests/host/` holds kernels, inputs and the
//! GPU's outputs (`tests/host_backend.rs` compares).

#![warn(missing_docs)]

pub mod async_copy;
pub mod barriers;
pub mod bit_ops;
pub mod exec;
pub mod matrix_fragments;
pub mod mbarrier;
pub mod memory;
pub mod npy;
pub mod numbers;
pub mod proxy_fence;
pub mod reconvergence;
pub mod tensor_map;
pub mod warp_shuffle;
pub mod wgmma_math;

pub use exec::{run, run_with_progress, HostError, Launch, RunStats};
pub use memory::GlobalMemory;
