//! `cargo xtask oracle ...`: install the NVIDIA tools, record expectations,
//! check ori against them.

use crate::process::{self, lines};
use ori_oracle::{
    compare, has_loop_or_call, skeleton_from_sass, AgreementTable, ColumnTotal, Expectation,
    Observed,
};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

pub const PTXAS_VERSION: &str = "13.0.88";
pub const CUOBJDUMP_VERSION: &str = "13.2.51";
const WHEELS: [&str; 3] = [
    "nvidia-cuda-nvcc==13.0.88",
    "nvidia-cuda-cuobjdump==13.2.51",
    "nvidia-cuda-nvdisasm==13.2.51",
];
const TOOL_LIMIT: Duration = Duration::from_secs(600);
const ORI_LIMIT: Duration = Duration::from_secs(60);

/// The workspace root (parent of `xtask/`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask has a parent directory")
        .to_path_buf()
}

/// The corpus `record` and `check` work on: `tests/corpus` unless
/// `--corpus DIR` names another (`tests/real`, whose kernels sit in one
/// folder per family: a case is then named `family/kernel`).
pub fn corpus_dir() -> PathBuf {
    CORPUS
        .get()
        .cloned()
        .unwrap_or_else(|| root().join("tests").join("corpus"))
}

static CORPUS: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Takes `--corpus DIR` (relative to the workspace root, or absolute) out
/// of `args` and makes it the corpus of this run.
pub fn take_corpus_option<'a>(args: &[&'a str]) -> Result<Vec<&'a str>, String> {
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if *a == "--corpus" {
            let d = it.next().ok_or("--corpus needs a directory")?;
            let dir = root().join(d);
            if !dir.is_dir() {
                return Err(format!("--corpus: {} is not a directory", dir.display()));
            }
            CORPUS
                .set(dir)
                .map_err(|_| "--corpus given twice".to_string())?;
        } else {
            rest.push(*a);
        }
    }
    Ok(rest)
}

/// The family of a case: the folder it sits in below the corpus (`-` for
/// a case at the top).
pub fn family_of(case: &str) -> &str {
    case.rsplit_once('/').map_or("-", |(f, _)| f)
}

/// The directory of a case's files and its file stem.
fn case_location(case: &str) -> (PathBuf, &str) {
    match case.rsplit_once('/') {
        Some((d, n)) => (corpus_dir().join(d), n),
        None => (corpus_dir(), case),
    }
}

fn tools_dir() -> PathBuf {
    match std::env::var_os("ORI_ORACLE_TOOLS") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => root().join("target").join("oracle-tools"),
    }
}

pub fn tool(name: &str) -> PathBuf {
    tools_dir()
        .join("nvidia")
        .join("cu13")
        .join("bin")
        .join(name)
}

/// `Cuda compilation tools, release 13.0, V13.0.88` -> `13.0.88`.
pub fn tool_version(path: &Path) -> Option<String> {
    let out = Command::new(path).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .find_map(|l| l.rsplit_once(", V").map(|(_, v)| v.trim().to_string()))
}

