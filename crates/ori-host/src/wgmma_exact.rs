//! A shortcut of the host, not a step of the GPU: a wgmma of f16, bf16 or
//! tf32 inputs into an f32 accumulator whose every partial sum f32 holds
//! exactly, summed in f32 vectors (16 lanes where f64 has 8) straight from
//! C into the result.
//!
//! Let `g = 2^e` be the largest power of two that divides every product
//! (`e`: the sum of the lowest bit exponents that any nonzero value of A,
//! and of B, has), and `P = K * max|a| * max|b|`, a bound of an output's
//! K products. Where every C is a multiple of `g`, not `-0.0` (nor
//! infinite or NaN), and `|C| + P <= 2^24 g`:
//!
//! * `mma_arith`'s steps give the exact sum `S`: the anchor (the largest
//!   product anchor, at most `|a| |b|`, and C's exponent power, at most
//!   `|C|`) is at most `2^24 g`, so step 3 cuts below `2^-25` of it, under
//!   `g`, and every term, a multiple of `g`, keeps every bit; `S`, a
//!   multiple of `g` of at most `2^24 g` in magnitude, has at most 24
//!   significant bits, so step 5 neither cuts a carry nor rounds. A zero
//!   `S` is `+0.0` (the sum starts from C, which is not `-0.0`).
//! * f32 arithmetic gives `S` too: every input of these types is an f32;
//!   with `g` a normal f32 and `2^24 g` within f32's range, every product
//!   and every partial sum `C + p_1 + ... + p_i` (in any order) is a
//!   multiple of `g` of at most `2^24 g`, an f32, so each operation, fused
//!   or not, is exact; and `x + (-x)` is `+0.0`, as is a sum from `+0.0`.
//!
//! Small integers pass (the bench's matmul, the integer-valued
//! recordings); random data does not. The tests check the result against
//! `mma_arith::fused` output by output on random inputs of every scale,
//! and the vector code against the portable loop.

use crate::mma_arith::Arith;
use crate::wgmma_math::WARPGROUP;
use std::cell::RefCell;

/// Rows of A in a tile.
const ROWS: usize = 8;

/// Permuted columns of B in a tile (two vectors of 16 f32).
const COLS: usize = 32;

thread_local! {
    /// The operands as f32 (A, then B transposed), kept from one wgmma to
    /// the next.
    static OPERANDS: RefCell<(Vec<f32>, Vec<f32>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// `wgmma_fused::accumulate` where the module's conditions hold: the
/// outputs written into `out` and true; else false, and `out` untouched.
/// `c` and `out` are register-major, `a` is `m x k`, `bt` `k x n` with
/// `wgmma_math::operand_b`'s column order.
pub(crate) fn accumulate(
    out: &mut [u32],
    c: &[u32],
    (scale_d, arith): (bool, Arith),
    (a, bt): (&[f64], &[f64]),
    (m, n, k): (usize, usize, usize),
) -> bool {
    // Only where the vector code runs: elsewhere `wgmma_fused`'s exact
    // f64 sums (vectorized for AVX2) are the faster way.
    if !avx512() {
        return false;
    }
    let form_fits = arith == Arith::of(false, false);
    let shape_fits = m % ROWS == 0 && n % COLS == 0 && out.len() == m * n && c.len() == m * n;
    if !form_fits || !shape_fits {
        return false;
    }
    let Some((e, room)) = bound(a, bt, k) else {
        return false;
    };
    let c = c.get(..).filter(|_| scale_d);
    OPERANDS.with(|cell| {
        let (a32, bt32) = &mut *cell.borrow_mut();
        // Exact: every input of these types is an f32.
        narrow_fastest(a, a32);
        narrow_fastest(bt, bt32);
        tiles(out, c, (a32, bt32), (m, n, k), (e, room), avx512())
    })
}

/// The exponent `e` of the module's doc's grid `g = 2^e` and the room
/// `2^24 g - P` left for |C|: `None` where it is negative, where `g` is not a normal f32 or
/// `2^24 g` is past f32's range, where A or B is all zeros, or where an
/// operand is infinite or NaN.
fn bound(a: &[f64], bt: &[f64], k: usize) -> Option<(i32, f64)> {
    let ((low_a, max_a), (low_b, max_b)) = (scan_fastest(a)?, scan_fastest(bt)?);
    let e = low_a + low_b;
    if !(-126..=100).contains(&e) {
        return None;
    }
    let units = 2f64.powi(e + 24);
    // Exact: both are multiples of `2^e`, within `2^24` of it.
    let room = units - k as f64 * max_a * max_b;
    (room >= 0.0).then_some((e, room))
}

/// `out` = `xs` as f32 (exact here: every input of these types is an
/// f32), compiled for AVX-512 where the CPU has it (8 lanes at a time).
fn narrow_fastest(xs: &[f64], out: &mut Vec<f32>) {
    out.clear();
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has the feature the function is compiled for.
            return unsafe { narrow_avx512(xs, out) };
        }
    }
    narrow(xs, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn narrow_avx512(xs: &[f64], out: &mut Vec<f32>) {
    narrow(xs, out)
}

#[inline(always)]
fn narrow(xs: &[f64], out: &mut Vec<f32>) {
    out.extend(xs.iter().map(|x| *x as f32));
}

/// [`scan`] compiled for AVX-512 where the CPU has it (its fold then runs
/// 8 lanes at a time).
fn scan_fastest(xs: &[f64]) -> Option<(i32, f64)> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512cd") {
            // SAFETY: the CPU has the features the function is compiled for.
            return unsafe { scan_avx512(xs) };
        }
    }
    scan(xs)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512cd")]
