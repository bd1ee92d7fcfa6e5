//! Element types of wgmma operands, decoded to and encoded from raw bits.
//!
//! The tensor-core inputs are packed into 32-bit registers or shared-memory
//! bytes in six formats (PTX ISA, "Matrix Data-types"): `f16`, `bf16`,
//! `tf32` (an f32 whose low 13 mantissa bits the tensor core ignores), the
//! two 8-bit floats `e4m3` (bias 7, no infinities, S.1111.111 is NaN) and
//! `e5m2` (bias 15, IEEE-like), and the 8-bit integers. Products of two such
//! values are exact in f64, which is how the backend multiplies them.

use ori_ir::wgmma_form::ElemType;

/// The value of one element given its raw bits (low `bits()` bits of `raw`).
pub fn decode(ty: ElemType, raw: u32) -> f64 {
    match ty {
        ElemType::F16 => f64::from(half::f16::from_bits(raw as u16).to_f32()),
        ElemType::Bf16 => f64::from(half::bf16::from_bits(raw as u16).to_f32()),
        ElemType::Tf32 => f64::from(f32::from_bits(raw & !0x1fff)),
        ElemType::F32 => f64::from(f32::from_bits(raw)),
        ElemType::E4m3 => fp8(raw as u8, 4, 3, 7, false),
        ElemType::E5m2 => fp8(raw as u8, 5, 2, 15, true),
        ElemType::S8 => f64::from(raw as u8 as i8),
        ElemType::U8 => f64::from(raw as u8),
        ElemType::S32 => f64::from(raw as i32),
        ElemType::B1 => f64::from(raw & 1),
    }
}

/// An 8-bit float with `e` exponent and `m` mantissa bits. `ieee`: all-ones
/// exponents are infinities and NaNs (e5m2); otherwise only S.1111.111 is
/// NaN and there are no infinities (e4m3).
fn fp8(b: u8, e: u32, m: u32, bias: i32, ieee: bool) -> f64 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = u32::from(b >> m) & ((1 << e) - 1);
    let man = u32::from(b) & ((1 << m) - 1);
    let max_exp = (1 << e) - 1;
    if ieee && exp == max_exp {
        return if man == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if !ieee && exp == max_exp && man == (1 << m) - 1 {
        return f64::NAN;
    }
    let frac = f64::from(man) / f64::from(1u32 << m);
    if exp == 0 {
        sign * frac * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + frac) * 2f64.powi(exp as i32 - bias)
    }
}

/// The bits of an 8-bit float (`e4m3`: `e4 = true`, else `e5m2`) nearest to
/// `x` (ties to even). `satfinite`: beyond the largest finite value (448,
/// 57344) gives that value; otherwise e4m3 gives NaN and e5m2 infinity. A
/// NaN gives the format's NaN (0x7f).
pub fn encode_fp8(x: f64, e4: bool, satfinite: bool) -> u8 {
    let (m, bias, max) = if e4 { (3, 7, 448.0) } else { (2, 15, 57344.0) };
    if x.is_nan() {
        return 0x7f;
    }
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    let a = x.abs();
    // The spacing of representable values at a's binade (subnormals share
    // the smallest normal binade's).
    let min_exp = 1 - bias;
    let exp = if a == 0.0 {
        min_exp
    } else {
        (a.log2().floor() as i32).max(min_exp)
    };
    let quantum = 2f64.powi(exp - m);
    let q = a / quantum;
    let mut r = q.round();
    // `a / quantum` is exact (a power of two); `round` takes a tie away
    // from zero, so an odd result of a tie goes back to the even one.
    if q.fract() == 0.5 && r % 2.0 != 0.0 {
        r -= 1.0;
    }
    let v = r * quantum;
    if v > max {
        return sign
            | match (satfinite, e4) {
                (true, true) => 0x7e,
                (true, false) => 0x7b,
                (false, true) => 0x7f,
                (false, false) => 0x7c,
            };
    }
    if v < 2f64.powi(min_exp) {
        // Subnormal (or zero): the mantissa counts quanta of the least binade.
        return sign | (v / 2f64.powi(min_exp - m)) as u8;
    }
    let e = v.log2().floor() as i32;
    let man = ((v / 2f64.powi(e) - 1.0) * f64::from(1u32 << m)).round() as u8;
    sign | (((e + bias) as u8) << m) | man
}

/// The value of the 8-bit float `b` (`e4m3` when `e4`, else `e5m2`).
pub fn decode_fp8(b: u8, e4: bool) -> f64 {
    if e4 {
        fp8(b, 4, 3, 7, false)
    } else {
        fp8(b, 5, 2, 15, true)
    }
}

/// `x` rounded to f32 (nearest even), as raw bits.
pub fn encode_f32(x: f64) -> u32 {
    (x as f32).to_bits()
}

