//! What one `wgmma.mma_async` computes: D = A x B (+ C), for the whole
//! warpgroup at once.
//!
//! Three layouts meet here, all from the PTX ISA ("Register Fragments and
//! Shared Memory Matrix Layouts"):
//!
//! * **D/C fragments.** Warp `w` of the warpgroup holds rows `16w..16w+15`;
//!   lane `l` holds, in its `i`-th 32-bit register, row
//!   `16w + l/4 + 8*((i/2)%2)`, column `2*(l%4) + i%2 + 8*(i/4)`. An `.f16`
//!   accumulator packs two such elements (`2i`, `2i+1`, low half first).
//! * **A in registers.** Register `i` of lane `l` holds `32/bits` consecutive
//!   K elements of row `16w + l/4 + 8*(i%2)`, starting at column
//!   `(l%4)*32/bits + (i/2)*K/2`.
//! * **A and B in shared memory**, through a 64-bit matrix descriptor (start
//!   address, leading and stride byte offsets, swizzle mode), in the ISA's
//!   canonical layouts: K-major (no transpose) or MN-major (`imm-trans-*`
//!   = 1), each without swizzle or with 32/64/128-byte swizzle, the swizzle
//!   XOR-ing address bits `[4, 4+b)` with bits `[7, 7+b)`.
//!
//! The arithmetic: floating-point inputs take the tensor core's fused,
//! truncating step (`mma_arith`, applied by `wgmma_fused`), bit-exact with
//! the H100 on random data; integer inputs the exact sum, wrapped or
//! saturated to s32.

use crate::numbers::{decode, encode_s32};
use ori_ir::wgmma_form::{ElemType, Family, WgmmaForm};

/// Threads in a warpgroup.
pub const WARPGROUP: usize = 128;

/// Operand A: a shared-memory descriptor or each thread's fragment registers.
pub enum AOperand<'a> {
    /// `a-desc`
    Desc(u64),
    /// `{a0, a1, ...}` of each of the 128 threads: thread `t`'s are
    /// `regs[t * stride..(t + 1) * stride]`.
    Regs(&'a [u32], usize),
}

/// One wgmma, its operands evaluated.
pub struct Mma<'a> {
    /// Shape and types.
    pub form: WgmmaForm,
    /// Operand A.
    pub a: AOperand<'a>,
    /// `b-desc`
    pub b_desc: u64,
    /// `scale-d`: add C (true) or not.
    pub scale_d: bool,
    /// `imm-scale-a = -1`
    pub negate_a: bool,
    /// `imm-scale-b = -1`
    pub negate_b: bool,
    /// `imm-trans-a = 1`: A is M-major.
    pub trans_a: bool,
    /// `imm-trans-b = 1`: B is N-major.
    pub trans_b: bool,
}

/// Byte address of element (`mn`, `k`) of a matrix given by a descriptor.
/// `mn` is the M (A) or N (B) index, `k` the K index, `bits` the element
/// size; `mn_major` for a transposed operand.
pub fn element_address(desc: u64, mn: u32, k: u32, bits: u32, mn_major: bool) -> u32 {
    let field = |shift: u32| ((desc >> shift) & 0x3fff) as u32 * 16;
    let (start, lbo, sbo) = (field(0), field(16), field(32));
    // Swizzle width in bytes, and the number of XOR-ed bits.
    let (width, xor_bits) = match desc >> 62 {
        1 => (128, 3),
        2 => (64, 2),
        3 => (32, 1),
        _ => (0, 0),
    };
    let eb = bits / 8;
    let offset = match (mn_major, width) {
        // ((8,m),(T,2k)):((1T,SBO),(1,LBO)): 8 rows of 16 bytes per core matrix.
        (false, 0) => {
            let kb = k * eb;
            (mn % 8) * 16 + (mn / 8) * sbo + kb % 16 + (kb / 16) * lbo
        }
        // ((8,m),(T,2k)):((W/16*T,SBO),(1,T)): rows of W bytes, K contiguous.
        (false, w) => (mn % 8) * w + (mn / 8) * sbo + k * eb,
        // ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)): 16 bytes of MN per K row.
        (true, 0) => {
            let mb = mn * eb;
            mb % 16 + (mb / 16) * sbo + (k % 8) * 16 + (k / 8) * lbo
        }
        // ((T,W/16,m),(8,k)):((1,T,LBO),(W/16*T,SBO)): W bytes of MN per K row.
        (true, w) => {
            let mb = mn * eb;
            mb % w + (mb / w) * lbo + (k % 8) * w + (k / 8) * sbo
        }
    };
    swizzle(start + offset, xor_bits)
}

