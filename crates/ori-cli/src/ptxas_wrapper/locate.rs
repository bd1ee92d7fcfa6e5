//! Which ptxas the wrapper runs: the one its caller would have run.
//!
//! A drop-in must not change the user's compiler. Triton runs the ptxas it
//! bundles (`triton/backends/nvidia/bin/ptxas`, and `ptxas-blackwell` in
//! later releases) unless `TRITON_PTXAS_PATH` (`TRITON_PTXAS_BLACKWELL_PATH`)
//! names another; when that variable names the wrapper, the ptxas Triton
//! would have run is its bundled one, whatever `PATH` holds. The wrapper
//! finds that Triton in the process that runs it: a Python process that
//! imported Triton has mapped `triton/_C/libtriton.so`, and the package
//! folder is two levels above it. In order, the wrapper runs:
//!
//! 1. `ORI_PTXAS`, when set;
//! 2. when its parent process loaded Triton: that Triton's bundled ptxas,
//!    `ptxas` or `ptxas-blackwell` as that Triton release picks one for the
//!    target (`--gpu-name`; for `--version`, by the variable that names the
//!    wrapper);
//! 3. the first `ptxas` on `PATH` that is not the wrapper itself.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment variable naming the real ptxas.
pub const ORI_PTXAS: &str = "ORI_PTXAS";
/// How the wrapper found the ptxas of a Triton that called it.
pub const TRITON: &str = "the calling Triton's bundled ptxas";

/// The Triton package folder of process `pid`, from the shared objects it
/// mapped (Linux `/proc`).
fn triton_of(pid: u32) -> Option<PathBuf> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    maps.lines()
        .filter_map(|l| l.find('/').map(|at| &l[at..]))
        .find(|p| p.ends_with("/triton/_C/libtriton.so"))
        .and_then(|p| Path::new(p).parent()?.parent().map(Path::to_path_buf))
}

/// The parent of process `pid` (`/proc/PID/stat`'s fourth field; the
/// command name, the second, is parenthesized and may hold spaces).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// The Triton that runs this process: the nearest of a few ancestors
/// (Triton's Python process, or a shell script between it and us).
#[cfg(target_os = "linux")]
fn calling_triton() -> Option<PathBuf> {
    let mut pid = std::os::unix::process::parent_id();
    for _ in 0..4 {
        if let Some(t) = triton_of(pid) {
            return Some(t);
        }
        pid = parent_of(pid).filter(|&p| p > 1)?;
    }
    None
}

/// Without `/proc` the calling Triton is unknown: `ORI_PTXAS` or `PATH`.
#[cfg(not(target_os = "linux"))]
fn calling_triton() -> Option<PathBuf> {
    None
}

/// Whether environment variable `var` names this program (`argv0` is the
/// path the caller ran, which Triton takes from that variable).
fn names_me(var: &str, argv0: &Path) -> bool {
    let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) else {
        return false;
    };
    let v = PathBuf::from(v);
    v == argv0
        || v.canonicalize()
            .ok()
            .is_some_and(|c| argv0.canonicalize().ok() == Some(c))
}

