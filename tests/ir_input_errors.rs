//! Malformed `.ori` text is an input error at its line, never an internal
//! error after a pass nor silent acceptance (issue 15). Each case mutates the
//! IR text ori writes for `examples/gemm.ptx` in one way and expects the error
//! at the mutated line.

use ori::ir::Severity;

/// The IR text of the example kernel after the passes.
fn ir_text() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/gemm.ptx");
    let src = std::fs::read_to_string(path).unwrap();
    let c = ori::compile_ptx("k.ptx", &src, &ori::Options::default());
    ori::ir::write_module(c.module.as_ref().expect("the case compiles"))
}

/// Replace the first line starting with `from` (after indentation) by `to`;
/// returns the text and the 1-based line of the change.
fn mutate(text: &str, from: &str, to: &str) -> (String, u32) {
    let mut at = 0;
    let out: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(k, l)| {
            if at == 0 && l.trim_start().starts_with(from) {
                at = k as u32 + 1;
                l.replacen(from, to, 1)
            } else {
                l.to_string()
            }
        })
        .collect();
    assert!(at > 0, "no line starts with {from:?}");
    (out.join("\n") + "\n", at)
}

fn first_error(text: &str) -> (Option<u32>, String) {
    let c = ori::compile_source("k.ori", text, &ori::Options::default());
    let e = c
        .diags
        .iter()
        .find(|d| matches!(d.severity, Severity::Error | Severity::Fatal))
        .unwrap_or_else(|| panic!("accepted:\n{text}"));
    assert!(c.module.is_none());
    assert!(!e.message.contains("internal error"), "{}", e.message);
    (e.line, e.message.clone())
}

#[test]
fn every_mutation_is_an_error_at_its_line() {
    let text = ir_text();
    let wgmma = "#27 wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 inout {d0, d1, d2, d3}, a, b, 1, 1, 1, 0, 0";
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "malformed wgmma",
            wgmma,
            "#27 wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 inout {d0, d1, d2, d3}, a, b",
            "operands",
        ),
        (
            "missing inout",
            "#27 wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 inout",
            "#27 wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16",
            "inout",
        ),
        (
            "bad shape",
            "#27 wgmma.mma_async.sync.aligned.m64n8k16",
            "#27 wgmma.mma_async.sync.aligned.m64n9k16",
            "shape",
        ),
        (
            "wrong class",
            "reg d0 f32 class 6",
            "reg d0 f32 class 3",
            "class 6",
        ),
        (
            "guard not a predicate",
            "#32 st.global.b32",
            "#32 @r15 st.global.b32",
            "predicate",
        ),
        (
            "immediate written",
            "#25 mov.b32 out d3",
            "#25 mov.b32 out 5",
            "no register",
        ),
        (
            "negative wait",
            "#31 wgmma.wait_group.sync.aligned 0",
            "#31 wgmma.wait_group.sync.aligned -1",
            "at least 0",
        ),
        (
            "duplicate reg",
            "reg d1 f32 class 6",
            "reg d0 f32 class 6",
            "declared twice",
        ),
        (
            "inflight naming no set",
            "bb0: inflight {}",
            "bb0: inflight {7}",
            "names no accset",
        ),
        (
            // Found by the compile_ori fuzz target: the name took the quote
            // and the text no longer printed back as it was read.
            "param name running into its type",
            "param p_out \".u64\"",
            "param p_o\" ut.u64\"",
            "NAME",
        ),
        (
            // The words are computed from phase 85's sets (`AccumSets`):
            // a word without its tag names no set.
            "accumulator word without its tag",
            "#27 wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 inout {d0, d1, d2, d3}, a, b, 1, 1, 1, 0, 0 !acc 0x90000000",
            "#27 wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 inout {d0, d1, d2, d3}, a, b, 1, 1, 1, 0, 0 !acc 0x12000000",
            "'!acc' words must be",
        ),
        (
            "terminator not last",
            "#36 ret",
            "#36 ret\n  #37 st.global.b32 [ptr], d0",
            "terminator",
        ),
    ];
    for (what, from, to, says) in cases {
        let (bad, line) = mutate(&text, from, to);
        let (at, msg) = first_error(&bad);
        assert!(msg.contains(says), "{what}: {msg}");
        // The verifier names the wrong class at the first wgmma using it.
        if *what != "wrong class" {
            assert_eq!(at, Some(line), "{what}: {msg}");
        }
    }
}

#[test]
fn a_nobody_function_with_instructions_and_a_function_written_twice_are_errors() {
    let text = ir_text();
    let (bad, _) = mutate(
        &text,
        "function k entry linkage visible",
        "function k entry linkage visible nobody",
    );
    assert!(first_error(&bad).1.contains("nobody"));
    let func = &text[text.find("function k").unwrap()..];
    let twice = format!("{text}{func}");
    assert!(first_error(&twice).1.contains("written twice"));
}
