//! `mma_arith`'s fused step over a whole wgmma: every output of a 64xN
//! tile from the operands as `wgmma_math` reads them, in the accumulator
//! registers' layout.
//!
//! Each output needs two passes over K (the anchor first, then the
//! truncated sum), several times the work of a plain dot product, so the
//! passes run on tiles of 8 rows by 8 columns whose anchors, scales and
//! sums stay in vector registers: written out in AVX-512 where the CPU has
//! it (the compiler leaves the anchor pass scalar), else portable loops.
//! The rare outputs outside the step (an infinite or NaN term, only zeros)
//! take `mma_arith::fused` one by one.

use crate::mma_arith::{self, Arith};
use crate::numbers::decode;
use crate::wgmma_math::WARPGROUP;
use ori_ir::wgmma_form::{ElemType, WgmmaForm};

/// The arithmetic of a form's sum: every floating-point input type (the
/// integer forms keep their exact sum).
pub fn arith_of(f: &WgmmaForm) -> Option<Arith> {
    let f16_out = f.dtype == ElemType::F16;
    match f.atype {
        ElemType::F16 | ElemType::Bf16 | ElemType::Tf32 => Some(Arith::of(false, f16_out)),
        ElemType::E4m3 | ElemType::E5m2 => Some(Arith::of(true, f16_out)),
        _ => None,
    }
}

/// The operands of a tile: values and their exponent powers (A `m x k`,
/// B transposed `k x n` with `wgmma_math::operand_b`'s column order).
struct Operands<'a> {
    a: &'a [f64],
    bt: &'a [f64],
    pa: Vec<f64>,
    pb: Vec<f64>,
    shape: (usize, usize, usize),
    arith: Arith,
}

/// Rows of A in a tile.
const ROWS: usize = 8;

/// The new accumulators (`out`, zeroed for an f16 accumulator: its halves
/// are OR-ed in) from `c` (register-major, read only with `scale_d`), `a`
/// and `bt`: `wgmma_math::accumulate` for floating-point inputs.
pub fn accumulate(
    out: &mut [u32],
    c: &[u32],
    scale_d: bool,
    arith: Arith,
    (a, bt): (&[f64], &[f64]),
    shape: (usize, usize, usize),
) {
    let ops = (a, bt);
    // Where f32 holds every partial sum: f32 vectors.
    if crate::wgmma_exact::accumulate(out, c, (scale_d, arith), ops, shape) {
        return;
    }
    let exact = match operands_fastest(scale_d, arith, ops) {
        None => false,
        // An f32 accumulator's C is checked as it is added.
        Some(bounds) if !arith.f16_out => exact_sums(out, c, scale_d, arith, ops, shape, bounds),
        Some(bounds) => {
            bounds.is_none_or(|b| c_fits(c, true, b))
                && exact_sums(out, c, scale_d, arith, ops, shape, None)
        }
    };
    if !exact {
        fused_tiles(out, c, scale_d, arith, ops, shape);
    }
}

/// [`operands_suffice`] compiled for AVX-512 where the CPU has it (its
/// folds then run 8 lanes at a time).
fn operands_fastest(scale_d: bool, arith: Arith, ops: (&[f64], &[f64])) -> Option<Option<CBounds>> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has the feature the function is compiled for.
            return unsafe { operands_avx512(scale_d, arith, ops) };
        }
    }
    operands_suffice(scale_d, arith, ops)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn operands_avx512(
    scale_d: bool,
    arith: Arith,
    ops: (&[f64], &[f64]),
) -> Option<Option<CBounds>> {
    operands_suffice(scale_d, arith, ops)
}

/// [`accumulate`] by `mma_arith`'s steps, tile by tile.
fn fused_tiles(
    out: &mut [u32],
    c: &[u32],
    scale_d: bool,
    arith: Arith,
    (a, bt): (&[f64], &[f64]),
    shape: (usize, usize, usize),
) {
    let (m, n, _) = shape;
    let power = |x: &f64| mma_arith::exponent_power(*x);
    let o = Operands {
        a,
        bt,
        pa: a.iter().map(power).collect(),
        pb: bt.iter().map(power).collect(),
        shape,
        arith,
    };
    let finite = a.iter().chain(bt).all(|x| x.is_finite());
    for row0 in (0..m).step_by(ROWS) {
        let rows = ROWS.min(m - row0);
        for col in (0..n).step_by(8) {
            let mut slots = [[0usize; 8]; ROWS];
            let mut cv = [[0f64; 8]; ROWS];
            for r in 0..rows {
                slots[r] = eight_slots(row0 + r, col);
                if scale_d {
                    for (v, s) in cv[r].iter_mut().zip(slots[r]) {
                        *v = c_value(c, s, arith.f16_out);
                    }
                }
            }
            let values = match finite && rows == ROWS {
                true => tile(&cv, row0, col, &o),
                false => tile_by_outputs(&cv, (row0, rows), col, &o),
            };
            for r in 0..rows {
                for (s, v) in slots[r].iter().zip(values[r]) {
                    put(out, *s, v, arith.f16_out);
                }
            }
        }
    }
}

