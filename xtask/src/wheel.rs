//! `cargo xtask wheel`: ori as a Python wheel, for kernel authors who have
//! pip and no Rust toolchain.
//!
//! The wheel is laid out as maturin's `bin` bindings lay out ruff's and
//! uv's: the programs are the wheel's scripts (`ori-X.data/scripts/`, which
//! pip installs into the environment's `bin`), beside a pure-Python package
//! `ori` that finds and runs them (`python/ori`) and the `.pth` file that
//! installs the Triton hook when `ORI_TRITON` is set. The programs are the
//! shipped build: the `dist` profile (fat LTO, one code-generation unit),
//! statically linked as `cargo xtask dist` links them, so one wheel runs on
//! any Linux whatever its C library; the wheel is tagged `py3-none` since
//! no Python ABI is involved. They are profile-guided (`cargo xtask dist
//! --pgo`) when rustup's `llvm-tools` is installed, and the command says
//! which build it packed (`--no-pgo` packs the plain one; `--profile NAME`
//! another profile, never profile-guided). `python/pack_wheel.py` writes the archive
//! with the standard library alone (no maturin to install).

use crate::dist::{host_triple, Pgo, STATIC_FLAGS};
use crate::oracle::root;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// The programs the wheel ships, from `ori-cli`.
const PROGRAMS: [&str; 2] = ["ori", "ori-ptxas"];

/// Build `ori-cli`'s programs statically with `profile` for `triple`; the
/// folder holding them.
fn build(triple: &str, profile: &str) -> Result<PathBuf, String> {
    let var = format!(
        "CARGO_TARGET_{}_RUSTFLAGS",
        triple.to_uppercase().replace(['-', '.'], "_")
    );
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--profile", profile, "-p", "ori-cli", "--bins"])
        .args(["--target", triple])
        .env(var, STATIC_FLAGS)
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("building ori-cli ({profile}, static) failed"));
    }
    // Cargo names the `dev` profile's folder `debug`.
    let dir = if profile == "dev" { "debug" } else { profile };
    Ok(root().join("target").join(triple).join(dir))
}

/// The wheel's platform tags for a static build on `triple`: the programs
/// load no shared library, so both glibc and musl systems can take them.
fn platform_tags(triple: &str) -> Result<String, String> {
    let arch = triple.split('-').next().unwrap_or_default();
    if !(triple.contains("-linux-gnu") || triple.contains("-linux-musl")) {
        return Err(format!(
            "cargo xtask wheel links statically on Linux only (host {triple})"
        ));
    }
    Ok(format!(
        "manylinux_2_17_{arch}.manylinux2014_{arch}.musllinux_1_2_{arch}"
    ))
}

/// Pack the wheel with `python/pack_wheel.py`; the wheel's path.
fn pack(bins: &Path, plat: &str) -> Result<PathBuf, String> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let mut cmd = Command::new(&python);
    cmd.arg(root().join("python/pack_wheel.py"))
        .args(["--version", env!("CARGO_PKG_VERSION"), "--plat", plat])
        .arg("--out")
        .arg(root().join("target/wheels"));
    for p in PROGRAMS {
        cmd.arg("--bin").arg(bins.join(p));
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {python} (set PYTHON to a Python 3): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "python/pack_wheel.py failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// `cargo xtask wheel [--no-pgo | --profile NAME]`.
pub fn run(args: &[&str]) -> Result<ExitCode, String> {
    let triple = host_triple()?;
    let plat = platform_tags(&triple)?;
    let start = Instant::now();
    let (bins, description) = match args {
        [] | ["--no-pgo"] => {
            let pgo = if args.is_empty() {
                Pgo::WhenAvailable
            } else {
                Pgo::Off
            };
            let built = crate::dist::build_static(false, pgo)?;
            (built.dir, built.description)
        }
        ["--profile", p] => {
            let what = format!("static {p} build, not profile-guided");
            (build(&triple, p)?, what)
        }
        _ => {
            return Err(format!(
                "usage: cargo xtask wheel [--no-pgo | --profile NAME] (got {args:?})"
            ))
        }
    };
    let built = start.elapsed();
    let wheel = pack(&bins, &plat)?;
    let size = std::fs::metadata(&wheel).map_or(0, |m| m.len());
    eprintln!(
        "wheel: {description}; built in {:.1} s, packed in {:.1} s, {:.1} MB",
        built.as_secs_f64(),
        (start.elapsed() - built).as_secs_f64(),
        size as f64 / 1e6
    );
    println!("{}", wheel.display());
    Ok(ExitCode::SUCCESS)
}
