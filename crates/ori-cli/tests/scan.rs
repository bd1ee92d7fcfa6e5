//! `ori scan` over the real-kernel corpus (`tests/real`: Triton 3.6 and
//! 3.9, CUTLASS, DeepGEMM and FlashAttention-3 kernels): for every kernel
//! it reports exactly the phase-87 messages ptxas 13.0.88 printed when the
//! kernel was recorded (its `.expected` file), the summary counts them, and
//! the three layouts agree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
mod common;

fn real() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/real")
}

fn scan(args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["scan"];
    all.extend_from_slice(args);
    common::ori(&all)
}

/// The phase-87 lines ptxas printed for each recorded kernel, as
/// `(C7517) message`, sorted, and whether `known_differences.txt` lists
/// the kernel's messages as differing (the ratchet of `tests/corpus_cases.rs`).
fn recorded() -> BTreeMap<String, (Vec<String>, bool)> {
    let known: Vec<String> = std::fs::read_to_string(real().join("known_differences.txt"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split('\t');
            let case = f.next()?;
            let cols = f.next()?;
            cols.split(',')
                .any(|c| c.trim() == "messages")
                .then(|| case.trim().to_string())
        })
        .collect();
    let mut out = BTreeMap::new();
    for fam in std::fs::read_dir(real()).unwrap().flatten() {
        if !fam.path().is_dir() {
            continue;
        }
        for e in std::fs::read_dir(fam.path()).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_none_or(|x| x != "ptx") {
                continue;
            }
            let exp = std::fs::read_to_string(p.with_extension("expected")).unwrap();
            let mut msgs: Vec<String> = exp
                .lines()
                .filter_map(|l| l.strip_prefix("ptxas info    : "))
                .filter(|m| {
                    m.get(2..6)
                        .and_then(|c| c.parse::<u32>().ok())
                        .is_some_and(|c| (7509..=7520).contains(&c))
                })
                .map(str::to_string)
                .collect();
            msgs.sort();
            let key = p.canonicalize().unwrap().to_string_lossy().into_owned();
            let case = format!(
                "{}/{}",
                fam.file_name().to_string_lossy(),
                p.file_stem().unwrap().to_string_lossy()
            );
            out.insert(key, (msgs, known.contains(&case)));
        }
    }
    out
}

#[test]
fn scan_reports_what_ptxas_printed_for_every_real_kernel() {
    let expected = recorded();
    assert!(expected.len() > 400, "{} kernels", expected.len());
    let dir = real();
    // Kernels ptxas compiles and ori refuses are listed as differing on
    // exit status; each is one error, and errors make the scan
    // exit 1.
    let refused = listed_exit_differences();
    let want_code = i32::from(refused > 0);
    let (code, stdout, stderr) = scan(&[dir.to_str().unwrap(), "--message-format", "json"]);
    assert_eq!(code, want_code, "{stderr}");
    let mut got: BTreeMap<String, Vec<String>> =
        expected.keys().map(|k| (k.clone(), Vec::new())).collect();
    let mut refusals = 0;
    for line in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["code"].is_null() {
            // A refused kernel's error and the fatal line after it.
            refusals += usize::from(v["severity"] == "fatal");
            continue;
        }
        let file = Path::new(v["file"].as_str().unwrap())
            .canonicalize()
            .unwrap();
        let msg = format!(
            "({}) {}",
            v["code"].as_str().unwrap(),
            v["message"].as_str().unwrap()
        );
        got.entry(file.to_string_lossy().into_owned())
            .or_default()
            .push(msg);
    }
    for v in got.values_mut() {
        v.sort();
    }
    let differ: Vec<String> = expected
        .iter()
        .filter(|(k, (v, known))| !known && got.get(*k) != Some(v))
        .map(|(k, v)| format!("{k}:\n  ptxas {v:?}\n  scan  {:?}", got.get(k)))
        .collect();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    assert_eq!(refusals, refused, "{stdout}");

    // The human layout: one line per message, then the summary table.
    let (code, human, _) = scan(&[dir.to_str().unwrap()]);
    assert_eq!(code, want_code);
    let findings = human.lines().take_while(|l| !l.is_empty()).count();
    assert_eq!(findings, stdout.lines().count(), "{human}");
    // The summary counts what the findings say (ptxas's messages, but
    // for the listed known differences).
    let serialized = got
        .values()
        .filter(|v| {
            v.iter()
                .any(|m| !m.starts_with("(C7517)") && !m.starts_with("(C7519)"))
        })
        .count();
    let advisories = got
        .values()
        .filter(|v| {
            !v.is_empty()
                && v.iter()
                    .all(|m| m.starts_with("(C7517)") || m.starts_with("(C7519)"))
        })
        .count();
    let clean = expected.len() - serialized - advisories - refused;
    let row = format!("| {} | ", expected.len());
    let counts = format!("| {clean} | {advisories} | {serialized} | {refused} |");
    assert!(
        human
            .lines()
            .any(|l| l.starts_with(&row) && l.ends_with(&counts)),
        "no summary row {row}... {counts}:\n{human}"
    );
    // Every finding names its file, code, rule and kernel.
    for l in human.lines().take(findings) {
        if l.contains(": error: ") || l.contains(": fatal: ") {
            continue;
        }
        assert!(
            l.contains(".ptx") && l.contains(": C75") && l.contains(" R-") && l.contains(" in '"),
            "{l}"
        );
    }
}