/// A shortcut of the host, not a step of the GPU: whether no term of any
/// output loses a bit at `mma_arith`'s step 3, so that every output is
/// its exact sum (f64 holds it) rounded as step 5 says. Only for 25 kept
/// bits (a carry cut of 13 bits can change an exact sum), and checked from
/// the operands alone: every product a multiple of a power of two `grid`
/// no lower than `2^-25` times the largest anchor `top` any product can
/// have ([`operands_suffice`]), and every C within [`CBounds`]. Small
/// integers pass, random data does not.
#[cfg(test)]
fn exact_sums_suffice(c: &[u32], scale_d: bool, arith: Arith, ops: (&[f64], &[f64])) -> bool {
    match operands_suffice(scale_d, arith, ops) {
        None => false,
        Some(None) => true,
        Some(Some(b)) => c_fits(c, arith.f16_out, b),
    }
}

/// What [`exact_sums_suffice`] asks of each C: neither so large that its
/// anchor lifts the cut above the products' grid (`lift`), nor with bits
/// below `top * 2^-25` (`to_cut` scales them to integers) unless it is at
/// least `top`, nor `-0.0` (whose sign a plain sum loses).
#[derive(Clone, Copy, Debug)]
struct CBounds {
    to_cut: f64,
    top: f64,
    lift: f64,
}

impl CBounds {
    /// Whether C `x` (`negative_zero`: it is `-0.0`) is within them.
    #[inline(always)]
    fn fit(&self, x: f64, negative_zero: bool) -> bool {
        let fine = is_integer(x * self.to_cut) | (x.abs() >= self.top);
        fine & (x.abs() < self.lift) & !negative_zero
    }
}

/// The operands' half of [`exact_sums_suffice`]: `None` where they do not
/// suffice, else the bounds every C must keep (`None`: no C is added).
/// Written without early exits (vector code).
#[inline(always)]
fn operands_suffice(
    scale_d: bool,
    arith: Arith,
    (a, bt): (&[f64], &[f64]),
) -> Option<Option<CBounds>> {
    const WINDOW: f64 = (1u64 << 25) as f64;
    if arith.align_bits != 25 {
        return None;
    }
    let (Some((ga, ta)), Some((gb, tb))) = (grid_and_top(a, 12), grid_and_top(bt, 13)) else {
        return None;
    };
    let (grid, top) = (ga * gb, ta * tb);
    if grid * WINDOW < top {
        return None;
    }
    Some(scale_d.then_some(CBounds {
        to_cut: WINDOW / top,
        top,
        lift: grid * WINDOW * 2.0,
    }))
}

/// Whether every C of `c` (f16 pairs when `f16`) is within `b`.
#[inline(always)]
fn c_fits(c: &[u32], f16: bool, b: CBounds) -> bool {
    match f16 {
        false => c.iter().fold(true, |ok, w| {
            ok & b.fit(f64::from(f32::from_bits(*w)), *w == 0x8000_0000)
        }),
        true => c.iter().fold(true, |ok, w| {
            let (lo, hi) = (*w & 0xffff, *w >> 16);
            let half = |h: u32| f64::from(half::f16::from_bits(h as u16));
            ok & b.fit(half(lo), lo == 0x8000)
                & b.fit(half(hi), hi == 0x8000)
                & (lo & 0x7c00 != 0x7c00)
                & (hi & 0x7c00 != 0x7c00)
        }),
    }
}

/// Whether `v` is an integer (below `2^51`: adding and removing
/// `1.5 * 2^52` leaves it).
#[inline(always)]
fn is_integer(v: f64) -> bool {
    let magic = 1.5 * (1u64 << 52) as f64;
    ((v + magic) - magic == v) & (v.abs() < (1u64 << 51) as f64)
}

