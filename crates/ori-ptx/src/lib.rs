//! `ori-ptx`: the PTX front end of ori.
//!
//! This crate turns PTX text (ISA 8.x, as emitted by nvcc and Triton) into a
//! documented syntax tree ([`ast`]) with source spans, reporting malformed
//! input with ptxas-compatible diagnostics ([`diag`]). The pipeline is
//! [`lexer::Lexer`] -> [`parser`] -> [`ast::Module`]; lowering of the AST to
//! ori's IR lives in a separate module written on top of this one.
//!
//! ```
//! let src = ".version 8.5\n.target sm_90a\n.address_size 64\n\
//!            .visible .entry k() { ret; }\n";
//! let m = ori_ptx::parse("k.ptx", src).unwrap();
//! assert_eq!(m.target, vec!["sm_90a".to_string()]);
//! ```

#![warn(missing_docs)]

pub mod ast;
pub mod diag;
pub mod directive_warnings;
pub mod isa;
pub mod lexer;
pub mod parser;
pub mod source_map;
pub mod target;
mod token_window;

pub use ast::*;
pub use diag::{Diag, Severity, Span};
pub use parser::{parse, parse_with_diags};
pub use target::{check_arch, check_arch_value, check_version_target, KNOWN_ARCHS};
pub mod lower;