unsafe fn scan_avx512(xs: &[f64]) -> Option<(i32, f64)> {
    scan(xs)
}

/// Of `xs`: the lowest bit exponent any nonzero value has (the largest
/// power of two dividing them all), and the largest magnitude; `None` if
/// all are zero or one is infinite, NaN or subnormal (no input of these
/// types is, in f64). Written without early exits (vector code).
#[inline(always)]
fn scan(xs: &[f64]) -> Option<(i32, f64)> {
    // A zero counts as a value whose lowest bit is past every other's.
    let (low, high, bad) = xs
        .iter()
        .fold((u64::MAX, 0u64, 0u64), |(low, high, bad), x| {
            let bits = x.to_bits() & !(1u64 << 63);
            let exp = bits >> 52;
            let mant = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
            // The lowest bit's exponent plus 1075 (the bias and the 52
            // fraction bits).
            let lowest = (exp + u64::from(mant.trailing_zeros())) | (u64::from(bits == 0) << 62);
            let odd = u64::from(exp == 0x7ff) | u64::from((exp == 0) & (bits != 0));
            (low.min(lowest), high.max(bits), bad | odd)
        });
    match bad != 0 || low >= 1 << 62 {
        true => None,
        false => Some((low as i32 - 1075, f64::from_bits(high))),
    }
}

/// Whether every C (f32 bits) is a multiple of `2^e`, at most `room` in
/// magnitude, and not `-0.0` (nor infinite or NaN, whose bits are above
/// any finite magnitude's): on the bits alone, as [`c_fit_mask`] checks
/// them 16 at a time. `room` is an f32: a multiple of `2^e` below
/// `2^(e + 24)`.
fn c_exact(c: &[u32], e: i32, room: f64) -> bool {
    let room = (room as f32).to_bits();
    c.iter().fold(true, |ok, w| {
        let magnitude = w & 0x7fff_ffff;
        let biased = (magnitude >> 23) as i32;
        let significand = (w & 0x7f_ffff) | 0x80_0000;
        // The significand's bits that must be zero for a multiple of
        // `2^e` (its lowest has weight `2^(biased - 150)`): a subnormal
        // (biased 0) is below `2^e` and needs them all.
        let low = (e + 150 - biased.max(1)).clamp(0, 31) as u32;
        let multiple = (low == 0) | (significand.wrapping_shl(32 - low) == 0) & (biased != 0);
        ok & (magnitude <= room) & (*w != 0x8000_0000) & (multiple | (magnitude == 0))
    })
}

/// Where the four outputs of `row`, permuted columns `pc..pc + 4` (`pc` a
/// multiple of 4; see `wgmma_math::operand_b`), start in the
/// register-major accumulators.
#[inline(always)]
fn quad_slot(row: usize, pc: usize) -> usize {
    let (w, r) = (row / 16, row % 16);
    let t0 = 32 * w + 4 * (r % 8);
    let j = 4 * (pc / 8) + 2 * (r / 8) + (pc % 8) / 4;
    j * WARPGROUP + t0
}