/// A power of two that divides every value of `xs` (1 where they are
/// integers, else `2^-spare` times the largest exponent power where that
/// divides them), and that largest exponent power; `None` if all are
/// zero, one is not finite, or no such power divides them.
#[inline(always)]
fn grid_and_top(xs: &[f64], spare: i32) -> Option<(f64, f64)> {
    // The largest exponent power as the largest of the exponent fields
    // (an integer maximum, which the compiler vectorizes).
    let bits = xs
        .iter()
        .fold(0u64, |m, x| m.max(x.to_bits() & 0x7ff0_0000_0000_0000));
    let top = f64::from_bits(bits);
    if top == 0.0 || top.is_infinite() {
        return None;
    }
    let divides = |g: f64| {
        let inv = 1.0 / g;
        xs.iter().fold(true, |ok, x| ok & is_integer(x * inv))
    };
    let fine = top / (1u64 << spare) as f64;
    if fine < 1.0 && divides(1.0) {
        return Some((1.0, top));
    }
    divides(fine).then_some((fine, top))
}

/// The outputs as exact sums (`wgmma_math::products_each`, products in f64)
/// plus C, each rounded once as `mma_arith`'s step 5 rounds: where
/// [`exact_sums_suffice`]. An f32 accumulator's C is checked against
/// `bounds` as it is added: false (and `out` to be written again) where
/// one is outside them.
fn exact_sums(
    out: &mut [u32],
    c: &[u32],
    scale_d: bool,
    arith: Arith,
    (a, bt): (&[f64], &[f64]),
    shape: (usize, usize, usize),
    bounds: Option<CBounds>,
) -> bool {
    use crate::wgmma_math::{each_four, products_each};
    let keep = if scale_d { u32::MAX } else { 0 };
    if arith.f16_out {
        products_each(a, bt, shape, |row, col, sums| {
            each_four(row, col, sums, |j, t0, four| {
                for (q, &sum) in four.iter().enumerate() {
                    let at = j * WARPGROUP + t0 + q;
                    let cv = if scale_d { c_value(c, at, true) } else { 0.0 };
                    put(out, at, u32::from(mma_arith::f16_nearest(cv + sum)), true);
                }
            })
        });
        return true;
    }
    // The sums in the accumulators' order, then one pass that adds C and
    // rounds (vector conversions).
    SUMS.with(|cell| {
        let mut sums = cell.borrow_mut();
        if sums.len() < out.len() {
            sums.resize(out.len(), 0.0);
        }
        let sums = &mut sums[..out.len()];
        if out.len() != shape.0 * shape.1 {
            // Not one output per accumulator: no slot may keep an old sum.
            sums.fill(0.0);
        }
        products_each(a, bt, shape, |row, col, s| {
            each_four(row, col, s, |j, t0, four| {
                let at = j * WARPGROUP + t0;
                sums[at..at + 4].copy_from_slice(four);
            })
        });
        add_toward_zero(out, c, keep, sums, bounds)
    })
}

thread_local! {
    /// `exact_sums`' sums, kept from one wgmma to the next: each output
    /// writes its own slot before the slot is read, so it is not cleared.
    static SUMS: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `out = c + sums` (C's bits AND `keep`) rounded toward zero into f32
/// (`mma_arith::f32_toward_zero`), by the fastest code the CPU runs;
/// whether every C was within `bounds` (when given).
fn add_toward_zero(
    out: &mut [u32],
    c: &[u32],
    keep: u32,
    sums: &[f64],
    bounds: Option<CBounds>,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has the feature the function is compiled for.
            return unsafe { add_toward_zero_avx512(out, c, keep, sums, bounds) };
        }
    }
    let mut fit = true;
    for ((o, c), s) in out.iter_mut().zip(c).zip(sums) {
        let x = f64::from(f32::from_bits(c & keep));
        fit &= bounds.is_none_or(|b| b.fit(x, c & keep == 0x8000_0000));
        *o = mma_arith::f32_toward_zero(x + s).to_bits();
    }
    fit
}

