//! The common integer instructions decoded once per run and executed for
//! every active thread of a warpgroup in one loop.
//!
//! Most of what a real kernel runs between its wgmma is address and index
//! arithmetic: `add.s32`, `mov.b32`, `cvt.u64.u32`, `selp`, `or.b64`,
//! `setp.lt.s32`, `bfe.u32` (about 80% of the warpgroup steps of a Triton
//! matmul). The
//! per-thread interpreter (`alu`) re-reads an instruction's mnemonic,
//! modifiers and operand kinds for each of its 128 threads; here that is
//! done once, before the first CTA starts, into a [`LaneOp`] whose
//! operands are register numbers and immediates, and each step runs down
//! the register rows of [`LaneRegs`]. What an operation computes comes from
//! `int_arith`, which the interpreter calls too. An instruction this does
//! not decode (floats, memory, anything with a special register or a
//! vector operand) takes the interpreter's path unchanged.

use super::alu::AluShape;
use super::int_arith::{int_compare, int_convert, int_op, IntCmp, IntOp, IntShape};
use super::lane_regs::LaneRegs;
use super::{bits_of, mask, Machine, Res};
use crate::bit_ops;
use crate::reconvergence::LaneMask;
use cranelift_entity::EntityRef;
use ori_ir::{Function, Imm, InstData, Opcode, Operand, VReg};
use smallvec::SmallVec;

/// A source operand, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Src {
    Reg(u32),
    /// `!%p`: 1 where the predicate is false.
    NotReg(u32),
    Imm(u64),
}

impl Src {
    fn of(op: &Operand) -> Option<Src> {
        Some(match op {
            Operand::Reg(r) => Src::Reg(r.index() as u32),
            Operand::NotReg(r) => Src::NotReg(r.index() as u32),
            Operand::Imm(Imm::Int(v)) => Src::Imm(*v as u64),
            Operand::Imm(Imm::Hex(v)) | Operand::Imm(Imm::F64(v)) => Src::Imm(*v),
            Operand::Imm(Imm::F32(v)) => Src::Imm(u64::from(*v)),
            _ => return None,
        })
    }

    #[inline]
    fn get(self, regs: &LaneRegs, t: usize) -> u64 {
        match self {
            Src::Reg(r) => regs.lane(r, t),
            Src::NotReg(r) => u64::from(regs.lane(r, t) & 1 == 0),
            Src::Imm(v) => v,
        }
    }
}

/// Where the result goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dst {
    Reg(u32),
    /// `setp`'s `p|q`: the result and its negation.
    Pair(u32, u32),
    /// `_`
    Sink,
}

