//! Integer and bit-logic instructions as functions of their operands'
//! bits: the one definition of what `add`, `mul.wide`, `shr.s32`, `selp`,
//! `setp.lt.u32`, an integer `cvt` and the others compute. Both the
//! per-thread interpreter (`alu`) and the decoded all-lanes path
//! (`lane_ops`) call these, so the two cannot disagree.

use super::{mask, sext};

/// An integer or logic operation (`mov` copies; `selp` picks by its third
/// operand's low bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IntOp {
    Add,
    Sub,
    Mul,
    Mad,
    Min,
    Max,
    Div,
    Rem,
    Neg,
    Abs,
    And,
    Or,
    Xor,
    Not,
    Shl,
    Shr,
    Selp,
    Mov,
}

impl IntOp {
    /// The operation a mnemonic names, for integer and bit types.
    pub(super) fn of(name: &str) -> Option<IntOp> {
        Some(match name {
            "add" => IntOp::Add,
            "sub" => IntOp::Sub,
            "mul" => IntOp::Mul,
            "mad" => IntOp::Mad,
            "min" => IntOp::Min,
            "max" => IntOp::Max,
            "div" => IntOp::Div,
            "rem" => IntOp::Rem,
            "neg" => IntOp::Neg,
            "abs" => IntOp::Abs,
            "and" => IntOp::And,
            "or" => IntOp::Or,
            "xor" => IntOp::Xor,
            "not" => IntOp::Not,
            "shl" => IntOp::Shl,
            "shr" => IntOp::Shr,
            "selp" => IntOp::Selp,
            "mov" => IntOp::Mov,
            _ => return None,
        })
    }

    /// How many source operands it reads.
    pub(super) fn arity(self) -> usize {
        match self {
            IntOp::Neg | IntOp::Abs | IntOp::Not | IntOp::Mov => 1,
            IntOp::Mad | IntOp::Selp => 3,
            _ => 2,
        }
    }
}

/// The instruction's width and flavour: the type's bits, signedness, and
/// `.wide`/`.hi` for `mul` and `mad`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct IntShape {
    pub(super) bits: u32,
    pub(super) signed: bool,
    pub(super) wide: bool,
    pub(super) hi: bool,
}

/// The result of `op` on sources `a`, `b`, `c` (those past its arity are
/// ignored), before the destination's mask.
#[inline]
pub(super) fn int_op(op: IntOp, s: IntShape, a: u64, b: u64, c: u64) -> u64 {
    let (bits, signed) = (s.bits, s.signed);
    let m = mask(bits);
    match op {
        IntOp::Add => a.wrapping_add(b) & m,
        IntOp::Sub => a.wrapping_sub(b) & m,
        IntOp::Mul | IntOp::Mad => {
            let p: u128 = if signed {
                (i128::from(sext(a, bits)) * i128::from(sext(b, bits))) as u128
            } else {
                u128::from(a & m) * u128::from(b & m)
            };
            let r = if s.wide {
                (p as u64) & mask(2 * bits)
            } else if s.hi {
                ((p >> bits) as u64) & m
            } else {
                (p as u64) & m
            };
            let out_bits = if s.wide { 2 * bits } else { bits };
            if op == IntOp::Mad {
                r.wrapping_add(c) & mask(out_bits)
            } else {
                r
            }
        }
        IntOp::Min | IntOp::Max => super::alu::int_min_max(op == IntOp::Min, a, b, bits, signed),
        IntOp::Div | IntOp::Rem => {
            if b & m == 0 {
                m // the ISA leaves it undefined; the GPU gives all ones
            } else if signed {
                let (x, y) = (sext(a, bits), sext(b, bits));
                (if op == IntOp::Div {
                    x.wrapping_div(y)
                } else {
                    x.wrapping_rem(y)
                }) as u64
                    & m
            } else if op == IntOp::Div {
                (a & m) / (b & m)
            } else {
                (a & m) % (b & m)
            }
        }
        IntOp::Neg => a.wrapping_neg() & m,
        IntOp::Abs => sext(a, bits).unsigned_abs() & m,
        IntOp::And => a & b,
        IntOp::Or => a | b,
        IntOp::Xor => a ^ b,
        IntOp::Not => !a & m,
        IntOp::Shl => {
            let sh = b & 0xffff_ffff;
            if sh >= u64::from(bits) {
                0
            } else {
                (a << sh) & m
            }
        }
        IntOp::Shr => {
            let sh = b & 0xffff_ffff;
            if signed {
                (sext(a, bits) >> sh.min(u64::from(bits) - 1)) as u64 & m
            } else if sh >= u64::from(bits) {
                0
            } else {
                (a & m) >> sh
            }
        }
        IntOp::Selp => {
            if c & 1 == 1 {
                a
            } else {
                b
            }
        }
        IntOp::Mov => a,
    }
}

