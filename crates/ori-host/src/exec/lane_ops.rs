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

use super::alu::{round_half, AluShape};
use super::int_arith::{int_compare, int_convert, int_op, IntCmp, IntOp, IntShape};
use super::lane_regs::LaneRegs;
use super::{bits_of, mask, Machine, Res, WARPGROUP};
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

    /// Its value in every lane: the register's row itself, or `tmp`
    /// filled with it.
    #[inline]
    fn row<'r>(self, regs: &'r LaneRegs, tmp: &'r mut [u64; WARPGROUP]) -> &'r [u64; WARPGROUP] {
        match self {
            Src::Reg(r) => regs.row(r).try_into().expect("a row is WARPGROUP lanes"),
            Src::NotReg(r) => {
                for (o, v) in tmp.iter_mut().zip(regs.row(r)) {
                    *o = u64::from(v & 1 == 0);
                }
                tmp
            }
            Src::Imm(v) => {
                tmp.fill(v);
                tmp
            }
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
    Convert(u32, bool, u32, bool),
    /// `bfe`: bits, signed.
    Bfe(u32, bool),
    /// `cvt.rn{.satfinite}.{bf16x2,f16x2}.f32 d, hi, lo`: two f32 rounded
    /// into one pair; bf16 (else f16), satfinite.
    PackHalves(bool, bool),
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

impl Kind {
    /// What `d` computes, if this path runs it (`shape`: its `AluShape`).
    fn of(d: &InstData, shape: &AluShape<'_>) -> Option<Kind> {
        Some(match &*d.name {
            "setp" => {
                let [cmp, ty] = &d.mods[..] else {
                    return None;
                };
                if !integer_type(ty) || d.slots.len() != 3 {
                    return None;
                }
                Kind::Setp(IntCmp::of(cmp)?, shape.bits, ty.starts_with('s'))
            }
            "cvt" if d.mods.len() > 2 => Kind::pack_halves(d)?,
            "cvt" => Kind::convert(d)?,
            "bfe" => {
                if !integer_type(shape.ty) || d.slots.len() != 4 {
                    return None;
                }
                Kind::Bfe(shape.bits, shape.ty.starts_with('s'))
            }
            _ => {
                let op = IntOp::of(&d.name)?;
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
        })
    }

    /// `cvt.rn{.satfinite}.{bf16x2,f16x2}.f32`, nothing else.
    fn pack_halves(d: &InstData) -> Option<Kind> {
        let (rest, types) = d.mods.split_at(d.mods.len() - 2);
        let satfinite = match rest.iter().map(|m| &**m).collect::<Vec<_>>()[..] {
            ["rn"] => false,
            ["rn", "satfinite"] => true,
            _ => return None,
        };
        let bf16 = match (&*types[0], &*types[1]) {
            ("bf16x2", "f32") => true,
            ("f16x2", "f32") => false,
            _ => return None,
        };
        if d.slots.len() != 3 {
            return None;
        }
        Some(Kind::PackHalves(bf16, satfinite))
    }

    /// `cvt` between integer types.
    fn convert(d: &InstData) -> Option<Kind> {
        let [to, from] = &d.mods[..] else {
            return None;
        };
        if !integer_type(to) || !integer_type(from) || d.slots.len() != 2 {
            return None;
        }
        Some(Kind::Convert(
            bits_of(from),
            from.starts_with('s'),
            bits_of(to),
            to.starts_with('s'),
        ))
    }
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
        let dst = Dst::of(&d.slots.first()?.op)?;
        let src = |k: usize| Src::of(&d.slots.get(k)?.op);
        let kind = Kind::of(d, &shape)?;
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
    ///
    /// The operation is chosen once; then it runs over all 128 lanes'
    /// source rows (the operations are pure and total, so computing an
    /// inactive lane costs nothing but time, and the straight loop
    /// vectorizes), and only the active lanes are written.
    pub(super) fn run_lane_op(&mut self, d: &InstData, op: &LaneOp) -> Res<()> {
        if !self.wg.in_flight.is_empty() && op.regs.iter().any(|r| self.wg.in_flight.contains(r)) {
            // The interpreter's check says which register and wgmma.
            self.check_not_in_flight(d)?;
        }
        let lanes = self.guarded_lanes(d);
        if lanes == 0 {
            return Ok(());
        }
        let regs = &mut self.wg.regs;
        // Rows of scratch kept from step to step (every lane of each is
        // written before it is read: no clearing).
        let [out, t0, t1, t2] = &mut *self.lane_scratch;
        let [s0, s1, s2] = op.srcs;
        let rows = [s0.row(regs, t0), s1.row(regs, t1), s2.row(regs, t2)];
        match op.kind {
            Kind::Int(iop, shape) => {
                // One loop per operation, so that each is compiled with
                // its operation known.
                macro_rules! each {
                    ($($op:ident),*) => {
                        match iop {
                            $(IntOp::$op => all_lanes(out, &rows, |a, b, c| {
                                int_op(IntOp::$op, shape, a, b, c)
                            }),)*
                        }
                    };
                }
                each!(
                    Add, Sub, Mul, Mad, Min, Max, Div, Rem, Neg, Abs, And, Or, Xor, Not, Shl, Shr,
                    Selp, Mov
                );
            }
            Kind::Setp(cmp, bits, signed) => all_lanes(out, &rows, |a, b, _| {
                u64::from(int_compare(cmp, a, b, bits, signed))
            }),
            Kind::Convert(from, signed, to, to_signed) => all_lanes(out, &rows, |a, _, _| {
                int_convert(a, from, signed, to, to_signed)
            }),
            Kind::Bfe(bits, signed) => {
                all_lanes(out, &rows, |a, b, c| bit_ops::bfe(a, b, c, bits, signed))
            }
            Kind::PackHalves(bf16, satfinite) => all_lanes(out, &rows, |a, b, _| {
                let half =
                    |v: u64| round_half(bf16, f64::from(f32::from_bits(v as u32)), satfinite);
                (half(a) << 16) | half(b)
            }),
        }
        let keep = mask(op.out_bits);
        match op.dst {
            Dst::Reg(r) => write_lanes(regs.row_mut(r), lanes, |t| out[t] & keep),
            Dst::Pair(p, q) => {
                write_lanes(regs.row_mut(p), lanes, |t| out[t]);
                write_lanes(regs.row_mut(q), lanes, |t| u64::from(out[t] == 0));
            }
            Dst::Sink => {}
        }
        Ok(())
    }
}

/// `out[t] = f(a[t], b[t], c[t])` for every lane.
#[inline(always)]
fn all_lanes(
    out: &mut [u64; WARPGROUP],
    [a, b, c]: &[&[u64; WARPGROUP]; 3],
    f: impl Fn(u64, u64, u64) -> u64,
) {
    for t in 0..WARPGROUP {
        out[t] = f(a[t], b[t], c[t]);
    }
}

/// `row[t] = v(t)` for the lanes in `lanes`.
#[inline(always)]
fn write_lanes(row: &mut [u64], lanes: LaneMask, v: impl Fn(usize) -> u64) {
    if lanes == LaneMask::MAX {
        for (t, x) in row.iter_mut().enumerate() {
            *x = v(t);
        }
    } else {
        let mut left = lanes;
        while left != 0 {
            let t = left.trailing_zeros() as usize;
            left &= left - 1;
            row[t] = v(t);
        }
    }
}
