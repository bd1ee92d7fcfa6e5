//! `mma.sync.aligned.m16n8k16.row.col` — the warp-level tensor-core MMA that
//! Triton falls back to where a tile is too small for wgmma (M < 64: the
//! BLOCK_M = 16 MoE kernels of `tests/real`).
//!
//! Each warp computes D (16x8) = A (16x16, row) x B (16x8, col) + C from
//! fragments spread over its 32 lanes, as the PTX ISA lays them out ("Matrix
//! Fragments for mma.m16n8k16 with floating point type"): with `group` =
//! lane / 4 and `pair` = 2 * (lane % 4), lane's A element i (of 8, two per
//! 32-bit register) is at row `group + 8 ((i / 2) % 2)`, column
//! `pair + i % 2 + 8 (i / 4)`; its B element i (of 4) at row
//! `pair + i % 2 + 8 (i / 2)`, column `group`; its C and D element i (of 4)
//! at row `group + 8 (i / 2)`, column `pair + i % 2`. The sums are the
//! tensor core's fused step (`mma_arith`), the same as wgmma's: all 16
//! products and C at once (the H100's outputs in `tests/host/mma/`).

use super::*;
use crate::mma_arith::{self, Arith};
use crate::numbers::decode;
use ori_ir::ElemType;

/// A half-precision element `i` of a lane's fragment registers.
fn half_of(regs: &[u32], i: usize, ty: ElemType) -> f64 {
    decode(ty, (regs[i / 2] >> (16 * (i % 2))) & 0xffff)
}

/// The types of an `mma.sync` this backend runs: (D, A and B, C).
fn mma_types(d: &InstData) -> Res<(ElemType, ElemType, ElemType)> {
    use ElemType::{Bf16, F16, F32};
    let mods: Vec<&str> = d.mods.iter().map(|m| &**m).collect();
    let ty = |k: usize| mods.get(k).and_then(|m| ElemType::from_ptx(m));
    match (mods.get(..5), ty(5), ty(6), ty(7), ty(8)) {
        (
            Some(["sync", "aligned", "m16n8k16", "row", "col"]),
            Some(dt @ (F16 | F32)),
            Some(a @ (F16 | Bf16)),
            Some(b),
            Some(ct @ (F16 | F32)),
        ) if a == b && mods.len() == 9 => Ok((dt, a, ct)),
        _ => Err(Fault::Unsupported(format!(
            "{} is not supported by the host backend (it runs m16n8k16.row.col with f16 or bf16 inputs)",
            d.mnemonic()
        ))),
    }
}

/// One warp's D fragments from its A, B and C fragments (lane-major; each
/// lane's registers as 32-bit words, f16 pairs packed low element first).
pub(crate) fn mma_m16n8k16(
    a: &[[u32; 4]; 32],
    b: &[[u32; 2]; 32],
    c: &[[u32; 4]; 32],
    (dt, ab, ct): (ElemType, ElemType, ElemType),
) -> [[u32; 4]; 32] {
    let mut am = [[0f64; 16]; 16];
    let mut bm = [[0f64; 8]; 16];
    let mut cm = [[0f64; 8]; 16];
    for lane in 0..32 {
        let (group, pair) = (lane / 4, 2 * (lane % 4));
        for i in 0..8 {
            am[group + 8 * ((i / 2) % 2)][pair + i % 2 + 8 * (i / 4)] = half_of(&a[lane], i, ab);
        }
        for i in 0..4 {
            bm[pair + i % 2 + 8 * (i / 2)][group] = half_of(&b[lane], i, ab);
            cm[group + 8 * (i / 2)][pair + i % 2] = match ct {
                ElemType::F32 => f64::from(f32::from_bits(c[lane][i])),
                _ => half_of(&c[lane], i, ct),
            };
        }
    }
    let arith = Arith::of(false, dt == ElemType::F16);
    let mut out = [[0u32; 4]; 32];
    for (lane, o) in out.iter_mut().enumerate() {
        let (group, pair) = (lane / 4, 2 * (lane % 4));
        for i in 0..4 {
            let (row, col) = (group + 8 * (i / 2), pair + i % 2);
            let products = (0..16).map(|k| (am[row][k], bm[k][col]));
            let x = mma_arith::fused(cm[row][col], products, arith);
            match dt {
                ElemType::F32 => o[i] = x,
                _ => o[i / 2] |= x << (16 * (i % 2)),
            }
        }
    }
    out
}

