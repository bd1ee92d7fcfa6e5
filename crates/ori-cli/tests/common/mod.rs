//! What the CLI tests share: running the `ori` binary.

use std::process::Command;

/// Run `ori ARGS...`: exit status, stdout, stderr.
pub fn ori(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ori"))
        .args(args)
        .output()
        .expect("run ori");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