/// Quads of permuted columns in a tile's row.
const QUADS: usize = COLS / 4;

/// Every tile: C (or zeros) into the tile's sums, the products added,
/// the sums' bits out; `fast`: by [`tile_avx512`] (only where the CPU has
/// AVX-512), which checks each C ([`c_exact`]) as it loads it. Whether
/// every C passed the check, given the grid's exponent and the room
/// ([`bound`]): where one did not, `out` is to be written again.
fn tiles(
    out: &mut [u32],
    c: Option<&[u32]>,
    (a, bt): (&[f32], &[f32]),
    (m, n, k): (usize, usize, usize),
    (e, room): (i32, f64),
    fast: bool,
) -> bool {
    if !fast && c.is_some_and(|c| !c_exact(c, e, room)) {
        return false;
    }
    let mut fit = true;
    for row0 in (0..m).step_by(ROWS) {
        for col in (0..n).step_by(COLS) {
            // A row's quads are registers 0, 1, 4, 5, ... after its first
            // (`quad_slot`; `col` is a multiple of 8).
            let slots: [[usize; QUADS]; ROWS] = std::array::from_fn(|r| {
                let first = quad_slot(row0 + r, col);
                std::array::from_fn(|q| first + (4 * (q / 2) + q % 2) * WARPGROUP)
            });
            let at = (row0, col, n, k);
            if fast {
                // SAFETY: the caller found AVX-512 (`avx512`).
                fit &= unsafe { tile_avx512(out, (c, (e, room)), &slots, (a, bt), at) };
                continue;
            }
            let mut acc = [[0f32; COLS]; ROWS];
            if let Some(c) = c {
                for (sums, slots) in acc.iter_mut().zip(&slots) {
                    for (four, &at) in sums.chunks_exact_mut(4).zip(slots) {
                        for (s, w) in four.iter_mut().zip(&c[at..at + 4]) {
                            *s = f32::from_bits(*w);
                        }
                    }
                }
            }
            tile_portable(&mut acc, (a, bt), at);
            for (sums, slots) in acc.iter().zip(&slots) {
                for (four, &at) in sums.chunks_exact(4).zip(slots) {
                    for (o, s) in out[at..at + 4].iter_mut().zip(four) {
                        *o = s.to_bits();
                    }
                }
            }
        }
    }
    fit
}

/// Whether the CPU runs [`tile_avx512`].
fn avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The products of rows `row0..row0 + ROWS` of `a` (`m x k`) and permuted
/// columns `col..col + COLS` of `bt` (`k x n`) added to `acc`, in order of
/// K (the order does not matter: every sum is exact).
fn tile_portable(
    acc: &mut [[f32; COLS]; ROWS],
    (a, bt): (&[f32], &[f32]),
    (row0, col, n, k): (usize, usize, usize, usize),
) {
    for kk in 0..k {
        let b = &bt[kk * n + col..kk * n + col + COLS];
        for (r, sums) in acc.iter_mut().enumerate() {
            let x = a[(row0 + r) * k + kk];
            for (s, y) in sums.iter_mut().zip(b) {
                *s += x * y;
            }
        }
    }
}