#[test]
fn sarif_and_fail_on() {
    let dir = real().join("triton39");
    let (code, stdout, stderr) = scan(&[
        dir.to_str().unwrap(),
        "--message-format",
        "sarif",
        "-j",
        "2",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let log: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(log["version"], "2.1.0");
    assert!(!log["runs"][0]["results"].as_array().unwrap().is_empty());
    assert!(stderr.contains("| files |"), "{stderr}");
    // triton39 has serialized kernels: --fail-on serialized makes CI red.
    let (code, _, _) = scan(&[dir.to_str().unwrap(), "--fail-on", "serialized"]);
    assert_eq!(code, 1);
    let (code, _, stderr) = scan(&["/nonexistent/ori-scan"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("cannot read '/nonexistent/ori-scan'"),
        "{stderr}"
    );
}

#[test]
fn the_report_is_the_same_on_one_thread_and_on_three() {
    let dir = real().join("triton39");
    for format in ["human", "json", "sarif"] {
        let run = |threads: &str| {
            scan(&[
                dir.to_str().unwrap(),
                "--message-format",
                format,
                "--threads",
                threads,
            ])
        };
        let (one, three) = (run("1"), run("3"));
        assert_eq!(one.0, three.0, "{format}: exit status");
        assert!(one.1 == three.1, "{format}: standard output differs");
        assert!(one.2 == three.2, "{format}: standard error differs");
    }
}

/// How many real kernels `known_differences.txt` lists as differing on
/// exit status (ptxas compiles them, ori refuses them with a reason).
fn listed_exit_differences() -> usize {
    std::fs::read_to_string(real().join("known_differences.txt"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| {
            l.split('\t')
                .nth(1)
                .is_some_and(|cols| cols.split(',').any(|c| c.trim() == "exit"))
        })
        .count()
}

/// A file ori cannot compile is named at the error's line and column, and
/// the scan exits 1.
#[test]
fn bad_input_named_at_line_and_column() {
    let dir = std::env::temp_dir().join(format!("ori-scan-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.ptx");
    let src = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n  foo.bar %r1;\n}\n";
    std::fs::write(&path, src).unwrap();
    let (code, human, _) = scan(&[path.to_str().unwrap()]);
    assert_eq!(code, 1);
    let want = format!("{}:6:3: error: ", path.display());
    assert!(human.lines().any(|l| l.starts_with(&want)), "{human}");
    std::fs::remove_dir_all(&dir).ok();
}