/// [`add_toward_zero`] 8 lanes at a time, the rounding by the
/// conversion's own `{rz-sae}` (the same bits as
/// `mma_arith::f32_toward_zero`: both round toward zero once), the check
/// of C ([`CBounds::fit`]) in vectors too.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn add_toward_zero_avx512(
    out: &mut [u32],
    c: &[u32],
    keep: u32,
    sums: &[f64],
    bounds: Option<CBounds>,
) -> bool {
    use std::arch::x86_64::*;
    const TRUNC: i32 = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
    let n = out.len().min(c.len()).min(sums.len());
    let keep8 = _mm256_set1_epi32(keep as i32);
    let mut fit: __mmask8 = 0xff;
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: `i + 8 <= n` elements of each slice.
        unsafe {
            let cw = _mm256_and_si256(_mm256_loadu_si256(c.as_ptr().add(i).cast()), keep8);
            let cx = _mm512_cvtps_pd(_mm256_castsi256_ps(cw));
            if let Some(b) = bounds {
                fit &= fit_mask(cx, cw, b);
            }
            let x = _mm512_add_pd(cx, _mm512_loadu_pd(sums.as_ptr().add(i)));
            let r = _mm512_cvt_roundpd_ps::<TRUNC>(x);
            _mm256_storeu_ps(out.as_mut_ptr().add(i).cast(), r);
        }
        i += 8;
    }
    let mut all = fit == 0xff;
    for k in i..n {
        let x = f64::from(f32::from_bits(c[k] & keep));
        all &= bounds.is_none_or(|b| b.fit(x, c[k] & keep == 0x8000_0000));
        out[k] = mma_arith::f32_toward_zero(x + sums[k]).to_bits();
    }
    all
}

/// [`CBounds::fit`] of 8 C values `cx` (their f32 bits `cw`), as a mask.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn fit_mask(
    cx: std::arch::x86_64::__m512d,
    cw: std::arch::x86_64::__m256i,
    b: CBounds,
) -> std::arch::x86_64::__mmask8 {
    use std::arch::x86_64::*;
    let magic = _mm512_set1_pd(1.5 * (1u64 << 52) as f64);
    let v = _mm512_mul_pd(cx, _mm512_set1_pd(b.to_cut));
    let back = _mm512_sub_pd(_mm512_add_pd(v, magic), magic);
    let integer = _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(back, v)
        & _mm512_cmp_pd_mask::<_CMP_LT_OQ>(_mm512_abs_pd(v), _mm512_set1_pd((1u64 << 51) as f64));
    let ax = _mm512_abs_pd(cx);
    let big = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(ax, _mm512_set1_pd(b.top));
    let small = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(ax, _mm512_set1_pd(b.lift));
    let zero_bits = _mm256_cmpeq_epi32(cw, _mm256_set1_epi32(i32::MIN));
    let negative_zero = _mm256_movemask_ps(_mm256_castsi256_ps(zero_bits)) as __mmask8;
    (integer | big) & small & !negative_zero
}

/// C of the output at `at` (f32 numbering, register-major: register
/// `at / WARPGROUP` of thread `at % WARPGROUP`); an f16 accumulator packs
/// registers `2i` and `2i + 1` of that numbering into its register `i`.
fn c_value(c: &[u32], at: usize, f16: bool) -> f64 {
    if !f16 {
        return f64::from(f32::from_bits(c[at]));
    }
    let (j, t) = (at / WARPGROUP, at % WARPGROUP);
    let word = c[(j / 2) * WARPGROUP + t];
    decode(ElemType::F16, (word >> (16 * (j % 2))) & 0xffff)
}

/// Write output `v` (raw bits) at `at` (as [`c_value`] numbers it).
fn put(out: &mut [u32], at: usize, v: u32, f16: bool) {
    if !f16 {
        out[at] = v;
        return;
    }
    let (j, t) = (at / WARPGROUP, at % WARPGROUP);
    out[(j / 2) * WARPGROUP + t] |= v << (16 * (j % 2));
}

/// Where the outputs of `row`, permuted columns `col..col + 8` (`col` a
/// multiple of 8; see `wgmma_math::operand_b`), are in the register-major
/// accumulators, f32 numbering.
fn eight_slots(row: usize, col: usize) -> [usize; 8] {
    let (w, r) = (row / 16, row % 16);
    let t0 = 32 * w + 4 * (r % 8);
    let mut slots = [0; 8];
    for (i, s) in slots.iter_mut().enumerate() {
        let pc = col + 4 * (i / 4);
        let j = 4 * (pc / 8) + 2 * (r / 8) + (pc % 8) / 4;
        *s = j * WARPGROUP + t0 + i % 4;
    }
    slots
}