/// The ISA's `Swizzle<b,4,3>` on a byte address: bits `[4, 4+b)` XOR bits `[7, 7+b)`.
fn swizzle(addr: u32, b: u32) -> u32 {
    let mask = (1 << b) - 1;
    addr ^ (((addr >> 7) & mask) << 4)
}

/// Where element (`row`, `col`) of a 64xN 32-bit-element accumulator lives:
/// (thread, register index).
pub fn d_position(row: u32, col: u32) -> (usize, usize) {
    let (w, r) = (row / 16, row % 16);
    let lane = (r % 8) * 4 + (col % 8) / 2;
    let i = (col / 8) * 4 + (r / 8) * 2 + col % 2;
    ((w * 32 + lane) as usize, i as usize)
}

/// Row and column of element `j` (f32 numbering) held by `thread`.
pub fn d_element(thread: usize, j: usize) -> (u32, u32) {
    let (w, l) = ((thread / 32) as u32, (thread % 32) as u32);
    let j = j as u32;
    (
        16 * w + l / 4 + 8 * ((j / 2) % 2),
        2 * (l % 4) + j % 2 + 8 * (j / 4),
    )
}

/// Where element (`row`, `k`) of A lives in the register form: (thread,
/// register, element within the register).
pub fn a_position(row: u32, k: u32, kdim: u32, bits: u32) -> (usize, usize, u32) {
    let per_reg = 32 / bits;
    let (w, r) = (row / 16, row % 16);
    let half = kdim / 2;
    let t = (k % half) / per_reg;
    let i = 2 * (k / half) + r / 8;
    (
        ((w * 32) + (r % 8) * 4 + t) as usize,
        i as usize,
        k % per_reg,
    )
}

/// Shared memory as the wgmma reads it: 16 bytes at a time.
///
/// Every operand element of a canonical layout lies in a 16-byte granule
/// whose elements are consecutive along K (K-major) or along M/N
/// (MN-major): the layouts place whole 16-byte core-matrix rows, and the
/// swizzle permutes address bits 4 and up only.
pub trait SharedMemory {
    /// The 16 bytes at `addr`, a multiple of 16.
    fn granule(&self, addr: u32) -> Result<[u8; 16], String>;

    /// All of shared memory as plain bytes, when reading a granule of it
    /// would do nothing but copy (no check to make): `gather` then reads
    /// the bytes directly, and calls [`SharedMemory::granule`] only for a
    /// granule outside them (for its error).
    fn plain(&self) -> Option<&[u8]> {
        None
    }

    /// Where a read of [`SharedMemory::plain`]'s bytes notes the address
    /// of each granule it reads (what [`SharedMemory::granule`] would have
    /// noted), if anywhere.
    fn read_log(&self) -> Option<&std::cell::RefCell<Vec<u32>>> {
        None
    }
}

