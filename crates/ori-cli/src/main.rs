//! `ori`: the command-line driver.
//!
//! `ori compile FILE` runs a PTX (or `.ori` IR) file through the front end
//! and phases 85/87, prints diagnostics to stderr in ptxas's, a human or a
//! JSON layout, and emits IR, SASS-like text or PTX. `ori passes` lists the
//! pipeline. Exit status: 0 compiled, 1 input error, 2 usage error.

mod ptxas_wrapper;
mod run_kernel;
mod run_report;
mod scan;

use clap::{Args, FromArgMatches, Parser, Subcommand, ValueEnum};
use ori::ir::render::{ptxas_prints, render_ptxas};
use ori::report::render_json;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::process::ExitCode;

/// The largest input ori reads (PTX files of real kernels are a few MiB):
/// past it the input is refused with a clear error instead of filling memory
/// (`ori compile /dev/zero`).
const MAX_INPUT_BYTES: u64 = 256 << 20;

#[derive(Parser)]
#[command(
    name = "ori",
    version,
    about = "ptxas's GMMA passes (phases 85 and 87), in the open"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Emit {
    Ir,
    Sass,
    Ptx,
    None,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum MessageFormat {
    /// ptxas's own lines, byte for byte.
    Ptxas,
    /// rustc-style: the PTX source with spans, help and the rule.
    Human,
    /// One JSON object per line (`tests/schemas/ori-diagnostic.schema.json`).
    Json,
    /// One SARIF 2.1.0 log, for code scanning.
    Sarif,
}

/// When to color human diagnostics.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set.
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    fn style(self) -> ori::report::Style {
        use std::io::IsTerminal;
        let color = match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stderr().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        };
        if color {
            ori::report::Style::Color
        } else {
            ori::report::Style::Plain
        }
    }
}

