//! The shape of a corpus case that decides which agreement figures count it.
//!
//! Issue #7's SASS target is measured on the cases without loops or calls:
//! ptxas unrolls loops and inlines callees before it prints SASS, and ori
//! does neither, so the sync skeletons of those cases are not the lowering's
//! to match. A loop is a branch to a label defined earlier in the same
//! function; a call is any `call` instruction.

/// Whether the PTX text has a backward branch or a call.
pub fn has_loop_or_call(ptx: &str) -> bool {
    let mut labels: Vec<&str> = Vec::new();
    for raw in ptx.lines() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.starts_with('}') {
            labels.clear();
        }
        if let Some(l) = line.strip_suffix(':') {
            labels.push(l.trim());
            continue;
        }
        let body = match line.strip_prefix('@') {
            Some(rest) => rest.split_once(char::is_whitespace).map_or("", |(_, b)| b),
            None => line,
        }
        .trim_start();
        let mnemonic = body.split(|c: char| c.is_whitespace()).next().unwrap_or("");
        if mnemonic == "call" || mnemonic.starts_with("call.") {
            return true;
        }
        if mnemonic == "bra" || mnemonic.starts_with("bra.") {
            let target = body[mnemonic.len()..].trim().trim_end_matches(';').trim();
            if labels.contains(&target) {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::has_loop_or_call;

    #[test]
    fn finds_back_edges_and_calls_only() {
        assert!(has_loop_or_call(
            "{\nL1:\n  add.s32 r1, r1, 1;\n  @p bra L1;\n}"
        ));
        assert!(has_loop_or_call("{\n  call f, (a);\n}"));
        assert!(!has_loop_or_call(
            "{\n  @p bra L1;\n  add.s32 r1, r1, 1;\nL1:\n  ret;\n}"
        ));
        // A label of an earlier function does not make a loop.
        assert!(!has_loop_or_call(
            "{\nL1:\n ret;\n}\n{\n  bra L1;\nL1:\n ret;\n}"
        ));
    }
}
