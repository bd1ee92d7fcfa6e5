//! ori embedded as a library at the IR level: the toy compiler of
//! `examples/toy_compiler.rs` parses its `gemm` line, builds Ori IR with
//! `ori::ir::builder`, runs the passes, emits SASS text and PTX, and runs
//! the kernel on the host backend over its whole grid.
//!
//! What ptxas does with the toy's kernels is not taken from ori: the
//! kernels' PTX (`--input-ptx`) is recorded from ptxas 13.0.88 as the
//! corpus cases `tests/corpus/toy_*` (a peek in a 4-trip loop that ptxas
//! unrolls: C7517 then C7514; in an 8-trip loop it keeps: C7517 alone; no
//! peek: nothing), checked by `tests/corpus_cases.rs`. Here: the same
//! programs built as IR get the same message codes, the numbers equal a
//! plain matmul (exactly: the inputs are small multiples of 1/8), and the
//! IR before and after each pass, the diagnostics and the SASS are
//! snapshots.

#[allow(dead_code)]
#[path = "../examples/toy_compiler.rs"]
mod toy;

fn codes(c: &ori::Compilation) -> Vec<u32> {
    c.diags.iter().filter_map(|d| d.code).collect()
}

/// Each program, the corpus case recorded from ptxas for its PTX, and the
/// codes ptxas printed there.
const PROGRAMS: [(&str, &str, &[u32]); 3] = [
    (
        "gemm M=256 N=256 K=256 bf16 -> f32 tile 64x128x16 stages 2 epilogue relu",
        "toy_gemm_bf16_64x128_stages2_relu",
        &[],
    ),
    (
        "gemm M=128 N=128 K=64 f16 -> f32 tile 64x64x16 stages 1 peek",
        "toy_gemm_f16_64x64_stages1_peek",
        &[7517, 7514],
    ),
    (
        "gemm M=128 N=256 K=128 bf16 -> f32 tile 64x256x16 stages 3 peek",
        "toy_gemm_bf16_64x256_stages3_peek",
        &[7517],
    ),
];

#[test]
fn toy_kernels_get_ptxas_answers_and_the_reference_numbers() {
    for (src, case, want) in PROGRAMS {
        let g = toy::parse(src).expect("parses");
        // The corpus case is this program's PTX, and its recording says `want`.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
        let ptx = std::fs::read_to_string(dir.join(format!("{case}.ptx"))).unwrap();
        let written = ori::lower::ptx_text::write_module(&toy::build(&g)).unwrap();
        assert!(
            ptx.ends_with(&written),
            "{case}.ptx is not the toy's PTX for `{src}`"
        );
        let expected = std::fs::read_to_string(dir.join(format!("{case}.expected"))).unwrap();
        let recorded: Vec<u32> = expected
            .lines()
            .filter_map(|l| l.split("(C").nth(1))
            .filter_map(|l| l.split(')').next()?.parse().ok())
            .collect();
        assert_eq!(recorded, want, "{case}.expected");
        let out = toy::compile_and_run(&g).expect("compiles and runs");
        assert_eq!(codes(&out.compiled), want, "{src}");
        assert_eq!(out.max_error, 0.0, "{src}");
    }
}

#[test]
fn toy_ir_diagnostics_and_sass_snapshots() {
    for (src, case, _) in PROGRAMS {
        let g = toy::parse(src).unwrap();
        let opts = ori::Options {
            verify: true,
            print_before: vec!["all".into()],
            print_after: vec!["all".into()],
            ..ori::Options::default()
        };
        let c = ori::run_passes(toy::build(&g), &opts);
        let mut text = format!("// {src}\n");
        for d in &c.dumps {
            text.push_str(d);
        }
        insta::assert_snapshot!(format!("{case}__ir"), text);
        insta::assert_snapshot!(format!("{case}__diagnostics"), toy::report(&c).join("\n"));
        let m = c.module.as_ref().unwrap();
        insta::assert_snapshot!(format!("{case}__sass"), ori::lower::sass::emit_module(m));
    }
}

#[test]
fn toy_front_end_rejects_bad_programs_with_the_word_at_fault() {
    for (src, err) in [
        (
            "gemm M=256 N=256 K=256 f16 -> f64",
            "`f16` is followed by `-> f32`",
        ),
        (
            "gemm M=256 N=256 K=256 bf16 -> f32 tile 128x128x16",
            "`tile 128x128x16`",
        ),
        (
            "gemm M=256 N=200 K=256 bf16 -> f32 tile 64x128x16",
            "multiples of 64, 128 and 16",
        ),
        ("gemm M=256 N=256 bf16 -> f32", "K= is missing"),
        ("gemm M=256 N=256 K=256 bf16 -> f32 stages 9", "stages 9"),
        ("gemm M=x N=256 K=256", "`x`: M must be"),
        ("matmul M=1", "starts with `gemm`"),
    ] {
        let e = toy::parse(src).unwrap_err();
        assert!(e.contains(err), "{src}: {e}");
    }
}