/// `ori compile`'s arguments.
#[derive(clap::Args, Debug, PartialEq)]
struct CompileArgs {
    /// Input file.
    file: String,
    /// Target architecture.
    #[arg(long, default_value = "sm_90a")]
    arch: String,
    /// What to write to the output.
    #[arg(long, value_enum, default_value = "none")]
    emit: Emit,
    /// Dump the IR before this pass (a name from `ori passes`, or `all`).
    #[arg(long = "print-before", value_name = "PASS")]
    print_before: Vec<String>,
    /// Dump the IR after this pass (a name from `ori passes`, or `all`).
    #[arg(long = "print-after", value_name = "PASS")]
    print_after: Vec<String>,
    /// Layout of diagnostics: human and ptxas on stderr; json and sarif on
    /// stdout (then the emitted output needs `-o FILE`).
    #[arg(long = "message-format", value_enum, default_value = "human")]
    message_format: MessageFormat,
    /// Color the human diagnostics.
    #[arg(long, value_enum, default_value = "auto")]
    color: ColorChoice,
    /// Compile only (ptxas `-c`): every callee counts as external.
    #[arg(short = 'c', long = "compile-only")]
    compile_only: bool,
    /// Phase 87 also makes legal what ptxas 13.0.88 leaves undefined by the
    /// PTX ISA (writes to registers of a wgmma in flight), with an ori note each.
    #[arg(long = "isa-strict")]
    isa_strict: bool,
    /// Register limit (ptxas `-maxrregcount`): a wgmma whose accumulator,
    /// fragment and descriptor registers cannot fit under it is ptxas's fatal
    /// C7602. ori allocates no registers otherwise.
    #[arg(long = "maxrregcount", value_name = "N")]
    maxrregcount: Option<u32>,
    /// Write the emitted output here instead of stdout.
    #[arg(short = 'o', value_name = "FILE")]
    output: Option<String>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Compile a PTX (.ptx) or IR (.ori) file.
    Compile(CompileArgs),
    /// Find the kernels ptxas would serialize or inject into: every .ptx
    /// under the given paths (a Triton cache, a CUTLASS build tree).
    Scan {
        /// Files or directories (searched recursively for .ptx).
        #[arg(required = true)]
        paths: Vec<String>,
        /// Layout: human (one line per finding and a summary table), json
        /// (one diagnostic per line) or sarif (one log) on stdout; the last
        /// two write the summary to stderr. (ptxas's layout names no file:
        /// refused.)
        #[arg(long = "message-format", value_enum, default_value = "human")]
        message_format: MessageFormat,
        /// Threads (default: one per core); the report is the same
        /// whatever the number.
        #[arg(short = 'j', long, visible_alias = "threads")]
        jobs: Option<usize>,
        /// Exit with status 1 when a file has errors (error), also when a
        /// kernel is serialized (serialized), or on any finding (any).
        #[arg(long = "fail-on", value_enum, default_value = "error")]
        fail_on: scan::FailOn,
    },
    /// Run the real ptxas (ORI_PTXAS, else PATH) with these arguments and
    /// explain its C75xx messages on stderr; usable as TRITON_PTXAS_PATH
    /// (through the `ori-ptxas` binary).
    Ptxas {
        /// ptxas's arguments, passed through untouched.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// Run a kernel on the CPU (the host backend), after ori's passes:
    /// `ori run k.ptx --grid 4,4 --arg 0=@a.npy --arg 2=zeros:f16:4096 --dump 2=c.npy`.
    Run(run_kernel::RunArgs),
    /// List the pass pipeline: phase number and name.
    Passes,
    /// Explain a ptxas message code (C7514) or a phase-87 rule (R-read-unsure-group).
    Explain {
        /// The code or rule name; `ori explain list` lists them.
        what: String,
    },
}

/// ptxas spells long options with one dash (`-arch=sm_90`, `-maxrregcount=64`);
/// accept both. Arguments that are not UTF-8 pass through untouched (clap
/// reports them as an error instead of a panic).
fn normalized_args() -> Vec<OsString> {
    std::env::args_os()
        .map(|a| {
            let Some(s) = a.to_str() else { return a };
            match s.split_once('=') {
                Some((k @ ("-arch" | "-maxrregcount"), v)) => format!("-{k}={v}").into(),
                _ if s == "-arch" || s == "-maxrregcount" => format!("-{s}").into(),
                _ => a,
            }
        })
        .collect()
}

/// `ori compile`'s arguments, parsed by a command of its own arguments
/// alone: building the whole command line (every subcommand's arguments,
/// `ori run`'s among them) is a measurable share of compiling a small
/// kernel, for nothing but `compile`'s. `None` for anything but a successful parse (another
/// subcommand, `--help`, an error): the full command then answers, with
/// its own help and messages. Both parse `compile`'s arguments with the
/// same definitions (a unit test compares them).
fn parse_compile_alone(args: &[OsString]) -> Option<CompileArgs> {
    if args.get(1)? != "compile" {
        return None;
    }
    let cmd = CompileArgs::augment_args(clap::Command::new("compile"));
    let m = cmd.try_get_matches_from(&args[1..]).ok()?;
    CompileArgs::from_arg_matches(&m).ok()
}

/// Read an input file: a regular file of at most [`MAX_INPUT_BYTES`].
fn read_input(file: &str) -> Result<String, String> {
    let meta = std::fs::metadata(file).map_err(|e| format!("cannot read '{file}': {e}"))?;
    if !meta.is_file() {
        return Err(format!("cannot read '{file}': not a regular file"));
    }
    let bytes = std::fs::File::open(file)
        .and_then(|f| {
            let len = f.metadata().map_or(0, |m| m.len().min(MAX_INPUT_BYTES + 1));
            // Read in one go where the size is known (a regular file), not
            // in reads doubling from 32 bytes.
            let mut bytes = Vec::new();
            bytes.reserve_exact(usize::try_from(len).unwrap_or(0) + 1);
            f.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes)?;
            Ok(bytes)
        })
        .map_err(|e| format!("cannot read '{file}': {e}"))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(format!(
            "cannot read '{file}': larger than {} MiB",
            MAX_INPUT_BYTES >> 20
        ));
    }
    // Valid UTF-8 (every real kernel) is kept as read, without a copy.
    Ok(String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Write `text` to `path` without losing the old file if the write fails
/// (disk full): a temporary file beside it, then a rename.
fn write_file_atomically(path: &str, text: &str) -> std::io::Result<()> {
    write_bytes_atomically(path, text.as_bytes())
}

/// [`write_file_atomically`] for bytes (`ori run --dump`'s `.npy` files).
fn write_bytes_atomically(path: &str, bytes: &[u8]) -> std::io::Result<()> {
    let target = std::path::Path::new(path);
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = target
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.ori-tmp-{}", std::process::id()));
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, target));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Standard output, where a failed write (a closed pipe, a full disk) ends
/// the run with exit status 1 instead of a panic.
struct Out(std::io::StdoutLock<'static>);

impl Out {
    fn put(&mut self, text: &str) -> Result<(), ExitCode> {
        self.0
            .write_all(text.as_bytes())
            .and_then(|()| self.0.flush())
            .map_err(|e| {
                let _ = writeln!(
                    std::io::stderr(),
                    "ori: cannot write to standard output: {e}"
                );
                ExitCode::from(1)
            })
    }
}

/// A line on standard error; if even that fails there is no one to tell.
fn err_line(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// One of the CLI's own errors (not the compiler's), in the chosen layout:
/// with `--message-format json` a JSON diagnostic like the compiler's, so
/// that tools read every line of stdout the same way.
fn cli_error(format: MessageFormat, message: &str) {
    if matches!(format, MessageFormat::Json | MessageFormat::Sarif) {
        let d = ori::ir::Diagnostic::new(ori::ir::Severity::Error, None, message.to_string());
        // No file: a SARIF result without a location.
        print_diagnostics(&[d], "", None, format, ColorChoice::Never);
    } else {
        err_line(&format!("ori: {message}"));
    }
}

/// A line on standard output, for the machine-readable formats. Its lock is
/// reentrant, so this works while [`Out`] holds it; a failed write (a closed
/// pipe) shows again, as an exit status of 1, at the next [`Out::put`] or
/// at the final flush.
fn out_line(line: &str) {
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "{line}");
    let _ = o.flush();
}

/// A PTX file's text indexed for diagnostics, with the user's source
/// positions its `.loc` directives name: `kept`, where the front end took
/// them as it compiled the text, else read from the text again.
pub(crate) fn source_with_origins<'a>(
    path: &'a str,
    text: &'a str,
    kept: Option<&ori::ptx::source_map::Locs>,
) -> ori::report::Source<'a> {
    let origins = kept.map_or_else(
        || ori::ptx::source_map::build(path, text),
        ori::ptx::source_map::Locs::source_map,
    );
    ori::report::Source::new(path, text).with_origins(origins)
}

