//! A `wgmma.mma_async`'s operands by name.
//!
//! The PTX syntax is positional and its positions move: the register-A form
//! has one immediate fewer than the descriptor-A form, the sparse form puts
//! `sp-meta, sp-sel` before `scale-d`, and the tf32, FP8 and integer tables
//! drop the transposes or every immediate (seed 004's syntax tables). Code
//! that counted slots (`scale-d` at 3 or 5, a transpose at `scale-d + 3`)
//! had to repeat those tables; here they are decoded once, from the
//! instruction's [`WgmmaForm`], into named fields, as MLIR's NVGPU dialect
//! names `wgmma`'s operands.

use crate::instructions::{InstData, Opcode, Operand};
use crate::wgmma_form::{Family, WgmmaForm};
use crate::VReg;
use smallvec::SmallVec;

/// The A operand: a shared-memory descriptor, or a fragment in registers.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum WgmmaA<'a> {
    /// `a-desc`: a 64-bit matrix descriptor (a register or an immediate).
    Descriptor(&'a Operand),
    /// `{a0, a1, ...}`: the A fragment, each thread's 32-bit registers.
    Fragment(&'a [Operand]),
}

/// The operands of one `wgmma.mma_async`, by their ISA names.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct WgmmaOperands<'a> {
    /// The decoded modifiers (shape, types, sparsity).
    pub form: WgmmaForm,
    /// `d`: the accumulator registers, in the order written.
    pub d: &'a [Operand],
    /// `a-desc` or the A fragment.
    pub a: WgmmaA<'a>,
    /// `b-desc`: B's matrix descriptor.
    pub b_desc: &'a Operand,
    /// `sp-meta`: the sparsity metadata (a 32-bit register, or a vector of
    /// them: ptxas 13.0.88 takes both); sparse form only.
    pub sparse_metadata: Option<&'a Operand>,
    /// `sp-sel`: the sparsity selector immediate; sparse form only.
    pub sparse_selector: Option<&'a Operand>,
    /// `scale-d`: whether D is accumulated into (a predicate or an
    /// immediate 0/1).
    pub scale_d: &'a Operand,
    /// `imm-scale-a`: -1 negates A (f16, bf16, tf32 and FP8 tables).
    pub imm_scale_a: Option<&'a Operand>,
    /// `imm-scale-b`: -1 negates B (same tables).
    pub imm_scale_b: Option<&'a Operand>,
    /// `imm-trans-a`: 1 transposes A (f16/bf16 with a descriptor A only).
    pub imm_trans_a: Option<&'a Operand>,
    /// `imm-trans-b`: 1 transposes B (f16/bf16 only).
    pub imm_trans_b: Option<&'a Operand>,
}

/// Whether an optional operand is the integer immediate `v`.
fn imm_is(op: Option<&Operand>, v: i64) -> bool {
    matches!(op, Some(Operand::Imm(i)) if i.as_i64() == Some(v))
}

