//! `docs/performance.md`: each section is written by the bench that
//! measured it (`cargo xtask bench --vs-ptxas --doc`, `--host --doc`), with
//! the command, the commit, the machine and the date, so no figure in it is
//! typed by hand and each says where it came from.

use std::path::PathBuf;
use std::process::Command;

fn doc_path() -> PathBuf {
    crate::oracle::root().join("docs/performance.md")
}

const HEADER: &str = "# Performance\n\n\
Each section below is written by the command it names, on the machine it \
names; rerun the command to refresh it. Ratios are measured side by side, in \
one run, so that load on the machine hits both sides alike.\n";

/// The machine: logical cores and the processor's model name.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
            })
        })
        .unwrap_or_else(|| "unknown processor".into());
    format!("{cores} logical cores, {model}")
}

/// The commit measured (with `+changes` when the tree differs from it).
fn commit() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(crate::oracle::root())
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let head = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_default();
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    if dirty {
        format!("{head}+changes")
    } else {
        head
    }
}

fn today() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map_or_else(
            |_| "unknown date".into(),
            |o| String::from_utf8_lossy(&o.stdout).trim().to_string(),
        )
}

/// Replace (or add) section `name` of `docs/performance.md` with `body`,
/// measured by `command`.
pub fn write_section(name: &str, command: &str, body: &str) -> Result<(), String> {
    let path = doc_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|_| HEADER.to_string());
    let begin = format!("<!-- {name}: written by `{command}` -->");
    let end = format!("<!-- end of {name} -->");
    let section = format!(
        "{begin}\n## {name}\n\n`{command}` at commit {}, {}, on {}.\n\n{}\n{end}\n",
        commit(),
        today(),
        machine(),
        body.trim_end()
    );
    let out = match (text.find(&begin), text.find(&end)) {
        (Some(b), Some(e)) if e > b => {
            let rest = text[e + end.len()..].strip_prefix('\n').unwrap_or("");
            format!("{}{section}{rest}", &text[..b])
        }
        _ => format!("{}\n{section}", text.trim_end()),
    };
    std::fs::write(&path, out).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("{}: section '{name}' written", path.display());
    Ok(())
}
