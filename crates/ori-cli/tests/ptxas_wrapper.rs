//! `ori ptxas` / `ori-ptxas`, the drop-in ptxas: it passes the real ptxas's
//! output, files and exit status through unchanged and explains its C75xx
//! lines; and Triton, compiling on the CPU with `TRITON_PTXAS_PATH` set to
//! it, gets its cubin and the explanations.
//!
//! These tests need ptxas 13.0.88: `ORI_PTXAS`, else the copy
//! `cargo xtask oracle install` puts under `target/oracle-tools`. The Triton
//! test also needs a Python with Triton: `ORI_TRITON_PYTHON` (e.g. a venv
//! made as `tests/real/TRITON.md` says). Where one is missing the test says
//! so on stderr and passes without checking.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn real_ptxas() -> Option<PathBuf> {
    let p = std::env::var_os("ORI_PTXAS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/oracle-tools/nvidia/cu13/bin/ptxas"));
    if p.is_file() {
        Some(p)
    } else {
        eprintln!("skipped: no ptxas (set ORI_PTXAS or run `cargo xtask oracle install`)");
        None
    }
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ori-ptxas-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(cmd: &mut Command) -> Run {
    let out = cmd.output().expect("run");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `ptxas -arch=sm_90a CASE -o DIR/direct.cubin`, then the same through
/// `ori ptxas` into `DIR/wrapped.cubin`.
fn direct_and_wrapped(ptxas: &Path, case: &Path, dir: &Path) -> (Run, Run) {
    let compile = |cmd: &mut Command, out: &str| {
        run(cmd
            .arg("-arch=sm_90a")
            .arg(case)
            .arg("-o")
            .arg(dir.join(out)))
    };
    let direct = compile(&mut Command::new(ptxas), "direct.cubin");
    let wrapped = compile(
        Command::new(env!("CARGO_BIN_EXE_ori"))
            .env("ORI_PTXAS", ptxas)
            .arg("ptxas"),
        "wrapped.cubin",
    );
    (direct, wrapped)
}

#[test]
fn passes_ptxas_through_and_explains_its_c75_lines() {
    let Some(ptxas) = real_ptxas() else { return };
    let dir = scratch("pass");
    let case = repo().join("tests/corpus/c7517_c7519_read_then_rmw_between_mma.ptx");
    let (direct, wrapped) = direct_and_wrapped(&ptxas, &case, &dir);
    assert_eq!(wrapped.code, direct.code);
    assert_eq!(wrapped.stdout, direct.stdout);
    // ptxas's own lines first, unchanged, then ori's explanation of each.
    assert!(
        wrapped.stderr.starts_with(&direct.stderr),
        "{}",
        wrapped.stderr
    );
    let extra = &wrapped.stderr[direct.stderr.len()..];
    for code in ["C7519", "C7517"] {
        assert!(extra.contains(&format!("info[{code}]")), "{extra}");
    }
    assert!(
        extra.contains("R-arrive-after-write") && extra.contains("R-wait-before-read"),
        "{extra}"
    );
    assert!(
        extra.contains(":28:3") && extra.contains("add.f32 d0, d0, 0f3F800000;"),
        "{extra}"
    );
    assert_eq!(
        std::fs::read(dir.join("direct.cubin")).unwrap(),
        std::fs::read(dir.join("wrapped.cubin")).unwrap()
    );

    // An input ptxas rejects: the same lines and status, nothing added.
    let bad = repo().join("tests/bad_input/c7510_func_with_pipeline__missing_comma.ptx");
    let (direct, wrapped) = direct_and_wrapped(&ptxas, &bad, &dir);
    assert_ne!(direct.code, 0);
    assert_eq!(
        (wrapped.code, &wrapped.stderr),
        (direct.code, &direct.stderr)
    );

    // `--version` as Triton asks it, through the ori-ptxas binary.
    let v = run(Command::new(env!("CARGO_BIN_EXE_ori-ptxas"))
        .env("ORI_PTXAS", &ptxas)
        .arg("--version"));
    assert_eq!(v.code, 0);
    assert!(v.stdout.contains("release 13.0, V13.0.88"), "{}", v.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_ptxas_is_a_clear_error() {
    let r = run(Command::new(env!("CARGO_BIN_EXE_ori"))
        .env("ORI_PTXAS", "/nonexistent/ptxas")
        .args(["ptxas", "--version"]));
    assert_eq!(r.code, 127);
    assert!(
        r.stderr.contains("cannot run '/nonexistent/ptxas'"),
        "{}",
        r.stderr
    );
    // The wrapper found as the real ptxas (installed as `ptxas` on PATH)
    // does not run itself forever.
    let r = run(Command::new(env!("CARGO_BIN_EXE_ori"))
        .env("ORI_PTXAS", env!("CARGO_BIN_EXE_ori-ptxas"))
        .args(["ptxas", "--version"]));
    assert_eq!(r.code, 127, "{}", r.stderr);
    assert!(r.stderr.contains("runs ori ptxas again"), "{}", r.stderr);
}

#[test]
fn triton_compiles_through_the_wrapper() {
    let Some(ptxas) = real_ptxas() else { return };
    let Some(python) = std::env::var_os("ORI_TRITON_PYTHON") else {
        eprintln!("skipped: no Python with Triton (set ORI_TRITON_PYTHON)");
        return;
    };
    let dir = scratch("triton");
    let wrapper = env!("CARGO_BIN_EXE_ori-ptxas");
    let log = dir.join("ori.log");
    let r = run(Command::new(python)
        .arg(repo().join("tests/triton_wrapper/compile_through_ori.py"))
        // Triton 3.6 reads the first, 3.9 the second for sm_90.
        .env("TRITON_PTXAS_PATH", wrapper)
        .env("TRITON_PTXAS_BLACKWELL_PATH", wrapper)
        .env("TRITON_CACHE_DIR", dir.join("cache"))
        .env("ORI_PTXAS", &ptxas)
        .env("ORI_PTXAS_LOG", &log));
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("compiled"), "{}", r.stdout);
    let explained = std::fs::read_to_string(&log).expect("the wrapper wrote its log");
    assert!(
        explained.contains("info[C7517]: warpgroup.wait is injected"),
        "{explained}"
    );
    assert!(explained.contains("R-unpack-sinks-to-wait"), "{explained}");
    assert!(
        explained.contains("wgmma.wait_group.sync.aligned 0;"),
        "{explained}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
