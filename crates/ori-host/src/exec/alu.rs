//! Arithmetic, logic, comparison and conversion, one thread at a time:
//! what each instruction computes from its operands, following the PTX
//! ISA's definitions (integer widths and signs, f32 rounding modes and
//! `.ftz`, half-precision lanes, every `cvt`).

use super::int_arith::{int_compare, int_convert, int_op, IntCmp, IntOp, IntShape};
use super::*;
use crate::mufu;

/// The integer instructions (`add.s32`, `mad.wide.u16`, `shl.b64`, ...);
/// any other instruction that reaches the ALU is one the host does not run.
fn int_family(
    d: &InstData,
    shape: &AluShape<'_>,
    signed: bool,
    src: &dyn Fn(usize) -> Res<u64>,
) -> Res<u64> {
    let Some(iop) = IntOp::of(&d.name) else {
        return Err(Fault::Unsupported(format!(
            "{} is not supported by the host backend",
            d.mnemonic()
        )));
    };
    let n = iop.arity();
    let arg = |k: usize| if k <= n { src(k) } else { Ok(0) };
    let s = IntShape {
        bits: shape.bits,
        signed,
        wide: shape.wide,
        hi: shape.hi,
    };
    Ok(int_op(iop, s, arg(1)?, arg(2)?, arg(3)?))
}

