//! The `scale-d` predicates ptxas folds to a constant.
//!
//! Code generators pass a wgmma's `scale-d` as a predicate set just before
//! it, `setp.ne.b32 p, %r, 0` inside the inline-asm braces, from a register
//! that holds a constant (ThunderKittens: `mov.u32 %r97, 0` for the first K
//! step, `mov.u32 %r178, 1` for the others). ptxas propagates the constant,
//! so the first wgmma does not read its accumulators and they are not live
//! across the loop that recomputes them. ori folds the same two steps: a
//! predicate defined once, by a `setp` comparing two integers each an
//! immediate or a register defined once by an unguarded `mov` of one.

use cranelift_entity::SecondaryMap;
use ori_ir::{Function, Inst, Operand, VReg};

/// The one definition of each register defined exactly once.
pub(super) struct KnownValues {
    defs: SecondaryMap<VReg, (u32, Option<Inst>)>,
}

impl KnownValues {
    /// The definitions of `f`.
    pub(super) fn of(f: &Function) -> Self {
        let mut defs: SecondaryMap<VReg, (u32, Option<Inst>)> = SecondaryMap::new();
        for i in f.layout.all_insts() {
            f.insts[i].for_each_def(|r| {
                let e = &mut defs[r];
                *e = (e.0 + 1, Some(i));
            });
        }
        KnownValues { defs }
    }

    /// Whether wgmma `i`'s `scale-d` is 0, as an immediate or a folded
    /// predicate: it writes its accumulators without reading them.
    pub(super) fn scale_d_is_zero(&self, f: &Function, i: Inst) -> bool {
        f.insts[i]
            .wgmma_operands()
            .is_some_and(|w| self.predicate(f, w.scale_d) == Some(false))
    }

    fn single_def(&self, r: VReg) -> Option<Inst> {
        match self.defs[r] {
            (1, at) => at,
            _ => None,
        }
    }

    /// The value of an integer operand: an immediate, or a register whose
    /// one definition moves an immediate into it.
    fn integer(&self, f: &Function, op: &Operand) -> Option<i64> {
        let Operand::Reg(r) = op else {
            return imm(op);
        };
        let d = &f.insts[self.single_def(*r)?];
        if &*d.name != "mov" || d.guard.is_some() || d.slots.len() != 2 {
            return None;
        }
        imm(&d.slots[1].op)
    }

    /// The value of a predicate operand, if folded.
    fn predicate(&self, f: &Function, op: &Operand) -> Option<bool> {
        let (r, negated) = match op {
            Operand::Reg(r) => (*r, false),
            Operand::NotReg(r) => (*r, true),
            other => return imm(other).map(|v| v != 0),
        };
        let d = &f.insts[self.single_def(r)?];
        if &*d.name != "setp" || d.guard.is_some() || d.slots.len() != 3 {
            return None;
        }
        let a = self.integer(f, &d.slots[1].op)?;
        let b = self.integer(f, &d.slots[2].op)?;
        let unsigned = d
            .mods
            .iter()
            .any(|m| m.starts_with('u') || m.starts_with('b'));
        let (ua, ub) = (a as u64, b as u64);
        let holds = match d.mods.first().map(|m| &**m)? {
            "eq" => a == b,
            "ne" => a != b,
            "lt" if !unsigned => a < b,
            "le" if !unsigned => a <= b,
            "gt" if !unsigned => a > b,
            "ge" if !unsigned => a >= b,
            "lt" | "lo" => ua < ub,
            "le" | "ls" => ua <= ub,
            "gt" | "hi" => ua > ub,
            "ge" | "hs" => ua >= ub,
            _ => return None,
        };
        Some(holds != negated)
    }
}

fn imm(op: &Operand) -> Option<i64> {
    match op {
        Operand::Imm(n) => n.as_i64(),
        _ => None,
    }
}