/// Print a compilation's diagnostics in `format`: the human and ptxas
/// layouts on stderr, JSON and SARIF on stdout.
fn print_diagnostics(
    diags: &[ori::ir::Diagnostic],
    path: &str,
    source: Option<&ori::report::Source>,
    format: MessageFormat,
    color: ColorChoice,
) {
    if format == MessageFormat::Sarif {
        let file = ori::report::SarifFile {
            uri: sarif_uri(path),
            source,
            diags,
        };
        let log = ori::report::sarif_log(&[file], &ori::explain::explain);
        out_line(&log.to_string());
        return;
    }
    let style = color.style();
    for d in diags {
        if format == MessageFormat::Ptxas && !ptxas_prints(d) {
            continue;
        }
        match format {
            MessageFormat::Ptxas => err_line(&render_ptxas(d)),
            MessageFormat::Human => err_line(&ori::report::render_human(d, source, style)),
            MessageFormat::Json | MessageFormat::Sarif => out_line(&render_json(d, source)),
        }
    }
}

/// A path as a SARIF URI reference: forward slashes, relative as given.
fn sarif_uri(path: &str) -> String {
    path.replace('\\', "/").trim_start_matches("./").to_string()
}

/// Whether this program was started as a ptxas: as `ori ptxas ARGS` or
/// under the name `ptxas` / `ori-ptxas`; then the arguments are ptxas's
/// own (one-dash long options and all) and go to the wrapper untouched.
fn ptxas_args() -> Option<Vec<OsString>> {
    let mut args = std::env::args_os();
    let argv0 = args.next()?;
    let name = std::path::Path::new(&argv0)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name == "ptxas" || name == "ori-ptxas" {
        return Some(args.collect());
    }
    (args.next()? == "ptxas").then(|| args.collect())
}

