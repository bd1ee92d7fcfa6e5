//! Property: the IR text form round-trips, `print(parse(print(m))) == print(m)`,
//! for every test input — before and after the passes (so injected
//! `_warpgroup.*` ops, packed accumulator words and in-flight facts too).

mod common;

fn roundtrip(text: &str, what: &str) {
    let m = ori::ir::parse_module(text).unwrap_or_else(|e| panic!("{what}: {e}"));
    let again = ori::ir::write_module(&m);
    if again != text {
        let first = again
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "{what}: text form does not round-trip; first difference at line {}: {:?} vs {:?}",
            first + 1,
            again.lines().nth(first),
            text.lines().nth(first)
        );
    }
}

#[test]
fn every_test_input_round_trips() {
    let mut n = 0;
    for path in common::corpus_cases()
        .into_iter()
        .chain(common::triton_kernels())
    {
        let src = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Ok(m) = ori::ptx_to_ir(&name, &src) else {
            continue;
        };
        roundtrip(&ori::ir::write_module(&m), &format!("{name} (lowered)"));
        let c = ori::run_passes(m, &ori::case_options(&src));
        if let Some(m) = c.module {
            roundtrip(
                &ori::ir::write_module(&m),
                &format!("{name} (after passes)"),
            );
            for f in m.funcs.values() {
                let errs = ori::ir::verify_function(f);
                assert!(
                    errs.is_empty(),
                    "{name}: {}",
                    ori::ir::verify::format_errors(f, &errs)
                );
            }
        }
        n += 1;
    }
    assert!(n >= 100, "only {n} inputs lowered");
}

#[test]
fn triton_kernels_lower_without_errors() {
    let kernels = common::triton_kernels();
    assert!(kernels.len() >= 10);
    for path in kernels {
        let src = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let c = ori::compile_ptx(&name, &src, &ori::Options::default());
        assert!(!c.failed(), "{name}: {:?}", c.diags);
        let m = c.module.unwrap();
        let wgmma = m
            .funcs
            .values()
            .flat_map(|f| f.insts.values())
            .filter(|d| d.opcode == ori::ir::Opcode::WgmmaMmaAsync)
            .count();
        assert!(wgmma > 0, "{name}: no wgmma lowered");
    }
}

/// Quoted strings (parameter types, globals) keep backslashes and quotes:
/// the writer escapes `\` and `"`, the reader undoes exactly that, and any
/// other escape is an input error. Found by the `compile_ori` fuzz target
/// (a 30-minute run, session 11): `param p ".u6\\\X\4"` read back as a
/// different type, so the text did not round-trip.
#[test]
fn quoted_strings_round_trip() {
    let text = "module version 8.0 target sm_90a address_size 64\n\
                global \"a\\\\b \\\"c\\\"\"\n\n\
                function k entry linkage visible line 1 nobody {\n  \
                param p \"x\\\\\\\\y\\\"z\"\n}\n";
    let m = ori::ir::parse_module(text).expect("parses");
    let f = m.funcs.values().next().expect("a function");
    assert_eq!(&*f.params[0].ty, "x\\\\y\"z");
    assert_eq!(&*m.globals[0], "a\\b \"c\"");
    roundtrip(&ori::ir::write_module(&m), "escaped strings");
    for bad in ["\\X", "\\4", "a\"b"] {
        let t = text.replace("x\\\\\\\\y\\\"z", bad);
        let e = ori::ir::parse_module(&t).expect_err(bad);
        assert!(e.to_string().contains("quoted string"), "{bad}: {e}");
    }
}
