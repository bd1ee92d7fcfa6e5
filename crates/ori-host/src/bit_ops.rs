//! The bit-field and byte-permute instructions (`bfe`, `bfi`, `prmt`,
//! `lop3`), as the PTX ISA defines them bit by bit.
//!
//! Compilers lean on these for address swizzles and fragment packing (every
//! Triton matmul extracts fields of `%tid.x` with `bfe`, and the fp8 and
//! int8 epilogues shuffle bytes with `prmt`), so an interpreter that gets
//! one edge case wrong (a length of 0, a position past the msb, the sign
//! replication of `bfe.s32` or `prmt`'s sign mode) computes wrong
//! addresses, not slightly wrong numbers. Each function follows the ISA's
//! pseudocode (section 9.7.1 "Integer Arithmetic Instructions" and 9.7.8
//! "Data Movement": `bfe`, `bfi`, `prmt`, `lop3`).

/// `bfe.{u32,s32,u64,s64} d, a, pos, len`: `len` bits of `a` from bit
/// `pos`, zero- or sign-extended. `pos` and `len` are taken modulo 256; bits
/// past the msb read as the sign bit (signed) or zero.
pub fn bfe(a: u64, pos: u64, len: u64, bits: u32, signed: bool) -> u64 {
    let msb = u64::from(bits) - 1;
    let (pos, len) = (pos & 0xff, len & 0xff);
    // Bits 0..n come from a[pos..pos+n]; the rest are the sign bit (the
    // field's last bit within the register) or zero.
    let n = if pos > msb { 0 } else { len.min(msb + 1 - pos) };
    let low = |k: u64| if k >= 64 { u64::MAX } else { (1u64 << k) - 1 };
    let field = if n == 0 { 0 } else { (a >> pos) & low(n) };
    let sbit = signed && len > 0 && (a >> (pos + len - 1).min(msb)) & 1 == 1;
    if sbit {
        field | (low(msb + 1) & !low(n))
    } else {
        field
    }
}

