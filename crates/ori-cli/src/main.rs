//! `ori`: the command-line driver.
//!
//! `ori compile FILE` runs a PTX (or `.ori` IR) file through the front end
//! and phases 85/87, prints diagnostics to stderr in ptxas's, a human or a
//! JSON layout, and emits IR, SASS-like text or PTX. `ori passes` lists the
//! pipeline. Exit status: 0 compiled, 1 input error, 2 usage error.
//!
//! On Linux the process starts at [`entry`], C's `main`, not through Rust's
//! runtime set-up (`#![no_main]`): see there why and what it does instead.

#![cfg_attr(all(target_os = "linux", not(test)), no_main)]

mod ptxas_wrapper;
mod run_kernel;
mod run_report;
mod scan;

use clap::{Args, FromArgMatches, Parser, Subcommand, ValueEnum};
use ori::ir::render::{ptxas_prints, render_json, render_ptxas};
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
    /// Layout of diagnostics on stderr.
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
    /// Register limit (ptxas `-maxrregcount`); accepted for compatibility, ori does no allocation.
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
        /// (one diagnostic per line) or sarif (one log); the last two write
        /// the summary to stderr.
        #[arg(long = "message-format", value_enum, default_value = "human")]
        message_format: MessageFormat,
        /// Threads (default: one per core).
        #[arg(short = 'j', long)]
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
/// `ori run`'s among them) was about 1.5% of compiling a small Triton
/// kernel (callgrind, `mm_f16acc_64x128x32_s4_w4`), for nothing but
/// `compile`'s. `None` for anything but a successful parse (another
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

/// Files at least this large are read by two threads, half each.
const READ_IN_HALVES_FROM: u64 = 4 << 20;

/// The `len` bytes of `f`, read by two threads, half each, where `len` is
/// at least [`READ_IN_HALVES_FROM`] and at most [`MAX_INPUT_BYTES`]: reading
/// is mostly the kernel faulting in the fresh pages it copies to (30 ms of
/// the generated 1M matmul's 48 MB, read once to compile and once to show
/// diagnostics), and two threads fault in parallel. `None` (read it in one
/// go instead) where the file is no longer `len` bytes long or a thread
/// cannot start.
#[cfg(unix)]
fn read_in_halves(f: &std::fs::File, len: u64) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    if !(READ_IN_HALVES_FROM..=MAX_INPUT_BYTES).contains(&len) {
        return None;
    }
    let n = usize::try_from(len).ok()?;
    // Zeroed by the system (a fresh mapping), not by a pass over it.
    let mut bytes = vec![0u8; n];
    let (front, back) = bytes.split_at_mut(n / 2);
    let read = std::thread::scope(|s| {
        let second = std::thread::Builder::new()
            .name("ori-read".into())
            .spawn_scoped(s, || f.read_exact_at(back, (n / 2) as u64))
            .ok()?;
        let first = f.read_exact_at(front, 0);
        Some(first.is_ok() && second.join().ok()?.is_ok())
    })?;
    // A file that grew since its length was taken is read in one go.
    let mut past_end = [0u8; 1];
    (read && f.read_at(&mut past_end, len).ok()? == 0).then_some(bytes)
}