/// An integer comparison of `setp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IntCmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl IntCmp {
    /// The comparison a `setp` modifier names (`lo`/`ls`/`hi`/`hs` are the
    /// unsigned spellings).
    pub(super) fn of(m: &str) -> Option<IntCmp> {
        Some(match m {
            "eq" => IntCmp::Eq,
            "ne" => IntCmp::Ne,
            "lt" | "lo" => IntCmp::Lt,
            "le" | "ls" => IntCmp::Le,
            "gt" | "hi" => IntCmp::Gt,
            "ge" | "hs" => IntCmp::Ge,
            _ => return None,
        })
    }
}

/// `setp.CMP` on two integers of `bits` bits.
#[inline]
pub(super) fn int_compare(cmp: IntCmp, a: u64, b: u64, bits: u32, signed: bool) -> bool {
    use std::cmp::Ordering::*;
    let ord = if signed {
        sext(a, bits).cmp(&sext(b, bits))
    } else {
        (a & mask(bits)).cmp(&(b & mask(bits)))
    };
    match cmp {
        IntCmp::Eq => ord == Equal,
        IntCmp::Ne => ord != Equal,
        IntCmp::Lt => ord == Less,
        IntCmp::Le => ord != Greater,
        IntCmp::Gt => ord == Greater,
        IntCmp::Ge => ord != Less,
    }
}

/// An integer `cvt` from `from_bits` (sign-extended if `from_signed`) to
/// `to_bits`, then, for a signed destination type, sign-extended again: the
/// PTX ISA extends a result whose destination register is wider than the
/// instruction's type by the type's signedness (`cvt.s8.s32` into a `.b16`
/// register holds -3 as 0xfffd; Triton's int8-weight kernels convert that
/// register with `cvt.rn.f16.s16`). The row keeps all 64 bits; every reader
/// masks to its own width.
#[inline]
pub(super) fn int_convert(
    v: u64,
    from_bits: u32,
    from_signed: bool,
    to_bits: u32,
    to_signed: bool,
) -> u64 {
    let r = if from_signed {
        (sext(v, from_bits) as u64) & mask(to_bits)
    } else {
        v & mask(from_bits) & mask(to_bits)
    };
    if to_signed {
        sext(r, to_bits) as u64
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S32: IntShape = IntShape {
        bits: 32,
        signed: true,
        wide: false,
        hi: false,
    };

    #[test]
    fn widths_signs_and_shifts() {
        let u32s = IntShape {
            signed: false,
            ..S32
        };
        assert_eq!(int_op(IntOp::Add, S32, 0xffff_ffff, 1, 0), 0);
        assert_eq!(int_op(IntOp::Shr, S32, 0x8000_0000, 40, 0), 0xffff_ffff);
        assert_eq!(int_op(IntOp::Shr, u32s, 0x8000_0000, 40, 0), 0);
        assert_eq!(int_op(IntOp::Shl, u32s, 1, 32, 0), 0);
        let wide = IntShape { wide: true, ..S32 };
        assert_eq!(int_op(IntOp::Mul, wide, 0xffff_ffff, 2, 0), (-2i64) as u64);
        assert_eq!(int_op(IntOp::Mad, wide, 0xffff_ffff, 2, 5), 3);
        let hi = IntShape { hi: true, ..u32s };
        assert_eq!(int_op(IntOp::Mul, hi, 0x8000_0000, 4, 0), 2);
        assert_eq!(int_op(IntOp::Div, S32, 7, 0, 0), 0xffff_ffff);
        assert_eq!(
            int_op(IntOp::Rem, S32, (-7i32) as u32 as u64, 2, 0),
            0xffff_ffff
        );
        assert_eq!(int_op(IntOp::Min, S32, 0xffff_ffff, 0, 0), 0xffff_ffff);
        assert_eq!(int_op(IntOp::Min, u32s, 0xffff_ffff, 0, 0), 0);
        assert_eq!(int_op(IntOp::Selp, S32, 1, 2, 3), 1);
        assert_eq!(int_op(IntOp::Selp, S32, 1, 2, 2), 2);
    }

    #[test]
    fn comparisons_and_conversions() {
        assert!(int_compare(IntCmp::Lt, 0xffff_ffff, 0, 32, true));
        assert!(!int_compare(IntCmp::Lt, 0xffff_ffff, 0, 32, false));
        assert!(int_compare(IntCmp::Ge, 5, 5, 32, false));
        assert_eq!(IntCmp::of("hs"), Some(IntCmp::Ge));
        assert_eq!(int_convert(0xffff_ffff, 32, true, 64, true), u64::MAX);
        assert_eq!(int_convert(0xffff_ffff, 32, false, 64, false), 0xffff_ffff);
        assert_eq!(int_convert(0x1_2345, 32, false, 16, false), 0x2345);
        // A narrowing cvt to a signed type extends the sign past its width
        // (cvt.s8.s32 of -3 and of 0x1fd: both -3 in any wider register),
        // to an unsigned one with zeros.
        assert_eq!(int_convert(0xffff_fffd, 32, true, 8, true) & 0xffff, 0xfffd);
        assert_eq!(int_convert(0x1fd, 32, true, 8, true) & 0xffff, 0xfffd);
        assert_eq!(int_convert(0xffff_fffd, 32, true, 8, false), 0xfd);
    }
}
