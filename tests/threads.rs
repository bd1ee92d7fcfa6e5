//! `Options::threads`: a module's functions, and many files, compiled on a
//! pool of threads give byte for byte what one thread gives (diagnostics in
//! order, IR dumps, the module).

use std::path::{Path, PathBuf};

/// Every `.ptx` below `dir`, sorted.
fn kernels(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            kernels(&p, out);
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
    out.sort();
}

fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// A compilation as text: its diagnostics (JSON, one a line), its dumps
/// and its module.
fn render(c: &ori::Compilation) -> String {
    let mut s = String::new();
    for d in &c.diags {
        s.push_str(&ori::report::render_json(d, None));
        s.push('\n');
    }
    for d in &c.dumps {
        s.push_str(d);
    }
    if let Some(m) = &c.module {
        s.push_str(&ori::ir::write_module(m));
    }
    s
}

#[test]
fn a_modules_functions_on_threads_compile_as_on_one() {
    let mut files = Vec::new();
    kernels(&tests_dir(), &mut files);
    let mut compared = 0;
    for p in &files {
        let Ok(src) = std::fs::read_to_string(p) else {
            continue;
        };
        // Modules of several functions (a `.func` or a second `.entry`).
        if src.matches(".func").count() + src.matches(".entry").count() < 2 {
            continue;
        }
        let name = p.display().to_string();
        let mut opts = ori::case_options(&src);
        opts.print_after = vec!["all".into()];
        let one = ori::compile_ptx(&name, &src, &opts);
        opts.threads = 4;
        let four = ori::compile_ptx(&name, &src, &opts);
        assert!(render(&one) == render(&four), "{name}: 4 threads differ");
        compared += 1;
    }
    assert!(
        compared > 100,
        "only {compared} modules of several functions"
    );
}

#[test]
fn many_files_on_threads_compile_as_on_one_thread() {
    let mut files = Vec::new();
    kernels(&tests_dir().join("corpus"), &mut files);
    kernels(&tests_dir().join("bad_input"), &mut files);
    let inputs: Vec<(String, String)> = files
        .iter()
        .filter_map(|p| Some((p.display().to_string(), std::fs::read_to_string(p).ok()?)))
        .collect();
    assert!(inputs.len() > 500, "only {} files", inputs.len());
    let done = std::sync::atomic::AtomicUsize::new(0);
    let each = |_, c: ori::Compilation| {
        done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        render(&c)
    };
    let opts = ori::Options::default();
    let one: Vec<String> = ori::compile_many(&inputs, &opts, each);
    let three_opts = ori::Options {
        threads: 3,
        ..ori::Options::default()
    };
    let three: Vec<String> = ori::compile_many(&inputs, &three_opts, each);
    assert_eq!(done.into_inner(), 2 * inputs.len());
    for ((name, _), (a, b)) in inputs.iter().zip(one.iter().zip(&three)) {
        assert!(a == b, "{name}: 3 threads differ");
    }
    // Each the compilation of its own file, alone.
    let (name, src) = &inputs[inputs.len() / 2];
    assert!(render(&ori::compile_source(name, src, &opts)) == one[inputs.len() / 2]);
}
