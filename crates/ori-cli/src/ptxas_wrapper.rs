//! `ori ptxas [PTXAS ARGS...]` (also the `ori-ptxas` binary): a drop-in
//! ptxas that explains its phase-87 messages.
//!
//! Kernel authors meet ptxas's C75xx lines inside a Triton or CMake build,
//! not by running ori. This wrapper runs the ptxas its caller would have
//! run (`locate`: `ORI_PTXAS`, else the calling Triton's bundled ptxas,
//! else the first `ptxas` on `PATH` that is not this program) with the same
//! arguments, passes its standard output, standard error and exit status
//! through unchanged (`--version` answers as that ptxas), and, where ptxas
//! printed a C75xx line, adds ori's explanation of it on stderr: the
//! culprit's PTX line with its source, the rule that decided, the fix.
//! Where stderr is a log its reader throws away (Triton's), the explanation
//! also goes where the user sees it, and names a lasting copy of the PTX
//! (`sink`); `ORI_PTXAS_LOG=FILE` also appends it to FILE. ori never
//! changes what ptxas produces; an input ori cannot read only loses the
//! explanation.

mod locate;
mod sink;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use locate::ORI_PTXAS;

/// The environment variable naming a file the explanations are appended to.
pub const ORI_PTXAS_LOG: &str = "ORI_PTXAS_LOG";
/// Set by the wrapper for the ptxas it runs: finding it set means the ptxas
/// found was the wrapper again (installed as `ptxas` on `PATH`).
const ORI_PTXAS_ACTIVE: &str = "ORI_PTXAS_ACTIVE";

/// What ori needs of a ptxas command line: the PTX inputs and the options
/// that change phase 87's decisions.
#[derive(Default, Debug, PartialEq)]
struct PtxasArgs {
    inputs: Vec<PathBuf>,
    arch: Option<String>,
    maxrregcount: Option<u32>,
    compile_only: bool,
    /// The caller is Triton (the PTX is Triton's).
    by_triton: bool,
}

/// ptxas options that take a value as the next argument.
const TAKES_VALUE: &[&str] = &[
    "-o",
    "--output-file",
    "-arch",
    "--gpu-name",
    "-maxrregcount",
    "--maxrregcount",
    "-O",
    "--opt-level",
    "-e",
    "--entry",
];

fn parse_args(args: &[OsString]) -> PtxasArgs {
    let mut out = PtxasArgs::default();
    let mut k = 0;
    while k < args.len() {
        let a = args[k].to_string_lossy();
        let (key, inline) = match a.split_once('=') {
            Some((key, v)) if key.starts_with('-') => (key.to_string(), Some(v.to_string())),
            _ => (a.to_string(), None),
        };
        let mut value = || {
            inline.clone().or_else(|| {
                k += 1;
                args.get(k).map(|v| v.to_string_lossy().into_owned())
            })
        };
        match key.as_str() {
            "-arch" | "--gpu-name" => out.arch = value(),
            "-maxrregcount" | "--maxrregcount" => {
                out.maxrregcount = value().and_then(|v| v.parse().ok())
            }
            "-c" | "--compile-only" => out.compile_only = true,
            opt if TAKES_VALUE.contains(&opt) && inline.is_none() => {
                value();
            }
            file if !file.starts_with('-') && file.ends_with(".ptx") => {
                out.inputs.push(PathBuf::from(file));
            }
            _ => {}
        }
        k += 1;
    }
    out
}

/// The phase-87 code of a ptxas line (`ptxas info    : (C7517) ...`).
fn c75_code(line: &str) -> Option<u32> {
    let at = line.find("(C75")?;
    line.get(at + 2..at + 6)?.parse().ok()
}

/// Whether ptxas's `line` gives diagnostic `d`: its code and text, which
/// later ptxas releases follow with the line (`... 'matmul' in line 780`).
fn says(line: &str, d: &ori::ir::Diagnostic) -> bool {
    let head = format!("(C{}) ", d.code.unwrap_or(0));
    line.find(&head).is_some_and(|at| {
        let rest = &line[at + head.len()..];
        rest == d.message
            || rest
                .strip_prefix(d.message.as_str())
                .is_some_and(|r| r.starts_with(" in line "))
    })
}

/// The diagnostic of `diags` not yet `used` that explains ptxas's `line`:
/// the one that gives it word for word, else (a ptxas release that words
/// the message otherwise) the first with its code and its function.
fn matching(line: &str, diags: &[ori::ir::Diagnostic], used: &[bool]) -> Option<usize> {
    let code = c75_code(line)?;
    let free = |k: &usize| !used[*k] && diags[*k].code == Some(code);
    (0..diags.len())
        .filter(free)
        .find(|&k| says(line, &diags[k]))
        .or_else(|| {
            (0..diags.len()).filter(free).find(|&k| {
                let f = diags[k].function.as_deref().unwrap_or_default();
                !f.is_empty() && line.contains(&format!("'{f}'"))
            })
        })
}

