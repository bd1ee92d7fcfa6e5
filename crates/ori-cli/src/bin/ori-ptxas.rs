//! `ori-ptxas`: `ori ptxas` as a program of its own, for build systems that
//! take a path to a ptxas (`TRITON_PTXAS_PATH=.../ori-ptxas`). It runs the
//! `ori` binary beside it under its own name, so the two stay one program
//! with one set of behaviours: `ori` started as `ori-ptxas` is the wrapper.
//! On Unix it replaces itself with `ori` (one process, as the caller's
//! ptxas would be: signals, the parent process and the exit status are
//! the caller's own); elsewhere it waits for it.

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
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_else(|| "ori-ptxas".into());
    // `ori` started under a ptxas name is the wrapper; under another name
    // it is told so (`ori ptxas ARGS`).
    let stem = std::path::Path::new(&argv0).file_stem();
    let ptxas_name = stem.is_some_and(|s| s == "ori-ptxas" || s == "ptxas");
    let mut cmd = Command::new(&ori);
    if !(cfg!(unix) && ptxas_name) {
        cmd.arg("ptxas");
    }
    cmd.args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // The caller's spelling of this program's path, which the wrapper
        // compares with `TRITON_PTXAS_PATH`.
        if ptxas_name {
            cmd.arg0(&argv0);
        }
        let e = cmd.exec();
        eprintln!("ori-ptxas: cannot run '{}': {e}", ori.display());
        ExitCode::from(127)
    }
    #[cfg(not(unix))]
    {
        match cmd.status() {
            Ok(s) => ExitCode::from(s.code().map_or(1, |c| c.clamp(0, 255) as u8)),
            Err(e) => {
                eprintln!("ori-ptxas: cannot run '{}': {e}", ori.display());
                ExitCode::from(127)
            }
        }
    }
}
