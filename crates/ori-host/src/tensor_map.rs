//! The 128-byte tensor map (`CUtensorMap`) that TMA copies read, and the
//! copies themselves (`cp.async.bulk.tensor`, tiled mode).
//!
//! A kernel gets its tensor maps either from the host, encoded by the
//! driver's `cuTensorMapEncodeTiled` and passed by value as a `.param .b8
//! [128]`, or builds them itself with `tensormap.replace` (Triton's device
//! descriptors). The driver does not document the bytes, so the layout below
//! was established by experiment: `tests/host/probes/tensormap_layout.py`
//! encoded 74 parameter sets on an H100's driver, one parameter changed at
//! a time, and `tensormap_layout.jsonl` holds the bytes (the tests decode
//! and re-encode every line). In 32-bit little-endian words:
//!
//! | word | bits | field |
//! |---|---|---|
//! | 0-1 | all | global address |
//! | 2 | 4..6 | rank - 1 |
//! | 2 | 7..10 | element type (u8 0, u16 1, u32 2, s32 3, u64 4, s64 5, f16 6, f32 7, f32.ftz 8, f64 9, bf16 10) |
//! | 2 | 13..14 | swizzle (none, 32B, 64B, 128B) |
//! | 2 | 15 | out-of-bounds fill with NaN (else zero) |
//! | 2 | 16 | tf32 (round f32 to tf32 in flight) |
//! | 2 | 17..18 | L2 promotion |
//! | 3-6 | all | global stride k (bytes / 16), low 32 bits |
//! | 7 | 4k..4k+3 | global stride k, bits 32..35 |
//! | 8-12 | all | global dimension k - 1 |
//! | 13 | 3k..3k+2 | element stride k - 1 |
//! | 13 | 24..31 | box dimension 0 - 1 |
//! | 14 | 8(k-1).. | box dimension k - 1 (k = 1..4) |
//! | 16 | all | bytes of one box |
//! | 18 | all | bytes of one swizzle atom (16 unswizzled, else 8 rows of the span) |

/// A decoded tiled tensor map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMap {
    /// Global address of element (0, 0, ...).
    pub address: u64,
    /// Dimensions used: 1..=5 in a valid map. The field holds 1..=8, so
    /// a map a kernel wrote itself may say more, which
    /// [`TensorMap::unsupported`] refuses; the rest of this type looks at
    /// the first five at most ([`TensorMap::dims_used`]).
    pub rank: usize,
    /// The hardware element-type code (see the module table).
    pub elem_code: u32,
    /// Whether f32 elements are rounded to tf32.
    pub tf32: bool,
    /// Swizzle mode: 0 none, 1 32B, 2 64B, 3 128B.
    pub swizzle: u32,
    /// Out-of-bounds elements read as NaN instead of zero.
    pub oob_nan: bool,
    /// L2 promotion (0..3); no effect on results.
    pub l2: u32,
    /// Size of each dimension, innermost first.
    pub dims: [u64; 5],
    /// Byte stride of dimensions 1.. (dimension 0 is contiguous).
    pub strides: [u64; 4],
    /// Box (the copied tile) size in each dimension.
    pub box_dims: [u32; 5],
    /// Element strides (traversal steps) in each dimension.
    pub elem_strides: [u32; 5],
}

/// Bytes of an element of hardware type `code`.
pub fn elem_bytes(code: u32) -> Option<usize> {
    Some(match code {
        0 => 1,
        1 | 6 | 10 => 2,
        2 | 3 | 7 | 8 => 4,
        4 | 5 | 9 => 8,
        _ => return None,
    })
}

fn word(b: &[u8; 128], k: usize) -> u32 {
    u32::from_le_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]])
}

