//! `ori-lower`: ori's back ends.
//!
//! `sass` prints sm_90a SASS-like text in the layout of `cuobjdump -sass`
//! (the GMMA family exactly as ptxas writes it, so sync skeletons can be
//! compared with the real compiler's); `ptx` prints the input PTX back with
//! every decision of phases 85/87 made explicit, a fix-it for kernel authors;
//! `inline_calls` writes calls out as the callee's body for it, where a call
//! is what made ptxas serialize.

#![warn(missing_docs)]

pub mod inline_calls;
pub mod ptx;
pub mod ptx_text;
pub mod sass;
