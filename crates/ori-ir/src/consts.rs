//! Every magic number ori shares with ptxas 13.0.88, in one place.
//!
//! The values come from the reverse-engineered description of ptxas's GMMA
//! pipeline (seed `003`, "Key Constants") unless a line says otherwise; where
//! real ptxas 13.0.88 was observed to disagree with the seed, the doc says so.

/// Ori opcode of `wgmma.mma_async` (seed 003, "Key Constants").
pub const ORI_OP_WGMMA_MMA_ASYNC: u32 = 309;
/// Ori opcode of `_warpgroup.commit_batch` (seed 003, "Key Constants").
pub const ORI_OP_WARPGROUP_COMMIT_BATCH: u32 = 323;
/// Ori opcode shared by `_warpgroup.arrive` / `_warpgroup.wait` once masked (seed 003).
pub const ORI_OP_WARPGROUP_SYNC: u32 = 271;
/// Mask that strips the variant bits (12 and 13) off a warpgroup sync opcode (seed 003).
pub const ORI_OPCODE_VARIANT_MASK: u32 = 0xFFFF_CFFF;
/// Variant bit ori uses to tell `_warpgroup.arrive` from the masked 271 (ori's choice; the seed gives no value).
pub const ORI_VARIANT_ARRIVE: u32 = 0x1000;
/// Variant bit ori uses to tell `_warpgroup.wait` from the masked 271 (ori's choice; the seed gives no value).
pub const ORI_VARIANT_WAIT: u32 = 0x2000;
/// Ori opcode of a function call, which forces a pipeline break (seed 003).
pub const ORI_OP_CALL: u32 = 236;

/// Register class of tensor/accumulator registers: `vreg+64 == 6` (seed 003, `sub_ADA740`).
pub const REG_CLASS_TENSOR: u8 = 6;

/// Operand type tag of a register operand: `(operand >> 28) & 7 == 1` (seed 003, `sub_ADA740`).
pub const OPERAND_TAG_REGISTER: u32 = 1;
/// Operand type tag marking an immediate, `tag != 0x70000000` (seed 003, case 7 path 1).
pub const OPERAND_TAG_IMMEDIATE: u32 = 7;

/// Operand flag bit 0: operand already processed for arrive (seed 003, `sub_ADEB40` step 2).
pub const OPERAND_FLAG_ARRIVE_DONE: u8 = 1;
/// Operand flag bit 1: operand already processed for wait (seed 003, `sub_ADEB40` step 2).
pub const OPERAND_FLAG_WAIT_DONE: u8 = 2;
/// Operand flag bit 2: operand requires a warpgroup arrive/wait boundary (seed 003, `sub_ADEB40` step 2).
pub const OPERAND_FLAG_NEEDS_BOUNDARY: u8 = 4;

/// High-nibble tag of a packed *source* accumulator-set word (seed 003, phase 85 encoding).
pub const ACCUM_SRC_TAG: u32 = 0x9000_0000;
/// High-nibble tag of a packed *destination* accumulator-set word (seed 003, phase 85 encoding).
pub const ACCUM_DST_TAG: u32 = 0x1000_0000;
/// Mask of the set index inside a packed accumulator-set word (seed 003, `& 0xFFFFFF`).
pub const ACCUM_INDEX_MASK: u32 = 0x00FF_FFFF;

/// FNV-1a 32-bit offset basis used to hash register sets (seed 003, `sub_ADAD60`).
pub const FNV1A_OFFSET_BASIS: u32 = 0x811C_9DC5;
/// FNV-1a 32-bit prime used to hash register sets (seed 003, `sub_ADAD60`).
pub const FNV1A_PRIME: u32 = 16_777_619;

/// Phase number of OriPropagateGmma in ptxas's pipeline (seed 003).
pub const PHASE_ORI_PROPAGATE_GMMA: u32 = 85;
/// Phase number of FixupGmmaSequence in ptxas's pipeline (seed 003).
pub const PHASE_FIXUP_GMMA_SEQUENCE: u32 = 87;