impl Machine<'_> {
    pub(super) fn alu(&mut self, t: usize, d: &InstData, shape: &AluShape<'_>) -> Res<()> {
        let (ty, bits) = (shape.ty, shape.bits);
        let signed = ty.starts_with('s');
        let float = ty.starts_with('f') && ty != "f16x2";
        let name = &*d.name;
        let src = |k: usize| -> Res<u64> {
            let s = d
                .slots
                .get(k)
                .ok_or_else(|| format!("{name}: operand {k} missing"))?;
            self.value(t, &s.op)
        };
        let dst = &d
            .slots
            .first()
            .ok_or_else(|| format!("{name}: no operands"))?
            .op;
        if let Some(v) = bit_family(name, d, bits, signed, &src) {
            return self.set(t, dst, v?, shape.out_bits);
        }
        let v: u64 = match name {
            // `mov.b32 %r, {%h0, %h1}`: pack the elements, each of
            // bits / n bits, the first lowest.
            "mov" if matches!(op(d, 1)?, Operand::Vector(_)) => self.pack(t, d, bits)?,
            "cvta" => cvta(d, src(1)?),
            // Half precision, scalar and packed pairs (see `half_arith`).
            "add" | "sub" | "mul" | "fma" | "min" | "max" | "neg" | "abs"
                if matches!(ty, "f16" | "bf16" | "f16x2" | "bf16x2") =>
            {
                half_arith(name, ty, &src)?
            }
            "add" | "sub" | "mul" | "mad" | "fma" | "min" | "max" | "div" | "neg" | "abs"
            | "sqrt" | "rcp"
                if ty == "f64" =>
            {
                f64_arith(name, d, &src)?
            }
            "add" | "sub" | "mul" | "mad" | "fma" | "min" | "max" | "div" | "rem" if float => {
                f32_arith(name, d, ty, &src)?
            }
            "ex2" | "tanh" if matches!(ty, "f16" | "bf16" | "f16x2" | "bf16x2") => {
                half_special(name, ty, src(1)?)
            }
            "ex2" | "lg2" | "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "tanh" if float => {
                f32_special(name, d, ty, &src)?
            }
            "neg" if float => u64::from((-as_f32(src(1)?)).to_bits()),
            "abs" if float => u64::from(as_f32(src(1)?).abs().to_bits()),
            // Distributed shared memory (see `cluster`).
            // `mapa.u64` (no state space) maps a generic address to a
            // generic one; `mapa.shared::cluster` shared ones.
            "mapa" if d.mods.iter().any(|m| m.starts_with("shared")) => {
                self.mapa(src(1)?, src(2)?)?
            }
            "mapa" => self.mapa(src(1)?, src(2)?)? + SHARED_GENERIC,
            "getctarank" => self.ctarank_of(src(1)?)?,
            "setp" => return self.setp(t, d, ty, bits),
            "cvt" if d.has_mod("pack") => cvt_pack(d, &|k| src(k))?,
            "cvt" => cvt(d, &|k| src(k))?,
            _ => int_family(d, shape, signed, &src)?,
        };
        self.set(t, dst, v, shape.out_bits)
    }

    /// `mov.b32 %r, {%h0, %h1}`: the vector operand's elements packed,
    /// each of `bits / n` bits, the first lowest.
    fn pack(&self, t: usize, d: &InstData, bits: u32) -> Res<u64> {
        let Operand::Vector(parts) = op(d, 1)? else {
            return Err(Fault::Unsupported(format!(
                "{}: no vector to pack",
                d.mnemonic()
            )));
        };
        let w = bits / parts.len() as u32;
        let mut out = 0u64;
        for (k, e) in parts.iter().enumerate() {
            out |= (self.value(t, e)? & mask(w)) << (w * k as u32);
        }
        Ok(out)
    }

    pub(super) fn setp(&mut self, t: usize, d: &InstData, ty: &str, bits: u32) -> Res<()> {
        let cmp = d.mods.first().map_or("", |m| &**m);
        let (a, b) = (self.value(t, op(d, 1)?)?, self.value(t, op(d, 2)?)?);
        let r = if ty.starts_with('f') || ty.starts_with("bf") {
            // `.ftz` (f32 and f16 only): subnormal inputs compare as zeros
            // of their sign.
            let ftz = d.has_mod("ftz");
            let half = |h: half::f16| {
                let x = h.to_f32();
                f64::from(if ftz && h.to_bits() & 0x7c00 == 0 {
                    0f32.copysign(x)
                } else {
                    x
                })
            };
            let (x, y) = match ty {
                "f64" => (f64::from_bits(a), f64::from_bits(b)),
                "f32" => (
                    f64::from(flush(as_f32(a), ftz)),
                    f64::from(flush(as_f32(b), ftz)),
                ),
                "f16" => (
                    half(half::f16::from_bits(a as u16)),
                    half(half::f16::from_bits(b as u16)),
                ),
                "bf16" => (
                    f64::from(half::bf16::from_bits(a as u16).to_f32()),
                    f64::from(half::bf16::from_bits(b as u16).to_f32()),
                ),
                // `f16x2`/`bf16x2` set two predicates, one a half.
                _ => {
                    return Err(Fault::Unsupported(format!(
                        "setp.{cmp}.{ty} is not supported by the host backend"
                    )))
                }
            };
            let unordered = x.is_nan() || y.is_nan();
            // Ordered comparisons are false on a NaN (`ne` too, unlike
            // Rust's `!=`); the `u` forms are true on one.
            let (base, or_nan) = match cmp.strip_suffix('u') {
                Some(b) => (b, true),
                None => (cmp, false),
            };
            let ordered = match base {
                "eq" => x == y,
                "ne" => x != y && !unordered,
                "lt" => x < y,
                "le" => x <= y,
                "gt" => x > y,
                "ge" => x >= y,
                "num" => !unordered,
                "nan" => unordered,
                _ => {
                    return Err(Fault::Unsupported(format!(
                        "setp.{cmp}.{ty} is not supported by the host backend"
                    )))
                }
            };
            ordered || (or_nan && unordered)
        } else {
            let c = IntCmp::of(cmp)
                .ok_or_else(|| format!("setp.{cmp}.{ty} is not supported by the host backend"))?;
            int_compare(c, a, b, bits, ty.starts_with('s'))
        };
        match op(d, 0)? {
            Operand::PredPair(p, q) => {
                self.wg.regs.set(t, *p, u64::from(r));
                self.wg.regs.set(t, *q, u64::from(!r));
            }
            op => self.set(t, op, u64::from(r), 1)?,
        }
        Ok(())
    }
}

