//! `ori scan PATH...`: which kernels of a build would ptxas serialize or
//! inject into?
//!
//! A Triton cache (`~/.triton/cache`) or a CUTLASS build tree holds hundreds
//! of `.ptx` files; a kernel author wants the few whose `wgmma` pipeline
//! ptxas will serialize, and the line that causes it, without compiling
//! each by hand. Every `.ptx` under the given paths is read, then analysed,
//! each step on a pool of threads (`ori::compile_many`, one task per file; the report
//! is the same whatever the number of threads), then reported in path
//! order: one line per
//! phase-87 message (code, rule, culprit line and statement, kernel, file,
//! and the user's Python or C++ line where the PTX names it with `.loc`),
//! then a summary table. `--message-format json|sarif` writes the findings
//! for CI on stdout (the summary goes to stderr); a progress bar shows on a
//! terminal.

use crate::MessageFormat;
use indicatif::{ProgressBar, ProgressStyle};
use ori::ir::{Diagnostic, Severity};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// What makes `ori scan` exit with status 1 (for CI gates).
#[derive(Copy, Clone, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Only files that cannot be read or parsed.
    Error,
    /// Also any kernel ptxas would serialize.
    Serialized,
    /// Also any injected arrive or wait.
    Any,
}

/// One scanned file.
struct Scanned {
    path: PathBuf,
    /// The text, when it could be read.
    text: Option<String>,
    /// ori's diagnostics (an I/O error as one error diagnostic).
    diags: Vec<Diagnostic>,
    /// Functions (kernels and device functions) of the compiled module.
    functions: usize,
    /// The user's source lines the PTX names (`.loc`), where a finding
    /// needs them.
    origins: ori::ir::SourceMap,
}

impl Scanned {
    fn serialized(&self) -> bool {
        self.diags.iter().any(is_serialization)
    }
    fn advisories(&self) -> bool {
        self.diags
            .iter()
            .any(|d| matches!(d.code, Some(7517 | 7519)))
    }
    fn failed(&self) -> bool {
        self.diags
            .iter()
            .any(|d| matches!(d.severity, Severity::Error | Severity::Fatal))
    }
}

/// A serialization: phase 87's codes other than the injected arrive/wait.
fn is_serialization(d: &Diagnostic) -> bool {
    matches!(d.code, Some(7509..=7516 | 7518 | 7520))
}

/// Every `.ptx` file under `paths` (a file is taken as given), sorted,
/// without following symbolic links into directories.
fn collect(paths: &[String]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| format!("cannot read '{p}': {e}"))?;
        if meta.is_dir() {
            stack.push(PathBuf::from(p));
        } else {
            out.push(PathBuf::from(p));
        }
    }
    while let Some(dir) = stack.pop() {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| format!("cannot read '{}': {e}", dir.display()))?;
        for e in entries.flatten() {
            let path = e.path();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|x| x == "ptx") {
                out.push(path);
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// What the pool returns for one file: its function count, diagnostics
/// and, where a finding will name one, the user's source lines.
type Compiled = (usize, Vec<Diagnostic>, ori::ir::SourceMap);

/// Every file of `files` read (and checked to be UTF-8), on `threads`
/// threads, in `files`' order. A scan of hundreds of kernels reads tens of
/// megabytes: read on one thread, that was the serial part of the scan,
/// the part that more threads did not shorten.
fn read_all(files: &[PathBuf], threads: usize) -> Vec<Result<String, String>> {
    use rayon::prelude::*;
    let read = |p: &PathBuf| crate::read_input(&p.display().to_string());
    if threads > 1 {
        if let Ok(pool) = rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
            return pool.install(|| files.par_iter().with_max_len(1).map(read).collect());
        }
    }
    files.iter().map(read).collect()
}

