//! The tensor core's own arithmetic: how one MMA instruction (a wgmma or
//! an `mma.sync`) turns the K products of a row of A and a column of B,
//! and the accumulator C, into one output, bit for bit as an H100 does.
//!
//! It is not the exact sum rounded once. For every floating-point input
//! type, the H100 adds all K products of the instruction and C in one
//! fused step:
//!
//! 1. each product is exact, and aligned at the sum of its factors'
//!    exponents, not at its own ([`anchor_of_product`]);
//! 2. the anchor of the step is the largest of the products' anchors and
//!    C's exponent ([`anchor_of_accumulator`]);
//! 3. every term keeps only its bits of weight `2^(anchor - bits)` and
//!    above, truncated toward zero: `bits` is 25 for `.f16`, `.bf16` and
//!    `.tf32` inputs, 13 for `.e4m3` and `.e5m2` ([`Arith::align_bits`],
//!    [`truncated`]);
//! 4. the truncated terms are added exactly;
//! 5. into an f32 accumulator, a sum that carried past the anchor is cut
//!    again to `bits` below its own leading bit ([`carry_truncated`],
//!    visible with FP8's 13 bits only), then rounded to f32 toward zero
//!    ([`f32_toward_zero`]); into an f16 accumulator, the sum is rounded to
//!    f16 to nearest even, with no second cut;
//! 6. infinities and NaNs follow IEEE's sum of the exact products and C,
//!    and every NaN comes out as the canonical `0x7fffffff` (f16:
//!    `0x7fff`); where every term is zero, IEEE's signs of zero.
//!
//! `tests/host/mma_probe.py` found this on an H100: its recording
//! `tests/host/mma/mma_probes.bin` holds the inputs and the GPU's outputs
//! of every dense wgmma type pair (f16, bf16, tf32, the four FP8 pairs;
//! f32 and f16 accumulators; N 8 to 256; imm-scale -1; scale-d 0) and of
//! `mma.sync` m16n8k16, on normal, wide-exponent, special-value,
//! cancelling and targeted inputs, and this model gives every one of its
//! outputs (`tests/mma_model.rs` checks them; `tests/host/mma_fit.py`
//! reproduces the fit and the alternatives it rejects). The exact sum
//! rounded to nearest, the model before this one, gives 54% of the f16
//! outputs with an f32 accumulator, 70% of bf16, 64% of tf32 and 8% of
//! FP8's.

/// How a form's sum is cut and rounded (steps 3 and 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arith {
    /// Bits kept below the anchor: 25 for 16-bit and tf32 inputs (24 and
    /// 26 miss outputs of the recordings), 13 for FP8 inputs (12 and 14
    /// miss). The FP8 figure is the "about 14 bits" of DeepSeek-V3's
    /// FP8 accumulation.
    pub align_bits: i32,
    /// The accumulator: f16 (true) or f32.
    pub f16_out: bool,
}

impl Arith {
    /// The arithmetic of a form with `fp8` inputs (or not) and an f16
    /// accumulator (or f32).
    pub fn of(fp8: bool, f16_out: bool) -> Arith {
        Arith {
            align_bits: if fp8 { 13 } else { 25 },
            f16_out,
        }
    }
}

/// The power of two of `x`'s exponent, `2^floor(log2 |x|)` (`+0.0` for a
/// zero; infinity for an infinity or NaN): the sign and significand bits
/// cleared. Exact for every f64 that is not subnormal in f64 (every MMA
/// input, product and accumulator is normal there).
#[inline(always)]
pub fn exponent_power(x: f64) -> f64 {
    f64::from_bits(x.to_bits() & 0x7ff0_0000_0000_0000)
}

/// Step 1: where a product `a * b` is aligned, as a power of two, from
/// its factors' exponent powers `pa`, `pb`: `2^(ea + eb)`, although the
/// product itself can reach `2^(ea + eb + 1)`. Aligning at the product's
/// own exponent misses outputs whose largest product has a significand of
/// 2 or more (4% of the f16 ones).
#[inline(always)]
pub fn anchor_of_product(pa: f64, pb: f64) -> f64 {
    pa * pb
}

/// Step 2: the anchor of the fused step, `2^anchor`: the largest of the
/// products' anchors (`powers`: the exponent powers of each product's
/// factors) and C's exponent power; `+0.0` when every term is zero.
#[inline(always)]
pub fn anchor_of_accumulator(c: f64, powers: impl Iterator<Item = (f64, f64)>) -> f64 {
    powers.fold(exponent_power(c), |m, (pa, pb)| {
        let p = anchor_of_product(pa, pb);
        if p > m {
            p
        } else {
            m
        }
    })
}