/// `x` rounded (nearest even) to bf16 (else f16), as bits; `satfinite`
/// clamps to the largest finite value first (a NaN stays one).
pub(super) fn round_half(bf16: bool, x: f64, satfinite: bool) -> u64 {
    let max = if bf16 { 3.3895313892515355e38 } else { 65504.0 };
    let x = if satfinite && !x.is_nan() {
        x.clamp(-max, max)
    } else {
        x
    };
    if bf16 {
        u64::from(crate::numbers::encode_bf16(x))
    } else {
        u64::from(crate::numbers::encode_f16(x))
    }
}

/// The bit-field, counting and packed-dot instructions (`popc`, `clz`,
/// `brev`, `bfind`, `dp4a`, `dp2a`, `bfe`, `bfi`, `prmt`, `lop3`) on one
/// thread's operands; `None` for another instruction.
fn bit_family(
    name: &str,
    d: &InstData,
    bits: u32,
    signed: bool,
    src: &dyn Fn(usize) -> Res<u64>,
) -> Option<Res<u64>> {
    let m = mask(bits);
    let run = || -> Res<u64> {
        Ok(match name {
            "popc" => u64::from((src(1)? & m).count_ones()),
            "clz" => u64::from((src(1)? & m).leading_zeros() - (64 - bits)),
            "brev" => (src(1)? & m).reverse_bits() >> (64 - bits),
            "bfind" => bit_ops::bfind(src(1)? & m, bits, signed, d.has_mod("shiftamt")),
            "dp4a" | "dp2a" => {
                let kinds: Vec<&str> = d
                    .mods
                    .iter()
                    .map(|x| &**x)
                    .filter(|x| matches!(*x, "u32" | "s32"))
                    .collect();
                let signs = (kinds.first() == Some(&"s32"), kinds.get(1) == Some(&"s32"));
                let (a, b, c) = (src(1)? as u32, src(2)? as u32, src(3)? as u32);
                let half = (name == "dp2a").then(|| d.has_mod("hi"));
                u64::from(bit_ops::dot_product(a, b, c, signs, half))
            }
            "bfe" => bit_ops::bfe(src(1)?, src(2)?, src(3)?, bits, signed),
            "bfi" => bit_ops::bfi(src(1)?, src(2)?, src(3)?, src(4)?, bits),
            "prmt" => {
                let mode = d.mods.first().map(|m| &**m).filter(|m| *m != "b32");
                u64::from(bit_ops::prmt(
                    src(1)? as u32,
                    src(2)? as u32,
                    src(3)? as u32,
                    mode,
                )?)
            }
            "lop3" => bit_ops::lop3(src(1)?, src(2)?, src(3)?, src(4)? as u8, bits),
            _ => unreachable!("only the family's names get here"),
        })
    };
    matches!(
        name,
        "popc" | "clz" | "brev" | "bfind" | "dp4a" | "dp2a" | "bfe" | "bfi" | "prmt" | "lop3"
    )
    .then(run)
}