/// Read every file of `files`, then compile those read on `threads`
/// threads; in `files`' order.
fn scan_all(files: &[PathBuf], threads: usize, bar: &ProgressBar) -> Vec<Scanned> {
    let read = read_all(files, threads);
    let compiled: Vec<Compiled> = {
        let inputs: Vec<(String, &str)> = files
            .iter()
            .zip(&read)
            .filter_map(|(p, r)| Some((p.display().to_string(), r.as_deref().ok()?)))
            .collect();
        let opts = ori::Options {
            threads,
            ..ori::Options::default()
        };
        // The source map is the front end's, kept where something is
        // reported (else read again from the text, on the pool too, or it
        // would be the scan's serial part).
        ori::compile_many(&inputs, &opts, |k, c| {
            bar.inc(1);
            let origins = match &inputs[k] {
                (name, text) if c.diags.iter().any(reported) => c.locs.as_ref().map_or_else(
                    || ori::ptx::source_map::build(name, text),
                    ori::ptx::source_map::Locs::source_map,
                ),
                _ => ori::ir::SourceMap::default(),
            };
            (c.module.map_or(0, |m| m.funcs.len()), c.diags, origins)
        })
    };
    let mut compiled = compiled.into_iter();
    files
        .iter()
        .zip(read)
        .map(|(path, r)| match r {
            Err(e) => {
                bar.inc(1);
                Scanned {
                    path: path.to_path_buf(),
                    text: None,
                    diags: vec![Diagnostic::new(Severity::Error, None, e)],
                    functions: 0,
                    origins: ori::ir::SourceMap::default(),
                }
            }
            Ok(text) => {
                let (functions, diags, origins) = compiled.next().unwrap_or_default();
                Scanned {
                    path: path.to_path_buf(),
                    text: Some(text),
                    functions,
                    diags,
                    origins,
                }
            }
        })
        .collect()
}

/// The statement a note points at, on one line, shortened.
fn statement(text: &str, span: Option<(u32, u32)>) -> Option<String> {
    let (lo, hi) = span?;
    let s = text.get(lo as usize..hi as usize)?;
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(if one.chars().count() > 100 {
        format!("{}...", one.chars().take(97).collect::<String>())
    } else {
        one
    })
}

/// One human line per finding.
fn human_line(s: &Scanned, d: &Diagnostic) -> String {
    let file = s.path.display();
    let culprit_line = d.culprit.as_ref().map(|n| n.line).filter(|&l| l > 0);
    // An error (no culprit) is named at its line and column.
    let line = match (culprit_line, d.line, d.col) {
        (Some(l), _, _) => format!(":{l}"),
        (None, Some(l), Some(c)) => format!(":{l}:{c}"),
        (None, Some(l), None) => format!(":{l}"),
        (None, None, _) => String::new(),
    };
    let mut out = format!("{file}{line}: ");
    match d.code {
        Some(c) => {
            let _ = write!(out, "C{c}");
        }
        None => out.push_str(d.severity.word()),
    }
    if let Some(r) = d.rule {
        let _ = write!(out, " {r}");
    }
    if let Some(f) = &d.function {
        let _ = write!(out, " in '{f}'");
    }
    let what = if is_serialization(d) {
        "serialized".to_string()
    } else {
        match d.code {
            Some(7517) => "wait injected".into(),
            Some(7519) => "arrive injected".into(),
            _ => d.message.clone(),
        }
    };
    let _ = write!(out, ": {what}");
    let stmt = s
        .text
        .as_deref()
        .and_then(|t| statement(t, d.culprit.as_ref().and_then(|n| n.span)));
    if let Some(st) = stmt {
        let _ = write!(out, ": {st}");
    }
    let origin = d
        .culprit
        .as_ref()
        .and_then(|n| s.origins.origin_at(n.span?.0));
    if let Some(o) = origin {
        let _ = write!(out, " (from {}:{})", o.file, o.line);
    }
    out
}

/// Findings a scan reports: phase 87's messages and input errors (ori's
/// own notes on what ptxas leaves undefined are left to `ori compile`).
fn reported(d: &Diagnostic) -> bool {
    d.code.is_some_and(|c| (7509..=7520).contains(&c))
        || matches!(d.severity, Severity::Error | Severity::Fatal)
}

