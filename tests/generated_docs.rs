//! The generated documents are current: `docs/accuracy.md` and the README's
//! figures are what `cargo xtask docs` writes from the corpora on disk now
//! (`docs/rules.md` is checked by `tests/rule_table.rs`, which runs the
//! rules over the corpora anyway).

use ori_oracle::accuracy;
use std::path::Path;

#[test]
fn accuracy_doc_and_readme_figures_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tests = root.join("tests");
    let doc = std::fs::read_to_string(root.join("docs/accuracy.md")).unwrap_or_default();
    assert!(
        doc == accuracy::render_doc(&tests),
        "docs/accuracy.md is stale: run `cargo xtask docs`"
    );
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let fresh = accuracy::splice(
        &readme,
        accuracy::README_BEGIN,
        accuracy::README_END,
        &accuracy::readme_figures(&tests),
    );
    assert!(
        fresh.as_deref() == Some(readme.as_str()),
        "README.md's figures are stale or their markers are missing: run `cargo xtask docs`"
    );
}
