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
//! needs `llvm-profdata` (`rustup component add llvm-tools`). Both programs
//! of `ori-cli` (`ori`, `ori-ptxas`) are copied to `target/dist/`, with
//! `target/dist/BUILD`, one line saying which build they are (the wheel
//! and `cargo xtask speed` name it).

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

/// The flags of a profile-guided build's final link: the profile names
/// each function hot or cold (`.text.hot.*`, `.text.unlikely.*`), and lld,
/// rustc's linker, merges those prefixes into one `.text` unless told to
/// keep them (GNU ld keeps them by default). Kept, the code a run takes
/// lies together: a small kernel's process faults in a few pages of code
/// instead of most of the binary's, and at its size a page fault is a
/// noticeable share of a run.
const HOT_TEXT_FLAGS: &str = "-C link-arg=-Wl,-z,keep-text-section-prefix";

/// Build `ori-cli`'s programs statically for `triple` with `extra` flags
/// into `target_dir`; the folder holding them.
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
    Ok(target_dir.join(triple).join("dist"))
}

/// `llvm-profdata` of the toolchain that builds (rustup's `llvm-tools`).
pub(crate) fn llvm_profdata(triple: &str) -> Result<PathBuf, String> {
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
            "a profile-guided build needs {} (rustup component add llvm-tools)",
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

/// Whether a static build is profile-guided.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Pgo {
    /// Not profile-guided.
    Off,
    /// Profile-guided, or an error when `llvm-profdata` is missing.
    On,
    /// Profile-guided when `llvm-profdata` is installed, else not (said).
    WhenAvailable,
}

/// A static build copied to `target/dist/`.
pub struct StaticBuild {
    /// `target/dist`, holding `ori` and `ori-ptxas`.
    pub dir: PathBuf,
    /// Which build it is, in one line (also in `target/dist/BUILD`).
    pub description: String,
}

impl StaticBuild {
    /// The static `ori`.
    pub fn ori(&self) -> PathBuf {
        self.dir.join("ori")
    }
}

/// The instrumented build, its training and the merge of its profiles;
/// the merged profile and how many inputs trained it.
fn profile(
    triple: &str,
    profdata: &Path,
    dir: &Path,
    quiet: bool,
) -> Result<(PathBuf, usize), String> {
    let profiles = dir.join("profiles");
    // Profiles of an earlier build would be merged with this one's.
    let _ = std::fs::remove_dir_all(&profiles);
    let flags = format!("-C profile-generate={}", profiles.display());
    let gen = build(triple, &flags, &dir.join("generate"), quiet)?;
    let n = train(&gen.join("ori"), &dir.join("train"))?;
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
    let status = Command::new(profdata)
        .arg("merge")
        .arg("-o")
        .arg(&merged)
        .args(&raw)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", profdata.display()))?;
    if !status.success() {
        return Err("llvm-profdata merge failed".into());
    }
    Ok((merged, n))
}

/// Build the static programs, profile-guided as `pgo` says, and copy them
/// to `target/dist/`.
pub fn build_static(quiet: bool, pgo: Pgo) -> Result<StaticBuild, String> {
    let triple = host_triple()?;
    if !(triple.contains("-linux-gnu") || triple.contains("-linux-musl")) {
        return Err(format!(
            "cargo xtask dist links statically on Linux only (host {triple})"
        ));
    }
    let target = root().join("target");
    let profdata = match pgo {
        Pgo::Off => Err(String::new()),
        Pgo::On => Ok(llvm_profdata(&triple)?),
        Pgo::WhenAvailable => llvm_profdata(&triple),
    };
    let (built, description) = match profdata {
        Ok(profdata) => {
            let dir = target.join("pgo");
            let (merged, n) = profile(&triple, &profdata, &dir, quiet)?;
            let flags = format!("-C profile-use={} {HOT_TEXT_FLAGS}", merged.display());
            let built = build(&triple, &flags, &dir.join("use"), quiet)?;
            let what = format!("static dist build, profile-guided (trained on {n} kernels)");
            (built, what)
        }
        Err(why) => {
            let mut what = "static dist build, not profile-guided".to_string();
            if !why.is_empty() {
                what.push_str(&format!(": {why}"));
            }
            (build(&triple, "", &target, quiet)?, what)
        }
    };
    let dist = target.join("dist");
    std::fs::create_dir_all(&dist).map_err(|e| format!("{}: {e}", dist.display()))?;
    for program in ["ori", "ori-ptxas"] {
        let (from, to) = (built.join(program), dist.join(program));
        std::fs::copy(&from, &to)
            .map_err(|e| format!("{} -> {}: {e}", from.display(), to.display()))?;
    }
    let stamp = dist.join("BUILD");
    std::fs::write(&stamp, format!("{description}\n"))
        .map_err(|e| format!("{}: {e}", stamp.display()))?;
    Ok(StaticBuild {
        dir: dist,
        description,
    })
}

/// `cargo xtask dist [--pgo]`.
pub fn run(args: &[&str]) -> Result<ExitCode, String> {
    let pgo = match args {
        [] => Pgo::Off,
        ["--pgo"] => Pgo::On,
        _ => return Err(format!("usage: cargo xtask dist [--pgo] (got {args:?})")),
    };
    let built = build_static(false, pgo)?;
    eprintln!("dist: {}", built.description);
    println!("{}", built.ori().display());
    Ok(ExitCode::SUCCESS)
}