/// A full tile of finite operands, by the fastest code the CPU runs.
fn tile(c: &[[f64; 8]; ROWS], row0: usize, col: usize, o: &Operands<'_>) -> [[u32; 8]; ROWS] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has the feature the function is compiled for.
            return unsafe { tile_avx512(c, row0, col, o) };
        }
    }
    tile_portable(c, row0, col, o)
}

/// The outputs of a tile one by one (`mma_arith::fused`): tiles with
/// fewer rows, or operands with an infinity or NaN.
fn tile_by_outputs(
    c: &[[f64; 8]; ROWS],
    (row0, rows): (usize, usize),
    col: usize,
    o: &Operands<'_>,
) -> [[u32; 8]; ROWS] {
    let mut out = [[0u32; 8]; ROWS];
    for r in 0..rows {
        for j in 0..8 {
            out[r][j] = output(c[r][j], row0 + r, col + j, o);
        }
    }
    out
}

/// One output by `mma_arith::fused`.
fn output(c: f64, row: usize, col: usize, o: &Operands<'_>) -> u32 {
    let (_, n, k) = o.shape;
    let products = (0..k).map(|kk| (o.a[row * k + kk], o.bt[kk * n + col]));
    mma_arith::fused(c, products, o.arith)
}

/// [`tile`] in portable loops: the anchors, the scales, the truncated
/// sums, the finish (`mma_arith`'s steps in order).
fn tile_portable(
    c: &[[f64; 8]; ROWS],
    row0: usize,
    col: usize,
    o: &Operands<'_>,
) -> [[u32; 8]; ROWS] {
    use mma_arith::{alignment_scale, anchor_of_product, exponent_power, truncated};
    let (_, n, k) = o.shape;
    let bits = o.arith.align_bits;
    let mut anchor = c.map(|row| row.map(exponent_power));
    for kk in 0..k {
        let prow = &o.pb[kk * n + col..kk * n + col + 8];
        for (r, anchor) in anchor.iter_mut().enumerate() {
            let p = o.pa[(row0 + r) * k + kk];
            for (x, pb) in anchor.iter_mut().zip(prow) {
                let q = anchor_of_product(p, *pb);
                *x = if q > *x { q } else { *x };
            }
        }
    }
    let scale = anchor.map(|row| row.map(|x| alignment_scale(x, bits)));
    let mut units = [[0f64; 8]; ROWS];
    for r in 0..ROWS {
        for j in 0..8 {
            units[r][j] = truncated(c[r][j], scale[r][j]);
        }
    }
    for kk in 0..k {
        let brow = &o.bt[kk * n + col..kk * n + col + 8];
        for r in 0..ROWS {
            let x = o.a[(row0 + r) * k + kk];
            for j in 0..8 {
                units[r][j] += truncated(x * brow[j], scale[r][j]);
            }
        }
    }
    let mut out = [[0u32; 8]; ROWS];
    for r in 0..ROWS {
        for j in 0..8 {
            out[r][j] = match anchor[r][j] {
                // Only zeros, or C infinite or NaN.
                x if x == 0.0 || x.is_infinite() => output(c[r][j], row0 + r, col + j, o),
                _ => mma_arith::finish(units[r][j], scale[r][j], o.arith),
            };
        }
    }
    out
}

