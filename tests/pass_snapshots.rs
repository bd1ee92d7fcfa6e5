//! insta snapshots of the IR before and after phases 85 and 87 for the
//! corpus cases that reach a ptxas code, plus the SASS-like text and the
//! fix-it PTX. Snapshots live in `snapshots/`; the expected ptxas messages
//! of the same cases are checked against the oracle in `corpus_agreement`.

mod common;

#[test]
fn ir_before_and_after_each_pass() {
    for path in common::corpus_cases() {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if !name.starts_with('c') || name.starts_with("clean") {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap();
        if src.len() > 6000 {
            continue; // keep the snapshots readable: the large-N cases are covered by corpus_agreement
        }
        let mut opts = ori::case_options(&src);
        opts.print_before = vec!["OriPropagateGmma".into()];
        opts.print_after = vec!["all".into()];
        let file = format!("{name}.ptx");
        let c = ori::compile_ptx(&file, &src, &opts);
        let mut out = c.dumps.join("\n");
        out.push_str("\n; diagnostics\n");
        for d in &c.diags {
            if ori::ir::render::ptxas_prints(d) {
                out.push_str(&ori::ir::render::render_ptxas(d));
            } else {
                let source = ori::report::Source::new(&file, &src);
                out.push_str(&ori::report::render_human(
                    d,
                    Some(&source),
                    ori::report::Style::Plain,
                ));
            }
            out.push('\n');
        }
        if let Some(m) = &c.module {
            out.push_str("\n; --emit sass\n");
            out.push_str(&ori::lower::sass::emit_module(m));
            out.push_str("\n; --emit ptx\n");
            let fixed = ori::fixit_ptx(&format!("{name}.ptx"), &src, &c, &opts);
            out.push_str(fixed.as_deref().unwrap_or(""));
        }
        insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!(name, out);
        });
    }
}