/// [`tiles`]' work on one tile in AVX-512: the tile's 8 rows by 32
/// columns in 16 vectors, each loaded from C's quads (or zeros) and
/// checked ([`c_fit_mask`]), then each K step two loads of B and 8
/// broadcasts of A for 16 fused multiply-adds (the same sums as
/// [`tile_portable`]: every one is exact), then the quads stored into
/// `out`. Whether every C of the tile passed.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn tile_avx512(
    out: &mut [u32],
    (c, bound): (Option<&[u32]>, (i32, f64)),
    slots: &[[usize; QUADS]; ROWS],
    (a, bt): (&[f32], &[f32]),
    (row0, col, n, k): (usize, usize, usize, usize),
) -> bool {
    use std::arch::x86_64::*;
    let mut v = [[_mm512_setzero_ps(); 2]; ROWS];
    let mut fit: __mmask16 = 0xffff;
    if let Some(c) = c {
        for (v, slots) in v.iter_mut().zip(slots) {
            for (v, q) in v.iter_mut().zip(slots.chunks_exact(4)) {
                let x = _mm512_castps128_ps512(quad(c, q[0]));
                let x = _mm512_insertf32x4::<1>(x, quad(c, q[1]));
                let x = _mm512_insertf32x4::<2>(x, quad(c, q[2]));
                *v = _mm512_insertf32x4::<3>(x, quad(c, q[3]));
                fit &= c_fit_mask(_mm512_castps_si512(*v), bound);
            }
        }
    }
    for kk in 0..k {
        let b = &bt[kk * n + col..kk * n + col + COLS];
        // SAFETY: `b` holds 32 values, two vectors of 16.
        let (b0, b1) = unsafe {
            (
                _mm512_loadu_ps(b.as_ptr()),
                _mm512_loadu_ps(b.as_ptr().add(16)),
            )
        };
        for (r, v) in v.iter_mut().enumerate() {
            let x = _mm512_set1_ps(a[(row0 + r) * k + kk]);
            v[0] = _mm512_fmadd_ps(x, b0, v[0]);
            v[1] = _mm512_fmadd_ps(x, b1, v[1]);
        }
    }
    for (v, slots) in v.iter().zip(slots) {
        let quads = [
            _mm512_extractf32x4_ps::<0>(v[0]),
            _mm512_extractf32x4_ps::<1>(v[0]),
            _mm512_extractf32x4_ps::<2>(v[0]),
            _mm512_extractf32x4_ps::<3>(v[0]),
            _mm512_extractf32x4_ps::<0>(v[1]),
            _mm512_extractf32x4_ps::<1>(v[1]),
            _mm512_extractf32x4_ps::<2>(v[1]),
            _mm512_extractf32x4_ps::<3>(v[1]),
        ];
        for (x, &at) in quads.into_iter().zip(slots) {
            let o = &mut out[at..at + 4];
            // SAFETY: `o` holds 4 words.
            unsafe { _mm_storeu_ps(o.as_mut_ptr().cast(), x) };
        }
    }
    fit == 0xffff
}

/// [`c_exact`] of 16 C words `w` as a mask: the same steps in vectors
/// (a shift by 32 or more gives 0 here, where the scalar code masks it).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn c_fit_mask(
    w: std::arch::x86_64::__m512i,
    (e, room): (i32, f64),
) -> std::arch::x86_64::__mmask16 {
    use std::arch::x86_64::*;
    let set = _mm512_set1_epi32;
    let magnitude = _mm512_and_si512(w, set(0x7fff_ffff));
    let small = _mm512_cmple_epu32_mask(magnitude, set((room as f32).to_bits() as i32));
    let not_negative_zero = _mm512_cmpneq_epi32_mask(w, set(i32::MIN));
    let biased = _mm512_srli_epi32::<23>(magnitude);
    let low = _mm512_sub_epi32(set(e + 150), _mm512_max_epi32(biased, set(1)));
    let low = _mm512_min_epi32(_mm512_max_epi32(low, set(0)), set(31));
    let significand = _mm512_or_si512(_mm512_and_si512(w, set(0x7f_ffff)), set(0x80_0000));
    let shifted = _mm512_sllv_epi32(significand, _mm512_sub_epi32(set(32), low));
    let multiple = _mm512_cmpeq_epi32_mask(shifted, _mm512_setzero_si512())
        & _mm512_cmpneq_epi32_mask(biased, _mm512_setzero_si512());
    let zero = _mm512_cmpeq_epi32_mask(magnitude, _mm512_setzero_si512());
    small & not_negative_zero & (multiple | zero)
}

