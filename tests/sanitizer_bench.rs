//! The sanitizer's planted-bug benchmark (`sanitizer_bench/NAME`): real
//! kernels of the corpus with one bug planted each by
//! `tests/sanitizer/plant.py` (a removed barrier, mbarrier wait, proxy
//! fence or `wgmma.wait_group`, a wrong parity or `expect_tx`, a race
//! across a cluster), listed with what the sanitizer must report in
//! `tests/sanitizer/planted.tsv`; and the same kernels unplanted
//! (`sanitizer_bench/clean/BASE`), which must report nothing but the
//! documented unfenced-`cp.async` hazard of Triton 3.6. Each runs as
//! `tests/host_triton.rs` launches it (the cluster probe as
//! `tests/host_cluster.rs` does), on the default deterministic schedule,
//! with the race detector on.
//!
//! A planted row passes when the run reports a hazard of an accepted kind
//! whose line (and other line) is among those the generator computed from
//! the PTX, or, for a bug that must deadlock, stops with a deadlock at an
//! accepted line. `SANITIZER_BENCH_TABLE=1` prints what each row reported.

mod common;

use libtest_mimic::{Arguments, Failed, Trial};
use ori::host::{GlobalMemory, HostError, Launch, RunStats};
use std::collections::BTreeSet;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A row of planted.tsv.
#[derive(Clone)]
struct Planted {
    name: String,
    base: String,
    ptx: String,
    passes: bool,
    kinds: Vec<String>,
    lines: Option<BTreeSet<u32>>,
    other_lines: Option<BTreeSet<u32>>,
}

fn line_set(s: &str) -> Option<BTreeSet<u32>> {
    (s != "*").then(|| s.split(',').filter_map(|n| n.parse().ok()).collect())
}

fn planted() -> Vec<Planted> {
    let text = std::fs::read_to_string(root().join("tests/sanitizer/planted.tsv"))
        .expect("tests/sanitizer/planted.tsv (python3 tests/sanitizer/plant.py)");
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Planted {
                name: f[0].to_string(),
                base: f[1].to_string(),
                ptx: f[2].to_string(),
                passes: f[4] == "yes",
                kinds: f[5].split('|').map(str::to_string).collect(),
                lines: line_set(f[6]),
                other_lines: line_set(f[7]),
            }
        })
        .collect()
}

/// Run kernel `ptx` the way its base case launches it.
fn run(base: &str, ptx: &str, passes: bool) -> Result<Result<RunStats, HostError>, String> {
    if base == "probe_cluster_dsmem" {
        return run_probe(ptx);
    }
    let table = std::fs::read_to_string(common::triton_case::dir().join("cases.tsv"))
        .map_err(|e| e.to_string())?;
    let row = table
        .lines()
        .find(|r| r.split('\t').next() == Some(base))
        .ok_or_else(|| format!("no case {base} in cases.tsv"))?;
    let c = common::triton_case::prepare(row, Some(ptx), passes)?;
    Ok(ori::host::run(&c.m, &c.entry, &c.launch, &c.g))
}

/// The cluster probe (`tests/host/probes/cluster_dsmem.*`), launched as
/// recorded: 4 CTAs in clusters of 2, its input at its device address.
fn run_probe(ptx: &str) -> Result<Result<RunStats, HostError>, String> {
    let src = std::fs::read_to_string(root().join(ptx)).map_err(|e| e.to_string())?;
    let text = std::fs::read_to_string(root().join("tests/host/probes/cluster_dsmem.json"))
        .map_err(|e| e.to_string())?;
    let rec: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let input: Vec<u8> = rec["input"]
        .as_array()
        .ok_or("input")?
        .iter()
        .flat_map(|w| (w.as_u64().unwrap_or(0) as u32).to_le_bytes())
        .collect();
    let addr = rec["input_addr"].as_str().ok_or("input_addr")?;
    let addr = u64::from_str_radix(addr.trim_start_matches("0x"), 16).map_err(|e| e.to_string())?;
    let hex = rec["tensormap"].as_str().ok_or("tensormap")?;
    let tensormap: Vec<u8> = (0..128)
        .map(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).unwrap_or(0))
        .collect();
    let out_words = rec["out"].as_array().ok_or("out")?.len();
    let c = ori::compile_ptx(ptx, &src, &ori::Options::default());
    let m = c.module.ok_or_else(|| format!("{:?}", c.diags))?;
    let mut g = GlobalMemory::new();
    let out = g.alloc(vec![0; 4 * out_words]);
    g.alloc_at(addr, input)?;
    let launch = Launch {
        params: vec![0, out],
        param_bytes: vec![(0, tensormap)],
        grid: [4, 1, 1],
        block: [128, 1, 1],
        cluster: [2, 1, 1],
        ..Launch::default()
    };
    Ok(ori::host::run(&m, "cluster_probe", &launch, &g))
}