/// The input size from which `ori compile` drops its input during the
/// passes (about 80,000 instructions of PTX).
const DROP_INPUT_FROM_BYTES: usize = 4 << 20;

fn main() -> ExitCode {
    if let Some(args) = ptxas_args() {
        return ptxas_wrapper::run(&args);
    }
    match run() {
        Ok(c) | Err(c) => c,
    }
}

/// `ori compile`'s [`ori::compile_source`], with a large input dropped
/// between the front end and the passes: on a kernel of a million
/// instructions its 48 MB are a tenth of the peak, which comes in phase 87,
/// where nothing reads it.
/// Returns the input where it was kept (`None`: read it again with
/// [`read_again`] to show diagnostics on it or to write the fix-it).
fn compile_source(
    name: &str,
    src: String,
    opts: &ori::Options,
) -> (ori::Compilation, Option<String>) {
    if name.ends_with(".ori") || src.len() < DROP_INPUT_FROM_BYTES {
        return (ori::compile_source(name, &src, opts), Some(src));
    }
    let (module, locs) = ori::ptx_to_ir_warned_mapped(name, &src, opts.arch.as_deref());
    match module {
        Ok((m, warnings)) => {
            drop(src);
            let c = ori::with_warnings(ori::run_passes(m, opts), warnings);
            (ori::Compilation { locs, ..c }, None)
        }
        Err(diags) => {
            let c = ori::Compilation {
                diags,
                locs,
                ..ori::Compilation::default()
            };
            (c, Some(src))
        }
    }
}

/// What identifies the contents of a file read once: its length and
/// modification time.
fn stamp(file: &str) -> Option<(u64, std::time::SystemTime)> {
    let m = std::fs::metadata(file).ok()?;
    Some((m.len(), m.modified().ok()?))
}

/// The input dropped during the passes, read again; `None` if it changed
/// since it was compiled (its length or modification time differ) or can
/// no longer be read.
fn read_again(file: &str, first: Option<(u64, std::time::SystemTime)>) -> Option<String> {
    let first = first?;
    let src = read_input(file).ok()?;
    (stamp(file) == Some(first) && src.len() as u64 == first.0).then_some(src)
}

/// What is wrong with `compile`'s command line beyond what clap checks:
/// a pass name `ori passes` does not list, or two outputs on stdout.
fn compile_usage_error(args: &CompileArgs) -> Option<String> {
    let pm = ori::pipeline(&ori::Options::default());
    let (before, after) = (&args.print_before, &args.print_after);
    if let Some(p) = before.iter().chain(after).find(|p| !pm.knows(p)) {
        return Some(format!("unknown pass '{p}' (see `ori passes`)"));
    }
    stdout_clash(
        args.message_format,
        args.emit,
        args.output.as_deref(),
        before,
        after,
    )
    .map(str::to_string)
}

