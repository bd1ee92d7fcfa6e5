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
    let c = ori::compile_ptx("k.ptx", &src, &common::case_options(&src));
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