pub fn install() -> Result<ExitCode, String> {
    let dir = tools_dir();
    let have = tool_version(&tool("ptxas"));
    if have.as_deref() == Some(PTXAS_VERSION)
        && tool_version(&tool("cuobjdump")).as_deref() == Some(CUOBJDUMP_VERSION)
    {
        println!(
            "oracle tools already installed in {} (ptxas {PTXAS_VERSION}, cuobjdump {CUOBJDUMP_VERSION})",
            dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    println!("installing {} into {}", WHEELS.join(" "), dir.display());
    let status = Command::new(&python)
        .args(["-m", "pip", "install", "--upgrade", "--target"])
        .arg(&dir)
        .args(WHEELS)
        .status()
        .map_err(|e| {
            format!("cannot run `{python} -m pip`: {e}; install Python 3 with pip (or set PYTHON), or point ORI_ORACLE_TOOLS at an existing install")
        })?;
    if !status.success() {
        return Err(format!(
            "`{python} -m pip install --target {} {}` failed ({status}); pip or the network may be missing. \
             Alternatively set ORI_ORACLE_TOOLS to a directory that already holds nvidia/cu13/bin/ptxas",
            dir.display(),
            WHEELS.join(" ")
        ));
    }
    match tool_version(&tool("ptxas")) {
        Some(v) if v == PTXAS_VERSION => {
            println!("installed ptxas {v} in {}", tool("ptxas").display());
            Ok(ExitCode::SUCCESS)
        }
        other => Err(format!(
            "pip succeeded but {} reports version {:?}, expected {PTXAS_VERSION}",
            tool("ptxas").display(),
            other
        )),
    }
}

/// Per-case directives from the leading `//` comment lines of a `.ptx` file.
#[derive(Debug, Default, Clone)]
pub struct CaseHeader {
    /// Extra ptxas flags (`// oracle-flags: -c`).
    pub flags: Vec<String>,
    /// `// skeleton: not-comparable: REASON`.
    pub not_comparable: Option<String>,
}

pub fn case_header(text: &str) -> CaseHeader {
    let mut h = CaseHeader::default();
    for line in text.lines().take(30) {
        let l = line.trim();
        if l.is_empty() {
            continue;
        }
        let Some(c) = l.strip_prefix("//") else {
            break;
        };
        let c = c.trim();
        if let Some(f) = c.strip_prefix("oracle-flags:") {
            h.flags.extend(f.split_whitespace().map(String::from));
        } else if let Some(r) = c.strip_prefix("skeleton: not-comparable:") {
            h.not_comparable = Some(r.trim().to_string());
        }
    }
    h
}

/// Case names of the corpus (file stems, `family/stem` in a family
/// folder), or the named ones: a name may be given with or without `.ptx`;
/// a family folder's name selects all its cases.
pub fn cases(named: &[&str]) -> Result<Vec<String>, String> {
    let dir = corpus_dir();
    let all = all_cases(&dir, "")?;
    if named.is_empty() {
        return Ok(all);
    }
    let mut v = Vec::new();
    for n in named {
        let n = n.trim_end_matches('/');
        let n = n.strip_suffix(".ptx").unwrap_or(n);
        let n = n
            .strip_prefix(&format!("{}/", dir.display()))
            .unwrap_or(n)
            .trim_start_matches("tests/corpus/");
        let family: Vec<&String> = all
            .iter()
            .filter(|c| c.starts_with(&format!("{n}/")))
            .collect();
        if !family.is_empty() {
            v.extend(family.into_iter().cloned());
        } else if all.iter().any(|c| c == n) {
            v.push(n.to_string());
        } else {
            return Err(format!("no such case: {n} in {}", dir.display()));
        }
    }
    Ok(v)
}

/// Every `.ptx` below `dir`, as `prefix` + relative path without `.ptx`,
/// sorted.
fn all_cases(dir: &Path, prefix: &str) -> Result<Vec<String>, String> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))? {
        let e = e.map_err(|e| format!("reading {}: {e}", dir.display()))?;
        let n = e.file_name().to_string_lossy().into_owned();
        if e.path().is_dir() {
            v.extend(all_cases(&e.path(), &format!("{prefix}{n}/"))?);
        } else if let Some(stem) = n.strip_suffix(".ptx") {
            v.push(format!("{prefix}{stem}"));
        }
    }
    v.sort();
    Ok(v)
}

/// ptxas arguments for a case: `-arch=sm_90a` unless the flags name an
/// architecture, then the flags, the bare file name and `-o cubin`.
pub fn ptxas_args(name: &str, header: &CaseHeader, cubin: &Path) -> Vec<String> {
    let mut args = Vec::new();
    if !header
        .flags
        .iter()
        .any(|f| f.starts_with("-arch") || f == "--gpu-name")
    {
        args.push("-arch=sm_90a".to_string());
    }
    args.extend(header.flags.iter().cloned());
    args.push(format!("{name}.ptx"));
    args.push("-o".into());
    args.push(cubin.display().to_string());
    args
}

/// `[-j N] [CASE...]`, the arguments of the record commands: the number of
/// jobs (`default` without `-j`) and the named cases.
pub fn parse_jobs(args: &[&str], default: usize) -> Result<(usize, Vec<String>), String> {
    let mut jobs = default;
    let mut named = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "-j" | "--jobs" => {
                jobs = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|&n| n > 0)
                    .ok_or("-j needs a positive number")?;
            }
            s if s.starts_with('-') => return Err(format!("unknown option {s}")),
            s => named.push(s.to_string()),
        }
    }
    Ok((jobs, named))
}

