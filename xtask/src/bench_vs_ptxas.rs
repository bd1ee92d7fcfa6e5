//! `cargo xtask bench --vs-ptxas`: ori against ptxas 13.0.88 on real
//! compiler output, side by side in one run.
//!
//! The speed target of the typed-IR issue is a ratio on the kernels users
//! actually compile (Triton's and the real corpus's), process start
//! included, not a figure on generated kernels: so each kernel is compiled
//! as a user would, `ori compile FILE` (the default CLI run: passes,
//! diagnostics rendered) against `ptxas -arch=sm_90a FILE -o CUBIN` with
//! the flags its header asks for (`// oracle-flags:`), the two runs
//! interleaved so that load on the machine hits both alike, best of N
//! each. It prints each kernel's ratio (ptxas time / ori time) and the
//! geometric mean, and exits 1 when a kernel fails to run at all.
//!
//! Two ori binaries are timed side by side: the default `cargo build
//! --release` one (dynamically linked) and the statically linked one of
//! `cargo xtask dist`, whose process starts about 0.35 ms sooner (see
//! `dist.rs`); both ratios are printed.

use crate::dist::Pgo;
use crate::oracle::{case_header, root, tool, tool_version};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// The corpora timed: Triton's kernels and the real corpus.
const CORPORA: &[&str] = &["tests/triton", "tests/triton2", "tests/real"];

/// One kernel's best wall times.
pub(crate) struct Timing {
    name: String,
    lines: usize,
    ori: Duration,
    /// The statically linked ori's (`cargo xtask dist`).
    ori_static: Duration,
    ptxas: Duration,
}

impl Timing {
    /// How many times faster ori is.
    pub(crate) fn ratio(&self) -> f64 {
        self.ptxas.as_secs_f64() / self.ori.as_secs_f64().max(1e-9)
    }

    /// How many times faster the static ori is.
    pub(crate) fn ratio_static(&self) -> f64 {
        self.ptxas.as_secs_f64() / self.ori_static.as_secs_f64().max(1e-9)
    }

    /// The row of the table.
    fn print_row(&self) {
        println!(
            "| {:<60} | {:>6} | {:>9.2} | {:>9.2} | {:>9.2} | {:>6.1} | {:>6.1} |",
            self.name,
            self.lines,
            self.ori.as_secs_f64() * 1e3,
            self.ori_static.as_secs_f64() * 1e3,
            self.ptxas.as_secs_f64() * 1e3,
            self.ratio(),
            self.ratio_static()
        );
    }
}

/// Every `.ptx` under `dir`, recursively, sorted.
pub(crate) fn kernels(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            kernels(&p, out);
        } else if p.extension().is_some_and(|e| e == "ptx") {
            out.push(p);
        }
    }
}

/// The wall time of one run of `cmd`, or why it did not run.
fn time(cmd: &mut Command) -> Result<Duration, String> {
    let t = Instant::now();
    let status = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("{e}"))?;
    let d = t.elapsed();
    // ori exits 1 where ptxas errors (the same inputs): timed all the same.
    match status.code() {
        Some(0..=2) => Ok(d),
        other => Err(format!("exit {other:?}")),
    }
}

/// The ori binary, built now so that the timing is of this checkout.
fn ori_binary() -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--quiet", "-p", "ori-cli"])
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("building ori failed".into());
    }
    Ok(root().join("target/release/ori"))
}

/// One kernel's line count and best times (ori, static ori, ptxas) over
/// `runs` interleaved runs, with the flags its header names.
fn time_kernel(
    path: &Path,
    (ori, ori_static): (&Path, &Path),
    ptxas: &Path,
    cubin: &Path,
    runs: usize,
) -> Result<(usize, [Duration; 3]), String> {
    let src = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let flags = case_header(&src).flags;
    let ori_command = |bin: &Path| {
        let mut c = Command::new(bin);
        c.arg("compile").arg(path);
        if flags.iter().any(|f| f == "-c") {
            c.arg("-c");
        }
        c
    };
    let (mut ori_cmd, mut static_cmd) = (ori_command(ori), ori_command(ori_static));
    let mut ptxas_cmd = Command::new(ptxas);
    if !flags.iter().any(|f| f.starts_with("-arch")) {
        ptxas_cmd.arg("-arch=sm_90a");
    }
    ptxas_cmd.args(&flags).arg(path).arg("-o").arg(cubin);
    let mut best = [Duration::MAX; 3];
    for _ in 0..runs {
        let o = time(&mut ori_cmd).map_err(|e| format!("ori: {e}"))?;
        let s = time(&mut static_cmd).map_err(|e| format!("static ori: {e}"))?;
        let p = time(&mut ptxas_cmd).map_err(|e| format!("ptxas: {e}"))?;
        for (b, t) in best.iter_mut().zip([o, s, p]) {
            *b = (*b).min(t);
        }
    }
    Ok((src.lines().count(), best))
}

