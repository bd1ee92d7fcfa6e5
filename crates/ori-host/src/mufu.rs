//! The GPU's special-function unit (MUFU) and the instruction sequences
//! ptxas 13.0.88 builds around it for the PTX `.approx` forms and
//! `div.full`/`div.approx`, so that the host gives the GPU's bits where
//! the unit has been modelled and the GPU's argument handling everywhere.
//!
//! Two kinds of knowledge are in here:
//! - **The sequences** (`ex2_approx`, `rcp_approx`, `div_full`, ...) are
//!   read off ptxas's SASS for each PTX form (`cuobjdump -sass` of the
//!   kernels `tests/host/sfu/probe.py ptx` writes): which inputs are
//!   rescaled before the unit and how the result is scaled back.
//! - **The unit**, probed on an H200 on dense inputs
//!   (`tests/host/sfu/dense/`, `probe.py record`: every input of whole
//!   binades, 2^18-point sweeps over all exponents) and on an H100
//!   (`tests/host/sfu/h100_special.bin.gz`); the two give the same bits
//!   on every argument both recorded. What the dense recording
//!   establishes exactly: `MUFU.RCP` depends on the mantissa alone (all
//!   23 fraction bits), `MUFU.RSQ` on the mantissa and the exponent's
//!   parity, `MUFU.EX2` on a fixed-point argument with 23 fraction bits
//!   (`ex2_argument`), the exponent only moving the result. Within a
//!   table segment the unit is *not* a floored quadratic of the offset: on
//!   every input of a binade no (c0, c1, c2) reproduces any whole segment
//!   of 2^16 or 2^17 points, nor the smaller power-of-two segments tried
//!   (to 2^13); what is left is a few hundredths of an ulp that follows
//!   the bits of the offset, as the truncated rows of the unit's
//!   multipliers would. The model (`interpolate`) gives each bit of the
//!   offset its own weight; its tables (`tests/host/sfu/fit.py`,
//!   `mufu/tables.rs`) are fitted, not the hardware's ROM: on every
//!   recorded argument they give the GPU's bits for 99.53% (`rcp`),
//!   99.18% and 99.40% (`rsq`, even and odd exponents) and 99.15% (`ex2`),
//!   the rest 1 ulp away (a single slope per segment: 98.9%, 98.1%, 98.6%,
//!   97.98%).
//!   `MUFU.LG2`, `SQRT`, `SIN`, `COS` and `TANH` are computed correctly
//!   rounded (from f64) with the unit's flushing and NaN; their measured
//!   distance from the GPU is in `docs/host.md`.
//!
//! Every unit function but `TANH` flushes subnormal inputs and results to
//! zero of their sign; all return NVIDIA's canonical NaN (`0x7fffffff`)
//! for NaN.

mod tables;

/// NVIDIA's canonical NaN, what MUFU returns for any NaN input.
pub const CANONICAL_NAN: f32 = f32::from_bits(0x7fff_ffff);

/// The smallest normal f32, 2^-126: the rescaling threshold of every
/// ptxas sequence below.
const MIN_NORMAL: f32 = f32::MIN_POSITIVE;

