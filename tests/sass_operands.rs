//! How `--emit sass` spells the operands of a wgmma, against what
//! `cuobjdump -sass` 13.2.51 printed for ptxas 13.0.88's compile of
//! `tests/corpus/clean_neg_tnsp_operand_modifiers.ptx`:
//!
//! ```text
//! HGMMA.64x8x16.F32 R24, -R28, gdesc[UR8].negB.tnspB, RZ, !UPT
//! HGMMA.64x8x16.F32 R24, gdesc[UR8].negB.tnspB, R24
//! HGMMA.64x8x16.F32.BF16 R24, gdesc[UR8].negA.negB.tnspA, R24, gsb0
//! ```
//!
//! ori keeps virtual registers (no allocation) and does not fold the zeroed
//! accumulator into `RZ, !UPT` as ptxas's optimizer did, so the test compares
//! the opcode, the negated A register and the descriptor's suffixes.

mod common;

#[test]
fn negations_and_transposes_are_spelled_as_ptxas_does() {
    let path = common::corpus_dir().join("clean_neg_tnsp_operand_modifiers.ptx");
    let src = std::fs::read_to_string(&path).unwrap();
    let c = ori::compile_ptx("k.ptx", &src, &ori::case_options(&src));
    let sass = ori::lower::sass::emit_module(c.module.as_ref().expect("compiles"));
    let gmma: Vec<&str> = sass.lines().filter(|l| l.contains("GMMA")).collect();
    assert_eq!(gmma.len(), 3, "{sass}");
    assert!(
        gmma[0].contains("HGMMA.64x8x16.F32 d0, -ra0, gdesc[b].negB.tnspB, "),
        "{}",
        gmma[0]
    );
    assert!(
        gmma[1].contains("HGMMA.64x8x16.F32 d0, gdesc[a].negB.tnspB, "),
        "{}",
        gmma[1]
    );
    assert!(
        gmma[2].contains("HGMMA.64x8x16.F32.BF16 d0, gdesc[a].negA.negB.tnspA, d0, gsb0"),
        "{}",
        gmma[2]
    );
}

/// The sparse forms, against cuobjdump 13.2.51 on ptxas 13.0.88's compiles of
/// `tests/corpus/sparse_f16_desc_chain_n64_trans_neg_sel1.ptx`,
/// `sparse_e4m3_e5m2_f16acc_n64.ptx` and `sparse_bf16_rega_n32_two_groups_wait1.ptx`:
///
/// ```text
/// HGMMA.SP.64x64x32.F32 R24, gdesc[UR4].negA.negB.tnspA.tnspB, R24, R56, 0x1, gsb0
/// QGMMA.SP.64x64x64.F16.E4M3.E5M2 R24, gdesc[UR4].negA, R24, R40, gsb0
/// HGMMA.SP.64x32x32.F32.BF16 R24, R56, gdesc[UR12].tnspB, R24, R64, 0x1, gsb0
/// ```
///
/// `.SP` after the opcode, the metadata register after the accumulator
/// input, then the selector for HGMMA only; the modifiers after scale-d are
/// read two slots further right than in the dense form.
#[test]
fn sparse_wgmma_is_spelled_as_ptxas_does() {
    let gmma = |case: &str| -> Vec<String> {
        let path = common::corpus_dir().join(case);
        let src = std::fs::read_to_string(&path).unwrap();
        let c = ori::compile_ptx(case, &src, &ori::case_options(&src));
        let sass = ori::lower::sass::emit_module(c.module.as_ref().expect("compiles"));
        sass.lines()
            .filter(|l| l.contains("GMMA"))
            .map(str::to_string)
            .collect()
    };
    let f16 = gmma("sparse_f16_desc_chain_n64_trans_neg_sel1.ptx");
    assert_eq!(f16.len(), 2, "{f16:?}");
    assert!(
        f16[0].contains("HGMMA.SP.64x64x32.F32 d0, gdesc[a], d0, m0, 0x1 ;"),
        "{}",
        f16[0]
    );
    assert!(
        f16[1].contains(
            "HGMMA.SP.64x64x32.F32 d0, gdesc[a2].negA.negB.tnspA.tnspB, d0, m1, 0x1, gsb0"
        ),
        "{}",
        f16[1]
    );
    let fp8 = gmma("sparse_e4m3_e5m2_f16acc_n64.ptx");
    assert!(
        fp8[1].contains("QGMMA.SP.64x64x64.F16.E4M3.E5M2 h0, gdesc[a2].negA, h0, m1, gsb0"),
        "{}",
        fp8[1]
    );
    let bf16 = gmma("sparse_bf16_rega_n32_two_groups_wait1.ptx");
    assert!(
        bf16[1]
            .contains("HGMMA.SP.64x32x32.F32.BF16 d32, ra4, gdesc[b2].tnspB, d32, m1, 0x1, gsb0"),
        "{}",
        bf16[1]
    );
}