#[cfg(not(unix))]
fn read_in_halves(_: &std::fs::File, _: u64) -> Option<Vec<u8>> {
    None
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
            if let Some(bytes) = read_in_halves(&f, len) {
                return Ok(bytes);
            }
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
/// that tools read every line of stderr the same way.
fn cli_error(format: MessageFormat, message: &str) {
    if matches!(format, MessageFormat::Json | MessageFormat::Sarif) {
        let d = ori::ir::Diagnostic::new(ori::ir::Severity::Error, None, message.to_string());
        // No file: a SARIF result without a location.
        print_diagnostics(&[d], "", None, format, ColorChoice::Never);
    } else {
        err_line(&format!("ori: {message}"));
    }
}

/// Print a compilation's diagnostics on stderr in `format`.
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
        err_line(&log.to_string());
        return;
    }
    let style = color.style();
    for d in diags {
        if format == MessageFormat::Ptxas && !ptxas_prints(d) {
            continue;
        }
        let line = match format {
            MessageFormat::Ptxas => render_ptxas(d),
            MessageFormat::Human => ori::report::render_human(d, source, style),
            MessageFormat::Json | MessageFormat::Sarif => render_json(d),
        };
        err_line(&line);
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

/// The input size from which `ori compile` returns the syntax tree's memory
/// to the system before the passes (about 80,000 instructions of PTX).
const TRIM_AFTER_INPUT_BYTES: usize = 4 << 20;

/// Give the memory the front end freed (the syntax tree, about a third of
/// the peak on a kernel of a million instructions) back to the system, so
/// that the passes' tables do not come on top of it: glibc keeps freed
/// small blocks in its heap, and `malloc_trim` returns their pages.
fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: glibc's malloc_trim takes no pointer and may be called at
        // any time; it only returns free pages of the heap to the system.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// The process entry on Linux: C's `main`, called by glibc's start-up code.
///
/// Rust's runtime set-up before `fn main` is mostly the stack-overflow
/// handler, whose guard-page lookup opens and parses `/proc/self/maps`:
/// 65 microseconds of a 2 ms `ori compile` on the 2-core VM of the
/// benchmarks (a quarter of ori's own start-up). What else it does is done
/// here by hand, as Rust does it: SIGPIPE is ignored (a closed pipe is a
/// write error, reported, not a silent death), and standard descriptors
/// the parent left closed are opened on `/dev/null` (so that a file ori
/// opens never becomes its standard output). A stack overflow, which ori's
/// depth limits rule out, would end the process with SIGSEGV instead of
/// Rust's message. Arguments come from glibc as usual (`std::env::args`
/// reads them from the `.init_array` hook, not from `main`).
#[cfg(all(target_os = "linux", not(test)))]
#[no_mangle]
pub extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    // SAFETY: `signal`, `poll` and `open` take plain values and a local
    // array; nothing else runs yet.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
            fd,
            events: 0,
            revents: 0,
        });
        if libc::poll(fds.as_mut_ptr(), 3, 0) >= 0 {
            for p in fds.iter().filter(|p| p.revents & libc::POLLNVAL != 0) {
                let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
                if fd >= 0 && fd != p.fd {
                    libc::dup2(fd, p.fd);
                    libc::close(fd);
                }
            }
        }
    }
    let code = entry();
    // The status `code` stands for (`ExitCode` shows it only to
    // comparisons on stable Rust), after the flush of standard output that
    // Rust's runtime would do on the way out.
    let _ = std::io::stdout().flush();
    (0..=u8::MAX)
        .find(|&k| ExitCode::from(k) == code)
        .map_or(1, std::ffi::c_int::from)
}

#[cfg(any(not(target_os = "linux"), test))]
fn main() -> ExitCode {
    entry()
}

/// What `ori` does, from either entry.
fn entry() -> ExitCode {
    ori::ptx::lower::set_reclaim_hook(return_freed_memory);
    // `ori compile`: the front end's helper thread starts while the
    // arguments are parsed and the input is read.
    if std::env::args_os().nth(1).is_some_and(|a| a == "compile") {
        ori::ptx::pipelined::warm_up();
    }
    if let Some(args) = ptxas_args() {
        return ptxas_wrapper::run(&args);
    }
    match run() {
        Ok(c) | Err(c) => c,
    }
}