/// The values of the elements of one granule, in address order.
fn decode_granule(ty: ElemType, g: &[u8; 16], out: &mut [f64]) {
    match ty.bits() {
        8 => {
            for (o, b) in out.iter_mut().zip(g) {
                *o = decode(ty, u32::from(*b));
            }
        }
        16 if ty == ElemType::Bf16 => {
            // A bf16 is the high half of an f32.
            for (o, h) in out.iter_mut().zip(g.chunks_exact(2)) {
                let raw = u32::from(u16::from_le_bytes([h[0], h[1]]));
                *o = f64::from(f32::from_bits(raw << 16));
            }
        }
        16 => {
            for (o, h) in out.iter_mut().zip(g.chunks_exact(2)) {
                *o = decode(ty, u32::from(u16::from_le_bytes([h[0], h[1]])));
            }
        }
        _ => {
            for (o, w) in out.iter_mut().zip(g.chunks_exact(4)) {
                *o = decode(ty, u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
            }
        }
    }
}

/// An operand given by a descriptor, `mn x k`, as values: element
/// (`mn`, `k`) goes to `out[at(mn, k)]`. Read a granule at a time.
fn gather(
    smem: &dyn SharedMemory,
    desc: u64,
    shape: (u32, u32),
    ty: ElemType,
    (mn_major, negate): (bool, bool),
    at: impl Fn(u32, u32) -> usize,
) -> Result<Vec<f64>, String> {
    let (bytes, log) = (smem.plain(), smem.read_log());
    let plain = |addr: u32| match bytes.unwrap_or(&[]).get(addr as usize..addr as usize + 16) {
        Some(g) => {
            if let Some(log) = log {
                log.borrow_mut().push(addr);
            }
            Ok(g.try_into().expect("16 bytes"))
        }
        None => smem.granule(addr),
    };
    let any_type = |g: &[u8; 16], out: &mut [f64]| decode_granule(ty, g, out);
    let shape = (shape, ty, (mn_major, negate));
    // Each combination compiled on its own, the common one (plain bytes
    // of bf16) with its decoding inlined.
    match (bytes.is_some(), ty) {
        (true, ElemType::Bf16) => gather_from(plain, bf16_granule, desc, shape, &at),
        (true, _) => gather_from(plain, any_type, desc, shape, &at),
        (false, _) => gather_from(|addr| smem.granule(addr), any_type, desc, shape, &at),
    }
}

/// The values of a granule of bf16 (what [`decode_granule`] gives).
#[inline(always)]
fn bf16_granule(g: &[u8; 16], out: &mut [f64]) {
    for (o, h) in out.iter_mut().zip(g.chunks_exact(2)) {
        // A bf16 is the high half of an f32.
        let raw = u32::from(u16::from_le_bytes([h[0], h[1]]));
        *o = f64::from(f32::from_bits(raw << 16));
    }
}

/// [`gather`] with the granules from `granule`, decoded by `decode`.
#[inline(always)]
fn gather_from(
    granule: impl Fn(u32) -> Result<[u8; 16], String>,
    decode: impl Fn(&[u8; 16], &mut [f64]),
    desc: u64,
    ((mn, k), ty, (mn_major, negate)): ((u32, u32), ElemType, (bool, bool)),
    at: impl Fn(u32, u32) -> usize,
) -> Result<Vec<f64>, String> {
    let bits = ty.bits();
    let per = 128 / bits; // elements in a granule
    let mut out = vec![0f64; (mn * k) as usize];
    let mut vals = [0f64; 16];
    let vals = &mut vals[..per as usize];
    let sign = |v: f64| if negate { -v } else { v };
    if mn_major {
        for kk in 0..k {
            for m0 in (0..mn).step_by(per as usize) {
                let g = granule(element_address(desc, m0, kk, bits, true))?;
                decode(&g, vals);
                for (j, v) in vals.iter().enumerate().take((mn - m0) as usize) {
                    out[at(m0 + j as u32, kk)] = sign(*v);
                }
            }
        }
    } else {
        for m in 0..mn {
            for k0 in (0..k).step_by(per as usize) {
                let g = granule(element_address(desc, m, k0, bits, false))?;
                decode(&g, vals);
                for (j, v) in vals.iter().enumerate().take((k - k0) as usize) {
                    out[at(m, k0 + j as u32)] = sign(*v);
                }
            }
        }
    }
    Ok(out)
}

/// The sums `prod[row][col] = sum over kk of a[row][kk] * bt[kk][col]`,
/// each from 0.0 in the order of `kk`, handed out a row piece at a time:
/// `emit(row, col, sums)` for `prod[row][col..col + sums.len()]` (each
/// element once). `a` is `m x k`, `bt` is `k x n`.
///
/// Every product of two wgmma inputs is exact in f64 (at most 11 + 11
/// significant bits), so a fused multiply-add rounds exactly where
/// `o + x * y` does: the fused form (when the CPU has it) gives the same
/// bits, only faster. The pieces go to `emit` while they are still in the
/// cache (the write-back into registers runs inside the product loop).
pub(crate) fn products_each(
    a: &[f64],
    bt: &[f64],
    shape: (usize, usize, usize),
    mut emit: impl FnMut(usize, usize, &[f64]),
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has the features the function is compiled for.
            unsafe { products_avx512(a, bt, shape, &mut emit) };
            return;
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: as above.
            unsafe { products_avx2(a, bt, shape, &mut emit) };
            return;
        }
    }
    products_tiled::<false, 4, 32, _>(a, bt, shape, &mut emit);
}