/// `x` rounded to f16 (nearest even), as raw bits, rounded once from f64
/// (through [`f32_round_to_odd`]).
pub fn encode_f16(x: f64) -> u16 {
    half::f16::from_f32(f32_round_to_odd(x)).to_bits()
}

/// `x` rounded to bf16 (nearest even), as raw bits, rounded once from f64
/// (through [`f32_round_to_odd`]).
pub fn encode_bf16(x: f64) -> u16 {
    half::bf16::from_f32(f32_round_to_odd(x)).to_bits()
}

/// `x` rounded to f32 toward zero, its last bit then set where that lost
/// anything ("round to odd"; an infinity and a NaN stay what they are).
///
/// An f64 rounded so, then to nearest even into a format of at most 22
/// significant bits (f16, bf16), gives the nearest even of `x` itself: the
/// odd bit stands for every bit the first rounding dropped, and it lies at
/// least two bits below the second rounding's half unit. The `half`
/// crate's own `from_f64` keeps only the top 32 bits of an f64 before it
/// rounds, so it sees a tie where the dropped bits were not zero: the f32
/// `0x40548006` became bf16 `0x4054`, where `cvt.rn.bf16x2.f32` on the GPU
/// gives `0x4055` (the random-normal Triton recordings,
/// `tests/host/triton/gpu_rn`).
pub fn f32_round_to_odd(x: f64) -> f32 {
    let r = x as f32;
    if !r.is_finite() && x.is_finite() {
        // Past f32's range: toward zero is the largest finite value, odd.
        return f32::MAX.copysign(r);
    }
    // One step toward zero where nearest went away from it.
    let away = u32::from(f64::from(r).abs() > x.abs());
    let toward = f32::from_bits(r.to_bits() - away);
    f32::from_bits(toward.to_bits() | u32::from(f64::from(toward) != x && !x.is_nan()))
}

/// `x` as s32: wrapping, or clamped when `satfinite`.
pub fn encode_s32(x: i64, satfinite: bool) -> u32 {
    if satfinite {
        x.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
    } else {
        x as i32 as u32
    }
}

