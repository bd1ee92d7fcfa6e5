//! What `ori run` tells its user when the kernel has run: the sanitizer's
//! hazards (each site once, with both lines), the error that stopped the
//! run, and a summary line, as human text on stderr or as JSON lines on
//! stdout (`--message-format json`, as `ori compile`'s); and the exit
//! status that sums them up.
//!
//! Exit statuses (documented in `docs/sanitizer.md`):
//!
//! | status | meaning |
//! |---|---|
//! | 0 | the kernel ran to its end; no hazard |
//! | 1 | an input is wrong (a file, a parameter value, a kernel that does not compile, a launch that does not fit the kernel) |
//! | 2 | the command line is wrong |
//! | 3 | the kernel could not run to its end (an instruction the host backend does not run, an access outside memory, a null pointer, a deadlock, the step limit) |
//! | 4 | the sanitizer found hazards (the kernel ran to its end and its outputs were written, or `--stop-on-hazard` stopped it at the first) |

use ori::host::{Fault, Hazard, HostError, RunStats};
use serde_json::json;
use std::process::ExitCode;

/// The kernel ran to its end with no hazard.
pub const CLEAN: u8 = 0;
/// The kernel could not run to its end.
pub const COULD_NOT_RUN: u8 = 3;
/// The sanitizer found hazards.
pub const HAZARDS: u8 = 4;

/// How to print (the JSON layout's `version` is the first field of each
/// object, as in `ori compile`'s JSON).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
}

impl Format {
    /// The layout `--message-format` asks for (SARIF has no place for a
    /// run's reports: JSON lines; ptxas prints none: human).
    pub fn of(m: crate::MessageFormat) -> Format {
        match m {
            crate::MessageFormat::Json | crate::MessageFormat::Sarif => Format::Json,
            crate::MessageFormat::Human | crate::MessageFormat::Ptxas => Format::Human,
        }
    }
}

/// The version of `ori run`'s JSON objects.
const VERSION: u32 = 1;

/// One hazard: as text on stderr, as JSON on stdout.
pub fn hazard(format: Format, file: &str, h: &Hazard) {
    match format {
        Format::Human => {
            let mut text = format!(
                "{file}:{}: warning[{}]: {}",
                h.line,
                h.kind.name(),
                h.message
            );
            let [x, y, z] = h.cta;
            text.push_str(&format!("\n  = in CTA ({x},{y},{z}), thread {}", h.thread));
            if let Some(o) = h.other_thread {
                text.push_str(&format!(" (the other access: thread {o})"));
            }
            if let Some(a) = h.addr {
                text.push_str(&format!(", shared address {a:#x}"));
            }
            if h.other_line > 0 {
                text.push_str(&format!(
                    "\n  = note: {file}:{}: the other access",
                    h.other_line
                ));
            }
            eprintln!("{text}");
        }
        Format::Json => println!(
            "{}",
            json!({
                "version": VERSION,
                "type": "hazard",
                "kind": h.kind.name(),
                "message": h.message,
                "file": file,
                "line": h.line,
                "other_line": (h.other_line > 0).then_some(h.other_line),
                "cta": h.cta,
                "thread": h.thread,
                "other_thread": h.other_thread,
                "address": h.addr,
            })
        ),
    }
}

/// The error that stopped the run, after the hazards found before it;
/// the exit status.
pub fn error(format: Format, file: &str, e: &HostError) -> ExitCode {
    for h in &e.hazards {
        hazard(format, file, h);
    }
    let code = match &e.fault {
        Fault::Hazard(h) => {
            hazard(format, file, h);
            HAZARDS
        }
        // The launch does not fit the kernel: an input error.
        Fault::Launch(_) => 1,
        _ => COULD_NOT_RUN,
    };
    match (format, &e.fault) {
        (_, Fault::Hazard(_)) => {}
        (Format::Human, _) if e.line > 0 => eprintln!("error: {file}:{}: {}", e.line, e.message),
        (Format::Human, _) => eprintln!("error: {file}: {}", e.message),
        (Format::Json, f) => println!(
            "{}",
            json!({
                "version": VERSION,
                "type": "error",
                "fault": f.name(),
                "message": e.message,
                "file": file,
                "line": (e.line > 0).then_some(e.line),
                "cta": e.cta,
            })
        ),
    }
    summary_line(
        format,
        file,
        None,
        e.hazards.len() + usize::from(code == HAZARDS),
        code,
    );
    ExitCode::from(code)
}

/// A finished run: its hazards and the summary; the exit status.
pub fn finished(format: Format, file: &str, ran: Ran<'_>) -> ExitCode {
    let stats = ran.stats;
    for h in &stats.hazards {
        hazard(format, file, h);
    }
    let code = if stats.hazards.is_empty() {
        CLEAN
    } else {
        HAZARDS
    };
    summary_line(format, file, Some(ran), stats.hazards.len(), code);
    ExitCode::from(code)
}

/// A run that finished: its kernel, figures and time.
#[derive(Clone, Copy)]
pub struct Ran<'a> {
    pub kernel: &'a str,
    pub stats: &'a RunStats,
    pub ctas: u64,
    pub secs: f64,
}

/// The line that ends the run's report.
fn summary_line(format: Format, file: &str, ran: Option<Ran<'_>>, hazards: usize, code: u8) {
    match format {
        Format::Human => {
            if let Some(r) = ran {
                let s = r.stats;
                eprintln!(
                    "ori run: {} ran {} CTA(s): {} warpgroup steps, {} wgmma, {} groups retired, {:.2} s",
                    r.kernel, r.ctas, s.steps, s.wgmma, s.groups_retired, r.secs
                );
            }
            if hazards > 0 {
                eprintln!(
                    "ori run: the sanitizer found {hazards} hazard(s), each site reported once (exit status {code})"
                );
            }
        }
        Format::Json => println!(
            "{}",
            json!({
                "version": VERSION,
                "type": "summary",
                "file": file,
                "kernel": ran.map(|r| r.kernel),
                "completed": ran.is_some(),
                "ctas": ran.map(|r| r.ctas),
                "steps": ran.map(|r| r.stats.steps),
                "wgmma": ran.map(|r| r.stats.wgmma),
                "hazards": hazards,
                "exit_status": code,
            })
        ),
    }
}