impl Dst {
    fn of(op: &Operand) -> Option<Dst> {
        Some(match op {
            Operand::Reg(r) => Dst::Reg(r.index() as u32),
            Operand::PredPair(p, q) => Dst::Pair(p.index() as u32, q.index() as u32),
            Operand::Sink => Dst::Sink,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int(IntOp, IntShape),
    Setp(IntCmp, u32, bool),
    /// `cvt` between integer types: from bits, signed, to bits.
    Convert(u32, bool, u32),
    /// `bfe`: bits, signed.
    Bfe(u32, bool),
}

/// One instruction, decoded for [`Machine::run_lane_op`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LaneOp {
    kind: Kind,
    dst: Dst,
    /// The destination's width (the mask of what is written).
    out_bits: u32,
    srcs: [Src; 3],
    /// Every register it reads or writes (the in-flight check).
    regs: SmallVec<[VReg; 6]>,
}

/// Whether a type names an integer or bits (`s32`, `u64`, `b16`, `pred`;
/// not `bf16`).
fn integer_type(ty: &str) -> bool {
    ty == "pred"
        || ty.starts_with('s')
        || ty.starts_with('u')
        || (ty.starts_with('b') && ty[1..].starts_with(|c: char| c.is_ascii_digit()))
}

impl LaneOp {
    /// Every instruction of `f` decoded, indexed by `Inst`; `None` where
    /// the interpreter runs it.
    pub(super) fn decode_function(f: &Function) -> Vec<Option<LaneOp>> {
        f.insts.values().map(LaneOp::decode).collect()
    }

    /// `d` decoded, if it is one of the instructions this path runs
    /// exactly as `alu` would.
    pub(super) fn decode(d: &InstData) -> Option<LaneOp> {
        if d.opcode != Opcode::Generic {
            return None;
        }
        let shape = AluShape::of(d);
        let name: &str = &d.name;
        let dst = Dst::of(&d.slots.first()?.op)?;
        let src = |k: usize| Src::of(&d.slots.get(k)?.op);
        let kind = match name {
            "setp" => {
                let [cmp, ty] = &d.mods[..] else {
                    return None;
                };
                if !integer_type(ty) || d.slots.len() != 3 {
                    return None;
                }
                Kind::Setp(IntCmp::of(cmp)?, shape.bits, ty.starts_with('s'))
            }
            "cvt" => {
                let [to, from] = &d.mods[..] else {
                    return None;
                };
                if !integer_type(to) || !integer_type(from) || d.slots.len() != 2 {
                    return None;
                }
                Kind::Convert(bits_of(from), from.starts_with('s'), bits_of(to))
            }
            "bfe" => {
                if !integer_type(shape.ty) || d.slots.len() != 4 {
                    return None;
                }
                Kind::Bfe(shape.bits, shape.ty.starts_with('s'))
            }
            _ => {
                let op = IntOp::of(name)?;
                // `alu` sends these types to its float and half-precision
                // paths first; `mov` and `selp` have none.
                if !integer_type(shape.ty) && !matches!(op, IntOp::Mov | IntOp::Selp) {
                    return None;
                }
                if d.slots.len() != op.arity() + 1 {
                    return None;
                }
                Kind::Int(
                    op,
                    IntShape {
                        bits: shape.bits,
                        signed: shape.ty.starts_with('s'),
                        wide: shape.wide,
                        hi: shape.hi,
                    },
                )
            }
        };
        if matches!(dst, Dst::Pair(..)) && !matches!(kind, Kind::Setp(..)) {
            return None;
        }
        let n = d.slots.len() - 1;
        let mut srcs = [Src::Imm(0); 3];
        for (k, s) in srcs.iter_mut().enumerate().take(n) {
            *s = src(k + 1)?;
        }
        let mut regs: SmallVec<[VReg; 6]> = d.uses().into_iter().collect();
        regs.extend(d.defs());
        Some(LaneOp {
            kind,
            dst,
            out_bits: shape.out_bits,
            srcs,
            regs,
        })
    }
}

impl Machine<'_> {
    /// The threads of the running frame whose guard holds.
    fn guarded_lanes(&self, d: &InstData) -> LaneMask {
        let lanes = self.wg.lanes();
        match d.guard {
            None => lanes,
            Some(g) => {
                let mut on: LaneMask = 0;
                for t in 0..super::WARPGROUP {
                    if (self.wg.regs.get(t, g.reg) & 1 == 1) != g.negated {
                        on |= 1 << t;
                    }
                }
                lanes & on
            }
        }
    }

    /// Run decoded instruction `op` (of `d`) for every active thread.
    pub(super) fn run_lane_op(&mut self, d: &InstData, op: &LaneOp) -> Res<()> {
        if !self.wg.in_flight.is_empty()
            && op.regs.iter().any(|r| self.wg.in_flight.contains_key(r))
        {
            // The interpreter's check says which register and wgmma.
            self.check_not_in_flight(d)?;
        }
        let lanes = self.guarded_lanes(d);
        let regs = &mut self.wg.regs;
        let [a, b, c] = op.srcs;
        let out = mask(op.out_bits);
        let mut left = lanes;
        while left != 0 {
            let t = left.trailing_zeros() as usize;
            left &= left - 1;
            let v = match op.kind {
                Kind::Int(iop, shape) => {
                    int_op(iop, shape, a.get(regs, t), b.get(regs, t), c.get(regs, t))
                }
                Kind::Setp(cmp, bits, signed) => u64::from(int_compare(
                    cmp,
                    a.get(regs, t),
                    b.get(regs, t),
                    bits,
                    signed,
                )),
                Kind::Convert(from, signed, to) => int_convert(a.get(regs, t), from, signed, to),
                Kind::Bfe(bits, signed) => {
                    bit_ops::bfe(a.get(regs, t), b.get(regs, t), c.get(regs, t), bits, signed)
                }
            };
            match op.dst {
                Dst::Reg(r) => regs.set_lane(r, t, v & out),
                Dst::Pair(p, q) => {
                    regs.set_lane(p, t, v);
                    regs.set_lane(q, t, u64::from(v == 0));
                }
                Dst::Sink => {}
            }
        }
        Ok(())
    }
}