/// The text `--emit` asks for, or the exit status when there is none.
fn emitted(
    args: &CompileArgs,
    name: &str,
    src: Option<&str>,
    c: &ori::Compilation,
    opts: &ori::Options,
) -> Result<String, ExitCode> {
    let Some(m) = &c.module else {
        return Err(ExitCode::from(1));
    };
    match args.emit {
        Emit::None => Err(ExitCode::SUCCESS),
        Emit::Ir => Ok(ori::ir::write_module(m)),
        Emit::Sass => Ok(ori::lower::sass::emit_module(m)),
        Emit::Ptx if name.ends_with(".ori") => {
            cli_error(args.message_format, "--emit ptx needs PTX input");
            Err(ExitCode::from(2))
        }
        Emit::Ptx => {
            let Some(src) = src else {
                let file = &args.file;
                let msg = format!("'{file}' changed while it was compiled: no fix-it written");
                cli_error(args.message_format, &msg);
                return Err(ExitCode::from(1));
            };
            ori::fixit_ptx(name, src, c, opts).ok_or(ExitCode::from(1))
        }
    }
}

fn compile(args: CompileArgs, out: &mut Out) -> Result<ExitCode, ExitCode> {
    if let Some(e) = compile_usage_error(&args) {
        cli_error(args.message_format, &e);
        return Ok(ExitCode::from(2));
    }
    let file = args.file.clone();
    let first = stamp(&file);
    let src = match read_input(&file) {
        Ok(s) => s,
        Err(e) => {
            cli_error(args.message_format, &e);
            return Ok(ExitCode::from(1));
        }
    };
    let name = std::path::Path::new(&file)
        .file_name()
        .map_or(file.clone(), |n| n.to_string_lossy().into_owned());
    let opts = ori::Options {
        arch: Some(args.arch.clone()),
        print_before: args.print_before.clone(),
        print_after: args.print_after.clone(),
        verify: true,
        compile_only: args.compile_only,
        isa_strict: args.isa_strict,
        maxrregcount: args.maxrregcount,
        ..ori::Options::default()
    };
    // Never freed: the process ends right after, and the OS takes the
    // memory back at once, where dropping the IR would visit every
    // instruction to free it (clang's `-disable-free` is the same choice).
    let (c, kept) = compile_source(&name, src, &opts);
    let c = std::mem::ManuallyDrop::new(c);
    for d in &c.dumps {
        out.put(d)?;
    }
    // Spans point into PTX input only (IR text has none).
    // (Indexed by line only when there is something to show.)
    let format = args.message_format;
    let shown = !c.diags.is_empty() || format == MessageFormat::Sarif;
    let needed = shown || (args.emit == Emit::Ptx && !c.failed());
    // A large input was dropped during the passes: read again where it is
    // needed; one that changed meanwhile shows no source lines.
    let src = kept.or_else(|| needed.then(|| read_again(&file, first)).flatten());
    let source = src
        .as_deref()
        .filter(|_| !name.ends_with(".ori") && shown)
        .map(|s| source_with_origins(&file, s, c.locs.as_ref()));
    print_diagnostics(&c.diags, &file, source.as_ref(), format, args.color);
    if c.failed() {
        return Ok(ExitCode::from(1));
    }
    match emitted(&args, &name, src.as_deref(), &c, &opts) {
        Ok(text) => write_output(args.output.as_deref(), &text, format, out),
        Err(code) => Ok(code),
    }
}

/// Why `compile`'s outputs would share standard output with JSON or SARIF
/// diagnostics, which own it: the emitted text without `-o`, or IR dumps.
fn stdout_clash(
    format: MessageFormat,
    emit: Emit,
    output: Option<&str>,
    print_before: &[String],
    print_after: &[String],
) -> Option<&'static str> {
    if !matches!(format, MessageFormat::Json | MessageFormat::Sarif) {
        return None;
    }
    if emit != Emit::None && output.is_none() {
        return Some("--message-format json/sarif writes the diagnostics to standard output: give --emit a file with -o FILE");
    }
    if !print_before.is_empty() || !print_after.is_empty() {
        return Some("--message-format json/sarif writes the diagnostics to standard output: --print-before/--print-after cannot share it (use --message-format human)");
    }
    None
}