/// The factor that puts the bit of weight `2^(anchor - bits)` at `2^0`:
/// each term times it, truncated to an integer, is the term as the
/// aligned adder holds it.
#[inline(always)]
pub fn alignment_scale(anchor: f64, bits: i32) -> f64 {
    f64::from(1u32 << bits) / anchor
}

/// Step 3 for one term: `x * scale` truncated toward zero (an integer
/// below `2^(bits + 2)`: a product is below 4 times its anchor).
/// Truncation toward minus infinity instead misses 9% of the f16 outputs.
#[inline(always)]
pub fn truncated(x: f64, scale: f64) -> f64 {
    (x * scale).trunc()
}

/// Step 5 for an f32 accumulator: the sum `units` (in units of the
/// step's grid) cut to `bits` below its own leading bit where it carried
/// past `2^bits`, toward zero. Without it, 27% of the FP8 outputs with an
/// f32 accumulator are one to seven units too large in magnitude.
#[inline(always)]
pub fn carry_truncated(units: f64, bits: i32) -> f64 {
    let grid = exponent_power(units) / f64::from(1u32 << bits);
    let grid = if grid > 1.0 { grid } else { 1.0 };
    (units / grid).trunc() * grid
}

/// Step 5's rounding into f32: `x` toward zero (an overflow stays at the
/// largest finite value, as IEEE's round-toward-zero has it; the
/// recordings do not reach it). Rounding to nearest instead misses 36% of
/// the f16 outputs.
#[inline(always)]
pub fn f32_toward_zero(x: f64) -> f32 {
    let r = x as f32;
    // One step toward zero where nearest went away from it: the
    // magnitude's bits less one.
    let away = u32::from(f64::from(r).abs() > x.abs());
    f32::from_bits(r.to_bits() - away)
}

/// Step 5's rounding into f16: `x` to nearest even, rounded once
/// (`numbers::encode_f16`: through f32 rounded to odd, which keeps the
/// sticky bit that a second rounding needs; f64 to f32 to f16 by nearest
/// twice misses ties).
#[inline(always)]
pub fn f16_nearest(x: f64) -> u16 {
    crate::numbers::encode_f16(x)
}

/// Step 6: the output of an IEEE sum `s` (a NaN is the canonical one).
#[inline(always)]
pub fn ieee_output(s: f64, arith: Arith) -> u32 {
    match (s.is_nan(), arith.f16_out) {
        (true, false) => 0x7fff_ffff,
        (true, true) => 0x7fff,
        (false, false) => (s as f32).to_bits(),
        (false, true) => u32::from(f16_nearest(s)),
    }
}

/// Step 5 from the exact sum of the truncated terms, `units / scale`.
#[inline(always)]
pub fn finish(units: f64, scale: f64, arith: Arith) -> u32 {
    if arith.f16_out {
        u32::from(f16_nearest(units / scale))
    } else {
        f32_toward_zero(carry_truncated(units, arith.align_bits) / scale).to_bits()
    }
}

/// One output of the fused step as raw bits of the accumulator type: `c`
/// and the products `a * b` of `products` (one pass of it per step).
pub fn fused(c: f64, products: impl Iterator<Item = (f64, f64)> + Clone, arith: Arith) -> u32 {
    let ieee = |p: &mut dyn Iterator<Item = (f64, f64)>| p.fold(c, |s, (a, b)| s + a * b);
    if !c.is_finite() || products.clone().any(|(a, b)| !(a * b).is_finite()) {
        return ieee_output(ieee(&mut products.clone()), arith);
    }
    let powers = products
        .clone()
        .map(|(a, b)| (exponent_power(a), exponent_power(b)));
    let anchor = anchor_of_accumulator(c, powers);
    if anchor == 0.0 {
        return ieee_output(ieee(&mut products.clone()), arith);
    }
    let scale = alignment_scale(anchor, arith.align_bits);
    let units = products.fold(truncated(c, scale), |s, (a, b)| s + truncated(a * b, scale));
    finish(units, scale, arith)
}

#[cfg(test)]
mod tests {
    use super::*;

    const F32_WIDE: Arith = Arith {
        align_bits: 25,
        f16_out: false,
    };

