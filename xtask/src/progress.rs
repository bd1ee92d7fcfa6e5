//! Progress bars for the long tasks (oracle record/check over hundreds of
//! kernels, the benchmark): drawn on stderr when it is a terminal, hidden
//! when piped (indicatif decides), so logs and CI output stay clean.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar over `len` items of `what` (`cases`, `runs`).
pub fn bar(len: usize, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len as u64);
    let template = format!("{{bar:40}} {{pos}}/{{len}} {what} {{elapsed}} {{msg}}");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        pb.set_style(style);
    }
    pb
}