/// [`tile`] in AVX-512: one vector per row of the tile for each of the
/// anchors, the scales and the sums; an f32 accumulator's finish (the
/// carry cut, the rounding toward zero by the conversion's own `{rz-sae}`)
/// in vectors too.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn tile_avx512(
    c: &[[f64; 8]; ROWS],
    row0: usize,
    col: usize,
    o: &Operands<'_>,
) -> [[u32; 8]; ROWS] {
    use std::arch::x86_64::*;
    const TRUNC: i32 = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
    let (_, n, k) = o.shape;
    let exp_mask = _mm512_set1_epi64(0x7ff0_0000_0000_0000);
    let power =
        |v: __m512d| _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(v), exp_mask));
    // SAFETY (the loads): the slices hold 8 values from their start
    // (`col + 8 <= n`), which the slicing checks.
    let load = |s: &[f64]| unsafe { _mm512_loadu_pd(s[..8].as_ptr()) };
    let (mut cw, mut anchor) = ([_mm512_setzero_pd(); ROWS], [_mm512_setzero_pd(); ROWS]);
    for r in 0..ROWS {
        cw[r] = load(&c[r]);
        anchor[r] = power(cw[r]);
    }
    for kk in 0..k {
        let prow = load(&o.pb[kk * n + col..]);
        for (r, anchor) in anchor.iter_mut().enumerate() {
            let p = _mm512_mul_pd(_mm512_set1_pd(o.pa[(row0 + r) * k + kk]), prow);
            *anchor = _mm512_max_pd(*anchor, p);
        }
    }
    let window = _mm512_set1_pd(f64::from(1u32 << o.arith.align_bits));
    let (mut scale, mut units) = ([_mm512_setzero_pd(); ROWS], [_mm512_setzero_pd(); ROWS]);
    for r in 0..ROWS {
        scale[r] = _mm512_div_pd(window, anchor[r]);
        units[r] = _mm512_roundscale_pd::<TRUNC>(_mm512_mul_pd(cw[r], scale[r]));
    }
    for kk in 0..k {
        let brow = load(&o.bt[kk * n + col..]);
        for r in 0..ROWS {
            let p = _mm512_mul_pd(_mm512_set1_pd(o.a[(row0 + r) * k + kk]), brow);
            let t = _mm512_roundscale_pd::<TRUNC>(_mm512_mul_pd(p, scale[r]));
            units[r] = _mm512_add_pd(units[r], t);
        }
    }
    let mut out = [[0u32; 8]; ROWS];
    for r in 0..ROWS {
        if o.arith.f16_out {
            let mut u = [0f64; 8];
            let mut s = [0f64; 8];
            // SAFETY: `u` and `s` hold 8 values.
            unsafe {
                _mm512_storeu_pd(u.as_mut_ptr(), units[r]);
                _mm512_storeu_pd(s.as_mut_ptr(), scale[r]);
            }
            for j in 0..8 {
                out[r][j] = mma_arith::finish(u[j], s[j], o.arith);
            }
        } else {
            // The carry cut: a grid of max(2^e(units) / window, 1).
            let grid = _mm512_max_pd(_mm512_div_pd(power(units[r]), window), _mm512_set1_pd(1.0));
            let cut = _mm512_roundscale_pd::<TRUNC>(_mm512_div_pd(units[r], grid));
            let v = _mm512_div_pd(_mm512_mul_pd(cut, grid), scale[r]);
            let f = _mm512_cvt_roundpd_ps::<TRUNC>(v);
            // SAFETY: `out[r]` holds 8 words.
            unsafe { _mm256_storeu_ps(out[r].as_mut_ptr().cast(), f) };
        }
        let zero = _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(anchor[r], _mm512_setzero_pd());
        let inf = _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(anchor[r], _mm512_set1_pd(f64::INFINITY));
        let mut special = zero | inf;
        while special != 0 {
            // Only zeros, or C infinite or NaN.
            let j = special.trailing_zeros() as usize;
            out[r][j] = output(c[r][j], row0 + r, col + j, o);
            special &= special - 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The three ways to a tile (AVX-512 where the CPU has it, portable
    /// loops, output by output) give the same bits, on values of every
    /// input type's range (random significands and exponents, zeros) and
    /// C of random exponents, for both accumulators and both alignments.
    #[test]
    fn every_tile_path_gives_the_same_bits() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (m, n, k) = (ROWS, 16, 32);
        for (fp8, f16_out) in [(false, false), (false, true), (true, false), (true, true)] {
            let mut value = |spread: u64| {
                let r = next();
                let e = (r % spread) as i32 - (spread / 2) as i32;
                let x = (1.0 + ((r >> 8) % 1024) as f64 / 1024.0) * 2f64.powi(e);
                match r >> 62 {
                    0 => 0.0,
                    1 => -x,
                    _ => x,
                }
            };
            let a: Vec<f64> = (0..m * k).map(|_| value(12)).collect();
            let bt: Vec<f64> = (0..k * n).map(|_| value(12)).collect();
            let power = |x: &f64| mma_arith::exponent_power(*x);
            let o = Operands {
                a: &a,
                bt: &bt,
                pa: a.iter().map(power).collect(),
                pb: bt.iter().map(power).collect(),
                shape: (m, n, k),
                arith: Arith::of(fp8, f16_out),
            };
            let mut c = [[0f64; 8]; ROWS];
            for row in c.iter_mut() {
                for x in row.iter_mut() {
                    // An f16 accumulator holds f16 values.
                    let v = value(40);
                    *x = if f16_out {
                        f64::from(half::f16::from_f64(v))
                    } else {
                        f64::from(v as f32)
                    };
                }
            }
            for col in [0, 8] {
                let one_by_one = tile_by_outputs(&c, (0, ROWS), col, &o);
                assert_eq!(
                    tile_portable(&c, 0, col, &o),
                    one_by_one,
                    "portable {fp8} {f16_out}"
                );
                assert_eq!(tile(&c, 0, col, &o), one_by_one, "fastest {fp8} {f16_out}");
            }
        }
    }

    /// Small integers take the exact sums; they give what the steps give.
    #[test]
    fn exact_sums_are_the_steps_where_they_suffice() {
        let (m, n, k) = (64, 16, 16);
        let small = |i: usize| ((i * 7 + 3) % 9) as f64 - 4.0;
        let a: Vec<f64> = (0..m * k).map(small).collect();
        let bt: Vec<f64> = (0..k * n).map(|i| small(i * 5 + 1)).collect();
        for f16_out in [false, true] {
            let arith = Arith::of(false, f16_out);
            let words = m * n / if f16_out { 2 } else { 1 };
            let c: Vec<u32> = (0..words)
                .map(|i| match f16_out {
                    false => (small(i) * 100.0) as f32,
                    true => 0.0,
                })
                .map(f32::to_bits)
                .collect();
            assert!(exact_sums_suffice(&c, true, arith, (&a, &bt)));
            let (mut fast, mut steps) = (vec![0u32; words], vec![0u32; words]);
            let bounds = operands_suffice(true, arith, (&a, &bt)).flatten();
            assert!(exact_sums(
                &mut fast,
                &c,
                true,
                arith,
                (&a, &bt),
                (m, n, k),
                bounds
            ));
            fused_tiles(&mut steps, &c, true, arith, (&a, &bt), (m, n, k));
            assert_eq!(fast, steps, "f16 accumulator: {f16_out}");
        }
        // A fraction below the window, or a C far above it: the steps.
        let arith = Arith::of(false, false);
        let fine: Vec<f64> = a.iter().map(|x| x + 2f64.powi(-20)).collect();
        assert!(!exact_sums_suffice(&[0], true, arith, (&fine, &bt)));
        assert!(!exact_sums_suffice(
            &[1e30f32.to_bits()],
            true,
            arith,
            (&a, &bt)
        ));
        assert!(!exact_sums_suffice(
            &[(-0.0f32).to_bits()],
            true,
            arith,
            (&a, &bt)
        ));
        // One C out of bounds among the words (a fraction, huge, -0.0, in
        // the vector body or the tail): `accumulate` still gives the steps.
        let words = m * n;
        for (at, bad) in [(3, 0.3f32), (77, 1e30), (1000, -0.0), (words - 1, 0.3)] {
            let mut c: Vec<u32> = (0..words).map(|i| (small(i) as f32).to_bits()).collect();
            c[at] = bad.to_bits();
            let (mut got, mut steps) = (vec![0u32; words], vec![0u32; words]);
            accumulate(&mut got, &c[..], true, arith, (&a, &bt), (m, n, k));
            fused_tiles(&mut steps, &c, true, arith, (&a, &bt), (m, n, k));
            assert_eq!(got, steps, "C {bad} at {at}");
            // The tail past the vectors of 8.
            let cut = words - 3;
            let (mut got, mut want) = (vec![0u32; cut], vec![0u32; cut]);
            let sums = vec![0.5; cut];
            let b = operands_suffice(true, arith, (&a, &bt))
                .flatten()
                .expect("bounds");
            let fit = add_toward_zero(&mut got, &c[..cut], u32::MAX, &sums, Some(b));
            let want_fit = c[..cut]
                .iter()
                .all(|w| b.fit(f64::from(f32::from_bits(*w)), *w == 0x8000_0000));
            for (o, w) in want.iter_mut().zip(&c) {
                *o = mma_arith::f32_toward_zero(f64::from(f32::from_bits(*w)) + 0.5).to_bits();
            }
            assert_eq!((got, fit), (want, want_fit), "tail, C {bad} at {at}");
        }
    }
}
