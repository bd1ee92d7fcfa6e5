//! `cargo xtask dist`: the `ori` binary as it is shipped, statically linked
//! and built with the workspace's `dist` profile (fat LTO, one
//! code-generation unit; the everyday `release` profile builds quickly
//! instead).
//!
//! ori is timed against ptxas with process start included, and a kernel of
//! a few hundred lines compiles in about a millisecond: the dynamic loader
//! (mapping libc, libm and libgcc_s, their page faults and relocations) is
//! a large share of that. A statically linked binary starts without it.
//! The default `cargo build --release` cannot link statically:
//! `-C target-feature=+crt-static` on the host target also reaches the
//! proc-macro crates (clap's derive), which cannot be built so. Naming the
//! target explicitly makes cargo build proc-macros and build scripts for
//! the host without the flag, so the flag is passed for the target alone
//! (`CARGO_TARGET_<TRIPLE>_RUSTFLAGS`); the binary is copied to
//! `target/dist/ori`. The binary is also position-dependent
//! (`-C relocation-model=static`): a static PIE relocates itself at start
//! (`_dl_relocate_static_pie`, page faults of its own), a fixed-address
//! one does not. Supported on Linux with glibc or musl; elsewhere the
//! command says so.
//!
//! `cargo xtask dist --pgo` builds it profile-guided, as rustc and clang
//! are shipped: an instrumented build compiles a training set, and the
//! final build is laid out and inlined for the paths that set took. The
//! training set is disjoint from what `bench --vs-ptxas` times
//! (`tests/triton*`, `tests/real`): every kernel of `tests/corpus` and
//! `tests/generated` and the five bench shapes at 20k instructions. It
//! needs `llvm-profdata` (`rustup component add llvm-tools-preview`).

use crate::oracle::root;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// The host's target triple (`rustc -vV`).
pub(crate) fn host_triple() -> Result<String, String> {
    let out = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .arg("-vV")
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .ok_or_else(|| "rustc -vV names no host".into())
}

/// The `RUSTFLAGS` of every static build: statically linked, at a fixed
/// address.
pub(crate) const STATIC_FLAGS: &str = "-C target-feature=+crt-static -C relocation-model=static";

/// Build `ori-cli` statically for `triple` with `extra` flags into
/// `target_dir`; the binary's path.
fn build(triple: &str, extra: &str, target_dir: &Path, quiet: bool) -> Result<PathBuf, String> {
    let var = format!(
        "CARGO_TARGET_{}_RUSTFLAGS",
        triple.to_uppercase().replace(['-', '.'], "_")
    );
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args([
        "build",
        "--profile",
        "dist",
        "-p",
        "ori-cli",
        "--target",
        triple,
    ])
    .env(var, format!("{STATIC_FLAGS} {extra}").trim_end())
    .env("CARGO_TARGET_DIR", target_dir)
    .current_dir(root());
    if quiet {
        cmd.arg("--quiet");
    }
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("building the static ori failed".into());
    }
    Ok(target_dir.join(triple).join("dist/ori"))
}

/// `llvm-profdata` of the toolchain that builds (rustup's `llvm-tools`).
fn llvm_profdata(triple: &str) -> Result<PathBuf, String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let tool = Path::new(&sysroot)
        .join("lib/rustlib")
        .join(triple)
        .join("bin/llvm-profdata");
    if tool.is_file() {
        Ok(tool)
    } else {
        Err(format!(
            "--pgo needs {} (rustup component add llvm-tools-preview)",
            tool.display()
        ))
    }
}

/// Compile the training set with the instrumented `bin` (its profiles go
/// where it was built to write them); how many inputs it compiled.
fn train(bin: &Path, scratch: &Path) -> Result<usize, String> {
    let mut inputs = Vec::new();
    for dir in ["tests/corpus", "tests/generated"] {
        crate::bench_vs_ptxas::kernels(&root().join(dir), &mut inputs);
    }
    std::fs::create_dir_all(scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    for shape in crate::bench_shapes::SHAPES {
        let path = scratch.join(format!("{}.ptx", shape.name()));
        let k = crate::bench::generate_shape(shape, 20_000);
        std::fs::write(&path, k.ptx).map_err(|e| format!("{}: {e}", path.display()))?;
        inputs.push(path);
    }
    for input in &inputs {
        // Bad inputs are in the set on purpose: their exit status is theirs.
        Command::new(bin)
            .arg("compile")
            .arg(input)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    }
    Ok(inputs.len())
}

/// Build the static `ori` and return its path (`target/dist/ori`);
/// profile-guided with `pgo`.
pub fn build_static(quiet: bool, pgo: bool) -> Result<PathBuf, String> {
    let triple = host_triple()?;
    if !(triple.contains("-linux-gnu") || triple.contains("-linux-musl")) {
        return Err(format!(
            "cargo xtask dist links statically on Linux only (host {triple})"
        ));
    }
    let target = root().join("target");
    let built = if pgo {
        let profdata = llvm_profdata(&triple)?;
        let dir = target.join("pgo");
        let profiles = dir.join("profiles");
        // Profiles of an earlier build would be merged with this one's.
        let _ = std::fs::remove_dir_all(&profiles);
        let flags = format!("-C profile-generate={}", profiles.display());
        let gen = build(&triple, &flags, &dir.join("generate"), quiet)?;
        let n = train(&gen, &dir.join("train"))?;
        let merged = dir.join("merged.profdata");
        let raw: Vec<PathBuf> = std::fs::read_dir(&profiles)
            .map_err(|e| format!("{}: {e}", profiles.display()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "profraw"))
            .collect();
        if raw.is_empty() {
            return Err(format!(
                "the training run wrote no profile to {}",
                profiles.display()
            ));
        }
        let status = Command::new(&profdata)
            .arg("merge")
            .arg("-o")
            .arg(&merged)
            .args(&raw)
            .status()
            .map_err(|e| format!("cannot run {}: {e}", profdata.display()))?;
        if !status.success() {
            return Err("llvm-profdata merge failed".into());
        }
        if !quiet {
            eprintln!("dist: trained on {n} kernels");
        }
        let flags = format!("-C profile-use={}", merged.display());
        build(&triple, &flags, &dir.join("use"), quiet)?
    } else {
        build(&triple, "", &target, quiet)?
    };
    let dist = target.join("dist");
    std::fs::create_dir_all(&dist).map_err(|e| format!("{}: {e}", dist.display()))?;
    let out = dist.join("ori");
    std::fs::copy(&built, &out)
        .map_err(|e| format!("{} -> {}: {e}", built.display(), out.display()))?;
    Ok(out)
}

/// `cargo xtask dist`.
pub fn run(args: &[&str]) -> Result<ExitCode, String> {
    let pgo = match args {
        [] => false,
        ["--pgo"] => true,
        _ => return Err(format!("usage: cargo xtask dist [--pgo] (got {args:?})")),
    };
    let out = build_static(false, pgo)?;
    println!("{}", out.display());
    Ok(ExitCode::SUCCESS)
}
