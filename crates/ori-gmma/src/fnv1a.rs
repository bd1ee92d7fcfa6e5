//! FNV-1a, the hash ptxas uses to key accumulator register sets.
//!
//! Seed 003 (`sub_ADAD60`) hashes each register id byte by byte, low byte
//! first, from the offset basis `0x811C9DC5` with prime `16777619`:
//! `h = prime * (byte ^ h)` for each byte. A set hashes its ids in order,
//! chaining the state from one id to the next.

use ori_ir::consts::{FNV1A_OFFSET_BASIS, FNV1A_PRIME};

/// FNV-1a over raw bytes.
pub fn fnv1a_bytes(bytes: &[u8]) -> u32 {
    bytes.iter().fold(FNV1A_OFFSET_BASIS, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(FNV1A_PRIME)
    })
}

/// Fold one register id into a running hash exactly as the seed writes it:
/// `prime * (HIBYTE ^ (prime * (BYTE2 ^ (prime * (BYTE1 ^ (prime * (BYTE0 ^ h)))))))`.
pub fn fnv1a_fold_reg(h: u32, reg_id: u32) -> u32 {
    let [b0, b1, b2, b3] = reg_id.to_le_bytes();
    let h = FNV1A_PRIME.wrapping_mul(u32::from(b0) ^ h);
    let h = FNV1A_PRIME.wrapping_mul(u32::from(b1) ^ h);
    let h = FNV1A_PRIME.wrapping_mul(u32::from(b2) ^ h);
    FNV1A_PRIME.wrapping_mul(u32::from(b3) ^ h)
}

/// Hash of a register set (ids in the set's order).
pub fn fnv1a_regs(ids: impl IntoIterator<Item = u32>) -> u32 {
    ids.into_iter().fold(FNV1A_OFFSET_BASIS, fnv1a_fold_reg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_fnv1a_32_vectors() {
        // Test vectors of the FNV reference (Fowler/Noll/Vo), 32-bit FNV-1a.
        assert_eq!(fnv1a_bytes(b""), 0x811c9dc5);
        assert_eq!(fnv1a_bytes(b"a"), 0xe40c292c);
        assert_eq!(fnv1a_bytes(b"foobar"), 0xbf9cf968);
    }

    #[test]
    fn one_register_is_its_four_le_bytes() {
        for id in [0u32, 1, 255, 256, 0x0102_0304, u32::MAX] {
            assert_eq!(fnv1a_regs([id]), fnv1a_bytes(&id.to_le_bytes()));
        }
        let ids = [7u32, 300, 70000];
        let bytes: Vec<u8> = ids.iter().flat_map(|i| i.to_le_bytes()).collect();
        assert_eq!(fnv1a_regs(ids), fnv1a_bytes(&bytes));
    }

    #[test]
    fn order_matters() {
        assert_ne!(fnv1a_regs([1, 2]), fnv1a_regs([2, 1]));
    }
}