fn set_word(b: &mut [u8; 128], k: usize, v: u32) {
    b[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
}

fn bits(v: u32, lo: u32, n: u32) -> u32 {
    (v >> lo) & ((1 << n) - 1)
}

fn set_bits(v: &mut u32, lo: u32, n: u32, x: u32) {
    let m = ((1u32 << n) - 1) << lo;
    *v = (*v & !m) | ((x << lo) & m);
}

impl TensorMap {
    /// Read a tensor map's 128 bytes.
    pub fn decode(b: &[u8; 128]) -> TensorMap {
        let w2 = word(b, 2);
        let w7 = word(b, 7);
        let w13 = word(b, 13);
        let w14 = word(b, 14);
        let mut t = TensorMap {
            address: u64::from(word(b, 0)) | (u64::from(word(b, 1)) << 32),
            rank: bits(w2, 4, 3) as usize + 1,
            elem_code: bits(w2, 7, 4),
            tf32: bits(w2, 16, 1) == 1,
            swizzle: bits(w2, 13, 2),
            oob_nan: bits(w2, 15, 1) == 1,
            l2: bits(w2, 17, 2),
            dims: [0; 5],
            strides: [0; 4],
            box_dims: [0; 5],
            elem_strides: [0; 5],
        };
        for k in 0..5 {
            t.dims[k] = u64::from(word(b, 8 + k)) + 1;
            t.elem_strides[k] = bits(w13, 3 * k as u32, 3) + 1;
            t.box_dims[k] = if k == 0 {
                bits(w13, 24, 8) + 1
            } else {
                bits(w14, 8 * (k as u32 - 1), 8) + 1
            };
        }
        for k in 0..4 {
            let lo = u64::from(word(b, 3 + k));
            let hi = u64::from(bits(w7, 4 * k as u32, 4));
            t.strides[k] = ((hi << 32) | lo) << 4;
        }
        t
    }

    /// The 128 bytes the driver writes for this map (the derived words 16
    /// and 18 included; dimensions past the rank as the driver leaves them).
    pub fn encode(&self) -> [u8; 128] {
        let mut b = [0u8; 128];
        set_word(&mut b, 0, self.address as u32);
        set_word(&mut b, 1, (self.address >> 32) as u32);
        let mut w2 = 0;
        set_bits(&mut w2, 4, 3, (self.rank as u32).wrapping_sub(1));
        set_bits(&mut w2, 7, 4, self.elem_code);
        set_bits(&mut w2, 13, 2, self.swizzle);
        set_bits(&mut w2, 15, 1, u32::from(self.oob_nan));
        set_bits(&mut w2, 16, 1, u32::from(self.tf32));
        set_bits(&mut w2, 17, 2, self.l2);
        set_word(&mut b, 2, w2);
        let mut w7 = 0;
        for k in 0..self.dims_used().saturating_sub(1) {
            let s = self.strides[k] >> 4;
            set_word(&mut b, 3 + k, s as u32);
            set_bits(&mut w7, 4 * k as u32, 4, (s >> 32) as u32);
        }
        set_word(&mut b, 7, w7);
        let mut w13 = 0;
        let mut w14 = 0;
        for k in 0..self.dims_used() {
            set_word(&mut b, 8 + k, self.dims[k].wrapping_sub(1) as u32);
            set_bits(
                &mut w13,
                3 * k as u32,
                3,
                self.elem_strides[k].wrapping_sub(1),
            );
            if k == 0 {
                set_bits(&mut w13, 24, 8, self.box_dims[0].wrapping_sub(1));
            } else {
                set_bits(
                    &mut w14,
                    8 * (k as u32 - 1),
                    8,
                    self.box_dims[k].wrapping_sub(1),
                );
            }
        }
        set_word(&mut b, 13, w13);
        set_word(&mut b, 14, w14);
        set_word(&mut b, 16, self.box_bytes() as u32);
        set_word(&mut b, 18, [16, 256, 512, 1024][self.swizzle as usize & 3]);
        b
    }

    /// The dimensions a copy goes through: the rank, at most five.
    pub fn dims_used(&self) -> usize {
        self.rank.min(5)
    }

    /// Elements of the box in dimension `k` (box size over element stride).
    pub fn box_elems(&self, k: usize) -> usize {
        (self.box_dims[k] / self.elem_strides[k].max(1)) as usize
    }

    /// Bytes one copy moves.
    pub fn box_bytes(&self) -> usize {
        let n: usize = (0..self.dims_used()).map(|k| self.box_elems(k)).product();
        n * elem_bytes(self.elem_code).unwrap_or(1)
    }

    /// Why a copy through this map cannot be run, if it cannot.
    pub fn unsupported(&self) -> Option<String> {
        if self.rank > 5 {
            return Some(format!(
                "rank {} (a tensor map has at most 5 dimensions)",
                self.rank
            ));
        }
        if elem_bytes(self.elem_code).is_none() {
            return Some(format!("element type code {}", self.elem_code));
        }
        if self.elem_strides[..self.rank].iter().any(|&e| e != 1) {
            return Some("element strides other than 1".into());
        }
        None
    }

    /// The global address of element `idx` of the box at `coords` (`idx`
    /// counts innermost dimension first; `box_elems` are the box's extents,
    /// `elem` the element's bytes), or `None` when the element lies outside
    /// the tensor (a load fills it, a store skips it).
    pub fn box_element(
        &self,
        coords: &[i64],
        box_elems: &[usize],
        idx: usize,
        elem: usize,
    ) -> Option<u64> {
        let mut rest = idx;
        let mut inside = true;
        let mut at = self.address;
        for k in 0..self.dims_used().min(coords.len()).min(box_elems.len()) {
            let i = rest % box_elems[k].max(1);
            rest /= box_elems[k].max(1);
            let g = coords[k] + i as i64;
            if g < 0 || g as u64 >= self.dims[k] {
                inside = false;
                continue;
            }
            at = at.wrapping_add(if k == 0 {
                (g as u64).wrapping_mul(elem as u64)
            } else {
                (g as u64).wrapping_mul(self.strides[k - 1])
            });
        }
        inside.then_some(at)
    }

    /// Where the box byte at `offset` (row-major from the box's first
    /// byte) lands in shared memory, for a box written at `base`: the
    /// swizzle XORs the 16-byte chunk index (address bits 4..) with the row
    /// of the swizzle atom (address bits 7..), 1, 2 or 3 bits for 32B,
    /// 64B, 128B: what wgmma's swizzled layouts read back.
    pub fn swizzled(&self, base: u64, offset: u64) -> u64 {
        let a = base.wrapping_add(offset);
        let nbits = self.swizzle;
        if nbits == 0 {
            return a;
        }
        let mask = (1u64 << nbits) - 1;
        a ^ (((a >> 7) & mask) << 4)
    }
}

/// Apply `tensormap.replace.tile.FIELD` (value `v`, dimension `ord`) to a
/// map's bytes, as the PTX ISA defines the field values: sizes as they are
/// (stored minus one), the global stride in bytes, the element type and
/// swizzle by their PTX codes.
pub fn replace(b: &mut [u8; 128], field: &str, ord: usize, v: u64) -> Result<(), String> {
    let mut t = TensorMap::decode(b);
    // The map stores these minus one: a zero has no encoding (found by the
    // compile_ptx fuzz target, where it wrapped around).
    if v == 0 && matches!(field, "box_dim" | "global_dim" | "element_stride") {
        return Err(format!(
            "tensormap.replace.tile.{field}: 0 is not a valid value"
        ));
    }
    match field {
        "global_address" => t.address = v,
        "rank" => t.rank = (v as usize + 1).min(5),
        "box_dim" => t.box_dims[ord.min(4)] = v as u32,
        "global_dim" => t.dims[ord.min(4)] = v,
        "global_stride" => t.strides[ord.min(3)] = v,
        "element_stride" => t.elem_strides[ord.min(4)] = v as u32,
        "swizzle_mode" => t.swizzle = v as u32 & 3,
        "elemtype" => {
            let (code, tf32) = match v {
                0..=10 => (v as u32, false),
                11 => (7, true),
                12 => (8, true),
                _ => return Err(format!("tensormap.replace: element type {v} is not known")),
            };
            t.elem_code = code;
            t.tf32 = tf32;
        }
        "interleave_layout" if v == 0 => {}
        "fill_mode" => t.oob_nan = v != 0,
        _ => {
            return Err(format!(
                "tensormap.replace.tile.{field} is not supported by the host backend"
            ))
        }
    }
    // Encode all five dimensions (a field past the rank is kept, as the
    // rank only says how many are used; unused ones encode as zeros), then
    // the rank itself.
    let rank = t.rank;
    t.rank = 5;
    let mut out = t.encode();
    let mut w2 = word(&out, 2);
    set_bits(&mut w2, 4, 3, (rank as u32).wrapping_sub(1));
    set_word(&mut out, 2, w2);
    *b = out;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every probe line (the driver accepted) decodes to its parameters and
    /// encodes back to its bytes.
    #[test]
    fn the_driver_probe_decodes_and_reencodes() {
        let probe = include_str!("../../../tests/host/probes/tensormap_layout.jsonl");
        let num = |line: &str, key: &str| -> Vec<u64> {
            let at = line.find(&format!("\"{key}\": ")).unwrap() + key.len() + 4;
            let rest = &line[at..];
            let text = if rest.starts_with('[') {
                &rest[1..rest.find(']').unwrap()]
            } else {
                &rest[..rest.find([',', '}']).unwrap()]
            };
            text.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| s.parse().unwrap())
                .collect()
        };
        let code_of = |dtype: u64| -> (u32, bool) {
            match dtype {
                0..=7 => (dtype as u32, false),
                8 => (9, false),
                9 => (10, false),
                10 => (8, false),
                11 => (7, true),
                _ => (8, true),
            }
        };
        let mut checked = 0;
        for line in probe.lines() {
            if num(line, "rc")[0] != 0 {
                continue;
            }
            let hex = &line[line.find("\"bytes\": \"").unwrap() + 10..];
            let hex = &hex[..256];
            let mut b = [0u8; 128];
            for k in 0..128 {
                b[k] = u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).unwrap();
            }
            let t = TensorMap::decode(&b);
            let rank = num(line, "rank")[0] as usize;
            assert_eq!(t.rank, rank, "{line}");
            assert_eq!(t.address, num(line, "addr")[0], "{line}");
            assert_eq!(
                (t.elem_code, t.tf32),
                code_of(num(line, "dtype")[0]),
                "{line}"
            );
            assert_eq!(u64::from(t.swizzle), num(line, "swizzle")[0], "{line}");
            assert_eq!(u64::from(t.l2), num(line, "l2")[0], "{line}");
            assert_eq!(u64::from(t.oob_nan), num(line, "oob")[0], "{line}");
            let dims = num(line, "dims");
            let strides = num(line, "strides");
            let boxes = num(line, "box");
            let es = num(line, "estrides");
            for k in 0..rank {
                assert_eq!(t.dims[k], dims[k], "{line}");
                assert_eq!(u64::from(t.box_dims[k]), boxes[k], "{line}");
                assert_eq!(u64::from(t.elem_strides[k]), es[k], "{line}");
            }
            assert_eq!(&t.strides[..rank - 1], &strides[..], "{line}");
            assert_eq!(t.encode(), b, "re-encoding {line}");
            checked += 1;
        }
        assert!(checked >= 60, "{checked} probe lines");
    }

    #[test]
    fn a_rank_past_five_is_refused_not_a_panic() {
        // The rank field holds 1..=8: a map a kernel wrote itself (or
        // garbage read as one) may say 6, 7 or 8.
        let mut b = [0xffu8; 128];
        b[8] = 0x70;
        let t = TensorMap::decode(&b);
        assert_eq!(t.rank, 8);
        assert!(t.unsupported().unwrap().contains("rank 8"));
        let _ = (t.box_bytes(), t.encode(), t.swizzled(u64::MAX, 16));
        let _ = t.box_element(&[0; 8], &[1; 8], 0, 2);
    }

    #[test]
    fn replace_refuses_zero_sizes() {
        let mut b = TensorMap::decode(&[0; 128]).encode();
        for field in ["box_dim", "global_dim", "element_stride"] {
            assert!(replace(&mut b, field, 1, 0).is_err(), "{field}");
        }
        assert!(replace(&mut b, "global_dim", 1, 7).is_ok());
    }

    #[test]
    fn replace_builds_what_the_driver_encodes() {
        // Triton's device descriptor for a 2-D f16 tensor, field by field
        // from zeros, against the driver's bytes for the same map.
        let mut b = [0u8; 128];
        replace(&mut b, "global_address", 0, 0x7f00_0000_0000).unwrap();
        replace(&mut b, "rank", 0, 1).unwrap();
        replace(&mut b, "box_dim", 0, 64).unwrap();
        replace(&mut b, "box_dim", 1, 128).unwrap();
        replace(&mut b, "global_dim", 0, 1024).unwrap();
        replace(&mut b, "global_dim", 1, 512).unwrap();
        replace(&mut b, "global_stride", 0, 2048).unwrap();
        replace(&mut b, "element_stride", 0, 1).unwrap();
        replace(&mut b, "element_stride", 1, 1).unwrap();
        replace(&mut b, "elemtype", 0, 6).unwrap();
        replace(&mut b, "swizzle_mode", 0, 3).unwrap();
        let t = TensorMap::decode(&b);
        assert_eq!(t.rank, 2);
        assert_eq!((t.dims[0], t.dims[1], t.strides[0]), (1024, 512, 2048));
        assert_eq!(
            (t.box_dims[0], t.box_dims[1], t.swizzle, t.elem_code),
            (64, 128, 3, 6)
        );
        assert_eq!(t.box_bytes(), 64 * 128 * 2);
    }

    #[test]
    fn swizzle_xors_the_chunk_with_the_row() {
        let mut t = TensorMap::decode(&[0; 128]);
        t.swizzle = 3;
        // Row 1 of a 128B atom (bytes 128..255): chunk 0 goes to chunk 1.
        assert_eq!(t.swizzled(0, 128), 128 + 16);
        assert_eq!(t.swizzled(1024, 7 * 128 + 16 * 7), 1024 + 7 * 128);
        t.swizzle = 1;
        assert_eq!(t.swizzled(0, 128 + 16), 128);
        t.swizzle = 0;
        assert_eq!(t.swizzled(0, 200), 200);
    }
}
