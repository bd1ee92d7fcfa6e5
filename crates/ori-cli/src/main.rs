//! `ori`: the command-line driver.
//!
//! `ori compile FILE` runs a PTX (or `.ori` IR) file through the front end
//! and phases 85/87, prints diagnostics to stderr in ptxas's, a human or a
//! JSON layout, and emits IR, SASS-like text or PTX. `ori passes` lists the
//! pipeline. Exit status: 0 compiled, 1 input error, 2 usage error.

use clap::{Parser, Subcommand, ValueEnum};
use ori::ir::render::{ptxas_prints, render_human, render_json, render_ptxas};
use std::process::ExitCode;

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

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum Emit {
    Ir,
    Sass,
    Ptx,
    None,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum MessageFormat {
    Ptxas,
    Human,
    Json,
}

#[derive(Subcommand)]
enum Cmd {
    /// Compile a PTX (.ptx) or IR (.ori) file.
    Compile {
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
    },
    /// List the pass pipeline: phase number and name.
    Passes,
}

fn main() -> ExitCode {
    // ptxas spells long options with one dash (`-arch=sm_90`, `-maxrregcount=64`); accept both.
    let args = std::env::args().map(|a| match a.split_once('=') {
        Some((k @ ("-arch" | "-maxrregcount"), v)) => format!("-{k}={v}"),
        _ if a == "-arch" || a == "-maxrregcount" => format!("-{a}"),
        _ => a,
    });
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match cli.cmd {
        Cmd::Passes => {
            for (phase, name) in ori::pipeline(&ori::Options::default()).pipeline() {
                println!("{phase} {name}");
            }
            ExitCode::SUCCESS
        }
        Cmd::Compile {
            file,
            arch,
            emit,
            print_before,
            print_after,
            message_format,
            compile_only,
            isa_strict,
            maxrregcount,
            output,
        } => {
            let pm = ori::pipeline(&ori::Options::default());
            for p in print_before.iter().chain(&print_after) {
                if !pm.knows(p) {
                    eprintln!("ori: unknown pass '{p}' (see `ori passes`)");
                    return ExitCode::from(2);
                }
            }
            let src = match std::fs::read(&file) {
                Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                Err(e) => {
                    eprintln!("ori: cannot read '{file}': {e}");
                    return ExitCode::from(1);
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
            let c = ori::compile_source(&name, &src, &opts);
            for d in &c.dumps {
                print!("{d}");
            }
            for d in &c.diags {
                if message_format == MessageFormat::Ptxas && !ptxas_prints(d) {
                    continue;
                }
                let line = match message_format {
                    MessageFormat::Ptxas => render_ptxas(d),
                    MessageFormat::Human => render_human(d),
                    MessageFormat::Json => render_json(d),
                };
                eprintln!("{line}");
            }
            if c.failed() {
                return ExitCode::from(1);
            }
            let Some(m) = &c.module else {
                return ExitCode::from(1);
            };
            let text = match emit {
                Emit::None => return ExitCode::SUCCESS,
                Emit::Ir => ori::ir::write_module(m),
                Emit::Sass => ori::lower::sass::emit_module(m),
                Emit::Ptx => {
                    if name.ends_with(".ori") {
                        eprintln!("ori: --emit ptx needs PTX input");
                        return ExitCode::from(2);
                    }
                    match ori::fixit_ptx(&name, &src, &c) {
                        Some(t) => t,
                        None => return ExitCode::from(1),
                    }
                }
            };
            match output {
                Some(path) => {
                    if let Err(e) = std::fs::write(&path, text) {
                        eprintln!("ori: cannot write '{path}': {e}");
                        return ExitCode::from(1);
                    }
                }
                None => print!("{text}"),
            }
            ExitCode::SUCCESS
        }
    }
}
