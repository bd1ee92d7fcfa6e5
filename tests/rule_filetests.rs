//! Phase 87's rules, one small `.ori` file each (`tests/rules/*.ori`), in the
//! manner of Cranelift's filetests: the input and the expected decisions in
//! one file.
//!
//! ```text
//! ; rule: R-read-before-rmw
//! ; oracle: corpus/c7517_c7519_add_read_then_rmw_between_mma
//! ; expect: arrive at line 29 (R-arrive-after-write)
//! ; expect: wait at line 27 (R-read-before-rmw)
//! ```
//!
//! A `; flags:` line gives the oracle case's ptxas flags (`-c`, `-maxrregcount=N`).
//!
//! The decisions (`Function::decisions`, as `--print-after` prints them)
//! must be exactly the `expect` lines, in order, and the rule named by
//! `rule` must be among them. The expectations are not ori's word alone:
//! the file keeps the PTX line numbers (`#N`) of the `oracle` case, whose
//! messages ptxas 13.0.88 recorded, and the C7519/C7517 lines and the
//! serialization code the expected decisions imply must be exactly that
//! case's.

use ori::gmma::RuleId;
use ori_oracle::parse_message;
use ori_oracle::Expectation;
use std::path::Path;

/// The C75xx messages (code, advisory line or 0) that `decisions` imply.
fn implied_messages(decisions: &[String]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for d in decisions {
        let (what, rest) = d.split_once(" at ").unwrap_or((d, ""));
        // `at line N (rule)`, or `at the function (rule)` (line 0).
        let line: u32 = rest
            .strip_prefix("line ")
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let rule = rest
            .rsplit_once('(')
            .map_or("", |(_, r)| r.trim_end_matches(')'));
        let code = RuleId::ALL
            .iter()
            .find(|r| r.name() == rule)
            .and_then(|r| r.info().code);
        match (what, code) {
            ("arrive", _) => out.push((7519, line)),
            ("wait", _) => out.push((7517, line)),
            ("serialize", Some(c)) => out.push((c, 0)),
            _ => {}
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn check(path: &Path, tests: &Path) -> Result<(), String> {
    let src = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let header = |key: &str| -> Vec<String> {
        src.lines()
            .filter_map(|l| l.strip_prefix(&format!("; {key}: ")))
            .map(str::to_string)
            .collect()
    };
    let [rule] = header("rule")
        .try_into()
        .map_err(|_| "one '; rule:' line")?;
    let [oracle] = header("oracle")
        .try_into()
        .map_err(|_| "one '; oracle:' line")?;
    let expect = header("expect");
    let name = path.file_name().unwrap().to_string_lossy();
    // `; flags: -c -maxrregcount=N`: the oracle case's ptxas flags.
    let flags = header("flags").join(" ");
    let opts = ori::case_options(&format!("// oracle-flags: {flags}\n"));
    let c = ori::compile_ir(&name, &src, &opts);
    let m = c
        .module
        .as_ref()
        .ok_or_else(|| format!("does not compile: {:?}", c.diags))?;
    let got: Vec<String> = m
        .funcs
        .values()
        .flat_map(|f| f.decisions.iter())
        .map(|d| match d.line {
            0 => format!("{} at the function ({})", d.what, d.rule),
            l => format!("{} at line {l} ({})", d.what, d.rule),
        })
        .collect();
    if got != expect {
        return Err(format!(
            "decisions differ:\n  expected {expect:#?}\n  got {got:#?}"
        ));
    }
    if !got.iter().any(|d| d.ends_with(&format!("({rule})"))) {
        return Err(format!("{rule} makes none of the decisions"));
    }
    let expected = std::fs::read_to_string(tests.join(format!("{oracle}.expected")))
        .map_err(|e| format!("{oracle}: {e}"))?;
    let exp = Expectation::parse(&expected)?;
    let mut ptxas: Vec<(u32, u32)> = exp
        .messages
        .iter()
        .filter_map(|l| parse_message(l))
        .filter_map(|m| {
            let code = m.code?;
            (7500..7600).contains(&code).then_some((
                code,
                if m.is_advisory() {
                    m.line.unwrap_or(0)
                } else {
                    0
                },
            ))
        })
        .collect();
    ptxas.sort_unstable();
    ptxas.dedup();
    let implied = implied_messages(&expect);
    if implied != ptxas {
        return Err(format!(
            "the expected decisions imply {implied:?}, ptxas 13.0.88 printed {ptxas:?} for {oracle}"
        ));
    }
    Ok(())
}

#[test]
fn every_rule_file_decides_as_ptxas_does() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files: Vec<_> = std::fs::read_dir(tests.join("rules"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ori"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "only {} rule files", files.len());
    let failures: Vec<String> = files
        .iter()
        .filter_map(|p| {
            check(p, &tests)
                .err()
                .map(|e| format!("{}: {e}", p.display()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