/// `record [-j N] [CASE...]`: ptxas (and cuobjdump) on each case, N at a
/// time (default 1).
pub fn record(args: &[&str]) -> Result<ExitCode, String> {
    let (jobs, named) = parse_jobs(args, 1)?;
    let named: Vec<&str> = named.iter().map(String::as_str).collect();
    let ptxas = tool("ptxas");
    let cuobjdump = tool("cuobjdump");
    let pv = tool_version(&ptxas).ok_or_else(|| {
        format!(
            "{} not found or not runnable; run `cargo xtask oracle install` or set ORI_ORACLE_TOOLS",
            ptxas.display()
        )
    })?;
    let cv = tool_version(&cuobjdump)
        .ok_or_else(|| format!("{} not found or not runnable", cuobjdump.display()))?;
    if pv != PTXAS_VERSION {
        eprintln!("warning: ptxas is {pv}, the corpus is meant for {PTXAS_VERSION}");
    }
    let list = cases(&named)?;
    let tmp = std::env::temp_dir().join(format!("ori-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| format!("creating {}: {e}", tmp.display()))?;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    let bar = crate::progress::bar(list.len(), "cases");
    std::thread::scope(|s| {
        for _ in 0..jobs.min(list.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(name) = list.get(i) else { break };
                let r = record_one(name, &ptxas, &cuobjdump, &pv, &cv, &tmp);
                bar.suspend(|| report_recorded(name, &r));
                bar.inc(1);
                results
                    .lock()
                    .expect("no panics while held")
                    .push(r.is_ok());
            });
        }
    });
    bar.finish_and_clear();
    let failures = results
        .into_inner()
        .expect("threads joined")
        .iter()
        .filter(|ok| !**ok)
        .count();
    let _ = std::fs::remove_dir_all(&tmp);
    println!(
        "recorded {} case(s), {failures} failure(s)",
        list.len() - failures
    );
    Ok(if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn report_recorded(name: &str, r: &Result<Expectation, String>) {
    match r {
        Ok(e) => println!(
            "{name}: exit {} messages {} functions {}{}",
            e.exit_code,
            e.messages.len(),
            e.functions.len(),
            if e.skeleton_comparable {
                ""
            } else {
                " (skeleton not comparable)"
            }
        ),
        Err(err) => eprintln!("{name}: {err}"),
    }
}

fn record_one(
    case: &str,
    ptxas: &Path,
    cuobjdump: &Path,
    pv: &str,
    cv: &str,
    tmp: &Path,
) -> Result<Expectation, String> {
    let (dir, name) = case_location(case);
    let dir = dir.as_path();
    let ptx = dir.join(format!("{name}.ptx"));
    let text =
        std::fs::read_to_string(&ptx).map_err(|e| format!("reading {}: {e}", ptx.display()))?;
    let header = case_header(&text);
    let cubin = tmp.join(format!("{}.cubin", case.replace('/', "__")));
    let _ = std::fs::remove_file(&cubin);
    let out = process::run(ptxas, &ptxas_args(name, &header, &cubin), dir, TOOL_LIMIT)?;
    if out.timed_out {
        return Err("ptxas timed out".into());
    }
    // stdout (info lines) first, then stderr (warnings, errors, fatal).
    let mut messages = lines(&out.stdout);
    messages.extend(lines(&out.stderr));
    let mut functions = Vec::new();
    if out.code == 0 && cubin.is_file() {
        let d = process::run(
            cuobjdump,
            &["-sass".into(), cubin.display().to_string()],
            dir,
            TOOL_LIMIT,
        )?;
        if d.code != 0 {
            return Err(format!(
                "cuobjdump failed ({}): {}",
                d.code,
                d.stderr.trim()
            ));
        }
        functions = skeleton_from_sass(&d.stdout);
    }
    let _ = std::fs::remove_file(&cubin);
    let e = Expectation {
        header: Expectation::header_for(pv, cv),
        exit_code: out.code,
        messages,
        functions,
        skeleton_comparable: header.not_comparable.is_none(),
        notes: header.not_comparable.into_iter().collect(),
    };
    let path = dir.join(format!("{name}.expected"));
    std::fs::write(&path, e.render()).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(e)
}

/// What `check` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CheckMode {
    /// `ori compile NAME.ptx --message-format ptxas --emit sass`.
    Compile,
    /// `ori compile NAME.ptx --emit ptx`, then ptxas on that output: it must
    /// compile with no C75xx message and the original's sync skeleton.
    PtxRoundtrip,
}

struct CheckOptions {
    mode: CheckMode,
    verbose: bool,
    strict: bool,
    ori: Option<PathBuf>,
    /// `--report FILE`: the per-case verdicts as TSV.
    report: Option<PathBuf>,
    cases: Vec<String>,
}

fn parse_check_options(args: &[&str]) -> Result<CheckOptions, String> {
    let mut o = CheckOptions {
        mode: CheckMode::Compile,
        verbose: false,
        strict: false,
        ori: None,
        report: None,
        cases: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "-v" | "--verbose" => o.verbose = true,
            "--strict" => o.strict = true,
            "--ori" => {
                let p = it.next().ok_or("--ori needs a path")?;
                o.ori = Some(PathBuf::from(p));
            }
            "--ptx-roundtrip" => o.mode = CheckMode::PtxRoundtrip,
            "--report" => {
                let p = it.next().ok_or("--report needs a path")?;
                o.report = Some(PathBuf::from(p));
            }
            s if s.starts_with('-') => return Err(format!("unknown option {s}")),
            s => o.cases.push(s.to_string()),
        }
    }
    Ok(o)
}