/// The PTX ISA Triton's LLVM emits at most: Triton asks it for
/// `+ptx{min(90, version)}` (`backends/nvidia/compiler.py`) and writes the
/// `.version` line from the ptxas it bundles, so a Triton kernel above
/// `.version 9.0` is ISA 9.0 code under a later label.
const TRITON_LLVM_ISA: (u32, u32) = (9, 0);

/// `src` with a `.version` above Triton's LLVM ISA lowered to it (ori reads
/// what ptxas 13.0.88 reads, up to 9.0); `None` when it is not above.
fn triton_isa(src: &str) -> Option<String> {
    let at = src.find("\n.version ")? + 1;
    let end = src[at..].find('\n').map_or(src.len(), |e| at + e);
    let v = src[at + ".version ".len()..end].trim();
    let (major, minor) = v.split_once('.')?;
    let version = (major.parse::<u32>().ok()?, minor.parse::<u32>().ok()?);
    if version <= TRITON_LLVM_ISA {
        return None;
    }
    let (a, b) = TRITON_LLVM_ISA;
    Some(format!("{}.version {a}.{b}{}", &src[..at], &src[end..]))
}

/// ori's explanation of the C75xx lines ptxas printed for `input`, once
/// per style asked for (stderr's, then plain ones), from one compilation.
/// The diagnostics name a lasting copy of a temporary input (`sink`).
fn explain(
    input: &Path,
    lines: &[&str],
    a: &PtxasArgs,
    styles: &[ori::report::Style],
) -> Vec<String> {
    let src = match crate::read_input(&input.display().to_string()) {
        Ok(s) => s,
        Err(e) => return vec![format!("ori: no explanation: {e}\n"); styles.len()],
    };
    let shown = sink::lasting_copy(input, &src)
        .unwrap_or_else(|| input.to_path_buf())
        .display()
        .to_string();
    // Read Triton's PTX at the ISA its LLVM emitted (`triton_isa`).
    let src = match a.by_triton.then(|| triton_isa(&src)).flatten() {
        Some(lowered) => lowered,
        None => src,
    };
    let opts = ori::Options {
        arch: a.arch.clone(),
        compile_only: a.compile_only,
        maxrregcount: a.maxrregcount,
        ..ori::Options::default()
    };
    let c = ori::compile_ptx(&shown, &src, &opts);
    let source = crate::source_with_origins(&shown, &src, c.locs.as_ref());
    let mut out = vec![String::new(); styles.len()];
    let mut used = vec![false; c.diags.len()];
    for line in lines {
        let found = matching(line, &c.diags, &used);
        if let Some(k) = found {
            used[k] = true;
        }
        let code = c75_code(line);
        match found.map(|k| &c.diags[k]) {
            Some(d) => {
                for (o, &style) in out.iter_mut().zip(styles) {
                    o.push_str(&ori::report::render_human(d, Some(&source), style));
                    o.push_str("\n\n");
                }
            }
            None => {
                let code = code.map_or(String::new(), |c| format!("C{c}"));
                let text = format!(
                    "ori: no explanation (ori's phase 87 does not give this message here; `ori explain {code}` says what the code means): {line}\n\n"
                );
                out.iter_mut().for_each(|o| o.push_str(&text));
            }
        }
    }
    out
}

/// Run `ptxas` with `args`, passing its stdout through and its stderr
/// through as it comes; its exit status and the stderr it wrote.
fn run_ptxas(ptxas: &Path, how: &str, args: &[OsString]) -> Result<(ExitCode, Vec<u8>), ExitCode> {
    let child = Command::new(ptxas)
        .args(args)
        .env(ORI_PTXAS_ACTIVE, "1")
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = child.map_err(|e| {
        eprintln!("ori ptxas: cannot run '{}' ({how}): {e}", ptxas.display());
        ExitCode::from(127)
    })?;
    let mut captured = Vec::new();
    if let Some(mut err) = child.stderr.take() {
        let mut buf = [0u8; 8192];
        let mut stderr = std::io::stderr();
        while let Ok(n) = std::io::Read::read(&mut err, &mut buf) {
            if n == 0 {
                break;
            }
            let _ = stderr.write_all(&buf[..n]);
            captured.extend_from_slice(&buf[..n]);
        }
    }
    let status = child.wait().map_err(|e| {
        eprintln!("ori ptxas: waiting for ptxas: {e}");
        ExitCode::from(127)
    })?;
    let code = status.code().map_or(1, |c| c.clamp(0, 255) as u8);
    Ok((ExitCode::from(code), captured))
}

