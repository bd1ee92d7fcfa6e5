//! `ori-ir`: an Ori-like IR for the GMMA passes, modelled on Cranelift.
//!
//! ptxas's phases 85 and 87 work on Ori, its internal IR: instructions with
//! numbered opcodes, operands tagged with register classes, basic blocks.
//! This crate is ori's version of it — entity handles into `PrimaryMap`
//! tables, a `Layout` for order, a CFG with dominators, a text form that
//! round-trips, a verifier, diagnostics as data and a pass manager — and the
//! home of every constant shared with ptxas (`consts`).

#![warn(missing_docs)]

pub mod accum_set_pool;
pub mod builder;
pub mod cfg;
pub mod consts;
pub mod diagnostics;
pub mod entities;
pub mod function;
pub mod instructions;
mod interner;
pub mod layout;
pub mod modifiers;
pub mod parse;
pub mod pass;
pub mod post_dominators;
pub mod register_names;
pub mod render;
pub mod serialization;
pub mod source_map;
pub mod symbol;
pub mod verify;
pub mod wgmma_form;
pub mod wgmma_operands;
pub mod write;

pub use accum_set_pool::AccumSetPool;
pub use cfg::{ControlFlowGraph, DominatorTree};
pub use diagnostics::{Diagnostic, Note, Severity};
pub use entities::{sized_map, AccumSet, Block, FuncId, Inst, VReg};
pub use function::{
    BlockData, FuncKind, Function, GmmaFacts, Module, NameHasher, NameMap, NameSet, Param,
    RegClass, RuleUse, Serialization, VRegData,
};
pub use instructions::{
    AccumSets, AddrBase, Guard, Imm, InstData, Opcode, Operand, Role, Slot, Slots,
};
pub use layout::Layout;
pub use modifiers::ModList;
pub use parse::{parse_module, parse_module_verified, TextError};
pub use pass::{DumpOptions, FuncFacts, ModuleInfo, Pass, PassContext, PassManager, PipelineError};
pub use post_dominators::PostDominatorTree;
pub use register_names::RegisterNames;
pub use serialization::SerializationCode;
pub use source_map::{Origin, SourceMap};
pub use symbol::Symbol;
pub use verify::{verify_function, VerifierError};
pub use wgmma_form::{ElemType, Family, FormError, WgmmaForm};
pub use wgmma_operands::{WgmmaA, WgmmaOperands};
pub use write::{function_to_string, write_module};
