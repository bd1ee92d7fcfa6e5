//! Instruction semantics the real kernels need beyond wgmma, each checked
//! on a small kernel against what the PTX ISA defines: atomics and
//! reductions (every thread of the CTA, in any order, gives the same
//! total), half-precision arithmetic, fp8 and integer conversions.

use ori_host::{run, GlobalMemory, Launch};

fn lower(body: &str, params: &str) -> ori_ir::Module {
    let src = format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k({params})\n{{\n\t.reg .pred %p<8>;\n\t.reg .b16 %h<16>;\n\t.reg .b32 %r<32>;\n\t.reg .f32 %f<16>;\n\t.reg .b64 %rd<16>;\n{body}\n}}\n"
    );
    let (ast, diags) = ori_ptx::parse_with_diags("i.ptx", &src);
    assert!(diags.is_empty(), "{diags:?}");
    let (m, diags) = ori_ptx::lower::lower_module_owned("i.ptx", ast);
    assert!(diags.is_empty(), "{diags:?}");
    m
}

/// Run `k(out)` on one warpgroup with an `out` of `bytes` zeros: its words.
fn run_out(m: &ori_ir::Module, bytes: usize) -> Vec<u32> {
    let mut g = GlobalMemory::new();
    let out = g.alloc(vec![0; bytes]);
    let launch = Launch {
        params: vec![out],
        ..Launch::default()
    };
    run(m, "k", &launch, &g).unwrap();
    words(&g, out)
}