/// `.ftz`: a subnormal becomes a zero of its sign.
fn flush(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// `2^e` as an f64, for `e` anywhere in f32's range and beyond.
fn pow2(e: i64) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// An f64 that is a 24-bit mantissa times a power of two, as the unit
/// delivers it: exact when normal, flushed to zero below 2^-126, infinite
/// above f32's range.
fn deliver(v: f64, negative: bool) -> f32 {
    let r = if v < f64::from(MIN_NORMAL) {
        0.0
    } else {
        v as f32
    };
    if negative {
        -r
    } else {
        r
    }
}

/// A segment's interpolation, the result's mantissa in units of its last
/// bit: `c[0] + c[1] t^2` (t the offset `low` as a fraction of the
/// segment) plus, for each set bit j of `low`, its own weight `c[2 + j]`,
/// floored (`fit.py`'s `evaluate_raw`, in the same order). A weight per
/// bit, rather than one slope times the offset, is what the truncated rows
/// of a hardware multiplier give; on every argument of the dense
/// recording it takes the differences from 1.1% to 0.47% (`rcp`), from
/// 1.9% and 1.4% to 0.82% and 0.60% (`rsq`) and from 2.02% to 0.85%
/// (`ex2`).
fn interpolate(c: &[f64], low: u32, t: f64) -> f64 {
    let mut v = c[0] + c[1] * (t * t);
    for (j, w) in c[2..].iter().enumerate() {
        if low >> j & 1 == 1 {
            v += w;
        }
    }
    v.floor()
}

/// `MUFU.RCP`: 1/x. The 23-bit fraction `g` of x's mantissa picks one of
/// 128 segments (its top 7 bits); the remaining 16 bits are the offset.
/// The result depends on the mantissa alone, the exponent only moves it
/// (the recording agrees wherever inputs share a mantissa); a power of
/// two gives its exact reciprocal. Probe: `rcp.approx.ftz.f32` on every
/// input of [1, 2) and of [2^126, 2^127) in `tests/host/sfu/dense` (fit in
/// `fit.py`, `rcp_points`).
pub fn rcp(x: f32) -> f32 {
    if x.is_nan() {
        return CANONICAL_NAN;
    }
    let x = flush(x);
    if x == 0.0 {
        return f32::INFINITY.copysign(x);
    }
    if x.is_infinite() {
        return 0.0f32.copysign(x);
    }
    let bits = x.to_bits();
    let e = i64::from((bits >> 23) & 0xff) - 127;
    let g = bits & 0x7f_ffff;
    let mant = if g == 0 {
        f64::from(1u32 << 24)
    } else {
        let t = f64::from(g & 0xffff) / 65536.0;
        interpolate(&tables::RCP[(g >> 16) as usize], g & 0xffff, t)
    };
    // mant is 1/m in units of 2^-24 (m in [1, 2), 1/m in (1/2, 1]).
    deliver(mant * pow2(-24 - e), x < 0.0)
}

/// `MUFU.EX2`'s argument: x as fixed point with 23 fraction bits, its
/// magnitude truncated, split into the integer part `n` of the exponent
/// and a 23-bit fraction `g`, 2^x = 2^n 2^(g / 2^23). For x < 0 with a
/// nonzero fraction f the unit takes n = -i - 1 and the ones' complement
/// of f (one argument unit below the exact two's complement); with a zero
/// fraction it gives the exact power. Probes (`tests/host/sfu/dense`,
/// `ex2.approx.ftz.f32`): the output is constant over each pair of
/// inputs in [0.5, 1) (they carry 24 fraction bits); every output of the
/// binades (-1, -0.5], (-2, -1], (-4, -2] and (-16, -8] is the
/// positive binade's at the argument given here, but at the integers.
fn ex2_argument(x: f32) -> (i64, u32) {
    let q = (f64::from(x.abs()) * 8_388_608.0).trunc() as i64;
    let (i, f) = (q >> 23, (q & 0x7f_ffff) as u32);
    if x >= 0.0 {
        (i, f)
    } else if f == 0 {
        (-i, 0)
    } else {
        (-i - 1, !f & 0x7f_ffff)
    }
}

/// `MUFU.EX2`: 2^x. After `ex2_argument`, the fraction's top 6 bits pick
/// a segment, the other 17 are the offset (`interpolate`); the result
/// is `2^n` times the interpolated mantissa in [1, 2). Probe: `ex2.approx.ftz.f32` on every input of [1, 2) in
/// `tests/host/sfu/dense` (`fit.py`, `ex2_points`).
pub fn ex2(x: f32) -> f32 {
    if x.is_nan() {
        return CANONICAL_NAN;
    }
    let x = flush(x);
    if x >= 128.0 {
        return f32::INFINITY;
    }
    if x <= -256.0 {
        return 0.0;
    }
    let (n, g) = ex2_argument(x);
    let t = f64::from(g & 0x1_ffff) / 131_072.0;
    let mant = if g == 0 {
        8_388_608.0
    } else {
        interpolate(&tables::EX2[(g >> 17) as usize], g & 0x1_ffff, t)
    };
    deliver(mant * pow2(n - 23), false)
}

/// `ex2.approx.f16` (`MUFU.EX2.F16`): the f32 unit on the f16 value, its
/// result rounded toward zero to f16 (subnormals kept), infinity past
/// f16's largest finite value, the canonical NaN `0x7fff`. Probe: every
/// f16 input in `h100_special.bin.gz` (`tests/host_sfu.rs`).
pub fn ex2_f16(h: u16) -> u16 {
    let r = ex2(half::f16::from_bits(h).to_f32());
    if r.is_nan() {
        return 0x7fff;
    }
    if r > f32::from(half::f16::MAX) {
        return 0x7c00;
    }
    let n = half::f16::from_f32(r);
    if n.to_f32().abs() > r.abs() {
        n.to_bits() - 1
    } else {
        n.to_bits()
    }
}

/// `ex2.approx.ftz.bf16` (`MUFU.EX2.BF16`): the f32 unit on the bf16
/// value, its result truncated to bf16 (toward zero), the canonical NaN
/// `0x7fff`. Probe: every bf16 input in `h100_special.bin.gz`.
pub fn ex2_bf16(h: u16) -> u16 {
    let r = ex2(f32::from_bits(u32::from(h) << 16));
    if r.is_nan() {
        0x7fff
    } else {
        (r.to_bits() >> 16) as u16
    }
}

/// `tanh.approx.f16` (`MUFU.TANH.F16`): tanh rounded to nearest f16, not
/// yet modelled (the GPU's bits for 77.5% of the f16 inputs, the rest 1
/// ulp away); subnormals are returned as they are, NaN as `0x7fff`.
pub fn tanh_f16(h: u16) -> u16 {
    let x = half::f16::from_bits(h);
    if x.is_nan() {
        0x7fff
    } else {
        half::f16::from_f64(f64::from(x.to_f32()).tanh()).to_bits()
    }
}

/// `tanh.approx.bf16` (`MUFU.TANH.BF16`): as `tanh_f16` in bf16 (96.8% of
/// the bf16 inputs the GPU's bits, the rest 1 ulp away).
pub fn tanh_bf16(h: u16) -> u16 {
    let x = half::bf16::from_bits(h);
    if x.is_nan() {
        0x7fff
    } else {
        half::bf16::from_f64(f64::from(x.to_f32()).tanh()).to_bits()
    }
}

/// A unit function computed correctly rounded from its f64 value, with
/// the unit's flushing of inputs and results and its NaN.
fn rounded(x: f32, f: fn(f64) -> f64) -> f32 {
    if x.is_nan() {
        return CANONICAL_NAN;
    }
    let r = f(f64::from(flush(x))) as f32;
    if r.is_nan() {
        CANONICAL_NAN
    } else {
        flush(r)
    }
}

/// `MUFU.LG2`: log2(x), correctly rounded (not yet modelled).
pub fn lg2(x: f32) -> f32 {
    rounded(x, f64::log2)
}

/// `MUFU.RSQ`: 1/sqrt(x). The exponent's parity picks one of two tables
/// (1/sqrt(m) for an even exponent, 1/sqrt(2m) for an odd one, m the
/// mantissa in [1, 2)); the top 6 bits of the 23-bit fraction pick the
/// segment, the remaining 17 are the offset; half the exponent moves the
/// result. An even power of two gives its exact root. Probe:
/// `rsqrt.approx.ftz.f32` on every input of [1, 2) and [2, 4) in
/// `tests/host/sfu/dense` (`fit.py`, `rsq_points`).
pub fn rsq(x: f32) -> f32 {
    let x = flush(x);
    if x.is_nan() || x < 0.0 {
        return CANONICAL_NAN;
    }
    if x == 0.0 {
        return f32::INFINITY.copysign(x);
    }
    if x.is_infinite() {
        return 0.0;
    }
    let bits = x.to_bits();
    let e = i64::from(bits >> 23) - 127;
    let (odd, g) = (e & 1, bits & 0x7f_ffff);
    let mant = if g == 0 && odd == 0 {
        f64::from(1u32 << 24)
    } else {
        let table = if odd == 1 {
            &tables::RSQ_ODD
        } else {
            &tables::RSQ_EVEN
        };
        let t = f64::from(g & 0x1_ffff) / 131_072.0;
        interpolate(&table[(g >> 17) as usize], g & 0x1_ffff, t)
    };
    // mant is the root in units of 2^-24 of (1/2, 1].
    deliver(mant * pow2(-24 - (e - odd) / 2), false)
}

/// `MUFU.SQRT`: sqrt(x), correctly rounded (not yet modelled).
pub fn sqrt(x: f32) -> f32 {
    rounded(x, f64::sqrt)
}

/// `MUFU.TANH`: tanh(x), correctly rounded (not yet modelled). Unlike the
/// other functions it keeps subnormals: tanh(x) = x there (the recording
/// gives back every subnormal input).
pub fn tanh(x: f32) -> f32 {
    if x.is_nan() {
        CANONICAL_NAN
    } else {
        f64::from(x).tanh() as f32
    }
}

/// `MUFU.SIN`: sin(2 pi t) of an argument in turns, correctly rounded
/// from the argument's exact fraction (an f32 at or above 2^23 is a
/// whole number of turns: the GPU gives 0 there).
pub fn sin_turns(t: f32) -> f32 {
    rounded(t, |v| (std::f64::consts::TAU * v.fract()).sin())
}

/// `MUFU.COS`: cos(2 pi t) of an argument in turns, as `sin_turns`.
pub fn cos_turns(t: f32) -> f32 {
    rounded(t, |v| (std::f64::consts::TAU * v.fract()).cos())
}

/// `FMUL.RZ`: the f32 product rounded toward zero (exact in f64 first).
fn mul_rz(a: f32, b: f32) -> f32 {
    let p = f64::from(a) * f64::from(b);
    let r = p as f32;
    if r.is_infinite() && p.is_finite() {
        f32::MAX.copysign(r)
    } else if r.is_finite() && f64::from(r).abs() > p.abs() {
        // One step toward zero: the magnitude's bits less one.
        f32::from_bits(r.to_bits() - 1)
    } else {
        r
    }
}

/// 1/(2 pi) as the f32 constant ptxas multiplies by before `MUFU.SIN`
/// and `MUFU.COS` (0.15915493667125701904).
const INV_TAU: f32 = 0.159_154_94;

/// `sin.approx.f32` and `cos.approx.f32` (with or without `.ftz`):
/// `FMUL.RZ` by 1/(2 pi), then the unit on the argument in turns.
pub fn sin_cos_approx(cos: bool, x: f32, ftz: bool) -> f32 {
    let t = mul_rz(if ftz { flush(x) } else { x }, INV_TAU);
    let t = if ftz { flush(t) } else { t };
    if cos {
        cos_turns(t)
    } else {
        sin_turns(t)
    }
}

/// `ex2.approx.f32`: below -126 (where 2^x is subnormal) the unit runs on
/// x/2 and the result is squared by an IEEE multiply; `.ftz` is the unit
/// alone. SASS: `FSETP.GEU x, -126; @!P FMUL 0.5; MUFU.EX2; @!P FMUL r, r`.
pub fn ex2_approx(x: f32, ftz: bool) -> f32 {
    // `FSETP.GEU`: unordered (NaN) or at least -126 takes the unit alone.
    if ftz || x.is_nan() || x >= -126.0 {
        return ex2(x);
    }
    let r = ex2(x * 0.5);
    r * r
}

/// `rcp.approx.f32`: subnormal inputs are scaled by 2^24 and inputs above
/// 2^126 (whose reciprocal is subnormal) by 1/4 before the unit, the
/// result by the same factor after (an IEEE multiply); `.ftz` is the unit
/// alone. SASS: two `FSETP`s, two `FSEL`s, `FMUL`, `MUFU.RCP`, `FMUL`.
pub fn rcp_approx(x: f32, ftz: bool) -> f32 {
    if ftz {
        return rcp(x);
    }
    let s = if x.abs() > 8.507_059e37 {
        0.25
    } else if x.abs() < MIN_NORMAL {
        16_777_216.0
    } else {
        1.0
    };
    s * rcp(x * s)
}

/// `div.full.f32`: a * (1/b), with a and b both scaled by 1/4 when
/// |b| > 2^126 and (without `.ftz`) by 2^24 when b is subnormal, the
/// reciprocal from the unit, the product an IEEE multiply (flushed with
/// `.ftz`). SASS: `FSETP`s, `@P FMUL`s, `MUFU.RCP`, `FMUL`.
pub fn div_full(a: f32, b: f32, ftz: bool) -> f32 {
    let (mut a, mut b) = if ftz { (flush(a), flush(b)) } else { (a, b) };
    if b.abs() > 8.507_059e37 {
        (a, b) = (a * 0.25, b * 0.25);
    }
    if !ftz && b.abs() < MIN_NORMAL {
        (a, b) = (a * 16_777_216.0, b * 16_777_216.0);
    }
    let r = rcp(b) * a;
    if ftz {
        flush(r)
    } else {
        r
    }
}

/// `div.approx.f32`: as `div_full` without the scaling of large divisors.
/// SASS: `FSETP.GEU |b|, 2^-126; @!P FMUL`s (not with `.ftz`),
/// `MUFU.RCP`, `FMUL`.
pub fn div_approx(a: f32, b: f32, ftz: bool) -> f32 {
    if ftz {
        return flush(rcp(flush(b)) * flush(a));
    }
    let (a, b) = if b.abs() < MIN_NORMAL {
        (a * 16_777_216.0, b * 16_777_216.0)
    } else {
        (a, b)
    };
    rcp(b) * a
}

/// `lg2.approx.f32`: subnormal inputs are scaled by 2^24 before the unit
/// and 24 is subtracted after. SASS: `FSETP.GEU`, `@!P FMUL`,
/// `MUFU.LG2`, `@!P FADD -24`.
pub fn lg2_approx(x: f32, ftz: bool) -> f32 {
    if ftz || x.is_nan() || x.abs() >= MIN_NORMAL {
        return lg2(x);
    }
    lg2(x * 16_777_216.0) - 24.0
}

/// `rsqrt.approx.f32`: subnormal inputs are scaled by 2^24 before the
/// unit and the result by 2^12 after. SASS: `FSETP.GEU`, `@!P FMUL`,
/// `MUFU.RSQ`, `@!P FMUL 4096`.
pub fn rsqrt_approx(x: f32, ftz: bool) -> f32 {
    if ftz || x.is_nan() || x.abs() >= MIN_NORMAL {
        return rsq(x);
    }
    rsq(x * 16_777_216.0) * 4096.0
}

/// `sqrt.approx.f32`: subnormal inputs are scaled by 2^24 before the
/// unit and the result by 2^-12 after. SASS: `FSETP.GEU`, `@!P FMUL`,
/// `MUFU.SQRT`, `@!P FMUL 0.000244140625`.
pub fn sqrt_approx(x: f32, ftz: bool) -> f32 {
    if ftz || x.is_nan() || x.abs() >= MIN_NORMAL {
        return sqrt(x);
    }
    sqrt(x * 16_777_216.0) * 0.000_244_140_63
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_two_and_specials() {
        assert_eq!(rcp(4.0), 0.25);
        assert_eq!(rcp(-0.5), -2.0);
        assert_eq!(rcp(0.0), f32::INFINITY);
        assert_eq!(rcp(-f32::INFINITY).to_bits(), (-0.0f32).to_bits());
        assert_eq!(rcp(f32::NAN).to_bits(), 0x7fff_ffff);
        // 1/2^127 is subnormal: the unit flushes it, the sequence does not.
        assert_eq!(rcp(2f32.powi(127)), 0.0);
        assert_eq!(rcp_approx(2f32.powi(127), false), 2f32.powi(-127));
        assert_eq!(ex2(0.0), 1.0);
        assert_eq!(ex2(3.0), 8.0);
        assert_eq!(ex2(128.0), f32::INFINITY);
        assert_eq!(ex2(f32::NEG_INFINITY), 0.0);
        assert_eq!(ex2_approx(-140.0, false), 2f32.powi(-140));
        assert_eq!(ex2_approx(-140.0, true), 0.0);
    }

    #[test]
    fn rz_product() {
        // Toward zero: never above the exact product in magnitude, and the
        // next f32 away from zero is above it.
        for (a, b) in [(1.7f32, 1.3f32), (-2.9, 0.7), (1e-20, 3.3e-19), (0.6, -0.6)] {
            let (r, p) = (mul_rz(a, b), f64::from(a) * f64::from(b));
            assert!(f64::from(r).abs() <= p.abs());
            assert!(f64::from(f32::from_bits(r.to_bits() + 1)).abs() > p.abs());
        }
        assert_eq!(mul_rz(f32::MAX, 2.0), f32::MAX);
    }
}