/// The compute capability of `--gpu-name=sm_100a` (100).
fn capability(arch: Option<&str>) -> Option<u32> {
    let digits: String = arch?
        .strip_prefix("sm_")?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The release of the Triton at `triton` (`__version__ = '3.9.0'` in its
/// `__init__.py`), as (major, minor).
fn triton_release(triton: &Path) -> Option<(u32, u32)> {
    let init = std::fs::read_to_string(triton.join("__init__.py")).ok()?;
    let line = init.lines().find(|l| l.starts_with("__version__"))?;
    let v = line.split(['\'', '"']).nth(1)?;
    let mut parts = v.split('.').map(|p| p.parse::<u32>().ok());
    Some((parts.next()??, parts.next()??))
}

/// The first compute capability that Triton `release` compiles with its
/// `ptxas-blackwell` (`backends/nvidia/compiler.py`, `get_ptxas`): sm_100
/// from 3.6 on, sm_90 from 3.9 on.
fn blackwell_from(release: Option<(u32, u32)>) -> u32 {
    if release.is_some_and(|r| r >= (3, 9)) {
        90
    } else {
        100
    }
}

/// The bundled ptxas of the Triton at `triton` for this call.
fn bundled(triton: &Path, argv0: &Path, arch: Option<&str>) -> Option<PathBuf> {
    let via = Via {
        blackwell: names_me("TRITON_PTXAS_BLACKWELL_PATH", argv0),
        plain: names_me("TRITON_PTXAS_PATH", argv0),
    };
    let from = blackwell_from(triton_release(triton));
    choose(&triton.join("backends/nvidia/bin"), from, via, arch)
}

/// Which of Triton's variables name the wrapper.
#[derive(Clone, Copy)]
struct Via {
    blackwell: bool,
    plain: bool,
}

/// Triton's bundled ptxas in `bin`: `ptxas-blackwell` for targets from
/// capability `from` on, as Triton picks it; for a call that names no
/// target (`--version`), the one whose variable names the wrapper, and
/// where both do, the one Triton runs for sm_90.
fn choose(bin: &Path, from: u32, via: Via, arch: Option<&str>) -> Option<PathBuf> {
    let blackwell = bin.join("ptxas-blackwell");
    let use_bw = match capability(arch) {
        Some(c) => c >= from,
        None => via.blackwell && (!via.plain || from <= 90),
    };
    let chosen = if use_bw && blackwell.is_file() {
        blackwell
    } else {
        bin.join("ptxas")
    };
    chosen.is_file().then_some(chosen)
}

/// The first `ptxas` on `PATH` that is not this executable.
fn on_path() -> Option<PathBuf> {
    let me = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok());
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join("ptxas"))
        .filter(|p| p.is_file())
        .find(|p| p.canonicalize().ok() != me)
}

/// The real ptxas for a call with `argv0` and target `arch`, and how it was
/// found (for the error when it cannot run).
pub fn real_ptxas(argv0: &OsString, arch: Option<&str>) -> Option<(PathBuf, &'static str)> {
    if let Some(p) = std::env::var_os(ORI_PTXAS).filter(|p| !p.is_empty()) {
        return Some((PathBuf::from(p), ORI_PTXAS));
    }
    let argv0 = Path::new(argv0);
    if let Some(p) = calling_triton().and_then(|t| bundled(&t, argv0, arch)) {
        return Some((p, TRITON));
    }
    on_path().map(|p| (p, "PATH"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_capability() {
        assert_eq!(capability(Some("sm_90a")), Some(90));
        assert_eq!(capability(Some("sm_100a")), Some(100));
        assert_eq!(capability(Some("compute_90")), None);
        assert_eq!(capability(None), None);
    }

    #[test]
    fn chooses_what_triton_would_run() {
        let dir = std::env::temp_dir().join(format!("ori-locate-test-{}", std::process::id()));
        let bin = dir.join("backends/nvidia/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let plain = bin.join("ptxas");
        let bw = bin.join("ptxas-blackwell");
        std::fs::write(&plain, "").unwrap();
        let both = Via {
            blackwell: true,
            plain: true,
        };
        let only_bw = Via {
            blackwell: true,
            plain: false,
        };
        let (sm90, sm100) = (Some("sm_90a"), Some("sm_100a"));
        // Triton 3.5 bundles no ptxas-blackwell.
        std::fs::write(
            dir.join("__init__.py"),
            "import os\n__version__ = '3.5.0'\n",
        )
        .unwrap();
        assert_eq!(triton_release(&dir), Some((3, 5)));
        assert_eq!(choose(&bin, 100, only_bw, sm100), Some(plain.clone()));
        std::fs::write(&bw, "").unwrap();
        // 3.6 to 3.8: ptxas-blackwell from sm_100 on; 3.9: from sm_90 on.
        assert_eq!(blackwell_from(Some((3, 8))), 100);
        assert_eq!(blackwell_from(Some((3, 9))), 90);
        assert_eq!(blackwell_from(None), 100);
        assert_eq!(choose(&bin, 100, both, sm90), Some(plain.clone()));
        assert_eq!(choose(&bin, 100, both, sm100), Some(bw.clone()));
        assert_eq!(choose(&bin, 90, both, sm90), Some(bw.clone()));
        // `--version`: the variable that names the wrapper decides.
        assert_eq!(choose(&bin, 100, only_bw, None), Some(bw.clone()));
        assert_eq!(choose(&bin, 100, both, None), Some(plain.clone()));
        assert_eq!(choose(&bin, 90, both, None), Some(bw.clone()));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(choose(&bin, 100, both, sm90), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn reads_its_own_parent() {
        let me = std::process::id();
        assert_eq!(parent_of(me), Some(std::os::unix::process::parent_id()));
    }
}
