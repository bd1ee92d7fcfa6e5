//! `ori-ptxas`: `ori ptxas` as a program of its own, for build systems that
//! take a path to a ptxas (`TRITON_PTXAS_PATH=.../ori-ptxas`). It runs the
//! `ori` binary beside it as `ori ptxas ARGS...`, so the two stay one
//! program with one set of behaviours.

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let me = std::env::current_exe().ok();
    let ori = me
        .as_ref()
        .and_then(|p| p.parent())
        .map(|d| d.join(format!("ori{}", std::env::consts::EXE_SUFFIX)))
        .filter(|p| p.is_file());
    let Some(ori) = ori else {
        eprintln!("ori-ptxas: no `ori` binary beside this one");
        return ExitCode::from(127);
    };
    match Command::new(&ori)
        .arg("ptxas")
        .args(std::env::args_os().skip(1))
        .status()
    {
        Ok(s) => ExitCode::from(s.code().map_or(1, |c| c.clamp(0, 255) as u8)),
        Err(e) => {
            eprintln!("ori-ptxas: cannot run '{}': {e}", ori.display());
            ExitCode::from(127)
        }
    }
}