/// The 4 words of `c` at `at`, as f32 (SSE, in every x86_64).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn quad(c: &[u32], at: usize) -> std::arch::x86_64::__m128 {
    let q = &c[at..at + 4];
    // SAFETY: `q` holds 4 words.
    unsafe { std::arch::x86_64::_mm_loadu_ps(q.as_ptr().cast()) }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn tile_avx512(
    _: &mut [u32],
    _: (Option<&[u32]>, (i32, f64)),
    _: &[[usize; QUADS]; ROWS],
    _: (&[f32], &[f32]),
    _: (usize, usize, usize, usize),
) -> bool {
    unreachable!("AVX-512 only on x86_64")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mma_arith;

    const F32: Arith = Arith {
        align_bits: 25,
        f16_out: false,
    };

    /// A xorshift generator.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        /// An integer of `-limit..=limit` (a quarter of them zero).
        fn int(&mut self, limit: i64) -> f64 {
            let r = self.next();
            match r % 4 {
                0 => 0.0,
                _ => ((r >> 8) % (2 * limit as u64 + 1)) as f64 - limit as f64,
            }
        }
    }

    /// Each output by `mma_arith::fused`, the model's own steps, into
    /// register-major f32 accumulators.
    fn by_steps(
        c: &[u32],
        scale_d: bool,
        ops: (&[f64], &[f64]),
        shape: (usize, usize, usize),
    ) -> Vec<u32> {
        let ((a, bt), (m, n, k)) = (ops, shape);
        let mut out = vec![0u32; m * n];
        for row in 0..m {
            for pc in (0..n).step_by(4) {
                let at = quad_slot(row, pc);
                for q in 0..4 {
                    let cv = match scale_d {
                        true => f64::from(f32::from_bits(c[at + q])),
                        false => 0.0,
                    };
                    let products = (0..k).map(|kk| (a[row * k + kk], bt[kk * n + pc + q]));
                    out[at + q] = mma_arith::fused(cv, products, F32);
                }
            }
        }
        out
    }

    /// C spoiled at one place by `kind` (0: kept), given the bound.
    fn spoil(c: &mut [u32], at: usize, kind: usize, (grid, room): (f64, f64)) {
        let bad = match kind {
            1 => room,
            2 => -room,
            3 => room + grid,
            4 => grid / 2.0,
            5 => -0.0,
            6 => f64::NAN,
            7 => f64::INFINITY,
            8 => 1e30,
            _ => return,
        };
        c[at] = (bad as f32).to_bits();
    }

    /// Operands of every 16-bit and tf32 type's range (integers of up to 8
    /// bits times a power of two: values of f16, bf16 and tf32 alike) and
    /// C of every kind (multiples of the grid small and at the bound,
    /// fractions, `-0.0`, huge, infinite, NaN): where the shortcut is
    /// taken its bits are the steps', the AVX-512 and portable tiles
    /// agree, and it is taken on most such wgmma and refused on the rest.
    #[test]
    fn f32_sums_are_the_steps_where_they_are_taken() {
        if !avx512() {
            // The shortcut runs only with AVX-512.
            return;
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut taken, mut refused) = (0, 0);
        for trial in 0..300 {
            let (m, n, k) = [(64, 32, 16), (64, 64, 8), (64, 128, 16), (64, 96, 16)][trial % 4];
            let (ea, eb) = ((rng.next() % 24) as i32 - 12, (rng.next() % 24) as i32 - 12);
            let limit = [3, 7, 100, 255][(rng.next() % 4) as usize];
            let a: Vec<f64> = (0..m * k).map(|_| rng.int(limit) * 2f64.powi(ea)).collect();
            let bt: Vec<f64> = (0..k * n).map(|_| rng.int(limit) * 2f64.powi(eb)).collect();
            let scale_d = trial % 5 != 0;
            let Some((e, room)) = bound(&a, &bt, k) else {
                continue;
            };
            let grid = 2f64.powi(e);
            let mut c: Vec<u32> = (0..m * n)
                .map(|_| ((rng.int(1 << 12) * grid) as f32).to_bits())
                .collect();
            let at = rng.next() as usize % c.len();
            spoil(&mut c, at, trial % 9, (grid, room));
            let want = by_steps(&c, scale_d, (&a, &bt), (m, n, k));
            let mut got = vec![0u32; m * n];
            let taken_here = accumulate(&mut got, &c, (scale_d, F32), (&a, &bt), (m, n, k));
            // The vector code checks C as the definition does.
            assert_eq!(
                taken_here,
                !scale_d || c_exact(&c, e, room),
                "trial {trial}"
            );
            if !taken_here {
                refused += 1;
                continue;
            }
            taken += 1;
            assert_eq!(got, want, "trial {trial}: {m}x{n}x{k}");
            if avx512() {
                let a32: Vec<f32> = a.iter().map(|x| *x as f32).collect();
                let bt32: Vec<f32> = bt.iter().map(|x| *x as f32).collect();
                let mut slow = vec![0u32; m * n];
                let c = Some(&c[..]).filter(|_| scale_d);
                assert!(tiles(
                    &mut slow,
                    c,
                    (&a32, &bt32),
                    (m, n, k),
                    (e, room),
                    false
                ));
                assert_eq!(got, slow, "trial {trial}: the portable tiles");
            }
        }
        assert!(
            taken > 100 && refused > 50,
            "{taken} taken, {refused} refused"
        );
    }

    /// The check of C on its bits is the definition's, on values of every
    /// exponent (subnormals, zeros, infinities, NaNs) and grids.
    #[test]
    fn c_check_on_bits_is_the_definition() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut kinds = [0usize; 2];
        for _ in 0..200_000 {
            let r = rng.next();
            let e = (r % 60) as i32 - 30;
            let room = (1u64 << 24) as f64 * 2f64.powi(e) - ((r >> 8) % 4096) as f64 * 2f64.powi(e);
            let w = match (r >> 20) % 4 {
                // Near the grid: a small multiple of a nearby power.
                0 | 1 => {
                    let unit = 2f64.powi(e + ((r >> 24) % 9) as i32 - 4);
                    let x = ((r >> 32) % (1 << 26)) as f64 * unit;
                    ((if r >> 63 == 0 { x } else { -x }) as f32).to_bits()
                }
                _ => (r >> 32) as u32,
            };
            let x = f64::from(f32::from_bits(w));
            let multiple = (x / 2f64.powi(e)).fract() == 0.0;
            let want = multiple && x.abs() <= room && w != 0x8000_0000;
            assert_eq!(c_exact(&[w], e, room), want, "{w:#x} at 2^{e}, room {room}");
            kinds[usize::from(want)] += 1;
            #[cfg(target_arch = "x86_64")]
            if avx512() {
                // The vector check, lane by lane (the word in lane r % 16).
                let lane = (r % 16) as u32;
                let mut words = [0u32; 16];
                words[lane as usize] = w;
                // SAFETY: the CPU has AVX-512; `words` holds 16 words.
                let mask = unsafe {
                    let v = std::arch::x86_64::_mm512_loadu_si512(words.as_ptr().cast());
                    c_fit_mask(v, (e, room))
                };
                assert_eq!((mask >> lane) & 1 == 1, want, "vector: {w:#x} at 2^{e}");
            }
        }
        assert!(kinds[0] > 10_000 && kinds[1] > 10_000, "{kinds:?}");
    }

    /// A sum that f32 cannot hold: C just past the bound is refused, and
    /// `wgmma_fused` still gives the steps' bits.
    #[test]
    fn a_sum_past_f32_is_refused() {
        if !avx512() {
            // The shortcut runs only with AVX-512.
            return;
        }
        let (m, n, k) = (64, 32, 16);
        let (a, bt) = (vec![3.0; m * k], vec![3.0; k * n]);
        let room = (1u64 << 24) as f64 - 16.0 * 9.0;
        assert_eq!(bound(&a, &bt, k), Some((0, room)));
        let mut c = vec![(room as f32).to_bits(); m * n];
        let mut out = vec![0u32; m * n];
        assert!(accumulate(&mut out, &c, (true, F32), (&a, &bt), (m, n, k)));
        assert_eq!(out, by_steps(&c, true, (&a, &bt), (m, n, k)));
        assert_eq!(f32::from_bits(out[0]), (1u32 << 24) as f32);
        // 2^24 + 1 is no f32: the steps round it toward zero.
        c[7] = ((room + 1.0) as f32).to_bits();
        assert!(!accumulate(&mut out, &c, (true, F32), (&a, &bt), (m, n, k)));
        crate::wgmma_fused::accumulate(&mut out, &c, true, F32, (&a, &bt), (m, n, k));
        assert_eq!(out, by_steps(&c, true, (&a, &bt), (m, n, k)));
        // Not for FP8's 13 bits, nor an f16 accumulator.
        for arith in [Arith::of(true, false), Arith::of(false, true)] {
            assert!(!accumulate(
                &mut out,
                &c,
                (true, arith),
                (&a, &bt),
                (m, n, k)
            ));
        }
    }
}