/// `cvt.pack.sat.CONVERT.s32.b32 d, a, b{, c}` (PTX ISA, cvt.pack): `a`
/// and `b` saturated to the 8-, 4- or 2-bit (or 16-bit) type CONVERT, `b`
/// in the low bits and `a` above it; the bits above those come from the
/// low bits of `c` (none for 16-bit types).
pub(super) fn cvt_pack(d: &InstData, src: &dyn Fn(usize) -> Res<u64>) -> Res<u64> {
    let unsupported = || {
        Fault::Unsupported(format!(
            "{} is not supported by the host backend",
            d.mnemonic()
        ))
    };
    let to = d.mods.get(2).map(|m| &**m).ok_or_else(unsupported)?;
    let (width, signed) = match to {
        "u16" => (16, false),
        "s16" => (16, true),
        "u8" => (8, false),
        "s8" => (8, true),
        "u4" => (4, false),
        "s4" => (4, true),
        "u2" => (2, false),
        "s2" => (2, true),
        _ => return Err(unsupported()),
    };
    if !d.has_mod("sat") || d.mods.get(3).map(|m| &**m) != Some("s32") {
        return Err(unsupported());
    }
    let (lo, hi) = if signed {
        (-(1i64 << (width - 1)), (1i64 << (width - 1)) - 1)
    } else {
        (0, (1i64 << width) - 1)
    };
    let field = |v: u64| (i64::from(v as u32 as i32).clamp(lo, hi) as u64) & mask(width);
    let packed = (field(src(1)?) << width) | field(src(2)?);
    Ok(if width == 16 || d.slots.len() < 4 {
        packed
    } else {
        (packed | (src(3)? << (2 * width))) & 0xffff_ffff
    })
}

/// `cvt`: integer widening and narrowing, and the float conversions an
/// epilogue uses (f32 <-> f16, f16x2 packing, integer <-> f32).
/// `cvta`: between the generic windows of the parameter space and shared
/// memory and their own addresses; global addresses are the same in both
/// (see `memory`).
fn cvta(d: &InstData, a: u64) -> u64 {
    let to = d.has_mod("to");
    if d.has_mod("param") {
        return if to {
            a.wrapping_sub(PARAM_GENERIC)
        } else {
            a.wrapping_add(PARAM_GENERIC)
        };
    }
    match d.mods.iter().any(|m| m.starts_with("shared")) {
        true if to => a.wrapping_sub(SHARED_GENERIC),
        true => a.wrapping_add(SHARED_GENERIC),
        false => a,
    }
}

pub(super) fn cvt(d: &InstData, src: &dyn Fn(usize) -> Res<u64>) -> Res<u64> {
    let is_type =
        |m: &str| type_bytes(m).is_some() || matches!(m, "e4m3x2" | "e5m2x2" | "e4m3" | "e5m2");
    let types: Vec<&str> = d.mods.iter().map(|m| &**m).filter(|m| is_type(m)).collect();
    let [to, from] = types[..] else {
        return Err(fault!("{}: two types expected", d.mnemonic()));
    };
    let unsupported = || {
        Fault::Unsupported(format!(
            "{} is not supported by the host backend",
            d.mnemonic()
        ))
    };
    let satfinite = d.has_mod("satfinite");
    let v = src(1)?;
    let (tb, fb) = (bits_of(to), bits_of(from));
    // Integer and bit types (`s32`, `u8`, `b16`), not `bf16`.
    let int = |t: &str| {
        t.starts_with('s')
            || t.starts_with('u')
            || (t.starts_with('b') && t[1..].starts_with(|c: char| c.is_ascii_digit()))
    };
    let value = float_value;
    let round_into = |t: &str, x: f64| round_to_float(t, x, satfinite);
    if packed_pair(to).is_some() {
        let second = if from == "f32" { src(2)? } else { 0 };
        return cvt_pair((to, from), (v, second), satfinite).ok_or_else(unsupported);
    }
    if (to, from) == ("tf32", "f32") {
        return tf32_rna(d, v).ok_or_else(unsupported);
    }
    if int(to) && int(from) {
        return Ok(int_convert(
            v,
            fb,
            from.starts_with('s'),
            tb,
            to.starts_with('s'),
        ));
    }
    if int(from) {
        // Integer to float: exact in f64 for 32-bit sources, then one rounding.
        let x = if from.starts_with('s') {
            sext(v, fb) as f64
        } else {
            (v & mask(fb)) as f64
        };
        return round_into(to, x).ok_or_else(unsupported);
    }
    let x = value(from, v).ok_or_else(unsupported)?;
    // .sat on a float destination: clamped to [0, 1], NaN to 0.
    let x = if d.has_mod("sat") && !int(to) {
        if x.is_nan() {
            0.0
        } else {
            x.clamp(0.0, 1.0)
        }
    } else {
        x
    };
    if int(to) {
        return Ok(float_to_int(d, x, to.starts_with('s'), tb));
    }
    round_into(to, x).ok_or_else(unsupported)
}