/// Write the emitted `text` to `-o`'s file (whole or not at all) or to
/// standard output.
fn write_output(
    output: Option<&str>,
    text: &str,
    format: MessageFormat,
    out: &mut Out,
) -> Result<ExitCode, ExitCode> {
    match output {
        Some(path) => {
            if let Err(e) = write_file_atomically(path, text) {
                cli_error(format, &format!("cannot write '{path}': {e}"));
                return Ok(ExitCode::from(1));
            }
        }
        None => out.put(text)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn run() -> Result<ExitCode, ExitCode> {
    let mut out = Out(std::io::stdout().lock());
    let args = normalized_args();
    let cmd = match parse_compile_alone(&args) {
        Some(c) => Cmd::Compile(c),
        None => match Cli::try_parse_from(args) {
            Ok(c) => c.cmd,
            Err(e) => {
                let _ = e.print();
                return Ok(ExitCode::from(if e.use_stderr() { 2 } else { 0 }));
            }
        },
    };
    match cmd {
        Cmd::Explain { what } if what == "list" => {
            for name in ori::explain::known() {
                out.put(&format!("{name}\n"))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Explain { what } => match ori::explain::explain(&what) {
            Some(text) => {
                out.put(&text)?;
                Ok(ExitCode::SUCCESS)
            }
            None => {
                eprintln!(
                    "error: ori knows no code or rule '{what}' (`ori explain list` lists them)"
                );
                Ok(ExitCode::from(2))
            }
        },
        Cmd::Scan {
            message_format: MessageFormat::Ptxas,
            ..
        } => {
            err_line("ori: scan: --message-format ptxas is not available: ptxas's lines do not name the file they are about (use human, json or sarif)");
            Ok(ExitCode::from(2))
        }
        Cmd::Scan {
            paths,
            message_format,
            jobs,
            fail_on,
        } => scan::run(&paths, message_format, jobs, fail_on, &mut out),
        Cmd::Ptxas { args } => Ok(ptxas_wrapper::run(&args)),
        Cmd::Run(args) => Ok(run_kernel::run(args)),
        Cmd::Passes => {
            for (phase, name) in ori::pipeline(&ori::Options::default()).pipeline() {
                out.put(&format!("{phase} {name}\n"))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Compile(args) => compile(args, &mut out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `compile`'s arguments alone parse as the whole command line does,
    /// and whatever the full command must answer (help, errors) is left to
    /// it.
    #[test]
    fn compile_alone_parses_as_the_full_command_does() {
        // Each a command line after `ori`, split at spaces.
        let cases = [
            "compile k.ptx",
            "compile --emit ir -o out.ori k.ptx",
            "compile k.ori --print-after all --print-before x",
            "compile -c --isa-strict --maxrregcount 64 k.ptx",
            "compile --message-format json --color never k.ptx",
            "compile --arch=sm_90 -- -k.ptx",
            "compile --arch sm_100a k.ptx",
            "compile",
            "compile --help",
            "compile -h",
            "compile -V",
            "compile k.ptx --emit cubin",
            "compile a.ptx b.ptx",
            "compile k.ptx --bogus",
            "run k.ptx",
            "passes",
        ];
        let mut alone_parsed = 0;
        for case in cases {
            let args: Vec<OsString> = std::iter::once("ori")
                .chain(case.split(' '))
                .map(OsString::from)
                .collect();
            let full = match Cli::try_parse_from(&args).map(|c| c.cmd) {
                Ok(Cmd::Compile(a)) => Some(a),
                _ => None,
            };
            let alone = parse_compile_alone(&args);
            alone_parsed += usize::from(alone.is_some());
            assert_eq!(alone, full, "{case:?}");
        }
        assert_eq!(alone_parsed, 7);
    }
}