fn words(g: &GlobalMemory, addr: u64) -> Vec<u32> {
    g.buffer(addr)
        .unwrap()
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn atomics_and_reductions_total_over_every_thread() {
    let m = lower(
        "\tld.param.u64 %rd1, [out];\n\
         \tmov.u32 %r1, %tid.x;\n\
         \tatom.global.add.u32 %r2, [%rd1], 1;\n\
         \tred.global.add.u32 [%rd1+4], %r1;\n\
         \tatom.global.max.s32 %r3, [%rd1+8], %r1;\n\
         \tcvt.rn.f32.u32 %f1, %r1;\n\
         \tatom.global.add.f32 %f2, [%rd1+12], %f1;\n\
         \tatom.global.exch.b32 %r4, [%rd1+16], %r1;\n\
         \tatom.global.cas.b32 %r5, [%rd1+20], 0, 7;\n\
         \tatom.global.inc.u32 %r6, [%rd1+24], 9;\n\
         \tatom.global.or.b32 %r7, [%rd1+28], %r1;\n\
         \tret;",
        ".param .u64 out",
    );
    let mut g = GlobalMemory::new();
    let out = g.alloc(vec![0; 32]);
    let launch = Launch {
        params: vec![out],
        block: [256, 1, 1],
        ..Launch::default()
    };
    run(&m, "k", &launch, &g).unwrap();
    let w = words(&g, out);
    assert_eq!(w[0], 256, "atom.add counts every thread");
    assert_eq!(w[1], (0..256).sum::<u32>(), "red.add sums %tid.x");
    assert_eq!(w[2], 255, "atom.max");
    assert_eq!(
        f32::from_bits(w[3]),
        (0..256).sum::<u32>() as f32,
        "atom.add.f32 (exact here)"
    );
    assert!(w[4] < 256, "atom.exch leaves one thread's value");
    assert_eq!(w[5], 7, "atom.cas swaps once, when it finds 0");
    assert_eq!(w[6], 256 % 10, "atom.inc wraps to 0 past its bound (9)");
    assert_eq!(w[7], 255, "atom.or");
}

#[test]
fn half_arithmetic_rounds_each_lane_once() {
    let m = lower(
        "\tld.param.u64 %rd1, [out];\n\
         \tmov.b32 %r1, 0x3c003e00;\n\
         \tmov.b32 %r2, 0x40003c01;\n\
         \tadd.rn.f16x2 %r3, %r1, %r2;\n\
         \tmul.rn.f16x2 %r4, %r1, %r2;\n\
         \tfma.rn.bf16x2 %r5, %r1, %r1, %r1;\n\
         \tmov.b16 %h1, 0x3c00;\n\
         \tneg.f16 %h2, %h1;\n\
         \tcvt.u32.u16 %r6, %h2;\n\
         \tst.global.v4.b32 [%rd1], {%r3, %r4, %r5, %r6};\n\
         \tret;",
        ".param .u64 out",
    );
    let w = run_out(&m, 16);
    // Low lanes: 1.5 + 1.0009765625 = 2.5009765625 -> 2.5 (0x4100, the
    // f16 spacing at 2 is 2^-9); high: 1 + 2 = 3 (0x4200).
    assert_eq!(w[0], 0x4200_4100);
    // 1.5 * 1.0009765625 = 1.50146484375 = 1537.5 x 2^-10, a tie: to even,
    // 1538 x 2^-10 (0x3e02); 1 * 2 = 2 (0x4000).
    assert_eq!(w[1], 0x4000_3e02);
    assert_eq!(w[3], 0xbc00, "neg.f16 flips the sign");
}

/// `setp` on f16 and bf16 (CUTLASS's f16-accumulator epilogues test
/// `beta == 0` with `setp.eq.f16`): compared as the values they encode;
/// `.ftz` makes a subnormal f16 equal to zero; NaN is unordered.
#[test]
fn half_precision_compares() {
    let m = lower(
        "\tld.param.u64 %rd1, [out];\n\
         \tmov.b16 %h1, 0x3c00;\n\
         \tmov.b16 %h2, 0x0001;\n\
         \tmov.b16 %h3, 0x0000;\n\
         \tmov.b16 %h4, 0x7e00;\n\
         \tmov.b16 %h5, 0x3f80;\n\
         \tmov.b16 %h6, 0x4000;\n\
         \tsetp.eq.f16 %p1, %h2, %h3;\n\
         \tsetp.eq.ftz.f16 %p2, %h2, %h3;\n\
         \tsetp.lt.f16 %p3, %h3, %h1;\n\
         \tsetp.ne.f16 %p4, %h4, %h1;\n\
         \tsetp.neu.f16 %p5, %h4, %h1;\n\
         \tsetp.lt.bf16 %p6, %h5, %h6;\n\
         \tselp.u32 %r1, 1, 0, %p1;\n\
         \tselp.u32 %r2, 1, 0, %p2;\n\
         \tselp.u32 %r3, 1, 0, %p3;\n\
         \tselp.u32 %r4, 1, 0, %p4;\n\
         \tselp.u32 %r5, 1, 0, %p5;\n\
         \tselp.u32 %r6, 1, 0, %p6;\n\
         \tst.global.v4.b32 [%rd1], {%r1, %r2, %r3, %r4};\n\
         \tst.global.v2.b32 [%rd1+16], {%r5, %r6};\n\
         \tret;",
        ".param .u64 out",
    );
    let w = run_out(&m, 24);
    // 2^-24 (the least f16 subnormal) is not 0, unless flushed; 0 < 1;
    // `ne` is ordered (false on NaN), `neu` true; bf16 1.0 < 2.0.
    assert_eq!(w, [0, 1, 1, 0, 1, 1]);
}

#[test]
fn conversions_to_fp8_pairs_and_integers() {
    let m = lower(
        "\tld.param.u64 %rd1, [out];\n\
         \tmov.f32 %f1, 0f3F880000;\n\
         \tmov.f32 %f2, 0fC3E00000;\n\
         \tcvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;\n\
         \tcvt.u32.u16 %r1, %h1;\n\
         \tmov.f32 %f3, 0f47800000;\n\
         \tcvt.rn.satfinite.e5m2x2.f32 %h2, %f3, %f1;\n\
         \tcvt.u32.u16 %r2, %h2;\n\
         \tmov.f32 %f4, 0f40200000;\n\
         \tcvt.rni.s32.f32 %r3, %f4;\n\
         \tmov.s32 %r4, -3;\n\
         \tcvt.rn.f16.s32 %h3, %r4;\n\
         \tcvt.u32.u16 %r5, %h3;\n\
         \tmov.b16 %h4, 0x4040;\n\
         \tcvt.f32.bf16 %f5, %h4;\n\
         \tmov.b32 %r6, %f5;\n\
         \tst.global.v4.b32 [%rd1], {%r1, %r2, %r3, %r5};\n\
         \tst.global.b32 [%rd1+16], %r6;\n\
         \tret;",
        ".param .u64 out",
    );
    let w = run_out(&m, 20);
    // 1.0625 is a tie between e4m3's 1 (0x38) and 1.125: to even, 0x38 (high
    // byte); -448 is e4m3's most negative finite, 0xfe (low byte).
    assert_eq!(w[0], 0x38fe);
    // 65536 saturates to e5m2's 57344 (0x7b); 1.0625 -> 1.0 (0x3c).
    assert_eq!(w[1], 0x7b3c);
    assert_eq!(w[2], 2, "cvt.rni: 2.5 to even");
    assert_eq!(w[3], 0xc200, "-3 as f16");
    assert_eq!(
        f32::from_bits(w[4]),
        3.0,
        "bf16 0x4040 is 3.0 (a float, not the integer 0x4040)"
    );
}

#[test]
fn bit_counts_dot_products_directed_rounding_and_saturation() {
    let m = lower(
        "\tld.param.u64 %rd1, [out];\n\
         \tmov.b32 %r1, 0x00f00010;\n\
         \tpopc.b32 %r2, %r1;\n\
         \tclz.b32 %r3, %r1;\n\
         \tbrev.b32 %r4, %r1;\n\
         \tbfind.u32 %r5, %r1;\n\
         \tbfind.shiftamt.u32 %r6, %r1;\n\
         \tmov.b32 %r7, 0x02ff0103;\n\
         \tmov.b32 %r8, 0x01020304;\n\
         \tdp4a.s32.u32 %r9, %r7, %r8, 10;\n\
         \tmov.f32 %f1, 0f3F800000;\n\
         \tmov.f32 %f2, 0f33800000;\n\
         \tadd.rp.f32 %f3, %f1, %f2;\n\
         \tadd.rm.f32 %f4, %f1, %f2;\n\
         \tmov.b32 %r10, %f3;\n\
         \tmov.b32 %r11, %f4;\n\
         \tmov.f32 %f5, 0f40000000;\n\
         \tcvt.sat.f32.f32 %f6, %f5;\n\
         \tmov.b32 %r12, %f6;\n\
         \tadd.rz.sat.f32 %f7, %f5, %f1;\n\
         \tmov.b32 %r13, %f7;\n\
         \tst.global.v4.b32 [%rd1], {%r2, %r3, %r4, %r5};\n\
         \tst.global.v4.b32 [%rd1+16], {%r6, %r9, %r10, %r11};\n\
         \tst.global.v2.b32 [%rd1+32], {%r12, %r13};\n\
         \tret;",
        ".param .u64 out",
    );
    let w = run_out(&m, 40);
    assert_eq!(w[0], 5, "popc of 0x00f00010");
    assert_eq!(w[1], 8, "clz");
    assert_eq!(w[2], 0x0800_0f00, "brev");
    assert_eq!(w[3], 23, "bfind: the highest set bit");
    assert_eq!(w[4], 8, "bfind.shiftamt: counted from the left");
    // dp4a.s32.u32: a's bytes signed (3, 1, -1, 2) . b's unsigned (4, 3, 2, 1) + 10.
    assert_eq!(w[5], (3 * 4 + 3 - 2 + 2 + 10) as u32);
    // 1 + 2^-24 is between 1 and 1 + 2^-23: rp rounds up, rm down.
    assert_eq!(f32::from_bits(w[6]), 1.0 + f32::EPSILON);
    assert_eq!(f32::from_bits(w[7]), 1.0);
    assert_eq!(f32::from_bits(w[8]), 1.0, "cvt.sat clamps 2.0 to 1.0");
    assert_eq!(
        f32::from_bits(w[9]),
        1.0,
        ".sat holds in a directed rounding mode too"
    );
}

#[test]
fn double_precision_arithmetic() {
    let m = lower(
        "\tld.param.u64 %rd1, [out];\n\
         \tmov.b64 %rd2, 0x3FF0000000000001;\n\
         \tmov.b64 %rd3, 0x4000000000000000;\n\
         \tmul.rn.f64 %rd4, %rd2, %rd3;\n\
         \tfma.rn.f64 %rd5, %rd2, %rd2, %rd3;\n\
         \tdiv.rn.f64 %rd6, %rd3, %rd3;\n\
         \tst.global.v2.b64 [%rd1], {%rd4, %rd5};\n\
         \tst.global.b64 [%rd1+16], %rd6;\n\
         \tret;",
        ".param .u64 out",
    );
    let w = run_out(&m, 24);
    let d = |k: usize| f64::from_bits(u64::from(w[2 * k]) | (u64::from(w[2 * k + 1]) << 32));
    let one_ulp = f64::from_bits(0x3FF0000000000001);
    assert_eq!(d(0), 2.0 * one_ulp, "mul.f64 is exact here");
    assert_eq!(d(1), one_ulp.mul_add(one_ulp, 2.0), "fma.f64 rounds once");
    assert_eq!(d(2), 1.0);
}

#[test]
fn f32_pairs_round_into_half_pairs() {
    // The first source is the high half; nearest even; f16 overflows to
    // infinity unless satfinite clamps it; a NaN stays one.
    let m = lower(
        "\tld.param.u64 %rd1, [out];\n\
         \tcvt.rn.f16x2.f32 %r1, 0f3F800000, 0f4788B800;\n\
         \tcvt.rn.satfinite.f16x2.f32 %r2, 0fC788B800, 0f3F000000;\n\
         \tmov.b32 %f1, 0f40400000;\n\
         \tcvt.rn.bf16x2.f32 %r3, %f1, 0f3F808000;\n\
         \tcvt.rn.satfinite.bf16x2.f32 %r4, 0f7FC00000, 0f7F7FFFFF;\n\
         \tst.global.u32 [%rd1], %r1;\n\
         \tst.global.u32 [%rd1+4], %r2;\n\
         \tst.global.u32 [%rd1+8], %r3;\n\
         \tst.global.u32 [%rd1+12], %r4;\n\
         \tret;",
        ".param .u64 out",
    );
    let w = run_out(&m, 16);
    assert_eq!(w[0], 0x3c00_7c00, "1.0 and 70000 (to infinity)");
    assert_eq!(w[1], 0xfbff_3800, "satfinite: -70000 to -65504, and 0.5");
    assert_eq!(w[2], 0x4040_3f80, "3.0, and 1 + 2^-8 to even (1.0)");
    assert_eq!(
        w[3], 0x7fc0_7f7f,
        "NaN stays NaN; satfinite clamps the largest f32 to bf16's largest"
    );
}

#[test]
fn cvt_pack_saturates_and_packs_b_below_a_over_c() {
    // PTX ISA, cvt.pack: a and b saturated to the narrow type, b in the
    // low bits, a above it, the rest from the low bits of c.
    let m = lower(
        "\tld.param.u64 %rd1, [out];\n\
         \tmov.u32 %r1, 300;\n\
         \tmov.u32 %r2, -200;\n\
         \tcvt.pack.sat.s8.s32.b32 %r3, %r1, %r2, 0;\n\
         \tcvt.pack.sat.s8.s32.b32 %r4, %r2, %r1, %r3;\n\
         \tcvt.pack.sat.u8.s32.b32 %r5, %r1, %r2, 0x1234;\n\
         \tcvt.pack.sat.s16.s32 %r6, %r1, %r2;\n\
         \tmov.u32 %r7, -5;\n\
         \tcvt.pack.sat.s4.s32.b32 %r8, %r7, %r1, 0;\n\
         \tst.global.u32 [%rd1], %r3;\n\
         \tst.global.u32 [%rd1+4], %r4;\n\
         \tst.global.u32 [%rd1+8], %r5;\n\
         \tst.global.u32 [%rd1+12], %r6;\n\
         \tst.global.u32 [%rd1+16], %r8;\n\
         \tret;",
        ".param .u64 out",
    );
    let w = run_out(&m, 20);
    // 300 -> 127 (0x7f), -200 -> -128 (0x80).
    assert_eq!(w[0], 0x7f80);
    assert_eq!(w[1], 0x7f80_807f);
    // u8: 300 -> 255, -200 -> 0; c's low 16 bits above.
    assert_eq!(w[2], 0x1234_ff00);
    // s16: 300 and -200 fit.
    assert_eq!(w[3], (300 << 16) | (-200i32 as u32 & 0xffff));
    // s4: -5 -> 0xb, 300 -> 7.
    assert_eq!(w[4], 0xb7);
}
