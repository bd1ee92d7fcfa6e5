//! PTX written from the IR alone (`ori::lower::ptx_text`, what a compiler
//! that builds IR with `ori::ir::builder` emits) says what the source said:
//! for every corpus and real kernel, the PTX written from its IR parses
//! again, and ori makes the same phase-87 decisions on it (the same message
//! codes in the same order, and the same SASS skeleton). Line numbers differ
//! by construction (one statement per line, declarations first). A kernel
//! whose IR lacks what PTX needs (an elided array initializer, call
//! arguments in local `.param` variables) is refused with that reason.

mod common;

fn codes(c: &ori::Compilation) -> Vec<Option<u32>> {
    c.diags.iter().map(|d| d.code).collect()
}

#[test]
fn ptx_written_from_ir_compiles_the_same() {
    let mut cases = common::corpus_cases();
    cases.extend(common::triton_kernels());
    cases.extend(
        common::real_kernels()
            .into_iter()
            .filter(|p| p.to_string_lossy().contains("/triton")),
    );
    let mut bad = Vec::new();
    let mut checked = 0;
    let mut not_writable = 0;
    for path in &cases {
        let src = std::fs::read_to_string(path).unwrap();
        let opts = ori::case_options(&src);
        let Ok(m) = ori::ptx_to_ir(&path.display().to_string(), &src) else {
            continue;
        };
        let text = match ori::lower::ptx_text::write_module(&m) {
            Ok(t) => t,
            Err(e) => {
                // What the IR does not keep (the writer's documented limits).
                assert!(
                    e.0.contains("not kept in the IR"),
                    "{}: {e}",
                    path.display()
                );
                not_writable += 1;
                continue;
            }
        };
        let name = format!("{}.written.ptx", path.display());
        let again = match ori::ptx_to_ir(&name, &text) {
            Ok(m2) => ori::run_passes(m2, &opts),
            Err(e) => {
                bad.push(format!("{name}: does not parse: {}", e[0].message));
                continue;
            }
        };
        let first = ori::run_passes(m, &opts);
        checked += 1;
        if codes(&first) != codes(&again) {
            bad.push(format!(
                "{}: codes {:?} from the source, {:?} from the written PTX",
                path.display(),
                codes(&first),
                codes(&again)
            ));
            continue;
        }
        if let (Some(a), Some(b)) = (&first.module, &again.module) {
            let (sa, sb) = (
                ori::lower::sass::emit_module(a),
                ori::lower::sass::emit_module(b),
            );
            let skeleton = |s: &str| -> Vec<String> {
                s.lines()
                    .filter(|l| l.contains("HGMMA") || l.contains("WARPGROUP"))
                    .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
                    .collect()
            };
            if skeleton(&sa) != skeleton(&sb) {
                bad.push(format!("{}: SASS skeleton differs", path.display()));
            }
        }
    }
    println!("{checked} kernels written from IR and compiled again, {not_writable} refused");
    assert!(
        bad.is_empty(),
        "{} of {}:\n{}",
        bad.len(),
        cases.len(),
        bad.join("\n")
    );
    assert!(checked > 700, "only {checked} kernels");
}