/// `bfi.{b32,b64} f, a, b, pos, len`: `b` with its bits `pos..pos+len`
/// replaced by the low bits of `a` (those past the msb dropped).
pub fn bfi(a: u64, b: u64, pos: u64, len: u64, bits: u32) -> u64 {
    let msb = u64::from(bits) - 1;
    let (pos, len) = (pos & 0xff, len & 0xff);
    let mut f = b;
    let mut i = 0;
    while i < len && pos + i <= msb {
        f = (f & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
        i += 1;
    }
    f
}

/// `prmt.b32{.mode} d, a, b, c`: bytes picked from the 8 bytes `{b, a}`
/// (`a` is bytes 0..3, `b` bytes 4..7) by the selector `c`. `mode` is the
/// modifier after `prmt` (`None` for the generic form, where each nibble
/// of `c` picks a byte and its bit 3 replicates that byte's sign).
pub fn prmt(a: u32, b: u32, c: u32, mode: Option<&str>) -> Result<u32, String> {
    let src = (u64::from(b) << 32) | u64::from(a);
    let byte = |k: u32| ((src >> (8 * (k & 7))) & 0xff) as u32;
    let pick = |sel: [u32; 4]| {
        sel.iter()
            .enumerate()
            .fold(0, |d, (i, &k)| d | byte(k) << (8 * i))
    };
    let s = c & 3;
    Ok(match mode {
        None => (0..4).fold(0, |d, i| {
            let nib = (c >> (4 * i)) & 0xf;
            let v = byte(nib & 7);
            let v = if nib & 8 != 0 {
                if v & 0x80 != 0 {
                    0xff
                } else {
                    0
                }
            } else {
                v
            };
            d | v << (8 * i)
        }),
        Some("f4e") => pick([s, s + 1, s + 2, s + 3]),
        Some("b4e") => pick([s, (s + 7) & 7, (s + 6) & 7, (s + 5) & 7]),
        Some("rc8") => pick([s; 4]),
        // Edge clamps: byte i of d is byte max(i, s) (left) or min(i, s) (right).
        Some("ecl") => pick([s, s.max(1), s.max(2), 3]),
        Some("ecr") => pick([0, s.min(1), s.min(2), s]),
        Some("rc16") => {
            let h = c & 1;
            pick([2 * h, 2 * h + 1, 2 * h, 2 * h + 1])
        }
        Some(m) => return Err(format!("prmt.{m} is not a prmt mode")),
    })
}

/// `lop3.b32 d, a, b, c, lut`: any function of three inputs, bit by bit:
/// bit `i` of `d` is bit `(a_i << 2) | (b_i << 1) | c_i` of `lut` (so that
/// `lut` is the function applied to 0xF0, 0xCC and 0xAA).
pub fn lop3(a: u64, b: u64, c: u64, lut: u8, bits: u32) -> u64 {
    let mut d = 0u64;
    for i in 0..bits {
        let k = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
        d |= u64::from((lut >> k) & 1) << i;
    }
    d
}

/// `bfind{.shiftamt}.{u32,s32,u64,s64}`: the position of the most
/// significant bit that is set (unsigned) or differs from the sign bit
/// (signed), all ones when there is none; `.shiftamt` counts it from the
/// left. `x` is already masked to `bits`.
pub fn bfind(x: u64, bits: u32, signed: bool, shiftamt: bool) -> u64 {
    let m = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let x = if signed && x >> (bits - 1) & 1 == 1 {
        !x & m
    } else {
        x
    };
    if x == 0 {
        return 0xffff_ffff;
    }
    let msb = u64::from(63 - x.leading_zeros());
    if shiftamt {
        u64::from(bits - 1) - msb
    } else {
        msb
    }
}

/// `dp4a` (`half` is `None`) and `dp2a.lo`/`.hi` (`Some(hi)`): the dot
/// product of `a`'s bytes (dp2a: half-words) with `b`'s bytes (dp2a: the
/// low or high two), plus `c`; `signs` says which of `a` and `b` are
/// signed. The sum wraps to 32 bits.
pub fn dot_product(a: u32, b: u32, c: u32, signs: (bool, bool), half: Option<bool>) -> u32 {
    let field = |v: u32, k: u32, width: u32, signed: bool| -> i64 {
        let x = (v >> (width * k)) & ((1 << width) - 1);
        if signed {
            let s = 32 - width;
            i64::from(((x << s) as i32) >> s)
        } else {
            i64::from(x)
        }
    };
    let mut acc = i64::from(c as i32);
    match half {
        None => {
            for k in 0..4 {
                acc += field(a, k, 8, signs.0) * field(b, k, 8, signs.1);
            }
        }
        Some(hi) => {
            let base = if hi { 2 } else { 0 };
            for k in 0..2 {
                acc += field(a, k, 16, signs.0) * field(b, base + k, 8, signs.1);
            }
        }
    }
    acc as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bfe` as the ISA defines it, one bit at a time.
    fn bfe_by_bits(a: u64, pos: u64, len: u64, bits: u32, signed: bool) -> u64 {
        let msb = u64::from(bits) - 1;
        let (pos, len) = (pos & 0xff, len & 0xff);
        let bit = |i: u64| (a >> i) & 1;
        let sbit = if signed && len > 0 {
            bit((pos + len - 1).min(msb))
        } else {
            0
        };
        (0..=msb).fold(0, |d, i| {
            let v = if i < len && pos + i <= msb {
                bit(pos + i)
            } else {
                sbit
            };
            d | v << i
        })
    }

    #[test]
    fn bfe_equals_its_bitwise_definition() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (pos, len) = ((x >> 8) % 80, (x >> 16) % 80);
            for bits in [32, 64] {
                let a = if bits == 32 { x & 0xffff_ffff } else { x };
                for signed in [false, true] {
                    assert_eq!(
                        bfe(a, pos, len, bits, signed),
                        bfe_by_bits(a, pos, len, bits, signed),
                        "bfe({a:#x}, {pos}, {len}, {bits}, {signed})"
                    );
                }
            }
        }
    }

    #[test]
    fn bfe_extracts_and_extends() {
        // Triton's `bfe.u32 %r2, %r1, 2, 5`: bits 2..7 of %tid.x.
        assert_eq!(bfe(0b1011_0100, 2, 5, 32, false), 0b01101);
        // Signed: the field's top bit is replicated (0b1101 is negative).
        assert_eq!(bfe(0b1011_0100, 2, 5, 32, true), 0b01101);
        assert_eq!(bfe(0b1011_0100, 2, 4, 32, true), 0xffff_fffd);
        // Length 0 gives 0, even signed.
        assert_eq!(bfe(u64::MAX, 3, 0, 32, true), 0);
        // Past the msb: zero (unsigned), the msb (signed).
        assert_eq!(bfe(0x8000_0000, 30, 8, 32, false), 0b10);
        assert_eq!(bfe(0x8000_0000, 30, 8, 32, true), 0xffff_fffe);
        // pos and len are taken modulo 256.
        assert_eq!(bfe(0xf0, 0x104, 0x104, 32, false), 0xf);
    }

    #[test]
    fn bfi_inserts() {
        assert_eq!(bfi(0b101, 0xffff_0000, 4, 3, 32), 0xffff_0050);
        // Bits past the msb are dropped.
        assert_eq!(bfi(0xff, 0, 30, 8, 32), 0xc000_0000);
        assert_eq!(bfi(0xff, 0x1234, 0, 0, 32), 0x1234);
    }

    #[test]
    fn prmt_generic_and_modes() {
        let (a, b) = (0x4433_2211, 0x8877_6655);
        // Identity and a swap of the halves.
        assert_eq!(prmt(a, b, 0x3210, None).unwrap(), a);
        assert_eq!(prmt(a, b, 0x7654, None).unwrap(), b);
        assert_eq!(prmt(a, b, 0x5410, None).unwrap(), 0x6655_2211);
        // Sign replication: byte 7 is 0x88 (negative), byte 0 is 0x11;
        // nibbles 2 and 3 are 0 and pick byte 0 as it is.
        assert_eq!(prmt(a, b, 0x8f, None).unwrap(), 0x1111_00ff);
        assert_eq!(prmt(a, b, 1, Some("rc8")).unwrap(), 0x2222_2222);
        assert_eq!(prmt(a, b, 1, Some("rc16")).unwrap(), 0x4433_4433);
        assert_eq!(prmt(a, b, 1, Some("f4e")).unwrap(), 0x5544_3322);
        assert_eq!(prmt(a, b, 1, Some("b4e")).unwrap(), 0x7788_1122);
        assert_eq!(prmt(a, b, 1, Some("ecl")).unwrap(), 0x4433_2222);
        assert_eq!(prmt(a, b, 2, Some("ecr")).unwrap(), 0x3333_2211);
        assert!(prmt(a, b, 0, Some("xyz")).is_err());
    }

    /// Every mode and selector against an H100
    /// (`tests/host/probes/prmt_modes.py`, output recorded in `prmt_modes.txt`).
    #[test]
    fn prmt_modes_are_what_the_h100_gives() {
        let recorded = include_str!("../../../tests/host/probes/prmt_modes.txt");
        let mut n = 0;
        for line in recorded.lines() {
            let [mode, sel, want] = line.split_whitespace().collect::<Vec<_>>()[..] else {
                panic!("bad line {line:?}");
            };
            let want = u32::from_str_radix(want.trim_start_matches("0x"), 16).unwrap();
            let got = prmt(0x4433_2211, 0x8877_6655, sel.parse().unwrap(), Some(mode)).unwrap();
            assert_eq!(got, want, "prmt.{mode} selector {sel}");
            n += 1;
        }
        assert_eq!(n, 24);
    }

    #[test]
    fn lop3_is_its_truth_table() {
        let (a, b, c) = (0xF0, 0xCC, 0xAA);
        for lut in 0..=255u8 {
            assert_eq!(lop3(a, b, c, lut, 8), u64::from(lut));
        }
        assert_eq!(lop3(0x1234, 0xff00, 0, 0xF0 & 0xCC, 32), 0x1200);
    }
}
