//! Where the wrapper's explanations go, and the PTX they point at.
//!
//! Triton runs ptxas with its standard error redirected to a temporary log
//! file that it deletes once the compile succeeds, and with its input in a
//! temporary `.ptx` file it deletes too: an explanation written to stderr
//! and naming that file would reach no one. So:
//!
//! - stderr that is a regular file in the temporary folder is taken as a
//!   log the caller throws away: the explanation still goes there (Triton
//!   prints that log on failure and with `TRITON_DUMP_PTXAS_LOG=1`), and
//!   also to the terminal (`/dev/tty`) when the process has one, else to
//!   one log file of ori's cache folder (`ptxas.log`) and, when the caller
//!   is Triton, which passes ptxas's standard output through to its own,
//!   to standard output with the log file's name;
//! - an input in the temporary folder is copied, once per content, to a
//!   lasting place first: beside the kernel in Triton's cache when the
//!   same PTX is there (Triton stores each stage before it runs the next),
//!   else into ori's cache folder; the explanation names that copy.
//!
//! ori's cache folder is `ORI_CACHE_DIR`, else `$XDG_CACHE_HOME/ori`, else
//! `~/.cache/ori`.

use std::path::{Path, PathBuf};

/// ori's cache folder.
pub fn cache_dir() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("ORI_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("ori")))
        .or_else(|| var("HOME").map(|d| d.join(".cache/ori")))
}

/// Whether `path` lies in the temporary folder (`TMPDIR`, else `/tmp`).
fn is_temporary(path: &Path) -> bool {
    let tmp = std::env::temp_dir();
    let tmp = tmp.canonicalize().unwrap_or(tmp);
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    path.starts_with(&tmp)
}

/// Whether standard error is a temporary file its reader will throw away.
pub fn stderr_is_discarded() -> bool {
    let Ok(target) = std::fs::read_link("/proc/self/fd/2") else {
        return false;
    };
    std::fs::metadata(&target).is_ok_and(|m| m.is_file()) && is_temporary(&target)
}

/// FNV-1a, 64 bits: a stable name for a PTX text.
fn digest(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The kernel's name (`.entry NAME`), for the copy's file name.
fn entry_name(src: &str) -> Option<&str> {
    let at = src.find(".entry")? + ".entry".len();
    let name = src[at..].trim_start();
    let end = name.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))?;
    (end > 0).then(|| &name[..end])
}

/// Triton's cache folder (`TRITON_CACHE_DIR`, else `TRITON_HOME` or the
/// home folder, then `.triton/cache`).
fn triton_cache() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("TRITON_CACHE_DIR").or_else(|| {
        Some(
            var("TRITON_HOME")
                .or_else(|| var("HOME"))?
                .join(".triton/cache"),
        )
    })
}

/// The same PTX in Triton's cache: `CACHE/*/NAME.ptx` with these bytes.
fn in_triton_cache(name: &str, src: &str) -> Option<PathBuf> {
    let file = format!("{name}.ptx");
    std::fs::read_dir(triton_cache()?)
        .ok()?
        .flatten()
        .map(|e| e.path().join(&file))
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() == src.len() as u64))
        .find(|p| std::fs::read(p).is_ok_and(|b| b == src.as_bytes()))
}

/// A lasting path for the PTX `src` read from `input`: `input` itself
/// unless it is a temporary file; `None` when no copy could be written.
pub fn lasting_copy(input: &Path, src: &str) -> Option<PathBuf> {
    if !is_temporary(input) {
        return Some(input.to_path_buf());
    }
    let name = entry_name(src).unwrap_or("kernel");
    if let Some(p) = in_triton_cache(name, src) {
        return Some(p);
    }
    let dir = cache_dir()?.join("ptx");
    let path = dir.join(format!("{name}-{:016x}.ptx", digest(src.as_bytes())));
    if !path.is_file() {
        std::fs::create_dir_all(&dir).ok()?;
        // Written aside and renamed: a concurrent compile of the same
        // kernel never sees half a file.
        let part = dir.join(format!(
            ".{}.{}",
            std::process::id(),
            digest(name.as_bytes())
        ));
        std::fs::write(&part, src).ok()?;
        std::fs::rename(&part, &path).ok()?;
    }
    Some(path)
}

/// Where the explanation goes besides stderr when stderr is discarded:
/// the terminal; else ori's `ptxas.log` (appended, never truncated) and,
/// for a Triton caller, standard output too, which Triton leaves to its
/// own (a job's log, a notebook's cell), naming the log file.
pub fn write_where_seen(head: &str, body: &str, by_triton: bool) {
    use std::io::Write;
    let tty = std::fs::OpenOptions::new().write(true).open("/dev/tty");
    if let Ok(mut t) = tty {
        if t.write_all(format!("{head}\n{body}").as_bytes()).is_ok() {
            return;
        }
    }
    let Some(dir) = cache_dir() else { return };
    let log = dir.join("ptxas.log");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .and_then(|mut f| f.write_all(format!("{head}\n{body}").as_bytes()));
    if by_triton {
        let text = format!("{head} (kept in {})\n{body}", log.display());
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_kernel() {
        let ptx = ".version 8.7\n.visible .entry matmul_kernel(\n\t.param .u64 a\n)\n{\n}\n";
        assert_eq!(entry_name(ptx), Some("matmul_kernel"));
        assert_eq!(entry_name(".version 8.7\n"), None);
    }

    #[test]
    fn digest_is_fnv1a() {
        // FNV-1a's published test vectors.
        assert_eq!(digest(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(digest(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
