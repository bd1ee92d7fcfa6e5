//! Diagnostics on the user's source.
//!
//! Phases 85 and 87 produce diagnostics as data (`ori_ir::Diagnostic`), each
//! culprit carrying the byte range of its PTX statement. `ori_ir::render`
//! prints them as ptxas does (to diff against the oracle); this crate holds
//! the renderers that read the source text: JSON lines (columns and the
//! user's `.loc` lines need the text), a human one that shows the PTX lines with a caret under the culprit and a
//! secondary span under the wgmma it conflicts with, as rustc does, and
//! SARIF 2.1.0 for code-scanning tools. [`Source`] indexes a file's lines
//! once, so rendering many diagnostics of one large kernel stays linear.

#![warn(missing_docs)]

pub mod human;
pub mod json;
pub mod sarif;
mod source;

pub use human::{render_human, Style};
pub use json::{render_json, JSON_VERSION};
pub use sarif::{sarif_log, RuleDocs, SarifFile};
pub use source::Source;
