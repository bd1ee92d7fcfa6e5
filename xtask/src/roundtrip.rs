//! The fix-it round trip against ptxas: `oracle check --ptx-roundtrip`
//! (live) and `oracle record-roundtrip` (recorded, for CI).
//!
//! For every case ptxas compiles, ori's fix-it (`ori::fixit_ptx`, what
//! `ori compile --emit ptx` prints) goes back through ptxas 13.0.88 with the
//! case's flags: ptxas must print no C75xx message (except C7509 and C7512,
//! which no rewrite of the PTX can remove: calls to functions without a body,
//! and `-maxrregcount`), and the SASS sync skeleton is compared with the
//! original's ([`ori_oracle::classify_skeleton`] says when the two cannot be
//! compared, and why). The recorded form, `CORPUS/roundtrip.expected`, keys
//! each verdict by the fix-it's digest, so that `tests/fixit_roundtrip.rs`
//! can check it without ptxas and notices when the fix-it has changed.

use crate::oracle::{case_header, corpus_dir, ptxas_args, tool, tool_version};
use crate::process;
use ori_ir::Opcode;
use ori_oracle::{
    classify_skeleton, fixit_digest, parse_roundtrip, render_roundtrip, skeleton_from_sass,
    Expectation, RoundtripRecord, SkeletonVerdict,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

const TOOL_LIMIT: Duration = Duration::from_secs(600);

/// The paths and tools of one round-trip run.
struct Tools {
    ptxas: PathBuf,
    cuobjdump: PathBuf,
    tmp: PathBuf,
}

/// Number of `call` instructions in a compiled module.
fn calls(c: &ori::Compilation) -> usize {
    c.module.as_ref().map_or(0, |m| {
        m.funcs
            .values()
            .map(|f| {
                f.layout
                    .blocks()
                    .iter()
                    .flat_map(|&b| f.layout.block_insts(b))
                    .filter(|&&i| f.insts[i].opcode == Opcode::Call)
                    .count()
            })
            .sum()
    })
}

/// The C75xx codes of ptxas's output, in order.
fn c75_codes(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let at = l.find("(C75")?;
            l.get(at + 1..at + 6).map(str::to_string)
        })
        .collect()
}

/// One case through the round trip. `None` when ptxas rejects the original
/// (there is nothing to fix).
fn roundtrip_case(case: &str, t: &Tools) -> Result<Option<RoundtripRecord>, String> {
    let dir = corpus_dir();
    let ptx_path = dir.join(format!("{case}.ptx"));
    let Ok(exp_text) = std::fs::read_to_string(ptx_path.with_extension("expected")) else {
        return Ok(None);
    };
    let expected = Expectation::parse(&exp_text).map_err(|e| format!("{case}: {e}"))?;
    if expected.exit_code != 0 {
        return Ok(None);
    }
    let src = std::fs::read_to_string(&ptx_path)
        .map_err(|e| format!("reading {}: {e}", ptx_path.display()))?;
    let file = ptx_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let opts = ori::case_options(&src);
    let c = ori::compile_ptx(&file, &src, &opts);
    let fixed = ori::fixit_ptx(&file, &src, &c, &opts)
        .ok_or_else(|| format!("{case}: ori writes no fix-it for a kernel ptxas compiles"))?;
    let stem = case.replace('/', "__");
    let emitted = t.tmp.join(format!("{stem}.ptx"));
    std::fs::write(&emitted, &fixed).map_err(|e| format!("writing {}: {e}", emitted.display()))?;
    let cubin = t.tmp.join(format!("{stem}.cubin"));
    let _ = std::fs::remove_file(&cubin);
    let header = case_header(&src);
    let args = ptxas_args(&stem, &header, &cubin);
    let p = process::run(&t.ptxas, &args, &t.tmp, TOOL_LIMIT)?;
    let codes = c75_codes(&format!("{}\n{}", p.stdout, p.stderr));
    let skeleton = if p.code == 0 && cubin.is_file() && expected.skeleton_comparable {
        let d = process::run(
            &t.cuobjdump,
            &["-sass".into(), cubin.display().to_string()],
            &t.tmp,
            TOOL_LIMIT,
        )?;
        let again = ori::compile_ptx(&file, &fixed, &opts);
        classify_skeleton(
            &expected.functions,
            &skeleton_from_sass(&d.stdout),
            (calls(&c), calls(&again)),
        )
    } else {
        SkeletonVerdict::NotRecorded
    };
    Ok(Some(RoundtripRecord {
        digest: fixit_digest(&fixed),
        exit: p.code,
        codes,
        skeleton,
    }))
}

