//! Entity references: small `u32` handles into a function's tables.
//!
//! As in Cranelift, an instruction, block or virtual register is named by an
//! index, never by a pointer, so the IR can be cloned, compared and edited
//! without lifetimes; data lives in `PrimaryMap` / `SecondaryMap` tables.

use cranelift_entity::entity_impl;

/// A basic block of a function.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Block(u32);
entity_impl!(Block, "bb");

/// An instruction of a function.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Inst(u32);
entity_impl!(Inst, "inst");

/// A virtual register (a PTX `.reg` variable).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VReg(u32);
entity_impl!(VReg, "v");

/// A function of a module.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(u32);
entity_impl!(FuncId, "fn");

/// An accumulator register set of a function (phase 85): the registers a
/// wgmma reads or writes as D, interned once per distinct set. ptxas packs
/// its index into a tagged word (`0x90000000 | idx` for the set a wgmma
/// reads, `0x10000000 | idx` for the one it writes, seed 003); ori keeps the
/// index and computes the words where they are printed
/// ([`crate::AccumSets::src_word`]).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AccumSet(u32);
entity_impl!(AccumSet, "set");

/// A secondary map holding a (default) value for each of the first `n`
/// entities, allocated and filled once. Filling a map entity by entity
/// resizes it at every new index, a call and a fill each: 3% of the
/// instructions `ori compile` retires on a small Triton kernel went there.
pub fn sized_map<K, V>(n: usize) -> cranelift_entity::SecondaryMap<K, V>
where
    K: cranelift_entity::EntityRef,
    V: Clone + Default,
{
    let mut m = cranelift_entity::SecondaryMap::with_capacity(n);
    m.resize(n);
    m
}