/// An f32 word as a TMA load through a tf32 tensor map (`TFLOAT32` or
/// `TFLOAT32_FTZ`) leaves it in shared memory: rounded to tf32's 10
/// mantissa bits to nearest, ties to even, a carry running into the
/// exponent (the largest finites become infinity, the largest subnormals
/// the smallest normal), subnormals rounded like the rest and not flushed
/// (not even by the `_FTZ` type), every NaN replaced by `0x7fffe000`.
/// Established on the device (`tests/host/probes/tma_f32_rounding.jsonl`:
/// 512 words, both types identical).
pub fn tma_round_tf32(w: u32) -> u32 {
    const DROPPED: u32 = (1 << 13) - 1;
    const HALF: u32 = 1 << 12;
    if w & 0x7f80_0000 == 0x7f80_0000 && w & 0x007f_ffff != 0 {
        return 0x7fff_e000;
    }
    let (low, kept) = (w & DROPPED, w & !DROPPED);
    let odd = kept & (1 << 13) != 0;
    if low > HALF || (low == HALF && odd) {
        kept + (1 << 13)
    } else {
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every word of the device probe, both tf32 types.
    #[test]
    fn tma_tf32_rounding_equals_the_device() {
        let text = include_str!("../../../tests/host/probes/tma_f32_rounding.jsonl");
        let mut checked = 0;
        for line in text.lines() {
            let hex = |key: &str| -> Vec<u32> {
                let at = line.find(&format!("\"{key}\": [")).expect(key) + key.len() + 5;
                let list = &line[at..at + line[at..].find(']').expect("]")];
                list.split(", ")
                    .map(|w| u32::from_str_radix(w.trim_matches('"'), 16).expect("hex"))
                    .collect()
            };
            let (input, smem) = (hex("input"), hex("smem"));
            let tf32 = line.contains("\"dtype\": 11") || line.contains("\"dtype\": 12");
            for (w, want) in input.iter().zip(&smem) {
                let got = if tf32 { tma_round_tf32(*w) } else { *w };
                assert_eq!(got, *want, "{w:#010x}");
                checked += 1;
            }
        }
        assert_eq!(checked, 4 * 512);
    }

    #[test]
    fn fp8_encoding_rounds_to_even_and_saturates() {
        // Every finite e4m3 and e5m2 value encodes back to its own bits.
        for b in 0..=255u8 {
            for e4 in [true, false] {
                let v = decode_fp8(b, e4);
                if v.is_finite() && !(v == 0.0 && b == 0x80) {
                    assert_eq!(encode_fp8(v, e4, true), b, "{b:#x} e4={e4} ({v})");
                }
            }
        }
        // Ties to even: 1.0625 is halfway between 1 (0x38) and 1.125 (0x39) in e4m3.
        assert_eq!(encode_fp8(1.0625, true, true), 0x38);
        assert_eq!(encode_fp8(1.1875, true, true), 0x3a);
        // Saturation, overflow, NaN.
        assert_eq!(encode_fp8(1e6, true, true), 0x7e);
        assert_eq!(encode_fp8(-1e6, false, true), 0xfb);
        assert_eq!(encode_fp8(1e6, true, false), 0x7f);
        assert_eq!(encode_fp8(1e6, false, false), 0x7c);
        assert_eq!(encode_fp8(f64::NAN, true, true), 0x7f);
        // The smallest e4m3 subnormal is 2^-9.
        assert_eq!(encode_fp8(2f64.powi(-9), true, true), 0x01);
        assert_eq!(encode_fp8(2f64.powi(-11), true, true), 0x00);
    }

    #[test]
    fn formats_decode_as_the_isa_defines_them() {
        assert_eq!(decode(ElemType::F16, 0x3c00), 1.0);
        assert_eq!(decode(ElemType::F16, 0xc000), -2.0);
        assert_eq!(decode(ElemType::Bf16, 0x3f80), 1.0);
        assert_eq!(
            decode(ElemType::Tf32, 0x3f80_1fff),
            1.0,
            "low 13 bits ignored"
        );
        // e4m3: 0x38 = 0.0111.000 = 2^(7-7) = 1; 0x7e = 448 (largest); 0x7f NaN.
        assert_eq!(decode(ElemType::E4m3, 0x38), 1.0);
        assert_eq!(decode(ElemType::E4m3, 0x7e), 448.0);
        assert!(decode(ElemType::E4m3, 0x7f).is_nan());
        assert_eq!(decode(ElemType::E4m3, 0x01), 2f64.powi(-9), "subnormal");
        // e5m2: 0x3c = 0.01111.00 = 1; 0x7c infinity; 0xc0 = -2.
        assert_eq!(decode(ElemType::E5m2, 0x3c), 1.0);
        assert_eq!(decode(ElemType::E5m2, 0x7c), f64::INFINITY);
        assert_eq!(decode(ElemType::E5m2, 0xc0), -2.0);
        assert_eq!(decode(ElemType::S8, 0xff), -1.0);
        assert_eq!(decode(ElemType::U8, 0xff), 255.0);
    }

    #[test]
    fn encodings_round_to_nearest_even() {
        assert_eq!(encode_f16(1.0), 0x3c00);
        assert_eq!(encode_f16(1.0 + 2f64.powi(-11)), 0x3c00, "tie to even");
        assert_eq!(encode_f16(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02);
        // Just above a tie, by less than an f32 unit or by bits of f32's
        // lowest that the top 32 bits of an f64 do not hold: up.
        assert_eq!(encode_f16(1.0 + 2f64.powi(-11) + 2f64.powi(-40)), 0x3c01);
        assert_eq!(encode_bf16(f64::from(f32::from_bits(0x4054_8006))), 0x4055);
        assert_eq!(encode_bf16(f64::from(f32::from_bits(0x4054_8000))), 0x4054);
        assert_eq!(encode_bf16(f64::from(f32::from_bits(0x4055_8000))), 0x4056);
        assert_eq!(encode_bf16(-(1.0 + 2f64.powi(-8) + 2f64.powi(-50))), 0xbf81);
        // Overflow, infinities, NaN, zeros and subnormals.
        assert_eq!(encode_bf16(1e300), 0x7f80);
        assert_eq!(encode_bf16(-1e300), 0xff80);
        assert_eq!(encode_f16(65520.0), 0x7c00, "the tie above 65504");
        assert_eq!(encode_f16(65519.99), 0x7bff);
        assert_eq!(encode_f16(f64::NEG_INFINITY), 0xfc00);
        assert!(half::bf16::from_bits(encode_bf16(f64::NAN)).is_nan());
        assert_eq!(encode_bf16(-0.0), 0x8000);
        assert_eq!(
            encode_f16(2f64.powi(-25) * 1.000001),
            0x0001,
            "above half the least"
        );
        assert_eq!(encode_f16(2f64.powi(-25)), 0x0000, "a tie to even zero");
        assert_eq!(encode_bf16(2f64.powi(-134) * 1.000001), 0x0001);
        assert_eq!(encode_bf16(1e-300), 0x0000);
        assert_eq!(encode_s32(1 << 40, true), i32::MAX as u32);
        assert_eq!(encode_s32(-(1 << 40), true), i32::MIN as u32);
        assert_eq!(encode_s32((1 << 32) + 5, false), 5);
    }
}