/// `cvt` into a packed pair of `to`'s elements: from two f32 sources `v`
/// and `second` (the first the high element) or from a packed pair `v` of
/// another type (`None`: a form the host does not have).
fn cvt_pair((to, from): (&str, &str), (v, second): (u64, u64), satfinite: bool) -> Option<u64> {
    let (elem, w) = packed_pair(to)?;
    let (hi, lo) = match (from, packed_pair(from)) {
        ("f32", _) => (f64::from(as_f32(v)), f64::from(as_f32(second))),
        (_, Some((felem, fw))) => {
            let part = |k: u32| float_value(felem, (v >> (fw * k)) & mask(fw));
            (part(1)?, part(0)?)
        }
        _ => return None,
    };
    let (h, l) = (
        round_to_float(elem, hi, satfinite)?,
        round_to_float(elem, lo, satfinite)?,
    );
    Some((h << w) | l)
}

/// `cvt.rna.tf32.f32`: tf32 is an f32 with the low 13 mantissa bits zero;
/// `.rna` rounds to nearest, ties away from zero (a NaN or infinity stays
/// one). `None` without `.rna`.
fn tf32_rna(d: &InstData, v: u64) -> Option<u64> {
    if !d.has_mod("rna") {
        return None;
    }
    let b = v as u32;
    let r = if (b & 0x7f80_0000) == 0x7f80_0000 {
        b
    } else {
        b.wrapping_add(0x1000) & !0x1fff
    };
    Some(u64::from(r))
}

/// A scalar float's value (`None` for another type).
fn float_value(t: &str, bits: u64) -> Option<f64> {
    use crate::numbers::decode_fp8;
    Some(match t {
        "f16" => f64::from(half::f16::from_bits(bits as u16).to_f32()),
        "bf16" => f64::from(half::bf16::from_bits(bits as u16).to_f32()),
        "f32" => f64::from(as_f32(bits)),
        "f64" => f64::from_bits(bits),
        "e4m3" => decode_fp8(bits as u8, true),
        "e5m2" => decode_fp8(bits as u8, false),
        _ => return None,
    })
}

/// `x` rounded (nearest even) into the float type `t`, saturating to the
/// largest finite where `satfinite` (`None` for another type).
fn round_to_float(t: &str, x: f64, satfinite: bool) -> Option<u64> {
    use crate::numbers::encode_fp8;
    Some(match t {
        "f16" => round_half(false, x, satfinite),
        "bf16" => round_half(true, x, satfinite),
        "f32" => u64::from((x as f32).to_bits()),
        "f64" => x.to_bits(),
        "e4m3" => u64::from(encode_fp8(x, true, satfinite)),
        "e5m2" => u64::from(encode_fp8(x, false, satfinite)),
        _ => return None,
    })
}

/// A packed pair type's element type and width (the first source of a
/// conversion into one is the high half).
fn packed_pair(t: &str) -> Option<(&'static str, u32)> {
    Some(match t {
        "f16x2" => ("f16", 16),
        "bf16x2" => ("bf16", 16),
        "e4m3x2" => ("e4m3", 8),
        "e5m2x2" => ("e5m2", 8),
        _ => return None,
    })
}