fn accepts(set: &Option<BTreeSet<u32>>, line: u32) -> bool {
    set.as_ref().is_none_or(|s| s.contains(&line))
}

/// What a run reported, for the table and the failures.
fn found(result: &Result<RunStats, HostError>) -> String {
    let hazards = match result {
        Ok(s) => &s.hazards,
        Err(e) => &e.hazards,
    };
    let mut out: Vec<String> = hazards
        .iter()
        .map(|h| format!("{} at {} (other {})", h.kind.name(), h.line, h.other_line))
        .collect();
    if let Err(e) = result {
        out.push(format!("{} at {}: {}", e.fault.name(), e.line, e.message));
    }
    out.join("; ")
}

fn check_planted(p: &Planted) -> Result<(), String> {
    let result = run(&p.base, &p.ptx, p.passes)?;
    if std::env::var_os("SANITIZER_BENCH_TABLE").is_some() {
        println!("{}\t{}", p.name, found(&result));
    }
    if let Err(e) = &result {
        if p.kinds.iter().any(|k| k == e.fault.name()) && accepts(&p.lines, e.line) {
            return Ok(());
        }
    }
    let hazards = match &result {
        Ok(s) => &s.hazards,
        Err(e) => &e.hazards,
    };
    let hit = hazards.iter().any(|h| {
        p.kinds.iter().any(|k| k == h.kind.name())
            && accepts(&p.lines, h.line)
            && accepts(&p.other_lines, h.other_line)
    });
    if hit {
        Ok(())
    } else {
        Err(format!(
            "expected {} at one of {:?} (other {:?}); found: {}",
            p.kinds.join("|"),
            p.lines,
            p.other_lines,
            found(&result)
        ))
    }
}

fn check_clean(base: &str, ptx: &str) -> Result<(), String> {
    let result = run(base, ptx, true)?;
    let stats = result.map_err(|e| format!("{e} (after: {})", found(&Err(e.clone()))))?;
    let src = std::fs::read_to_string(root().join(ptx)).map_err(|e| e.to_string())?;
    let other: Vec<String> = stats
        .hazards
        .iter()
        .filter(|h| {
            !(h.kind == ori::host::HazardKind::UnfencedAsyncCopy
                && ptx.contains("triton36")
                && common::unfenced_cp_async(&src, &h.message))
        })
        .map(|h| format!("line {}: {h}", h.line))
        .collect();
    if other.is_empty() {
        Ok(())
    } else {
        Err(other.join("\n"))
    }
}

/// The unplanted kernel of a base case.
fn base_ptx(base: &str) -> Option<String> {
    if base == "probe_cluster_dsmem" {
        return Some("tests/host/probes/cluster_dsmem.ptx".into());
    }
    let table = std::fs::read_to_string(common::triton_case::dir().join("cases.tsv")).ok()?;
    table
        .lines()
        .find(|r| r.split('\t').next() == Some(base))
        .and_then(|r| r.split('\t').nth(1))
        .map(str::to_string)
}

fn main() {
    let args = Arguments::from_args();
    let rows = planted();
    assert!(rows.len() >= 30, "planted.tsv lists {} kernels", rows.len());
    let mut trials: Vec<Trial> = rows
        .iter()
        .cloned()
        .map(|p| {
            Trial::test(format!("sanitizer_bench/{}", p.name), move || {
                check_planted(&p).map_err(Failed::from)
            })
        })
        .collect();
    let bases: BTreeSet<String> = rows.iter().map(|p| p.base.clone()).collect();
    for base in bases {
        let ptx = base_ptx(&base).unwrap_or_default();
        trials.push(Trial::test(
            format!("sanitizer_bench/clean/{base}"),
            move || check_clean(&base, &ptx).map_err(Failed::from),
        ));
    }
    libtest_mimic::run(&args, trials).exit();
}