fn build_ori() -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("building ori: cargo build --release -p ori-cli");
    let status = Command::new(&cargo)
        .args(["build", "--release", "-p", "ori-cli"])
        .current_dir(root())
        .status()
        .map_err(|e| format!("ori is unavailable: cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!(
            "ori is unavailable: `cargo build --release -p ori-cli` failed ({status})"
        ));
    }
    let bin = root().join("target").join("release").join("ori");
    if !bin.is_file() {
        return Err(format!(
            "ori is unavailable: {} was not built",
            bin.display()
        ));
    }
    Ok(bin)
}

/// The ori command line for a case (run with cwd = tests/corpus).
fn ori_args(name: &str, header: &CaseHeader) -> Vec<String> {
    let mut v = vec![
        "compile".to_string(),
        format!("{name}.ptx"),
        "--message-format".into(),
        "ptxas".into(),
        "--emit".into(),
        "sass".into(),
    ];
    // Same extra flags ptxas got (e.g. `-c`), verbatim.
    v.extend(header.flags.iter().cloned());
    v
}

/// What `ori` printed and returned for case `name` of `dir`, run with the
/// flags of its header.
fn observe(ori: &Path, name: &str, header: &CaseHeader, dir: &Path) -> Result<Observed, String> {
    let out = process::run(ori, &ori_args(name, header), dir, ORI_LIMIT)?;
    Ok(Observed {
        exit_code: out.code,
        messages: lines(&out.stderr),
        sass: if out.stdout.trim().is_empty() {
            None
        } else {
            Some(out.stdout)
        },
    })
}