/// 8 rows by 16 columns at a time, written out in AVX-512 (the compiler
/// vectorizes the portable loop along the wrong axis at this shape): 16
/// vectors of sums, 2 of B and a broadcast of A among the 32 registers, so
/// that each K step loads 10 values for 16 FMAs. Other shapes take the
/// portable loop.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
unsafe fn products_avx512<E: FnMut(usize, usize, &[f64])>(
    a: &[f64],
    bt: &[f64],
    (m, n, k): (usize, usize, usize),
    emit: &mut E,
) {
    use std::arch::x86_64::{__m512d, _mm512_fmadd_pd, _mm512_set1_pd, _mm512_setzero_pd};
    use std::arch::x86_64::{_mm512_loadu_pd, _mm512_storeu_pd};
    const R: usize = 8;
    const W: usize = 16;
    if m % R != 0 || n % W != 0 {
        return products_tiled::<true, 4, 32, E>(a, bt, (m, n, k), emit);
    }
    for row in (0..m).step_by(R) {
        for col in (0..n).step_by(W) {
            let mut acc: [[__m512d; 2]; R] = [[_mm512_setzero_pd(); 2]; R];
            for kk in 0..k {
                let b: &[f64; W] = bt[kk * n + col..kk * n + col + W]
                    .try_into()
                    .expect("W columns");
                // SAFETY: `b` holds 16 values, two vectors of 8.
                let (b0, b1) = unsafe {
                    (
                        _mm512_loadu_pd(b.as_ptr()),
                        _mm512_loadu_pd(b.as_ptr().add(8)),
                    )
                };
                for (r, acc) in acc.iter_mut().enumerate() {
                    let x = _mm512_set1_pd(a[(row + r) * k + kk]);
                    // x * b + acc, rounded once: `x.mul_add(b, acc)`.
                    acc[0] = _mm512_fmadd_pd(x, b0, acc[0]);
                    acc[1] = _mm512_fmadd_pd(x, b1, acc[1]);
                }
            }
            let mut sums = [[0f64; W]; R];
            for (s, acc) in sums.iter_mut().zip(&acc) {
                // SAFETY: `s` holds 16 values, two vectors of 8.
                unsafe {
                    _mm512_storeu_pd(s.as_mut_ptr(), acc[0]);
                    _mm512_storeu_pd(s.as_mut_ptr().add(8), acc[1]);
                }
            }
            for (r, s) in sums.iter().enumerate() {
                emit(row + r, col, s);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn products_avx2<E: FnMut(usize, usize, &[f64])>(
    a: &[f64],
    bt: &[f64],
    shape: (usize, usize, usize),
    emit: &mut E,
) {
    products_tiled::<true, 4, 32, _>(a, bt, shape, emit)
}

/// The product loop: `R` rows by `W` columns at a time (the sums kept in
/// registers), then whatever is left a row piece at a time. `FUSED`:
/// `mul_add` (only where the CPU has FMA).
#[inline(always)]
fn products_tiled<const FUSED: bool, const R: usize, const W: usize, E>(
    a: &[f64],
    bt: &[f64],
    (m, n, k): (usize, usize, usize),
    emit: &mut E,
) where
    E: FnMut(usize, usize, &[f64]),
{
    let step = |o: f64, x: f64, y: f64| if FUSED { x.mul_add(y, o) } else { o + x * y };
    let (m2, nw) = (m - m % R, n - n % W);
    // The tile's sums stay in registers while they are summed, and are
    // handed out from a copy (whose address `emit` may take).
    for row in (0..m2).step_by(R) {
        for col in (0..nw).step_by(W) {
            let mut acc = [[0f64; W]; R];
            for kk in 0..k {
                let b: &[f64; W] = bt[kk * n + col..kk * n + col + W]
                    .try_into()
                    .expect("W columns");
                for (r, acc) in acc.iter_mut().enumerate() {
                    let x = a[(row + r) * k + kk];
                    for j in 0..W {
                        acc[j] = step(acc[j], x, b[j]);
                    }
                }
            }
            let done = std::hint::black_box(acc);
            for (r, sums) in done.iter().enumerate() {
                emit(row + r, col, sums);
            }
        }
    }
    // The edges: the rows past the last tile, the columns past the last.
    let mut piece = Vec::new();
    for row in 0..m {
        let from = if row < m2 { nw } else { 0 };
        if from == n {
            continue;
        }
        piece.clear();
        for col in from..n {
            let mut o = 0f64;
            for kk in 0..k {
                o = step(o, a[row * k + kk], bt[kk * n + col]);
            }
            piece.push(o);
        }
        emit(row, from, &piece);
    }
}

/// The form checks every wgmma passes before its operands are read.
pub fn check_form(f: &WgmmaForm) -> Result<(), String> {
    if f.sparse || f.family == Family::Bit {
        return Err(format!(
            "the host backend does not run {} wgmma",
            if f.sparse { "sparse" } else { ".b1" }
        ));
    }
    Ok(())
}

/// Compute the new accumulator registers of every thread from `c`, each
/// thread's registers before the wgmma, register-major: register `i` of
/// thread `t` is `c[i * WARPGROUP + t]`, and so in the result.
pub fn compute(mma: &Mma<'_>, c: &[u32], smem: &dyn SharedMemory) -> Result<Vec<u32>, String> {
    check_form(&mma.form)?;
    let a = operand_a(mma, smem)?;
    let bt = operand_b(mma, smem)?;
    accumulate(mma, &a, &bt, c, Vec::new())
}

/// A as an `m x k` matrix of values (row-major), negated if asked.
pub fn operand_a(mma: &Mma<'_>, smem: &dyn SharedMemory) -> Result<Vec<f64>, String> {
    let f = &mma.form;
    let (m, k) = (f.m, f.k);
    let abits = f.atype.bits();
    Ok(match &mma.a {
        AOperand::Desc(d) => gather(
            smem,
            *d,
            (m, k),
            f.atype,
            (mma.trans_a, mma.negate_a),
            |r, kk| (r * k + kk) as usize,
        )?,
        AOperand::Regs(regs, stride) => {
            let mut a = vec![0f64; (m * k) as usize];
            for row in 0..m {
                for kk in 0..k {
                    let (t, i, e) = a_position(row, kk, k, abits);
                    let word = regs
                        .get(t * stride + i)
                        .filter(|_| i < *stride)
                        .ok_or("A fragment register missing")?;
                    let raw = (word >> (e * abits)) & ((1u64 << abits) - 1) as u32;
                    let v = decode(f.atype, raw);
                    a[(row * k + kk) as usize] = if mma.negate_a { -v } else { v };
                }
            }
            a
        }
    })
}

/// B transposed, `k x n`, its columns permuted within each group of 8 to
/// 0, 2, 4, 6, 1, 3, 5, 7: then the four sums of each (row, group,
/// parity) belong to four consecutive threads in one register (see
/// `d_position`), and the write-back in [`accumulate`] runs in fours.
pub fn operand_b(mma: &Mma<'_>, smem: &dyn SharedMemory) -> Result<Vec<f64>, String> {
    let f = &mma.form;
    let nu = f.n as usize;
    gather(
        smem,
        mma.b_desc,
        (f.n, f.k),
        f.btype,
        (mma.trans_b, mma.negate_b),
        |col, kk| {
            let col = col as usize;
            kk as usize * nu + ((col & !7) | ((col & 1) << 2) | ((col & 7) >> 1))
        },
    )
}

/// The new accumulators from the operands ([`operand_a`], [`operand_b`])
/// and `c` (register-major, as [`compute`] says), in `out` (a list to
/// reuse, whatever it holds: every element is written).
pub fn accumulate(
    mma: &Mma<'_>,
    a: &[f64],
    bt: &[f64],
    c: &[u32],
    mut out: Vec<u32>,
) -> Result<Vec<u32>, String> {
    let f = &mma.form;
    let regs = f.accumulator_regs();
    if c.len() != regs * WARPGROUP {
        return Err(format!(
            "{} accumulator registers for the warpgroup, the shape needs {regs} a thread",
            c.len()
        ));
    }
    let shape = (f.m as usize, f.n as usize, f.k as usize);
    // Register-major: register i of thread t at i * WARPGROUP + t.
    // Row r of warp w's 16 is held by threads 32w + 4(r%8) .. +3; within a
    // group of 8 columns, the even ones are register 4g + 2(r/8), the odd
    // ones the next (f32 numbering; an f16 register packs that pair).
    // `each_four(row, col, sums, put)`: `put(j, t0, four)` for each four
    // sums of a row piece starting at permuted column `col`.
    // The f32 and s32 write-backs set each element once; the f16 one ORs
    // the two halves of each into place.
    if out.len() != c.len() {
        out.clear();
        out.resize(c.len(), 0);
    } else if f.dtype == ElemType::F16 {
        out.fill(0);
    }
    let scale = mma.scale_d;
    if let Some(arith) = crate::wgmma_fused::arith_of(f) {
        crate::wgmma_fused::accumulate(&mut out, c, scale, arith, (a, bt), shape);
        return Ok(out);
    }
    // Integer inputs: the exact sum (f64 holds it: 32 products below
    // 2^16), wrapped or saturated to s32.
    products_each(a, bt, shape, |row, col, sums| {
        each_four(row, col, sums, |j, t0, four| {
            let at = j * WARPGROUP + t0;
            for (q, &sum) in four.iter().enumerate() {
                let prev = if scale {
                    i64::from(c[at + q] as i32)
                } else {
                    0
                };
                out[at + q] = encode_s32(prev + sum as i64, f.satfinite);
            }
        })
    });
    Ok(out)
}

/// The fours of a row piece of the products (`sums`, from permuted column
/// `col`, a multiple of 4): `put(j, t0, four)` with the register `j`
/// (f32 numbering) and first thread `t0` they belong to.
#[inline(always)]
pub(crate) fn each_four(
    row: usize,
    col: usize,
    sums: &[f64],
    mut put: impl FnMut(usize, usize, &[f64]),
) {
    let (w, r) = (row / 16, row % 16);
    let t0 = 32 * w + 4 * (r % 8);
    for (q, four) in sums.chunks_exact(4).enumerate() {
        let pc = col + 4 * q;
        let j = 4 * (pc / 8) + 2 * (r / 8) + (pc % 8) / 4;
        put(j, t0, four);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where [`products_tiled`] hands its row pieces.
    type Emit<'a> = &'a mut dyn FnMut(usize, usize, &[f64]);

    /// The tiled product loop, fused or not, equals one dot product per
    /// element summed in order, on inputs of wgmma's precisions (f16
    /// values: random significands and exponents) and on shapes with edges.
    #[test]
    fn tiled_products_equal_the_dot_products() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut f16_value = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            decode(
                ElemType::F16,
                (seed as u32) & 0x7bff | (seed >> 32) as u32 & 0x8000,
            )
        };
        for (m, n, k) in [
            (64, 256, 16),
            (3, 40, 16),
            (64, 8, 32),
            (1, 33, 8),
            (16, 48, 8),
        ] {
            let a: Vec<f64> = (0..m * k).map(|_| f16_value()).collect();
            let bt: Vec<f64> = (0..k * n).map(|_| f16_value()).collect();
            let matrix = |run: &dyn Fn(Emit<'_>)| {
                let mut prod = vec![f64::NAN; m * n];
                run(&mut |row, col, sums| {
                    prod[row * n + col..row * n + col + sums.len()].copy_from_slice(sums)
                });
                prod
            };
            let shape = (m, n, k);
            let fused = matrix(&|e| products_tiled::<true, 8, 16, _>(&a, &bt, shape, &mut { e }));
            #[cfg(target_arch = "x86_64")]
            let fast = if std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("fma")
            {
                // SAFETY: the CPU has the features.
                matrix(&|e| unsafe { products_avx512(&a, &bt, shape, &mut { e }) })
            } else {
                fused.clone()
            };
            #[cfg(not(target_arch = "x86_64"))]
            let fast = fused.clone();
            let wide = matrix(&|e| products_tiled::<true, 4, 32, _>(&a, &bt, shape, &mut { e }));
            let plain = matrix(&|e| products_tiled::<false, 4, 8, _>(&a, &bt, shape, &mut { e }));
            let chosen = matrix(&|e| products_each(&a, &bt, shape, e));
            for row in 0..m {
                for col in 0..n {
                    let dot = (0..k).fold(0f64, |o, kk| o + a[row * k + kk] * bt[kk * n + col]);
                    let at = row * n + col;
                    assert_eq!(
                        fused[at].to_bits(),
                        dot.to_bits(),
                        "fused ({row},{col}) of {m}x{n}x{k}"
                    );
                    assert_eq!(plain[at].to_bits(), dot.to_bits(), "plain ({row},{col})");
                    assert_eq!(wide[at].to_bits(), dot.to_bits(), "wide ({row},{col})");
                    assert_eq!(fast[at].to_bits(), dot.to_bits(), "AVX-512 ({row},{col})");
                    assert_eq!(chosen[at].to_bits(), dot.to_bits(), "chosen ({row},{col})");
                }
            }
        }
    }

    #[test]
    fn d_positions_and_elements_are_inverse() {
        for row in 0..64 {
            for col in 0..256 {
                let (t, i) = d_position(row, col);
                assert_eq!(d_element(t, i), (row, col));
            }
        }
        // Thread 0 holds (0,0), (0,1), (8,0), (8,1), (0,8) ...
        assert_eq!(d_element(0, 2), (8, 0));
        assert_eq!(d_element(5, 0), (1, 2));
        assert_eq!(d_element(32, 0), (16, 0));
    }

    #[test]
    fn a_fragments_cover_the_tile_once() {
        for (kdim, bits) in [(16, 16), (8, 32), (32, 8)] {
            let mut seen = std::collections::HashSet::new();
            for row in 0..64 {
                for k in 0..kdim {
                    let p = a_position(row, k, kdim, bits);
                    assert!(p.0 < 128 && p.1 < 4, "{p:?}");
                    assert!(seen.insert(p), "({row},{k}) collides");
                }
            }
        }
        // f16: a0 of lane 1 holds row 0, columns 2 and 3.
        assert_eq!(a_position(0, 2, 16, 16), (1, 0, 0));
        assert_eq!(a_position(0, 3, 16, 16), (1, 0, 1));
        assert_eq!(a_position(8, 8, 16, 16), (0, 3, 0));
    }

    #[test]
    fn the_isa_examples_of_canonical_layouts() {
        // K-major, no swizzle, tf32 (ISA figure: LBO 64*4, SBO 32*4 bytes):
        // element (mn=9, k=5) = core row 1 (SBO), K chunk 1 (LBO), row 1, word 1.
        let desc = (256u64 / 16) << 16 | (128u64 / 16) << 32;
        assert_eq!(element_address(desc, 9, 5, 32, false), 128 + 256 + 16 + 4);
        // 128B swizzle, K-major, f16: row 1 of the atom XORs chunk 0 with 1.
        let sw = 1u64 << 62 | (1024u64 / 16) << 32;
        assert_eq!(element_address(sw, 1, 0, 16, false), 128 + 16);
        assert_eq!(element_address(sw, 0, 0, 16, false), 0);
        // MN-major, no swizzle, bf16 (ISA: LBO 128*2, SBO 64*2 bytes).
        let mn = (256u64 / 16) << 16 | (128u64 / 16) << 32;
        assert_eq!(element_address(mn, 9, 10, 16, true), 2 + 128 + 2 * 16 + 256);
    }
}
