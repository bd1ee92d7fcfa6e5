//! Floating-point literals in `.f32` instructions, run on the host.
//!
//! PTX's `0.1`, `3.0` and `0d...` literals are doubles; in an `.f32`
//! operand ptxas converts them to single precision, rounding to nearest
//! even (PTX ISA, "Floating-Point Constants"; the SASS immediates of
//! `tests/corpus/float_literal_f32_sources.ptx` under ptxas 13.0.88). The
//! kernel below uses them in every kind of `.f32` source (arithmetic,
//! `fma`, `div`, `mov`, `setp`, `selp`, `st`, a `cvt` source) and in an
//! `.f64` add, where the literal stays a double; the expected values are
//! the ISA's: the literal rounded to f32, then the IEEE operation.

const SRC: &str = r#"
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p_out)
{
  .reg .f32 %f<12>;
  .reg .f64 %fd<3>;
  .reg .b16 %h<2>;
  .reg .pred %p<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p_out];
  mov.f32 %f1, 0f3F800000;
  add.f32 %f2, %f1, 0.1;
  mul.f32 %f3, %f1, 0d3FB999999999999A;
  div.rn.f32 %f4, %f1, 3.0;
  fma.rn.f32 %f5, %f1, 0.1, 0.2;
  mov.f32 %f6, 0.1;
  setp.lt.f32 %p1, %f1, 1.0000001;
  selp.f32 %f7, 2.5, -0.1, %p1;
  setp.gt.f32 %p2, %f6, 0.1;
  selp.f32 %f8, 1.0, 0.0, %p2;
  sub.f32 %f9, %f1, 1e300;
  cvt.rn.f16.f32 %h1, 0.1;
  cvt.f64.f32 %fd1, %f1;
  add.f64 %fd2, %fd1, 0.1;
  st.global.f32 [%rd1], %f2;
  st.global.f32 [%rd1+4], %f3;
  st.global.f32 [%rd1+8], %f4;
  st.global.f32 [%rd1+12], %f5;
  st.global.f32 [%rd1+16], %f6;
  st.global.f32 [%rd1+20], %f7;
  st.global.f32 [%rd1+24], %f8;
  st.global.f32 [%rd1+28], %f9;
  st.global.f32 [%rd1+32], 0.1;
  st.global.b16 [%rd1+36], %h1;
  st.global.f64 [%rd1+40], %fd2;
  ret;
}
"#;

fn run() -> Vec<u8> {
    let m = ori::ptx_to_ir("float_literals.ptx", SRC).expect("parses");
    let mut g = ori::host::GlobalMemory::new();
    let out = g.alloc(vec![0; 48]);
    let launch = ori::host::Launch {
        params: vec![out],
        ..Default::default()
    };
    ori::host::run(&m, "k", &launch, &g).expect("runs");
    g.buffer(out).expect("output").to_vec()
}

#[test]
fn f64_literals_in_f32_instructions_are_rounded_to_f32() {
    let b = run();
    let f = |at: usize| f32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let tenth = 0.1f32; // 0x3DCCCCCD, the f64 0.1 rounded to nearest even
    assert_eq!(tenth.to_bits(), 0x3DCC_CCCD);
    assert_eq!(f(0).to_bits(), (1.0f32 + tenth).to_bits(), "add.f32 0.1");
    assert_eq!(
        f(4).to_bits(),
        tenth.to_bits(),
        "mul.f32 0d3FB999999999999A"
    );
    assert_eq!(f(8).to_bits(), (1.0f32 / 3.0).to_bits(), "div.rn.f32 3.0");
    assert_eq!(
        f(12).to_bits(),
        1.0f32.mul_add(tenth, 0.2).to_bits(),
        "fma 0.1, 0.2"
    );
    assert_eq!(f(16).to_bits(), tenth.to_bits(), "mov.f32 0.1");
    assert_eq!(
        f(20),
        2.5,
        "setp.lt.f32 1.0000001 (1.0000001f) and selp literals"
    );
    assert_eq!(
        f(24),
        0.0,
        "0.1f is not greater than the literal 0.1 as f32"
    );
    assert_eq!(f(28), f32::NEG_INFINITY, "1e300 is +inf in an f32 operand");
    assert_eq!(
        f(32).to_bits(),
        tenth.to_bits(),
        "st.global.f32 of a literal"
    );
    let h = u16::from_le_bytes(b[36..38].try_into().unwrap());
    assert_eq!(
        h, 0x2E66,
        "cvt.rn.f16.f32 of 0.1 (0.1f to f16, nearest even)"
    );
    let d = f64::from_le_bytes(b[40..48].try_into().unwrap());
    assert_eq!(
        d.to_bits(),
        (1.0f64 + 0.1).to_bits(),
        "add.f64 keeps the double"
    );
}