    fn fused32(c: f32, p: &[(f64, f64)], arith: Arith) -> f32 {
        f32::from_bits(fused(f64::from(c), p.iter().copied(), arith))
    }

    #[test]
    fn rounding_toward_zero_keeps_exact_values_and_truncates_the_rest() {
        assert_eq!(f32_toward_zero(1.5), 1.5);
        let above_one = 1.0 + f64::EPSILON;
        assert_eq!(f32_toward_zero(above_one), 1.0);
        assert_eq!(f32_toward_zero(-above_one), -1.0);
        // Nearest would round this up in magnitude.
        assert_eq!(f32_toward_zero(2.0 - f64::EPSILON), 2.0 - f32::EPSILON);
        assert_eq!(f32_toward_zero(1e39), f32::MAX);
        assert_eq!(f32_toward_zero(-1e-50).to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    fn products_align_at_their_factors_exponents() {
        // 1.5 * 1.5 = 2.25 is aligned at 2^0, not at its own 2^1.
        let p = exponent_power(1.5);
        assert_eq!(anchor_of_product(p, p), 1.0);
        assert_eq!(exponent_power(-3.0), 2.0);
        assert_eq!(exponent_power(0.0), 0.0);
    }

    #[test]
    fn bits_below_the_anchor_window_are_truncated_toward_zero() {
        // Anchor 2^0: a term of 2^-26 is dropped (both signs), 2^-25 kept.
        let tiny = 2f64.powi(-26);
        let three = [(1.0, 1.0), (tiny, 1.0), (-tiny, 1.0)];
        assert_eq!(fused32(0.0, &three, F32_WIDE), 1.0);
        // 1 - 2^-25 is not an f32: toward zero gives 1 - 2^-24.
        let kept = [(1.0, 1.0), (-2f64.powi(-25), 1.0)];
        assert_eq!(fused32(0.0, &kept, F32_WIDE), 1.0 - f32::EPSILON / 2.0);
        // C is a term like the others: its anchor drops a product's bits.
        assert_eq!(fused32(2.0, &[(tiny, 1.0)], F32_WIDE), 2.0);
        // Only zeros: IEEE's signs.
        let neg = fused32(-0.0, &[(-0.0, 1.0)], F32_WIDE);
        assert_eq!(neg.to_bits(), (-0.0f32).to_bits());
        let cancel = fused32(0.0, &[(1.0, 1.0), (-1.0, 1.0)], F32_WIDE);
        assert_eq!(cancel.to_bits(), 0);
    }

    #[test]
    fn fp8_keeps_thirteen_bits_and_cuts_a_carried_sum_again() {
        let fp8 = Arith::of(true, false);
        // Anchor 2^0: 2^-13 kept, 2^-14 dropped.
        assert_eq!(
            fused32(0.0, &[(1.0, 1.0), (2f64.powi(-13), 1.0)], fp8),
            1.0 + 2f32.powi(-13)
        );
        assert_eq!(fused32(0.0, &[(1.0, 1.0), (2f64.powi(-14), 1.0)], fp8), 1.0);
        // 1.75 + 1.75 + 2^-12 carries to 2^1: cut to 2^(1 - 13).
        let carried = [(1.75, 1.0), (1.75, 1.0), (2f64.powi(-13), 1.0)];
        assert_eq!(fused32(0.0, &carried, fp8), 3.5);
    }

    #[test]
    fn f16_accumulators_round_to_nearest_and_nans_are_canonical() {
        let h = Arith::of(false, true);
        // 1 + 2^-11 is a tie between f16 neighbours: to even.
        let tie = [(1.0, 1.0), (2f64.powi(-11), 1.0)];
        assert_eq!(fused(0.0, tie.iter().copied(), h), 0x3c00);
        // Just above that tie (by less than an f32 ulp): up, rounded once.
        assert_eq!(f16_nearest(1.0 + 2f64.powi(-11) + 2f64.powi(-30)), 0x3c01);
        let nan = [(f64::INFINITY, 1.0), (f64::NEG_INFINITY, 1.0)];
        assert_eq!(fused(0.0, nan.iter().copied(), h), 0x7fff);
        assert_eq!(fused(f64::NAN, tie.iter().copied(), F32_WIDE), 0x7fff_ffff);
        assert_eq!(
            fused(1.0, [(f64::INFINITY, 2.0)].into_iter(), F32_WIDE),
            0x7f80_0000
        );
    }
}
