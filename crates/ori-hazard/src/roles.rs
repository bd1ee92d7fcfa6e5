//! Which registers each instruction touches, and how, in the ISA's terms.
//!
//! The rules speak of a wgmma's "accumulator register" (operand `d`) and its
//! "input register containing the fragments of matrix A" (operand `a` in the
//! register-A form); seed 004's syntax puts them first and second:
//! `wgmma.mma_async.sync.aligned.shape.dtype.atype.btype d, a, b-desc, ...`
//! where `a` is either a register vector or the 64-bit `a-desc`. Only those
//! two need fencing ("Only the accumulator register and the input registers
//! containing the fragments of matrix A require this ordering"); descriptors
//! and `scale-d` are ordinary reads. Everything else is a non-wgmma
//! instruction whose reads and writes are its operand roles (guard predicate
//! and address bases read). This module reads the IR directly and shares no
//! code with phases 85/87.

use ori_ir::{InstData, Opcode, Operand, VReg};

/// The registers of a wgmma the rules care about, and its shape.
#[derive(Clone, Debug, Default)]
pub struct WgmmaRegs {
    /// Operand `d`: read (unless `scale-d` is false) and written.
    pub acc: Vec<VReg>,
    /// Operand `a` when it is a register vector: read.
    pub afrag: Vec<VReg>,
    /// The `.shape` qualifier (`m64n128k16`): the ISA's same-shape exception
    /// for accumulator chains is keyed on it.
    pub shape: String,
}

fn is_shape(m: &str) -> bool {
    let Some(rest) = m.strip_prefix('m') else {
        return false;
    };
    let Some((mm, rest)) = rest.split_once('n') else {
        return false;
    };
    let Some((n, k)) = rest.split_once('k') else {
        return false;
    };
    [mm, n, k]
        .iter()
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Decode a wgmma's accumulator and A-fragment registers from its operands.
pub fn wgmma_regs(d: &InstData) -> WgmmaRegs {
    debug_assert_eq!(d.opcode, Opcode::WgmmaMmaAsync);
    let regs = |k: usize| -> Vec<VReg> {
        let mut v = Vec::new();
        if let Some(s) = d.slots.get(k) {
            s.op.for_each_reg(&mut |r| v.push(r));
        }
        v
    };
    let acc = regs(0);
    let afrag = match d.slots.get(1).map(|s| &s.op) {
        Some(Operand::Vector(_)) => regs(1),
        _ => Vec::new(), // a-desc: a descriptor, not a fragment
    };
    let shape = d
        .mods
        .iter()
        .find(|m| is_shape(m))
        .map(|m| m.to_string())
        .unwrap_or_default();
    WgmmaRegs { acc, afrag, shape }
}

/// What a non-wgmma instruction reads and writes.
///
/// Calls: PTX registers are local to the function that declares them, so a
/// callee cannot name the caller's accumulators or fragments; a `call`
/// touches exactly the registers among its own operands (return and argument
/// lists). What the callee does to the wgmma pipeline is not known here, so
/// the checker gives a call no credit: it is never a fence and never a wait.
/// A callee's `commit_group`s can only make the caller's groups older, which
/// the group ages already treat as lower bounds (see `state`).
pub fn accesses(d: &InstData) -> (impl Iterator<Item = VReg>, impl Iterator<Item = VReg>) {
    (d.uses().into_iter(), d.defs().into_iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_recognised() {
        assert!(is_shape("m64n8k16"));
        assert!(is_shape("m64n256k32"));
        assert!(!is_shape("mma_async"));
        assert!(!is_shape("m64n8"));
        assert!(!is_shape("m64nk16"));
    }
}