/// The geometric mean of `ratio` over `rows`.
pub(crate) fn geomean(rows: &[Timing], ratio: fn(&Timing) -> f64) -> f64 {
    (rows.iter().map(|t| ratio(t).ln()).sum::<f64>() / rows.len().max(1) as f64).exp()
}

/// Print the geometric mean of `ratio` over `rows` and the least one.
pub(crate) fn summarize(rows: &[Timing], label: &str, ratio: fn(&Timing) -> f64) -> String {
    let geo = geomean(rows, ratio);
    let Some(worst) = rows.iter().min_by(|a, b| ratio(a).total_cmp(&ratio(b))) else {
        return String::new();
    };
    let line = format!(
        "{} kernels: {label} is {geo:.1}x faster than ptxas (geometric mean of the ratios); the least, {:.1}x, on `{}`",
        rows.len(),
        ratio(worst),
        worst.name
    );
    println!("\n{line}");
    line
}

/// The programs timed against each other.
pub(crate) struct Programs {
    /// The `cargo build --release` ori.
    pub ori: PathBuf,
    /// The static ori (`target/dist/ori`).
    pub ori_static: PathBuf,
    /// Which build the static one is (`target/dist/BUILD`).
    pub static_label: String,
    /// ptxas.
    pub ptxas: PathBuf,
    /// ptxas's version.
    pub version: String,
}

/// Time every kernel (those whose path contains `filter`, when given),
/// `runs` times each, and print the table; also returns the summary, for
/// `docs/performance.md`. Builds both ori programs first.
pub fn run(runs: usize, filter: Option<&str>, pgo: bool) -> Result<(ExitCode, String), String> {
    let ptxas = tool("ptxas");
    let version = tool_version(&ptxas)
        .ok_or_else(|| format!("no ptxas at {} (cargo xtask oracle setup)", ptxas.display()))?;
    let ori = ori_binary()?;
    let pgo = if pgo { Pgo::On } else { Pgo::Off };
    let built = crate::dist::build_static(true, pgo)?;
    let programs = Programs {
        ori,
        ori_static: built.ori(),
        static_label: built.description,
        ptxas,
        version,
    };
    let (rows, failed) = compare(&programs, runs, filter, 1)?;
    let summary = format!(
        "Against ptxas {}, process start included, best of {runs} runs each:\n\n- {}\n- {}\n",
        programs.version,
        summarize(&rows, "ori (cargo build --release)", Timing::ratio),
        summarize(&rows, &programs.static_label, Timing::ratio_static)
    );
    if !failed.is_empty() {
        println!(
            "{} kernels did not run: {}",
            failed.len(),
            failed.join(", ")
        );
        return Ok((ExitCode::FAILURE, summary));
    }
    Ok((ExitCode::SUCCESS, summary))
}

/// Time the kernels of [`CORPORA`] whose path contains `filter` (of
/// those, every `every`th) with `programs`, printing a row each; the
/// timings and the kernels that did not run.
pub(crate) fn compare(
    programs: &Programs,
    runs: usize,
    filter: Option<&str>,
    every: usize,
) -> Result<(Vec<Timing>, Vec<String>), String> {
    let mut files = Vec::new();
    for c in CORPORA {
        kernels(&root().join(c), &mut files);
    }
    files.retain(|p| filter.is_none_or(|f| p.to_string_lossy().contains(f)));
    let files: Vec<PathBuf> = files.into_iter().step_by(every.max(1)).collect();
    let tmp = std::env::temp_dir().join(format!("ori-vs-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let cubin = tmp.join("k.cubin");
    println!(
        "ori ({}; static: {}, {}) against ptxas {}, {} kernels, best of {runs} runs each, process start included\n",
        programs.ori.display(),
        programs.ori_static.display(),
        programs.static_label,
        programs.version,
        files.len()
    );
    println!(
        "| {:<60} | {:>6} | {:>9} | {:>9} | {:>9} | {:>6} | {:>6} |",
        "kernel", "lines", "ori ms", "static ms", "ptxas ms", "ratio", "static"
    );
    println!(
        "|{:-<62}|{:->8}|{:->11}|{:->11}|{:->11}|{:->8}|{:->8}|",
        "", ":", ":", ":", ":", ":", ":"
    );
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    let bins = (programs.ori.as_path(), programs.ori_static.as_path());
    for path in &files {
        let name = path
            .strip_prefix(root())
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned();
        match time_kernel(path, bins, &programs.ptxas, &cubin, runs) {
            Ok((lines, [ori, ori_static, ptxas])) => {
                let t = Timing {
                    name,
                    lines,
                    ori,
                    ori_static,
                    ptxas,
                };
                t.print_row();
                rows.push(t);
            }
            Err(e) => {
                println!("| {name:<60} | failed: {e}");
                failed.push(name);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    if rows.is_empty() {
        return Err("no kernel was timed".into());
    }
    Ok((rows, failed))
}