/// `ori compile`'s [`ori::compile_source`], with the syntax tree's memory given back to the
/// system between the front end and the passes on a large input, and the
/// input itself too: on a kernel of a million instructions its 48 MB are a
/// tenth of the peak, which comes in phase 87, where nothing reads it.
/// Returns the input where it was kept (`None`: read it again with
/// [`read_again`] to show diagnostics on it or to write the fix-it).
fn compile_source(
    name: &str,
    src: String,
    opts: &ori::Options,
) -> (ori::Compilation, Option<String>) {
    if name.ends_with(".ori") || src.len() < TRIM_AFTER_INPUT_BYTES {
        // A small input's tree is a few pages: not worth the call (and the
        // page faults of reusing them).
        return (ori::compile_source(name, &src, opts), Some(src));
    }
    match ori::ptx_to_ir_for(name, &src, opts.arch.as_deref()) {
        Ok(m) => {
            drop(src);
            return_freed_memory();
            (ori::run_passes(m, opts), None)
        }
        Err(diags) => {
            let c = ori::Compilation {
                diags,
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

fn compile(args: CompileArgs, out: &mut Out) -> Result<ExitCode, ExitCode> {
    let CompileArgs {
        file,
        arch,
        emit,
        print_before,
        print_after,
        message_format,
        color,
        compile_only,
        isa_strict,
        maxrregcount,
        output,
    } = args;
    let pm = ori::pipeline(&ori::Options::default());
    for p in print_before.iter().chain(&print_after) {
        if !pm.knows(p) {
            cli_error(
                message_format,
                &format!("unknown pass '{p}' (see `ori passes`)"),
            );
            return Ok(ExitCode::from(2));
        }
    }
    let first = stamp(&file);
    let src = match read_input(&file) {
        Ok(s) => s,
        Err(e) => {
            cli_error(message_format, &e);
            return Ok(ExitCode::from(1));
        }
    };
    let name = std::path::Path::new(&file)
        .file_name()
        .map_or(file.clone(), |n| n.to_string_lossy().into_owned());
    let opts = ori::Options {
        arch: Some(arch),
        print_before,
        print_after,
        verify: true,
        compile_only,
        isa_strict,
        maxrregcount,
    };
    // Never freed: the process ends right after, and the OS takes the
    // memory back at once, where dropping the IR would visit every
    // instruction to free it (1% of a small Triton kernel's instructions
    // retired; clang's `-disable-free` is the same choice).
    let (c, kept) = compile_source(&name, src, &opts);
    let c = std::mem::ManuallyDrop::new(c);
    for d in &c.dumps {
        out.put(d)?;
    }
    // Spans point into PTX input only (IR text has none).
    // (Indexed by line only when there is something to show.)
    let shown = !c.diags.is_empty() || message_format == MessageFormat::Sarif;
    let needed = shown || (emit == Emit::Ptx && !c.failed());
    // A large input was dropped during the passes: read again where it is
    // needed; one that changed meanwhile shows no source lines.
    let src = kept.or_else(|| needed.then(|| read_again(&file, first)).flatten());
    let source = src
        .as_deref()
        .filter(|_| !name.ends_with(".ori") && shown)
        .map(|s| ori::report::Source::new(&file, s));
    print_diagnostics(&c.diags, &file, source.as_ref(), message_format, color);
    if c.failed() {
        return Ok(ExitCode::from(1));
    }
    let Some(m) = &c.module else {
        return Ok(ExitCode::from(1));
    };
    let text = match emit {
        Emit::None => return Ok(ExitCode::SUCCESS),
        Emit::Ir => ori::ir::write_module(m),
        Emit::Sass => ori::lower::sass::emit_module(m),
        Emit::Ptx => {
            if name.ends_with(".ori") {
                cli_error(message_format, "--emit ptx needs PTX input");
                return Ok(ExitCode::from(2));
            }
            let Some(src) = src.as_deref() else {
                cli_error(
                    message_format,
                    &format!("'{file}' changed while it was compiled: no fix-it written"),
                );
                return Ok(ExitCode::from(1));
            };
            match ori::fixit_ptx(&name, src, &c, &opts) {
                Some(t) => t,
                None => return Ok(ExitCode::from(1)),
            }
        }
    };
    write_output(output.as_deref(), &text, message_format, out)
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

    /// A large input reads the same in halves as in one go: every byte in
    /// place, an odd length, a multibyte character across the middle.
    #[test]
    fn large_inputs_read_in_halves_as_in_one_go() {
        let n = READ_IN_HALVES_FROM as usize + 7;
        let mut text: Vec<u8> = (0..n).map(|k| b'a' + (k % 26) as u8).collect();
        text[n / 2 - 1..n / 2 + 1].copy_from_slice("é".as_bytes());
        let path = std::env::temp_dir().join(format!("ori-halves-{}.ptx", std::process::id()));
        std::fs::write(&path, &text).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        let halves = read_in_halves(&f, n as u64);
        let whole = read_input(path.to_str().unwrap());
        std::fs::remove_file(&path).unwrap();
        if cfg!(unix) {
            assert!(halves.as_deref() == Some(&text[..]));
        }
        assert!(whole.unwrap().as_bytes() == &text[..]);
        // A length that is no longer the file's is read in one go.
        assert!(read_in_halves(&f, n as u64 - 1).is_none());
    }

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
