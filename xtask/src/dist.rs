//! `cargo xtask dist`: the `ori` binary as it is shipped, statically linked.
//!
//! ori is timed against ptxas with process start included, and a kernel of
//! a few hundred lines compiles in about a millisecond: the dynamic loader's
//! share is a third of that (mapping libc, libm and libgcc_s, their page
//! faults and relocations; measured: `ori --version` 1.00 ms dynamic, 0.64
//! ms static, `/bin/true` 0.59 ms). A statically linked binary starts
//! without it. The default `cargo build --release` cannot link statically:
//! `-C target-feature=+crt-static` on the host target also reaches the
//! proc-macro crates (clap's derive), which cannot be built so. Naming the
//! target explicitly makes cargo build proc-macros and build scripts for
//! the host without the flag, so the flag is passed for the target alone
//! (`CARGO_TARGET_<TRIPLE>_RUSTFLAGS`); the binary is copied to
//! `target/dist/ori`. The binary is also position-dependent
//! (`-C relocation-model=static`): a static PIE relocates itself at start
//! (`_dl_relocate_static_pie`, 15 of a small kernel's 168 page faults), a
//! fixed-address one does not (measured on a 29 KB Triton kernel: 158
//! page faults instead of 167, 1.87 ms instead of 2.03). Supported on
//! Linux with glibc or musl; elsewhere the command says so.

use crate::oracle::root;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// The host's target triple (`rustc -vV`).
fn host_triple() -> Result<String, String> {
    let out = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .arg("-vV")
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .ok_or_else(|| "rustc -vV names no host".into())
}

/// Build the static `ori` and return its path (`target/dist/ori`).
pub fn build_static(quiet: bool) -> Result<PathBuf, String> {
    let triple = host_triple()?;
    if !(triple.contains("-linux-gnu") || triple.contains("-linux-musl")) {
        return Err(format!(
            "cargo xtask dist links statically on Linux only (host {triple})"
        ));
    }
    let var = format!(
        "CARGO_TARGET_{}_RUSTFLAGS",
        triple.to_uppercase().replace(['-', '.'], "_")
    );
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--release", "-p", "ori-cli", "--target", &triple])
        .env(
            var,
            "-C target-feature=+crt-static -C relocation-model=static",
        )
        .current_dir(root());
    if quiet {
        cmd.arg("--quiet");
    }
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("building the static ori failed".into());
    }
    let built = root().join("target").join(&triple).join("release/ori");
    let dist = root().join("target/dist");
    std::fs::create_dir_all(&dist).map_err(|e| format!("{}: {e}", dist.display()))?;
    let out = dist.join("ori");
    std::fs::copy(&built, &out)
        .map_err(|e| format!("{} -> {}: {e}", built.display(), out.display()))?;
    Ok(out)
}

/// `cargo xtask dist`.
pub fn run(args: &[&str]) -> Result<ExitCode, String> {
    if !args.is_empty() {
        return Err(format!(
            "usage: cargo xtask dist (no options; got {args:?})"
        ));
    }
    let out = build_static(false)?;
    println!("{}", out.display());
    Ok(ExitCode::SUCCESS)
}