/// Float to a `bits`-wide integer: `cvt`'s rounding modifier (`.rni`,
/// `.rmi`, `.rpi`, else toward zero), then saturation (NaN is 0). A signed
/// result keeps its sign in the whole row (see `int_convert`).
fn float_to_int(d: &InstData, x: f64, signed: bool, bits: u32) -> u64 {
    let r = if d.has_mod("rni") {
        x.round_ties_even()
    } else if d.has_mod("rmi") {
        x.floor()
    } else if d.has_mod("rpi") {
        x.ceil()
    } else {
        x.trunc()
    };
    if signed {
        let (lo, hi) = (
            -(2f64.powi(bits as i32 - 1)),
            2f64.powi(bits as i32 - 1) - 1.0,
        );
        r.clamp(lo, hi) as i64 as u64
    } else {
        (r.clamp(0.0, 2f64.powi(bits as i32) - 1.0) as u64) & mask(bits)
    }
}

/// What `alu` needs of an instruction, read once for all its threads.
pub(super) struct AluShape<'a> {
    /// The type suffix.
    pub(super) ty: &'a str,
    /// Its width.
    pub(super) bits: u32,
    /// The destination's width (`.wide` doubles it; `cvt` names it first).
    pub(super) out_bits: u32,
    /// `mul.wide` / `mad.wide`.
    pub(super) wide: bool,
    /// `mul.hi` / `mad.hi`.
    pub(super) hi: bool,
}

impl<'a> AluShape<'a> {
    /// The shape of `d`.
    pub(super) fn of(d: &'a InstData) -> Self {
        let ty = type_of(d);
        let bits = bits_of(ty);
        AluShape {
            ty,
            bits,
            out_bits: match &*d.name {
                "mul" | "mad" if d.has_mod("wide") => 2 * bits,
                // `cvt.to.from`: the destination type comes first. A signed
                // integer result is kept whole: `cvt` extended its sign to
                // the 64 bits of the row (see `int_convert`).
                // `cvt.pack` writes a whole 32-bit word.
                "cvt" if d.has_mod("pack") => 32,
                "cvt" => match d.mods.iter().find(|m| type_bytes(m).is_some()) {
                    Some(m) if m.starts_with('s') => 64,
                    Some(m) => bits_of(m),
                    None => bits,
                },
                _ => bits,
            },
            wide: d.has_mod("wide"),
            hi: d.has_mod("hi"),
        }
    }
}

/// An operand's bits (`src(k)` of the thread running).
type Src<'s> = dyn Fn(usize) -> Res<u64> + 's;

/// f16 and bf16 arithmetic, scalar or packed pairs: each element in f64
/// (the products and sums of two halves are exact there; fma has one
/// rounding, at the end), rounded to nearest even.
pub(super) fn half_arith(name: &str, ty: &str, src: &Src<'_>) -> Res<u64> {
    let (elem, lanes) = match ty {
        "f16x2" => ("f16", 2),
        "bf16x2" => ("bf16", 2),
        t => (t, 1),
    };
    let get = |x: u64, k: u32| -> f64 {
        let h = ((x >> (16 * k)) & 0xffff) as u16;
        if elem == "f16" {
            f64::from(half::f16::from_bits(h).to_f32())
        } else {
            f64::from(half::bf16::from_bits(h).to_f32())
        }
    };
    let put = |x: f64| -> u64 {
        u64::from(if elem == "f16" {
            crate::numbers::encode_f16(x)
        } else {
            crate::numbers::encode_bf16(x)
        })
    };
    let n_src = match name {
        "neg" | "abs" => 1,
        "fma" => 3,
        _ => 2,
    };
    let srcs: Vec<u64> = (1..=n_src).map(src).collect::<Res<_>>()?;
    let mut out = 0u64;
    for k in 0..lanes {
        let x = |i: usize| get(srcs[i], k);
        let r = match name {
            "add" => x(0) + x(1),
            "sub" => x(0) - x(1),
            "mul" => x(0) * x(1),
            "fma" => x(0).mul_add(x(1), x(2)),
            "min" => x(0).min(x(1)),
            "max" => x(0).max(x(1)),
            "neg" => -x(0),
            _ => x(0).abs(),
        };
        out |= put(r) << (16 * k);
    }
    Ok(out)
}