impl<'a> WgmmaOperands<'a> {
    /// The named operands of `d`, or `None` when it is not a wgmma, its
    /// modifiers do not decode, or its operand count is not its form's
    /// (the front end and the `.ori` verifier report those).
    pub fn of(d: &'a InstData) -> Option<WgmmaOperands<'a>> {
        if d.opcode != Opcode::WgmmaMmaAsync {
            return None;
        }
        let form = d.wgmma_form()?;
        let slots = &d.slots[..];
        let (Operand::Vector(dv), a) = (&slots.first()?.op, &slots.get(1)?.op) else {
            return None;
        };
        let a = match a {
            Operand::Vector(frag) => WgmmaA::Fragment(frag),
            other => WgmmaA::Descriptor(other),
        };
        let a_in_regs = matches!(a, WgmmaA::Fragment(_));
        if slots.len() != form.operand_count(a_in_regs) {
            return None;
        }
        // The count is the form's: every operand below is there.
        let mut rest = slots[2..].iter().map(|s| &s.op);
        let b_desc = rest.next()?;
        let (sparse_metadata, sparse_selector) = if form.sparse {
            (rest.next(), rest.next())
        } else {
            (None, None)
        };
        let scale_d = rest.next()?;
        let scaled = matches!(form.family, Family::Half | Family::Tf32 | Family::Fp8);
        let (imm_scale_a, imm_scale_b) = if scaled {
            (rest.next(), rest.next())
        } else {
            (None, None)
        };
        let half = form.family == Family::Half;
        let imm_trans_a = if half && !a_in_regs {
            rest.next()
        } else {
            None
        };
        let imm_trans_b = if half { rest.next() } else { None };
        Some(WgmmaOperands {
            form,
            d: dv,
            a,
            b_desc,
            sparse_metadata,
            sparse_selector,
            scale_d,
            imm_scale_a,
            imm_scale_b,
            imm_trans_a,
            imm_trans_b,
        })
    }

    /// Whether `scale-d` is the immediate 0: D is not read (`D = A*B`).
    pub fn scale_d_is_zero(&self) -> bool {
        imm_is(Some(self.scale_d), 0)
    }

    /// Whether A is negated (`imm-scale-a` is -1).
    pub fn negate_a(&self) -> bool {
        imm_is(self.imm_scale_a, -1)
    }

    /// Whether B is negated (`imm-scale-b` is -1).
    pub fn negate_b(&self) -> bool {
        imm_is(self.imm_scale_b, -1)
    }

    /// Whether A is transposed (`imm-trans-a` is 1).
    pub fn transpose_a(&self) -> bool {
        imm_is(self.imm_trans_a, 1)
    }

    /// Whether B is transposed (`imm-trans-b` is 1).
    pub fn transpose_b(&self) -> bool {
        imm_is(self.imm_trans_b, 1)
    }

    /// The sparsity selector's value, when it is an immediate.
    pub fn sparse_selector_value(&self) -> Option<i64> {
        match self.sparse_selector {
            Some(Operand::Imm(i)) => i.as_i64(),
            _ => None,
        }
    }

    /// Registers ptxas 13.0.88 orders like the A fragment: the fragment of
    /// the register-A form, and the sparse metadata (see
    /// [`InstData::wgmma_fragment_regs`]).
    pub fn fragment_regs(&self) -> SmallVec<[VReg; 4]> {
        let mut out = SmallVec::new();
        if let WgmmaA::Fragment(frag) = self.a {
            frag.iter()
                .for_each(|o| o.for_each_reg(&mut |r| out.push(r)));
        }
        if let Some(meta) = self.sparse_metadata {
            meta.for_each_reg(&mut |r| out.push(r));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instructions::{Imm, Slot};
    use cranelift_entity::EntityRef;

    fn reg(i: usize) -> Operand {
        Operand::Reg(VReg::new(i))
    }

    fn int(v: i64) -> Operand {
        Operand::Imm(Imm::Int(v))
    }

    fn wgmma(mods: &str, ops: Vec<Operand>) -> InstData {
        let mods: Vec<&str> = mods.split('.').collect();
        InstData::new("wgmma", &mods, ops.into_iter().map(Slot::use_), 1)
    }

    fn vector(regs: std::ops::Range<usize>) -> Operand {
        Operand::Vector(regs.map(reg).collect())
    }

    #[test]
    fn descriptor_a_half_names_every_immediate() {
        let d = wgmma(
            "mma_async.sync.aligned.m64n8k16.f32.f16.f16",
            vec![
                vector(0..4),
                reg(10),
                reg(11),
                int(1),
                int(-1),
                int(1),
                int(1),
                int(0),
            ],
        );
        let w = WgmmaOperands::of(&d).expect("well formed");
        assert_eq!((w.d.len(), w.b_desc, w.scale_d), (4, &reg(11), &int(1)));
        assert_eq!(w.a, WgmmaA::Descriptor(&reg(10)));
        assert!(w.negate_a() && !w.negate_b() && w.transpose_a() && !w.transpose_b());
        assert!(w.fragment_regs().is_empty() && w.sparse_metadata.is_none());
    }

    #[test]
    fn register_a_has_no_trans_a() {
        let d = wgmma(
            "mma_async.sync.aligned.m64n8k16.f32.bf16.bf16",
            vec![
                vector(0..4),
                vector(4..8),
                reg(11),
                int(0),
                int(1),
                int(1),
                int(1),
            ],
        );
        let w = WgmmaOperands::of(&d).expect("well formed");
        assert!(w.scale_d_is_zero() && w.imm_trans_a.is_none() && w.transpose_b());
        assert_eq!(w.fragment_regs().len(), 4);
    }

    #[test]
    fn sparse_puts_meta_and_selector_before_scale_d() {
        let d = wgmma(
            "mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16",
            vec![
                vector(0..4),
                reg(10),
                reg(11),
                reg(12),
                int(0),
                reg(13),
                int(1),
                int(1),
                int(0),
                int(0),
            ],
        );
        let w = WgmmaOperands::of(&d).expect("well formed");
        assert_eq!((w.sparse_metadata, w.scale_d), (Some(&reg(12)), &reg(13)));
        assert_eq!(w.sparse_selector_value(), Some(0));
        assert_eq!(w.fragment_regs().as_slice(), &[VReg::new(12)]);
    }

    #[test]
    fn integer_and_fp8_tables_drop_immediates() {
        let s8 = wgmma(
            "mma_async.sync.aligned.m64n8k32.s32.s8.s8",
            vec![vector(0..4), reg(10), reg(11), int(1)],
        );
        let w = WgmmaOperands::of(&s8).expect("well formed");
        assert!(w.imm_scale_a.is_none() && w.imm_trans_b.is_none());
        let e4m3 = wgmma(
            "mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3",
            vec![vector(0..4), reg(10), reg(11), int(1), int(1), int(-1)],
        );
        let w = WgmmaOperands::of(&e4m3).expect("well formed");
        assert!(w.negate_b() && w.imm_trans_a.is_none());
    }

    #[test]
    fn wrong_counts_and_other_instructions_have_no_names() {
        let short = wgmma(
            "mma_async.sync.aligned.m64n8k16.f32.f16.f16",
            vec![vector(0..4), reg(10), reg(11), int(1)],
        );
        assert!(WgmmaOperands::of(&short).is_none());
        let add = InstData::new("add", &["s32"], [Slot::def(reg(0))], 1);
        assert!(WgmmaOperands::of(&add).is_none());
    }
}