/// The summary table.
fn summary(scanned: &[Scanned]) -> String {
    let files = scanned.len();
    let functions: usize = scanned.iter().map(|s| s.functions).sum();
    let failed = scanned.iter().filter(|s| s.failed()).count();
    let serialized = scanned
        .iter()
        .filter(|s| !s.failed() && s.serialized())
        .count();
    let advisories = scanned
        .iter()
        .filter(|s| !s.failed() && !s.serialized() && s.advisories())
        .count();
    let clean = files - failed - serialized - advisories;
    let mut by_code: BTreeMap<u32, (usize, usize)> = BTreeMap::new();
    for s in scanned {
        let mut seen = Vec::new();
        for c in s
            .diags
            .iter()
            .filter(|d| reported(d))
            .filter_map(|d| d.code)
        {
            let e = by_code.entry(c).or_default();
            e.0 += 1;
            if !seen.contains(&c) {
                seen.push(c);
                e.1 += 1;
            }
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| files | functions | clean | advisories only | serialized | errors |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|");
    let _ = writeln!(
        out,
        "| {files} | {functions} | {clean} | {advisories} | {serialized} | {failed} |"
    );
    if !by_code.is_empty() {
        let _ = writeln!(out, "\n| code | messages | files |");
        let _ = writeln!(out, "|---|---:|---:|");
        for (c, (n, f)) in &by_code {
            let _ = writeln!(out, "| C{c} | {n} | {f} |");
        }
    }
    out
}

/// Run `ori scan`.
pub fn run(
    paths: &[String],
    format: MessageFormat,
    jobs: Option<usize>,
    fail_on: FailOn,
    out: &mut crate::Out,
) -> Result<std::process::ExitCode, std::process::ExitCode> {
    let files = match collect(paths) {
        Ok(f) => f,
        Err(e) => {
            crate::cli_error(format, &e);
            return Ok(std::process::ExitCode::from(1));
        }
    };
    let bar = ProgressBar::new(files.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} kernels {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let threads =
        jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let scanned = scan_all(&files, threads.max(1), &bar);
    bar.finish_and_clear();
    report(&scanned, format, out)?;
    let fail = scanned.iter().any(|s| match fail_on {
        FailOn::Error => s.failed(),
        FailOn::Serialized => s.failed() || s.serialized(),
        FailOn::Any => s.failed() || s.serialized() || s.advisories(),
    });
    Ok(std::process::ExitCode::from(u8::from(fail)))
}

/// A scanned file's text indexed for diagnostics, with the source map its
/// compilation kept (made where something is reported).
fn source_of<'a>(s: &Scanned, path: &'a str, text: &'a str) -> ori::report::Source<'a> {
    if s.diags.iter().any(reported) {
        ori::report::Source::new(path, text).with_origins(s.origins.clone())
    } else {
        crate::source_with_origins(path, text, None)
    }
}

/// Write the findings of `scanned` and the summary table in `format`.
fn report(
    scanned: &[Scanned],
    format: MessageFormat,
    out: &mut crate::Out,
) -> Result<(), std::process::ExitCode> {
    let table = summary(scanned);
    match format {
        MessageFormat::Sarif => {
            let sources: Vec<Option<ori::report::Source>> = scanned
                .iter()
                .map(|s| {
                    s.text
                        .as_deref()
                        .map(|t| source_of(s, s.path.to_str().unwrap_or(""), t))
                })
                .collect();
            let kept: Vec<Vec<Diagnostic>> = scanned
                .iter()
                .map(|s| s.diags.iter().filter(|d| reported(d)).cloned().collect())
                .collect();
            let files: Vec<ori::report::SarifFile> = scanned
                .iter()
                .zip(&sources)
                .zip(&kept)
                .map(|((s, src), diags)| ori::report::SarifFile {
                    uri: crate::sarif_uri(&s.path.display().to_string()),
                    source: src.as_ref(),
                    diags,
                })
                .collect();
            let log = ori::report::sarif_log(&files, &ori::explain::explain);
            out.put(&format!("{log}\n"))?;
            crate::err_line(table.trim_end());
        }
        MessageFormat::Json => {
            for s in scanned {
                let path = s.path.display().to_string();
                let src = s.text.as_deref().map(|t| source_of(s, &path, t));
                for d in s.diags.iter().filter(|d| reported(d)) {
                    let mut d = d.clone();
                    d.file = Some(path.clone());
                    out.put(&format!("{}\n", ori::report::render_json(&d, src.as_ref())))?;
                }
            }
            crate::err_line(table.trim_end());
        }
        MessageFormat::Human | MessageFormat::Ptxas => {
            for s in scanned {
                for d in s.diags.iter().filter(|d| reported(d)) {
                    out.put(&format!("{}\n", human_line(s, d)))?;
                }
            }
            out.put(&format!("\n{table}"))?;
        }
    }
    Ok(())
}
