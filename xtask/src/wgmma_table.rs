//! `cargo xtask oracle record-table`: run real ptxas on every generated
//! `wgmma` table case and write `tests/wgmma_table/verdicts.tsv`.
//!
//! The cases come from [`ori_oracle::wgmma_table::table_cases`]; this command
//! is the only writer of the verdicts file, so the expectations that ori's
//! table test checks against are ptxas's and nobody else's. `--dump DIR`
//! writes the `.ptx` files without running anything (for looking at one by
//! hand).

use crate::oracle::{root, PTXAS_VERSION};
use crate::process;
use ori_oracle::wgmma_table::{
    first_error, render_verdicts, table_cases, Intent, TableCase, Verdict, VERDICTS_PATH,
};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const PTXAS_LIMIT: Duration = Duration::from_secs(120);

/// `$ORI_ORACLE_TOOLS/nvidia/cu13/bin/ptxas` (default `target/oracle-tools`),
/// the same place `cargo xtask oracle install` puts it.
fn ptxas() -> PathBuf {
    let dir = match std::env::var_os("ORI_ORACLE_TOOLS") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => root().join("target").join("oracle-tools"),
    };
    dir.join("nvidia").join("cu13").join("bin").join("ptxas")
}

fn ptxas_version(path: &Path) -> Option<String> {
    let out = Command::new(path).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .find_map(|l| l.rsplit_once(", V").map(|(_, v)| v.trim().to_string()))
}

pub fn record_table(args: &[&str]) -> Result<ExitCode, String> {
    let cases = table_cases();
    match args {
        [] => {}
        ["--dump", dir] => return dump(&cases, Path::new(dir)),
        _ => {
            return Err(format!(
                "usage: cargo xtask oracle record-table [--dump DIR]; got {args:?}"
            ))
        }
    }
    let ptxas = ptxas();
    let version = ptxas_version(&ptxas).ok_or_else(|| {
        format!(
            "{} not found or not runnable; run `cargo xtask oracle install` or set ORI_ORACLE_TOOLS",
            ptxas.display()
        )
    })?;
    if version != PTXAS_VERSION {
        return Err(format!(
            "ptxas is {version}; the table records ptxas {PTXAS_VERSION}"
        ));
    }
    let tmp = std::env::temp_dir().join(format!("ori-wgmma-table-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| format!("creating {}: {e}", tmp.display()))?;
    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let rows: Mutex<Vec<Option<Result<Verdict, String>>>> = Mutex::new(vec![None; cases.len()]);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                let r = run_one(&ptxas, case, &tmp);
                rows.lock().expect("no worker panicked")[i] = Some(r);
                if (i + 1).is_multiple_of(200) {
                    eprintln!("  {} / {} cases", i + 1, cases.len());
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&tmp);
    let mut verdicts = Vec::with_capacity(cases.len());
    for (case, row) in cases
        .iter()
        .zip(rows.into_inner().expect("no worker panicked"))
    {
        match row {
            Some(Ok(v)) => verdicts.push(v),
            Some(Err(e)) => return Err(format!("{}: {e}", case.name)),
            None => return Err(format!("{}: not run", case.name)),
        }
    }
    let path = root().join(VERDICTS_PATH);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    std::fs::write(&path, render_verdicts(&version, &verdicts))
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    summarize(&cases, &verdicts);
    println!(
        "wrote {} ({} cases, {:.1} s)",
        path.display(),
        verdicts.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

fn run_one(ptxas: &Path, case: &TableCase, tmp: &Path) -> Result<Verdict, String> {
    let ptx = tmp.join(format!("{}.ptx", case.name));
    std::fs::write(&ptx, &case.ptx).map_err(|e| format!("writing {}: {e}", ptx.display()))?;
    let cubin = tmp.join(format!("{}.cubin", case.name));
    let args = vec![
        format!("-arch={}", case.arch),
        format!("{}.ptx", case.name),
        "-o".to_string(),
        cubin.display().to_string(),
    ];
    let out = process::run(ptxas, &args, tmp, PTXAS_LIMIT)?;
    let _ = std::fs::remove_file(&ptx);
    let _ = std::fs::remove_file(&cubin);
    if out.timed_out {
        return Err("ptxas timed out".into());
    }
    // stdout (info lines) first, then stderr, as `oracle record` orders them.
    let mut lines = process::lines(&out.stdout);
    lines.extend(process::lines(&out.stderr));
    let first = first_error(&lines);
    if first.contains('\t') {
        return Err(format!("message with a tab: {first:?}"));
    }
    if out.code != 0 && first.is_empty() {
        return Err(format!("ptxas exited {} without an error line", out.code));
    }
    Ok(Verdict {
        name: case.name.clone(),
        exit: out.code,
        first_error: first,
    })
}

/// Counts by intent and verdict, and the distinct first errors.
fn summarize(cases: &[TableCase], verdicts: &[Verdict]) {
    for intent in [Intent::Valid, Intent::Invalid, Intent::Probe] {
        let (mut acc, mut rej) = (0, 0);
        for (c, v) in cases.iter().zip(verdicts) {
            if c.intent == intent {
                if v.accepted() {
                    acc += 1;
                } else {
                    rej += 1;
                }
            }
        }
        println!(
            "{:<8} {:>5} cases: ptxas accepted {acc}, rejected {rej}",
            intent.as_str(),
            acc + rej
        );
    }
}

fn dump(cases: &[TableCase], dir: &Path) -> Result<ExitCode, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    for c in cases {
        let p = dir.join(format!("{}.ptx", c.name));
        std::fs::write(&p, &c.ptx).map_err(|e| format!("writing {}: {e}", p.display()))?;
    }
    let list: Vec<String> = cases
        .iter()
        .map(|c| format!("{}\t{}\t{}", c.name, c.intent.as_str(), c.arch))
        .collect();
    let p = dir.join("cases.tsv");
    std::fs::write(&p, list.join("\n") + "\n")
        .map_err(|e| format!("writing {}: {e}", p.display()))?;
    println!("wrote {} cases to {}", cases.len(), dir.display());
    Ok(ExitCode::SUCCESS)
}
