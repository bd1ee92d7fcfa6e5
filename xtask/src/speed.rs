//! `cargo xtask speed`: the speed targets measured on programs already
//! built, in one short table.
//!
//! The targets are ratios taken side by side: the `cargo build --release`
//! ori and the static ori of `target/dist` (plain or profile-guided, as
//! `target/dist/BUILD` says) against ptxas on the real kernels, and `ori
//! scan` of `tests/real` on two threads against one. Nothing is built
//! here, so the table can be made on a quiet machine from the binaries
//! alone: `target/release/ori` (`cargo build --release`), `target/dist/ori`
//! (`cargo xtask dist [--pgo]`) and ptxas (`$PTXAS`, else the oracle's in
//! `target/oracle-tools`). Each comparison is interleaved run by run, so
//! that load on the machine hits both sides alike, and the load average is
//! printed with the table.

use crate::bench_vs_ptxas::{compare, geomean, Programs, Timing};
use crate::oracle::{root, tool, tool_version};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const USAGE: &str =
    "usage: cargo xtask speed [--runs N] [--only TEXT] [--every K] [--out FILE] [--doc]";

/// The command's options.
struct Options {
    runs: usize,
    only: Option<String>,
    /// `--every K`: every Kth kernel only (a quick sample).
    every: usize,
    out: PathBuf,
    /// `--doc`: also write the table into `docs/performance.md`.
    doc: bool,
}

fn parse(args: &[&str]) -> Result<Options, String> {
    let mut o = Options {
        runs: 5,
        only: None,
        every: 1,
        out: root().join("target/speed.md"),
        doc: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{a} needs a value; {USAGE}"))
        };
        match *a {
            "--runs" => {
                o.runs = value()?
                    .parse()
                    .map_err(|_| format!("bad --runs; {USAGE}"))?
            }
            "--only" => o.only = Some(value()?.to_string()),
            "--every" => {
                o.every = value()?
                    .parse()
                    .map_err(|_| format!("bad --every; {USAGE}"))?
            }
            "--out" => o.out = PathBuf::from(value()?),
            "--doc" => o.doc = true,
            _ => return Err(format!("unknown option '{a}'; {USAGE}")),
        }
    }
    o.runs = o.runs.max(1);
    Ok(o)
}

/// A built program, or an error naming the command that builds it.
fn built(path: PathBuf, how: &str) -> Result<PathBuf, String> {
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!("no {} (build it with `{how}`)", path.display()))
    }
}

/// The programs to time: the built ori programs and ptxas.
fn programs() -> Result<Programs, String> {
    let ori = built(root().join("target/release/ori"), "cargo build --release")?;
    let ori_static = built(root().join("target/dist/ori"), "cargo xtask dist --pgo")?;
    let static_label = std::fs::read_to_string(root().join("target/dist/BUILD"))
        .map_or_else(|_| "static dist build".into(), |s| s.trim().to_string());
    let ptxas = std::env::var_os("PTXAS").map_or_else(|| tool("ptxas"), PathBuf::from);
    let version = tool_version(&ptxas).ok_or_else(|| {
        format!(
            "no ptxas at {} (set PTXAS, or cargo xtask oracle install)",
            ptxas.display()
        )
    })?;
    Ok(Programs {
        ori,
        ori_static,
        static_label,
        ptxas,
        version,
    })
}

/// The wall time of `ori scan tests/real -j threads`.
fn scan_once(ori: &Path, threads: usize) -> Result<Duration, String> {
    let t = Instant::now();
    let status = Command::new(ori)
        .args(["scan", "tests/real", "-j", &threads.to_string()])
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {}: {e}", ori.display()))?;
    let d = t.elapsed();
    // 1: a kernel was serialized or failed, as ptxas's are.
    match status.code() {
        Some(0 | 1) => Ok(d),
        other => Err(format!("ori scan tests/real -j {threads}: exit {other:?}")),
    }
}

/// The best times of `ori scan tests/real` on one and on two threads,
/// `runs` of each, interleaved.
fn scan_scaling(ori: &Path, runs: usize) -> Result<(Duration, Duration), String> {
    let (mut one, mut two) = (Duration::MAX, Duration::MAX);
    for _ in 0..runs {
        one = one.min(scan_once(ori, 1)?);
        two = two.min(scan_once(ori, 2)?);
    }
    Ok((one, two))
}

/// The 1, 5 and 15 minute load averages.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |_| "unknown".into(),
        |s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
    )
}

/// The table's rows: what, measured, target.
fn table(p: &Programs, rows: &[Timing], scan: (Duration, Duration)) -> Vec<[String; 3]> {
    let least = |ratio: fn(&Timing) -> f64| rows.iter().map(ratio).fold(f64::INFINITY, f64::min);
    let (one, two) = scan;
    vec![
        [
            "`cargo build --release` ori vs ptxas".into(),
            format!(
                "{:.1}x (least {:.1}x)",
                geomean(rows, Timing::ratio),
                least(Timing::ratio)
            ),
            ">= 30x (#41)".into(),
        ],
        [
            format!("{} vs ptxas", p.static_label),
            format!(
                "{:.1}x (least {:.1}x)",
                geomean(rows, Timing::ratio_static),
                least(Timing::ratio_static)
            ),
            ">= 50x (#44)".into(),
        ],
        [
            "`ori scan tests/real`, 1 thread / 2 threads".into(),
            format!(
                "{:.2}x ({:.0} ms / {:.0} ms)",
                one.as_secs_f64() / two.as_secs_f64().max(1e-9),
                one.as_secs_f64() * 1e3,
                two.as_secs_f64() * 1e3
            ),
            ">= 1.8x (#41)".into(),
        ],
    ]
}

/// `cargo xtask speed`.
pub fn run(args: &[&str]) -> Result<ExitCode, String> {
    let o = parse(args)?;
    let p = programs()?;
    let before = load();
    let (rows, failed) = compare(&p, o.runs, o.only.as_deref(), o.every)?;
    let scan = scan_scaling(&p.ori, o.runs)?;
    let command: Vec<&str> = ["cargo", "xtask", "speed"]
        .iter()
        .chain(args)
        .copied()
        .collect();
    let mut text = format!(
        "Measured with `{}`: {} kernels of tests/triton, tests/triton2 and tests/real, \
         best of {} interleaved runs each, process start included; ptxas {}; {} CPUs; load average {before} before, {} after.\n\n\
         | measure | result | target |\n|---|---:|---|\n",
        command.join(" "),
        rows.len(),
        o.runs,
        p.version,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        load()
    );
    for [what, result, target] in table(&p, &rows, scan) {
        text.push_str(&format!("| {what} | {result} | {target} |\n"));
    }
    println!("\n{text}");
    std::fs::write(&o.out, &text).map_err(|e| format!("{}: {e}", o.out.display()))?;
    eprintln!("speed: table written to {}", o.out.display());
    if o.doc {
        crate::perf_doc::write_section("The speed targets", "cargo xtask speed", &text)?;
    }
    if !failed.is_empty() {
        eprintln!(
            "speed: {} kernels did not run: {}",
            failed.len(),
            failed.join(", ")
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