/// f64 arithmetic: IEEE in every operation Rust has (round to nearest
/// even); the directed modes are refused, not approximated.
pub(super) fn f64_arith(name: &str, d: &InstData, src: &Src<'_>) -> Res<u64> {
    if ["rz", "rm", "rp"].iter().any(|r| d.has_mod(r)) {
        return Err(Fault::Unsupported(format!(
            "{} (a directed rounding on .f64) is not supported by the host backend",
            d.mnemonic()
        )));
    }
    let x = |k: usize| -> Res<f64> { Ok(f64::from_bits(src(k)?)) };
    let r = match name {
        "add" => x(1)? + x(2)?,
        "sub" => x(1)? - x(2)?,
        "mul" => x(1)? * x(2)?,
        "mad" | "fma" => x(1)?.mul_add(x(2)?, x(3)?),
        "min" => x(1)?.min(x(2)?),
        "max" => x(1)?.max(x(2)?),
        "div" => x(1)? / x(2)?,
        "neg" => -x(1)?,
        "abs" => x(1)?.abs(),
        "sqrt" => x(1)?.sqrt(),
        _ => 1.0 / x(1)?,
    };
    Ok(r.to_bits())
}

/// f32 arithmetic with `.ftz`, `.sat` and every rounding mode. The
/// directed ones (.rz, .rm, .rp) round the exact result, held as the f64
/// pair hi + lo (products of f32s are exact in f64, sums are split by
/// two-sum), toward the mode.
pub(super) fn f32_arith(name: &str, d: &InstData, ty: &str, src: &Src<'_>) -> Res<u64> {
    if ty != "f32" {
        return Err(Fault::Unsupported(format!(
            "{} on .{ty} is not supported by the host backend",
            d.mnemonic()
        )));
    }
    let ftz = d.has_mod("ftz");
    let (a, b) = (flush(as_f32(src(1)?), ftz), flush(as_f32(src(2)?), ftz));
    let directed = ["rz", "rm", "rp"].into_iter().find(|r| d.has_mod(r));
    if let Some(mode) = directed {
        let (x, y) = (f64::from(a), f64::from(b));
        let (hi, lo) = match name {
            "add" => two_sum(x, y),
            "sub" => two_sum(x, -y),
            "mul" => (x * y, 0.0),
            "mad" | "fma" => two_sum(x * y, f64::from(flush(as_f32(src(3)?), ftz))),
            _ => {
                return Err(Fault::Unsupported(format!(
                    "{} is not supported by the host backend",
                    d.mnemonic()
                )))
            }
        };
        return Ok(u64::from(
            flush(saturate(round_f32(hi, lo, mode), d), ftz).to_bits(),
        ));
    }
    let r = match name {
        "add" => a + b,
        "sub" => a - b,
        "mul" => a * b,
        "mad" | "fma" => a.mul_add(b, flush(as_f32(src(3)?), ftz)),
        "min" => a.min(b),
        "max" => a.max(b),
        "div" if d.has_mod("full") => mufu::div_full(a, b, ftz),
        "div" if d.has_mod("approx") => mufu::div_approx(a, b, ftz),
        "div" => a / b,
        _ => a % b,
    };
    Ok(u64::from(flush(saturate(r, d), ftz).to_bits()))
}

/// `.sat`: clamped to [0, 1], NaN to 0 (without it, `r` as it is).
fn saturate(r: f32, d: &InstData) -> f32 {
    match d.has_mod("sat") {
        true if r.is_nan() => 0.0,
        true => r.clamp(0.0, 1.0),
        false => r,
    }
}