/// C7407 (0x1CEF): too many active GMMA live ranges (seed 003).
pub const C7407_TOO_MANY_LIVE_RANGES: u32 = 7407;
/// C7504: advisory, `setmaxnreg` ignored when each function is compiled
/// alone (`-c`; found on ptxas 13.0.88, `tests/corpus/c7504_*`).
pub const C7504_SETMAXNREG_SEPARATE: u32 = 7504;
/// C7508: advisory, `setmaxnreg` ignored, the register count at entry
/// unknown (found on ptxas 13.0.88, `tests/corpus/c7508_*`).
pub const C7508_SETMAXNREG_UNKNOWN_ENTRY: u32 = 7508;
/// C7509 (0x1D55): serialized, extern calls in the function (seed 003, case 1).
pub const C7509_EXTERN_CALLS: u32 = 7509;
/// C7510 (0x1D56): serialized, pipeline crossing a function call (seed 003, case 2).
pub const C7510_CROSSES_CALL: u32 = 7510;
/// C7511 (0x1D57): serialized, insufficient registers for the pipeline (seed 003, case 3).
pub const C7511_PIPELINE_REGISTERS: u32 = 7511;
/// C7512 (0x1D58): serialized, insufficient registers for the function (seed 003, case 4).
pub const C7512_FUNCTION_REGISTERS: u32 = 7512;
/// C7513 (0x1D59): serialized, non-wgmma defines wgmma input registers (seed 003, case 5).
pub const C7513_DEFINES_INPUTS: u32 = 7513;
/// C7514 (0x1D5A): serialized, non-wgmma reads accumulators (seed 003, case 6).
pub const C7514_READS_ACCUMULATORS: u32 = 7514;
/// C7515 (0x1D5B): serialized, non-wgmma defines accumulators (seed 003, case 7).
pub const C7515_DEFINES_ACCUMULATORS: u32 = 7515;
/// C7516 (0x1D5C): serialized, ill-formed pipeline stage (seed 003, case 8).
pub const C7516_ILL_FORMED: u32 = 7516;
/// C7517 (0x1D5D): advisory, warpgroup.wait injected (seed 003).
pub const C7517_WAIT_INJECTED: u32 = 7517;
/// C7518 (0x1D5E): serialized, compiler-inserted WG.DP in a divergent path (seed 003, case 9).
pub const C7518_WGDP_DIVERGENT: u32 = 7518;
/// C7519 (0x1D5F): advisory, warpgroup.arrive injected (seed 003).
pub const C7519_ARRIVE_INJECTED: u32 = 7519;
/// C7520 (0x1D60): serialized, compiler-inserted WG.AR in a divergent path (seed 003, case 10).
pub const C7520_WGAR_DIVERGENT: u32 = 7520;
/// C7602: fatal, a wgmma's registers do not fit under `-maxrregcount`
/// (found on ptxas 13.0.88; the seed does not name it).
pub const C7602_INSUFFICIENT_REGISTERS: u32 = 7602;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warning_codes_match_the_seeds_hex() {
        assert_eq!(C7407_TOO_MANY_LIVE_RANGES, 0x1CEF);
        assert_eq!(C7509_EXTERN_CALLS, 0x1D55);
        assert_eq!(C7517_WAIT_INJECTED, 0x1D5D);
        assert_eq!(C7519_ARRIVE_INJECTED, 0x1D5F);
        assert_eq!(C7520_WGAR_DIVERGENT, 0x1D60);
    }

    #[test]
    fn variant_bits_vanish_under_the_mask() {
        for v in [ORI_VARIANT_ARRIVE, ORI_VARIANT_WAIT] {
            assert_eq!(
                (ORI_OP_WARPGROUP_SYNC | v) & ORI_OPCODE_VARIANT_MASK,
                ORI_OP_WARPGROUP_SYNC
            );
        }
    }
}