impl Machine<'_> {
    /// `mma.sync.aligned.m16n8k16.row.col`, warp by warp: every lane of a
    /// warp must be active (`.aligned`).
    pub(super) fn warp_mma(&mut self, d: &InstData, act: &[bool]) -> Res<()> {
        let types = mma_types(d)?;
        let regs_of = |k: usize| -> Res<Vec<VReg>> {
            match op(d, k)? {
                Operand::Vector(v) => registers(v, "mma.sync"),
                Operand::Reg(r) => Ok(vec![*r]),
                other => Err(fault!("{other:?} where mma.sync wants registers")),
            }
        };
        let (dr, ar, br, cr) = (regs_of(0)?, regs_of(1)?, regs_of(2)?, regs_of(3)?);
        let d_words = if types.0 == ElemType::F32 { 4 } else { 2 };
        let c_words = if types.2 == ElemType::F32 { 4 } else { 2 };
        if ar.len() != 4 || br.len() != 2 || dr.len() != d_words || cr.len() != c_words {
            return Err(fault!("{}: wrong fragment register counts", d.mnemonic()));
        }
        for warp in 0..WARPGROUP / 32 {
            let lanes = warp * 32..warp * 32 + 32;
            let live = lanes.clone().filter(|t| act[*t]).count();
            if live == 0 {
                continue;
            }
            if live != 32 {
                return Err(fault!(
                    "{}: {live} of the 32 lanes of warp {warp} run it; .aligned needs all",
                    d.mnemonic()
                ));
            }
            let (mut a, mut b, mut c) = ([[0u32; 4]; 32], [[0u32; 2]; 32], [[0u32; 4]; 32]);
            for (lane, t) in lanes.clone().enumerate() {
                for (k, r) in ar.iter().enumerate() {
                    a[lane][k] = self.wg.regs.get(t, *r) as u32;
                }
                for (k, r) in br.iter().enumerate() {
                    b[lane][k] = self.wg.regs.get(t, *r) as u32;
                }
                for (k, r) in cr.iter().enumerate() {
                    c[lane][k] = self.wg.regs.get(t, *r) as u32;
                }
            }
            let out = mma_m16n8k16(&a, &b, &c, types);
            for (lane, t) in lanes.enumerate() {
                for (k, r) in dr.iter().enumerate() {
                    self.wg.regs.set(t, *r, u64::from(out[lane][k]));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(x: f64) -> u32 {
        u32::from(crate::numbers::encode_f16(x))
    }

    /// Fragments made from whole matrices by the ISA's layout; the result
    /// must be the plain product.
    #[test]
    fn fragments_follow_the_isa_layout() {
        let av = |r: usize, k: usize| ((r * 3 + k * 5) % 7) as f64 - 3.0;
        let bv = |k: usize, n: usize| ((k * 2 + n * 7) % 5) as f64 - 2.0;
        let cv = |r: usize, n: usize| (r * 8 + n) as f64;
        let (mut a, mut b, mut c) = ([[0u32; 4]; 32], [[0u32; 2]; 32], [[0u32; 4]; 32]);
        for lane in 0..32 {
            let (group, pair) = (lane / 4, 2 * (lane % 4));
            for i in 0..8 {
                let v = av(group + 8 * ((i / 2) % 2), pair + i % 2 + 8 * (i / 4));
                a[lane][i / 2] |= h(v) << (16 * (i % 2));
            }
            for i in 0..4 {
                b[lane][i / 2] |= h(bv(pair + i % 2 + 8 * (i / 2), group)) << (16 * (i % 2));
                c[lane][i] = (cv(group + 8 * (i / 2), pair + i % 2) as f32).to_bits();
            }
        }
        let t = (ElemType::F32, ElemType::F16, ElemType::F32);
        let out = mma_m16n8k16(&a, &b, &c, t);
        for (lane, o) in out.iter().enumerate() {
            let (group, pair) = (lane / 4, 2 * (lane % 4));
            for (i, word) in o.iter().enumerate() {
                let (row, col) = (group + 8 * (i / 2), pair + i % 2);
                let want: f64 =
                    (0..16).map(|k| av(row, k) * bv(k, col)).sum::<f64>() + cv(row, col);
                assert_eq!(
                    f32::from_bits(*word),
                    want as f32,
                    "lane {lane} element {i}"
                );
            }
        }
    }

    use crate::mma_recorded::{check_records, raw, read_records, Record};

    /// The outputs of block `blk` of an `mma.sync` record that differ.
    fn mma_sync_block(r: &Record, blk: usize) -> (Vec<String>, usize) {
        let t = &r.tokens;
        let ty = |s: &str| ElemType::from_ptx(s).expect("a type");
        let types = (ty(&t[2]), ty(&t[3]), ty(&t[5]));
        let (a, b, c) = ([[0u32; 4]; 32], [[0u32; 2]; 32], [[0u32; 4]; 32]);
        let (mut a, mut b, mut c) = (a, b, c);
        let half = |which: usize, ty: &str, i: usize| raw(r, which, ty, i);
        for lane in 0..32 {
            let (group, pair) = (lane / 4, 2 * (lane % 4));
            for i in 0..8 {
                let (row, col) = (group + 8 * ((i / 2) % 2), pair + i % 2 + 8 * (i / 4));
                a[lane][i / 2] |= half(0, &t[3], blk * 256 + row * 16 + col) << (16 * (i % 2));
            }
            for i in 0..4 {
                let (kk, col) = (pair + i % 2 + 8 * (i / 2), group);
                b[lane][i / 2] |= half(1, &t[4], blk * 128 + col * 16 + kk) << (16 * (i % 2));
                let (row, col) = (group + 8 * (i / 2), pair + i % 2);
                let v = half(2, &t[5], blk * 128 + row * 8 + col);
                match types.2 {
                    ElemType::F32 => c[lane][i] = v,
                    _ => c[lane][i / 2] |= v << (16 * (i % 2)),
                }
            }
        }
        let out = mma_m16n8k16(&a, &b, &c, types);
        let mut bad = Vec::new();
        for (lane, o) in out.iter().enumerate() {
            let (group, pair) = (lane / 4, 2 * (lane % 4));
            for i in 0..4 {
                let (row, col) = (group + 8 * (i / 2), pair + i % 2);
                let host = match types.0 {
                    ElemType::F32 => o[i],
                    _ => (o[i / 2] >> (16 * (i % 2))) & 0xffff,
                };
                let gpu = half(3, &t[2], blk * 128 + row * 8 + col);
                if host != gpu {
                    bad.push(format!(
                        "block {blk} ({row},{col}): host {host:#x}, GPU {gpu:#x}"
                    ));
                }
            }
        }
        (bad, 128)
    }

    /// Every `mma.sync` output of the H100's recording
    /// (`tests/host/mma/mma_probes.bin`) is the host's.
    #[test]
    fn every_recorded_mma_sync_output_of_the_h100_is_the_hosts() {
        let (checked, failures) = check_records(&read_records(), "mma", mma_sync_block);
        assert!(checked > 5000, "only {checked} outputs");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