pub fn check(args: &[&str]) -> Result<ExitCode, String> {
    let opts = parse_check_options(args)?;
    if opts.mode == CheckMode::PtxRoundtrip {
        return crate::roundtrip::check(&opts.cases, opts.strict);
    }
    let ori = match &opts.ori {
        Some(p) => p.clone(),
        None => build_ori()?,
    };
    let names: Vec<&str> = opts.cases.iter().map(String::as_str).collect();
    let list = cases(&names)?;
    let mut table = AgreementTable::default();
    let mut missing = 0;
    // Issue #7's SASS target: skeletons of the cases without loops or calls.
    let mut straight = ColumnTotal::default();
    let mut families = FamilyTable::default();
    let bar = crate::progress::bar(list.len(), "cases");
    for case in &list {
        bar.inc(1);
        let (dir, name) = case_location(case);
        let exp_path = dir.join(format!("{name}.expected"));
        let Ok(exp_text) = std::fs::read_to_string(&exp_path) else {
            missing += 1;
            eprintln!("{case}: no {name}.expected (run `cargo xtask oracle record {case}`)");
            continue;
        };
        let expected =
            Expectation::parse(&exp_text).map_err(|e| format!("{}: {e}", exp_path.display()))?;
        let text = std::fs::read_to_string(dir.join(format!("{name}.ptx"))).unwrap_or_default();
        let header = case_header(&text);
        let observed = observe(&ori, name, &header, &dir)?;
        let a = compare(&expected, &observed);
        let loop_free = !has_loop_or_call(&text);
        if let (Some(ok), true) = (a.skeleton_agree, loop_free) {
            straight.applicable += 1;
            straight.agree += usize::from(ok);
        }
        families.push(family_of(case), &a, observed.exit_code, loop_free);
        table.push(case.clone(), a);
    }
    bar.finish_and_clear();
    print!("{}", table.render());
    println!(
        "skeleton on cases without loops or calls: {}/{} ({:.1}%)",
        straight.agree,
        straight.applicable,
        straight.percent()
    );
    if families.rows.len() > 1 || families.rows.keys().any(|f| f != "-") {
        print!("\n{}", families.render());
    }
    if missing > 0 {
        println!("{missing} case(s) without .expected were skipped");
    }
    if let Some(path) = &opts.report {
        std::fs::write(path, report_tsv(&table))
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
        println!("per-case report written to {}", path.display());
    }
    if opts.verbose {
        for (name, a) in &table.rows {
            if !a.diff.is_empty() {
                println!("\n== {name}\n{}", a.diff.trim_end());
            }
        }
    }
    let all = table.totals().all;
    Ok(if opts.strict && all.agree != all.applicable {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// One line per case, tab-separated: the case and each column's verdict
/// (`ok`, `DIFF`, `n/a`), for keeping a first-contact record.
fn report_tsv(table: &AgreementTable) -> String {
    let b = |v: bool| if v { "ok" } else { "DIFF" };
    let mut s = String::from("case\tmessages\tlines\tserialized\tskeleton\texit\n");
    for (n, a) in &table.rows {
        s.push_str(&format!(
            "{n}\t{}\t{}\t{}\t{}\t{}\n",
            b(a.messages_agree),
            b(a.lines_agree),
            b(a.serialized_agree),
            a.skeleton_agree.map_or("n/a", b),
            b(a.exit_agree)
        ));
    }
    s
}

/// Agreement per family (the folder a case sits in): how many kernels ori
/// accepts, and each column's count.
#[derive(Default)]
struct FamilyTable {
    rows: std::collections::BTreeMap<String, FamilyRow>,
}

#[derive(Default, Clone, Copy)]
struct FamilyRow {
    cases: usize,
    accepted: usize,
    messages: usize,
    lines: usize,
    serialized: usize,
    exit: usize,
    all: usize,
    skeleton_loop_free: ColumnTotal,
}

impl FamilyTable {
    fn push(
        &mut self,
        family: &str,
        a: &ori_oracle::CaseAgreement,
        ori_exit: i32,
        loop_free: bool,
    ) {
        let r = self.rows.entry(family.to_string()).or_default();
        r.cases += 1;
        r.accepted += usize::from(ori_exit == 0);
        r.messages += usize::from(a.messages_agree);
        r.lines += usize::from(a.lines_agree);
        r.serialized += usize::from(a.serialized_agree);
        r.exit += usize::from(a.exit_agree);
        r.all += usize::from(a.all_agree());
        if let (Some(ok), true) = (a.skeleton_agree, loop_free) {
            r.skeleton_loop_free.applicable += 1;
            r.skeleton_loop_free.agree += usize::from(ok);
        }
    }

    /// A Markdown table (it goes into the corpus README as it is).
    fn render(&self) -> String {
        let mut s = String::from(
            "| family | kernels | ori accepts | messages | advisory lines | serialized-or-not | exit | skeleton (loop-free) | all columns |\n|---|---|---|---|---|---|---|---|---|\n",
        );
        let mut total = FamilyRow::default();
        let line = |name: &str, r: &FamilyRow| {
            let sk = if r.skeleton_loop_free.applicable == 0 {
                "n/a".to_string()
            } else {
                format!(
                    "{}/{}",
                    r.skeleton_loop_free.agree, r.skeleton_loop_free.applicable
                )
            };
            format!(
                "| {name} | {} | {} | {} | {} | {} | {} | {sk} | {} |\n",
                r.cases, r.accepted, r.messages, r.lines, r.serialized, r.exit, r.all
            )
        };
        for (f, r) in &self.rows {
            s.push_str(&line(f, r));
            total.cases += r.cases;
            total.accepted += r.accepted;
            total.messages += r.messages;
            total.lines += r.lines;
            total.serialized += r.serialized;
            total.exit += r.exit;
            total.all += r.all;
            total.skeleton_loop_free.agree += r.skeleton_loop_free.agree;
            total.skeleton_loop_free.applicable += r.skeleton_loop_free.applicable;
        }
        s.push_str(&line("**all**", &total));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_directives() {
        let h = case_header(
            "// probes x\n// oracle-flags: -c -O0\n// skeleton: not-comparable: unrolled\n.version 8.0\n// oracle-flags: -late\n",
        );
        assert_eq!(h.flags, vec!["-c", "-O0"]);
        assert_eq!(h.not_comparable.as_deref(), Some("unrolled"));
        let args = ptxas_args("k", &h, Path::new("/tmp/k.cubin"));
        assert_eq!(
            args,
            vec!["-arch=sm_90a", "-c", "-O0", "k.ptx", "-o", "/tmp/k.cubin"]
        );
        let h2 = case_header("// oracle-flags: -arch=sm_90\n");
        assert_eq!(ptxas_args("k", &h2, Path::new("o"))[0], "-arch=sm_90");
    }

    #[test]
    fn check_options() {
        let o = parse_check_options(&["-v", "--ori", "/x/ori", "a", "b"]).unwrap();
        assert!(o.verbose);
        assert_eq!(o.ori.as_deref(), Some(Path::new("/x/ori")));
        assert_eq!(o.cases, vec!["a", "b"]);
        assert!(parse_check_options(&["--bogus"]).is_err());
    }
}
