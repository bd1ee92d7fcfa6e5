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
//! Products of the inputs are exact in f64; each output element is the
//! exact sum, rounded once to the accumulator type. The tensor core may
//! round partial sums differently; inputs whose sums are exact (small
//! integers) give the same bits on both (`tests/host/`).

use crate::numbers::{decode, encode_f16, encode_f32, encode_s32};
use ori_ir::wgmma_form::{ElemType, Family, WgmmaForm};

/// Threads in a warpgroup.
pub const WARPGROUP: usize = 128;

/// Operand A: a shared-memory descriptor or each thread's fragment registers.
pub enum AOperand<'a> {
    /// `a-desc`
    Desc(u64),
    /// `{a0, a1, ...}` of each of the 128 threads.
    Regs(&'a [Vec<u32>]),
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

/// Shared memory as the wgmma reads it.
pub trait SharedMemory {
    /// `bits` (8, 16 or 32) at byte address `addr`, little-endian.
    fn read_bits(&self, addr: u32, bits: u32) -> Result<u32, String>;
}

/// Compute the new accumulator registers of every thread from `c` (each
/// thread's registers before the wgmma).
pub fn compute(
    mma: &Mma<'_>,
    c: &[Vec<u32>],
    smem: &dyn SharedMemory,
) -> Result<Vec<Vec<u32>>, String> {
    let f = &mma.form;
    if f.sparse || f.family == Family::Bit {
        return Err(format!(
            "the host backend does not run {} wgmma",
            if f.sparse { "sparse" } else { ".b1" }
        ));
    }
    let (m, n, k) = (f.m, f.n, f.k);
    let (abits, bbits) = (f.atype.bits(), f.btype.bits());
    // A as an m x k matrix of values, B as n x k.
    let mut a = vec![0f64; (m * k) as usize];
    for row in 0..m {
        for kk in 0..k {
            let raw = match &mma.a {
                AOperand::Desc(d) => {
                    smem.read_bits(element_address(*d, row, kk, abits, mma.trans_a), abits)?
                }
                AOperand::Regs(regs) => {
                    let (t, i, e) = a_position(row, kk, k, abits);
                    let word = regs
                        .get(t)
                        .and_then(|r| r.get(i))
                        .ok_or("A fragment register missing")?;
                    (word >> (e * abits)) & ((1u64 << abits) - 1) as u32
                }
            };
            let v = decode(f.atype, raw);
            a[(row * k + kk) as usize] = if mma.negate_a { -v } else { v };
        }
    }
    let mut b = vec![0f64; (n * k) as usize];
    for col in 0..n {
        for kk in 0..k {
            let raw = smem.read_bits(
                element_address(mma.b_desc, col, kk, bbits, mma.trans_b),
                bbits,
            )?;
            let v = decode(f.btype, raw);
            b[(col * k + kk) as usize] = if mma.negate_b { -v } else { v };
        }
    }
    // Every product at once, row by row: for each output element the sum
    // runs over k in order from 0.0, exactly as a dot product per element
    // would (the same f64 additions in the same order), but the inner loop
    // runs across a row of B^T and vectorizes.
    let (mu, nu, ku) = (m as usize, n as usize, k as usize);
    let mut bt = vec![0f64; ku * nu];
    for col in 0..nu {
        for kk in 0..ku {
            bt[kk * nu + col] = b[col * ku + kk];
        }
    }
    let mut prod = vec![0f64; mu * nu];
    for row in 0..mu {
        let out = &mut prod[row * nu..(row + 1) * nu];
        for kk in 0..ku {
            let x = a[row * ku + kk];
            for (o, y) in out.iter_mut().zip(&bt[kk * nu..(kk + 1) * nu]) {
                *o += x * y;
            }
        }
    }
    let dot = |row: u32, col: u32| -> f64 { prod[row as usize * nu + col as usize] };
    let regs = f.accumulator_regs();
    let mut out = Vec::with_capacity(WARPGROUP);
    for (t, cregs) in c.iter().enumerate().take(WARPGROUP) {
        if cregs.len() != regs {
            return Err(format!(
                "thread {t} has {} accumulator registers, the shape needs {regs}",
                cregs.len()
            ));
        }
        let mut d = Vec::with_capacity(regs);
        for (i, &old) in cregs.iter().enumerate() {
            let word = match f.dtype {
                ElemType::F16 => {
                    let mut w = 0u32;
                    for h in 0..2 {
                        let (row, col) = d_element(t, 2 * i + h);
                        let prev = if mma.scale_d {
                            decode(ElemType::F16, (old >> (16 * h)) & 0xffff)
                        } else {
                            0.0
                        };
                        w |= u32::from(encode_f16(prev + dot(row, col))) << (16 * h);
                    }
                    w
                }
                ElemType::S32 => {
                    let (row, col) = d_element(t, i);
                    let prev = if mma.scale_d {
                        i64::from(old as i32)
                    } else {
                        0
                    };
                    encode_s32(prev + dot(row, col) as i64, f.satfinite)
                }
                _ => {
                    let (row, col) = d_element(t, i);
                    let prev = if mma.scale_d {
                        decode(ElemType::F32, old)
                    } else {
                        0.0
                    };
                    encode_f32(prev + dot(row, col))
                }
            };
            d.push(word);
        }
        out.push(d);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