/// The special functions. The `.approx` forms run ptxas's sequence around
/// the GPU's special-function unit as `crate::mufu` models it (bit-exact
/// where the unit is modelled, within the bounds `docs/host.md` gives
/// elsewhere); `rcp` and `sqrt` with a rounding mode are IEEE, correctly
/// rounded.
pub(super) fn f32_special(name: &str, d: &InstData, ty: &str, src: &Src<'_>) -> Res<u64> {
    if ty != "f32" {
        return Err(Fault::Unsupported(format!(
            "{} on .{ty} is not supported by the host backend",
            d.mnemonic()
        )));
    }
    let ftz = d.has_mod("ftz");
    let a = as_f32(src(1)?);
    if !d.has_mod("approx") && matches!(name, "rcp" | "sqrt") {
        let a = flush(a, ftz);
        let r = if name == "rcp" { 1.0 / a } else { a.sqrt() };
        return Ok(u64::from(flush(r, ftz).to_bits()));
    }
    let r = match name {
        "ex2" => mufu::ex2_approx(a, ftz),
        "lg2" => mufu::lg2_approx(a, ftz),
        "rcp" => mufu::rcp_approx(a, ftz),
        "sqrt" => mufu::sqrt_approx(a, ftz),
        "rsqrt" => mufu::rsqrt_approx(a, ftz),
        "sin" | "cos" => mufu::sin_cos_approx(name == "cos", a, ftz),
        _ => mufu::tanh(a),
    };
    Ok(u64::from(r.to_bits()))
}

/// `ex2.approx` and `tanh.approx` on f16 or bf16, scalar or each lane of a
/// packed pair (the unit's 16-bit forms, `crate::mufu`).
fn half_special(name: &str, ty: &str, v: u64) -> u64 {
    let f = match (name, ty.starts_with("bf")) {
        ("ex2", false) => mufu::ex2_f16,
        ("ex2", true) => mufu::ex2_bf16,
        (_, false) => mufu::tanh_f16,
        (_, true) => mufu::tanh_bf16,
    };
    let one = |h: u64| -> u64 { u64::from(f(h as u16)) };
    if ty.ends_with("x2") {
        one(v & 0xffff) | one((v >> 16) & 0xffff) << 16
    } else {
        one(v & 0xffff)
    }
}

/// The smaller (`min`) or larger of two integers of `bits` bits.
pub(super) fn int_min_max(min: bool, a: u64, b: u64, bits: u32, signed: bool) -> u64 {
    let m = mask(bits);
    let less = if signed {
        sext(a, bits) < sext(b, bits)
    } else {
        a & m < b & m
    };
    if min == less {
        a & m
    } else {
        b & m
    }
}

/// `x + y` as an exact pair: the rounded sum and what rounding lost.
pub(super) fn two_sum(x: f64, y: f64) -> (f64, f64) {
    let s = x + y;
    let bb = s - x;
    (s, (x - (s - bb)) + (y - bb))
}

/// The exact value `hi + lo` rounded to f32 toward zero (`rz`), minus
/// infinity (`rm`) or plus infinity (`rp`).
pub(super) fn round_f32(hi: f64, lo: f64, mode: &str) -> f32 {
    let r = hi as f32;
    if !r.is_finite() && hi.is_finite() {
        // Past f32's range: the largest finite, or infinity, by direction.
        let toward_inf = match mode {
            "rp" => hi > 0.0,
            "rm" => hi < 0.0,
            _ => false,
        };
        return if toward_inf { r } else { f32::MAX.copysign(r) };
    }
    // Where r lies against the exact value (both sides exact in f64).
    let above = (f64::from(r) - hi) - lo;
    match mode {
        "rm" if above > 0.0 => r.next_down(),
        "rp" if above < 0.0 => r.next_up(),
        "rz" if above > 0.0 && r > 0.0 => r.next_down(),
        "rz" if above < 0.0 && r < 0.0 => r.next_up(),
        _ => r,
    }
}

/// `.ftz`: a subnormal f32 becomes a zero of its sign.
pub(super) fn flush(x: f32, ftz: bool) -> f32 {
    if ftz && x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}