/// Runs the round trip on `list`, `jobs` at a time.
fn run_all(
    list: &[String],
    jobs: usize,
) -> Result<BTreeMap<String, Result<Option<RoundtripRecord>, String>>, String> {
    let (ptxas, cuobjdump) = (tool("ptxas"), tool("cuobjdump"));
    if tool_version(&ptxas).is_none() {
        return Err(format!(
            "{} not found; run `cargo xtask oracle install`",
            ptxas.display()
        ));
    }
    let tmp = std::env::temp_dir().join(format!("ori-roundtrip-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| format!("creating {}: {e}", tmp.display()))?;
    let t = Tools {
        ptxas,
        cuobjdump,
        tmp,
    };
    let next = AtomicUsize::new(0);
    let out = Mutex::new(BTreeMap::new());
    let bar = crate::progress::bar(list.len(), "cases");
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, list.len().max(1)) {
            s.spawn(|| {
                while let Some(case) = list.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let r = roundtrip_case(case, &t);
                    bar.inc(1);
                    out.lock()
                        .expect("no panics while held")
                        .insert(case.clone(), r);
                }
            });
        }
    });
    bar.finish_and_clear();
    let _ = std::fs::remove_dir_all(&t.tmp);
    Ok(out.into_inner().expect("threads joined"))
}

/// Tallies and prints a run's verdicts; returns how many cases fail.
fn summarize(results: &BTreeMap<String, RoundtripRecord>) -> usize {
    let mut by_skeleton: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut quiet, mut unfixable, mut bad) = (0, 0, 0);
    for (case, r) in results {
        *by_skeleton.entry(r.skeleton.as_str()).or_default() += 1;
        quiet += usize::from(r.exit == 0 && r.codes.is_empty());
        unfixable += usize::from(r.exit == 0 && !r.codes.is_empty() && r.failures().is_empty());
        let why = r.failures();
        if !why.is_empty() {
            bad += 1;
            println!("{case}: {}", why.join("; "));
        }
    }
    let n = results.len();
    println!(
        "ptx round trip over {n} kernels ptxas compiles: {quiet} with no C75xx message, \
         {unfixable} with only C7504/C7508/C7509/C7512 (no rewrite can remove them), {bad} failing"
    );
    let sk: Vec<String> = by_skeleton
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    println!("sync skeleton against the original's: {}", sk.join(", "));
    bad
}

/// `oracle check --ptx-roundtrip [CASE...]`.
pub fn check(cases: &[String], strict: bool) -> Result<ExitCode, String> {
    let names: Vec<&str> = cases.iter().map(String::as_str).collect();
    let list = crate::oracle::cases(&names)?;
    let mut ok = BTreeMap::new();
    for (case, r) in run_all(&list, 2)? {
        if let Some(r) = r? {
            ok.insert(case, r);
        }
    }
    let bad = summarize(&ok);
    Ok(if strict && bad > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `oracle record-roundtrip [-j N] [CASE...]`: writes (or, for named
/// cases, updates) `CORPUS/roundtrip.expected`.
pub fn record(args: &[&str]) -> Result<ExitCode, String> {
    let (jobs, named) = crate::oracle::parse_jobs(args, 2)?;
    let names: Vec<&str> = named.iter().map(String::as_str).collect();
    let list = crate::oracle::cases(&names)?;
    let path: PathBuf = corpus_dir().join("roundtrip.expected");
    let mut records = if named.is_empty() {
        BTreeMap::new()
    } else {
        parse_roundtrip(&std::fs::read_to_string(&path).unwrap_or_default())?
    };
    let mut errors = 0;
    for (case, r) in run_all(&list, jobs)? {
        match r {
            Ok(Some(r)) => {
                records.insert(case, r);
            }
            Ok(None) => {
                records.remove(&case);
            }
            Err(e) => {
                eprintln!("{case}: {e}");
                errors += 1;
            }
        }
    }
    let tools = format!(
        "ptxas {}; cuobjdump {}",
        tool_version(&tool("ptxas")).unwrap_or_default(),
        tool_version(&tool("cuobjdump")).unwrap_or_default()
    );
    write(&path, &render_roundtrip(&records, &tools))?;
    summarize(&records);
    println!("wrote {}", path.display());
    Ok(if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}
