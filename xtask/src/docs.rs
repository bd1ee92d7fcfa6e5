//! `cargo xtask docs [--check]`: the documents whose figures come from the
//! files on disk and from running ori over the corpora.
//!
//! * `docs/rules.md`: phase 87's rules and the cases each decides
//!   (`ori::rule_table`);
//! * `docs/accuracy.md`: agreement with ptxas per corpus and family, and the
//!   GPU recordings `ori run` is checked against (`ori_oracle::accuracy`);
//! * the figures table of `README.md`, between its markers.
//!
//! `tests/generated_docs.rs` and `tests/rule_table.rs` fail when one of
//! them is stale; `--check` says the same without writing.

use ori_oracle::accuracy;
use std::path::Path;
use std::process::ExitCode;

/// Each generated document: its path under the repository and its text now.
fn documents(root: &Path) -> Result<Vec<(&'static str, String)>, String> {
    let tests = root.join("tests");
    let decided = ori::rule_table::decided_cases(&tests);
    let readme_path = root.join("README.md");
    let readme = std::fs::read_to_string(&readme_path)
        .map_err(|e| format!("{}: {e}", readme_path.display()))?;
    let figures = accuracy::readme_figures(&tests);
    let readme = accuracy::splice(
        &readme,
        accuracy::README_BEGIN,
        accuracy::README_END,
        &figures,
    )
    .ok_or("README.md has no figures section (its markers are missing)")?;
    Ok(vec![
        ("docs/rules.md", ori::rule_table::render_doc(&decided)),
        ("docs/accuracy.md", accuracy::render_doc(&tests)),
        ("README.md", readme),
    ])
}

/// Write (or with `check`, compare) every generated document.
pub fn run(args: &[&str]) -> Result<ExitCode, String> {
    let check = match args {
        [] => false,
        ["--check"] => true,
        _ => return Err("usage: cargo xtask docs [--check]".into()),
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut stale = false;
    for (path, text) in documents(&root)? {
        let full = root.join(path);
        let old = std::fs::read_to_string(&full).unwrap_or_default();
        if old == text {
            println!("{path}: up to date");
        } else if check {
            println!("{path}: stale (run `cargo xtask docs`)");
            stale = true;
        } else {
            std::fs::write(&full, text).map_err(|e| format!("{path}: {e}"))?;
            println!("{path}: written");
        }
    }
    Ok(if stale {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