/// Explain the C75xx lines of ptxas's stderr `text`: on stderr, and where
/// the user sees it when stderr is discarded, and in `ORI_PTXAS_LOG`.
fn report(text: &str, a: &PtxasArgs) {
    let c75: Vec<&str> = text.lines().filter(|l| c75_code(l).is_some()).collect();
    let [input] = a.inputs.as_slice() else { return };
    if c75.is_empty() {
        return;
    }
    let log = std::env::var_os(ORI_PTXAS_LOG).filter(|l| !l.is_empty());
    let discarded = sink::stderr_is_discarded();
    let styles = [crate::ColorChoice::Auto.style(), ori::report::Style::Plain];
    let explained = explain(input, &c75, a, &styles);
    let _ = std::io::stderr().write_all(explained[0].as_bytes());
    if discarded {
        let n = c75.len();
        let s = if n == 1 { "y" } else { "ies" };
        let head = format!(
            "ori-ptxas: ptxas gave {n} C75xx advisor{s}, which its caller discards; ori explains:"
        );
        sink::write_where_seen(&head, &explained[1], a.by_triton);
    }
    if let Some(log) = log {
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .and_then(|mut f| f.write_all(explained[1].as_bytes()));
    }
}

/// Run the wrapper with ptxas's arguments; returns ptxas's exit status.
pub fn run(args: &[OsString]) -> ExitCode {
    if std::env::var_os(ORI_PTXAS_ACTIVE).is_some() {
        eprintln!(
            "ori ptxas: the ptxas found runs ori ptxas again; set {ORI_PTXAS} to the real ptxas"
        );
        return ExitCode::from(127);
    }
    let a = parse_args(args);
    let argv0 = std::env::args_os().next().unwrap_or_default();
    let mut a = a;
    let Some((ptxas, how)) = locate::real_ptxas(&argv0, a.arch.as_deref()) else {
        eprintln!("ori ptxas: no ptxas to run: set {ORI_PTXAS} to its path or put it on PATH");
        return ExitCode::from(127);
    };
    a.by_triton = how == locate::TRITON;
    match run_ptxas(&ptxas, how, args) {
        Ok((code, captured)) => {
            report(&String::from_utf8_lossy(&captured), &a);
            code
        }
        Err(code) => code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn reads_what_phase_87_depends_on() {
        let a = parse_args(&os(&[
            "-lineinfo",
            "-v",
            "--gpu-name",
            "sm_90a",
            "/tmp/k.ptx",
            "-o",
            "/tmp/k.ptx.o",
        ]));
        assert_eq!(a.inputs, vec![PathBuf::from("/tmp/k.ptx")]);
        assert_eq!(a.arch.as_deref(), Some("sm_90a"));
        let a = parse_args(&os(&["-arch=sm_90a", "-maxrregcount=128", "-c", "k.ptx"]));
        assert_eq!(a.arch.as_deref(), Some("sm_90a"));
        assert_eq!(a.maxrregcount, Some(128));
        assert!(a.compile_only);
        assert_eq!(a.inputs, vec![PathBuf::from("k.ptx")]);
        // `-g` (`--device-debug`) is a flag: the file after it is the input.
        let a = parse_args(&os(&["-g", "k.ptx"]));
        assert_eq!(a.inputs, vec![PathBuf::from("k.ptx")]);
        // `-o x.ptx` names an output, not an input.
        let a = parse_args(&os(&["k.ptx", "-o", "out.ptx"]));
        assert_eq!(a.inputs, vec![PathBuf::from("k.ptx")]);
    }

    #[test]
    fn reads_tritons_ptx_at_its_llvm_isa() {
        let src = "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 9.4\n.target sm_90a\n";
        let lowered = triton_isa(src).unwrap();
        assert_eq!(lowered, src.replace(".version 9.4", ".version 9.0"));
        assert_eq!(triton_isa(&lowered), None);
        assert_eq!(triton_isa("\n.version 8.7\n.target sm_90a\n"), None);
    }

    #[test]
    fn matches_later_ptxas_lines() {
        let d = ori::ir::Diagnostic::new(
            ori::ir::Severity::Info,
            Some(7511),
            "serialized in the function 'matmul'",
        );
        let line = "ptxas info    : (C7511) serialized in the function 'matmul'";
        assert!(says(line, &d));
        assert!(says(&format!("{line} in line 780"), &d));
        assert!(!says(&format!("{line}x"), &d));
    }

    #[test]
    fn matches_by_code_and_function_when_worded_otherwise() {
        let mut d = ori::ir::Diagnostic::new(
            ori::ir::Severity::Info,
            Some(7517),
            "warpgroup.wait is injected in around line 484 by compiler to allow use of registers defined by GMMA in function 'matmul'",
        );
        d.function = Some("matmul".into());
        let diags = [d];
        let later = "ptxas-blackwell info    : (C7517) wgmma.wait_group is injected in around line 484 by compiler to allow use of registers defined by GMMA in function 'matmul'";
        assert_eq!(matching(later, &diags, &[false]), Some(0));
        assert_eq!(matching(later, &diags, &[true]), None);
        let other = later.replace("'matmul'", "'other'");
        assert_eq!(matching(&other, &diags, &[false]), None);
    }

    #[test]
    fn finds_the_code() {
        assert_eq!(
            c75_code("ptxas info    : (C7517) warpgroup.wait is injected"),
            Some(7517)
        );
        assert_eq!(c75_code("ptxas info    : Used 90 registers"), None);
    }
}
