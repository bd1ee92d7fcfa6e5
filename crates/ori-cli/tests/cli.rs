//! The `ori` binary end to end: pipeline listing, IR input, dumps, message
//! formats and exit statuses (0 compiled, 1 input error, 2 usage error).

use std::process::Command;

mod common;

use common::ori;

fn corpus(name: &str) -> String {
    format!("{}/../../tests/corpus/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn passes_lists_the_pipeline() {
    let (rc, out, _) = ori(&["passes"]);
    assert_eq!(rc, 0);
    assert_eq!(out, "85 OriPropagateGmma\n87 FixupGmmaSequence\n");
}

#[test]
fn ir_text_compiles_with_dumps_after_all_passes() {
    let dir = std::env::temp_dir().join(format!("ori-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ir = dir.join("x.ori");
    let (rc, text, _) = ori(&[
        "compile",
        &corpus("c7517_read_acc_before_commit.ptx"),
        "--emit",
        "ir",
        "-o",
        ir.to_str().unwrap(),
    ]);
    assert_eq!((rc, text.as_str()), (0, ""));
    let (rc, out, err) = ori(&["compile", ir.to_str().unwrap(), "--print-after", "all"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("; IR after OriPropagateGmma (phase 85)"));
    assert!(out.contains("; IR after FixupGmmaSequence (phase 87)"));
    assert!(out.contains("!acc 0x9"));
}

#[test]
fn ptxas_format_matches_the_recorded_oracle_line() {
    let (rc, _, err) = ori(&[
        "compile",
        &corpus("c7517_read_acc_before_commit.ptx"),
        "--message-format",
        "ptxas",
    ]);
    assert_eq!(rc, 0);
    let expected =
        std::fs::read_to_string(corpus("c7517_read_acc_before_commit.expected")).unwrap();
    let line = err.lines().next().unwrap();
    assert!(expected.lines().any(|l| l == line), "{line}");
}

#[test]
fn human_and_json_formats_name_the_culprit() {
    let (_, _, human) = ori(&["compile", &corpus("c7514_mov_read_d0_between_mma.ptx")]);
    assert!(
        human.contains("info[C7514]: Potential Performance Loss")
            && human.contains("--> ")
            && human.contains("^^^")
            && human.contains("= help:")
            && !human.contains('\x1b'),
        "{human}"
    );
    let (_, json, err) = ori(&[
        "compile",
        &corpus("c7514_mov_read_d0_between_mma.ptx"),
        "--message-format",
        "json",
    ]);
    assert!(
        json.starts_with("{\"version\":1,\"severity\":\"info\",\"code\":\"C7514\""),
        "{json}"
    );
    assert_eq!(err, "", "JSON diagnostics go to stdout");
    // Phase 87's diagnostic names the culprit's file, line and column.
    let v: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    let culprit_line = v["culprit"]["line"].as_u64().unwrap();
    assert!(v["file"]
        .as_str()
        .unwrap()
        .ends_with("c7514_mov_read_d0_between_mma.ptx"));
    assert_eq!(v["line"].as_u64(), Some(culprit_line));
    assert!(v["column"].as_u64().is_some_and(|c| c >= 1), "{v}");
}

#[test]
fn sarif_goes_to_stdout_and_clashes_with_emitted_text_are_refused() {
    let k = corpus("c7514_mov_read_d0_between_mma.ptx");
    let (rc, out, err) = ori(&["compile", &k, "--message-format", "sarif"]);
    assert_eq!((rc, err.as_str()), (0, ""));
    let log: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(log["version"], "2.1.0");
    // The emitted SASS would share stdout with the JSON: a usage error.
    let (rc, out, _) = ori(&["compile", &k, "--message-format", "json", "--emit", "sass"]);
    assert_eq!(rc, 2);
    assert!(out.contains("-o FILE"), "{out}");
    let (rc, _, _) = ori(&[
        "compile",
        &k,
        "--message-format",
        "sarif",
        "--print-after",
        "all",
    ]);
    assert_eq!(rc, 2);
}

#[test]
fn scan_refuses_the_ptxas_layout() {
    let (rc, out, err) = ori(&["scan", &corpus(""), "--message-format", "ptxas"]);
    assert_eq!((rc, out.as_str()), (2, ""));
    assert!(err.contains("--message-format ptxas"), "{err}");
}

#[test]
fn dumps_declare_only_the_registers_the_function_uses() {
    let (rc, out, _) = ori(&[
        "compile",
        &corpus("c7517_read_acc_before_commit.ptx"),
        "--print-after",
        "all",
    ]);
    assert_eq!(rc, 0);
    let dump = out.split("; IR after FixupGmmaSequence").nth(1).unwrap();
    for line in dump.lines().filter(|l| l.trim_start().starts_with("reg ")) {
        let name = line.split_whitespace().nth(1).unwrap();
        let mentions = dump
            .split(|c: char| !(c.is_alphanumeric() || "%_$.".contains(c)))
            .filter(|t| *t == name)
            .count();
        assert!(mentions > 1, "{name} is declared but never used:\n{dump}");
    }
}

#[test]
fn bad_input_is_an_error_with_position_and_status_1() {
    let dir = std::env::temp_dir().join(format!("ori-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.ptx");
    std::fs::write(&bad, ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n  foo.f32 x;\n  ret;\n}\n").unwrap();
    let (rc, _, err) = ori(&[
        "compile",
        bad.to_str().unwrap(),
        "--message-format",
        "ptxas",
    ]);
    assert_eq!(rc, 1);
    assert!(err.contains("bad.ptx, line 6; error"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(ori(&["compile"]).0, 2);
    assert_eq!(
        ori(&["compile", "x.ptx", "--print-after", "NoSuchPass"]).0,
        2
    );
}

#[test]
fn isa_strict_fixes_what_ptxas_leaves_undefined() {
    let case = corpus("attempt_c7515_def_acc_after_commit.ptx");
    // ptxas mode: ptxas prints nothing here, ori's note says why it is wrong.
    let (rc, _, ptxas_fmt) = ori(&["compile", &case, "--message-format", "ptxas"]);
    assert_eq!((rc, ptxas_fmt.as_str()), (0, ""));
    let (_, _, human) = ori(&["compile", &case]);
    assert!(human.starts_with("note: line 28:"), "{human}");
    let (_, plain, _) = ori(&["compile", &case, "--emit", "ptx"]);
    assert!(!plain.contains("ori: injected"), "{plain}");
    // ISA-strict mode: the same note, and a wait before the write.
    let (rc, strict, err) = ori(&["compile", &case, "--emit", "ptx", "--isa-strict"]);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("ISA-strict"), "{err}");
    let wait = strict
        .lines()
        .position(|l| l.contains("wgmma.wait_group.sync.aligned 0; // ori: injected"))
        .expect("an injected wait");
    assert!(
        strict.lines().nth(wait + 1).unwrap().contains("mov.f32 d0"),
        "{strict}"
    );
}

#[test]
fn huge_register_ranges_cost_only_what_is_used() {
    // ptxas 13.0.88 takes any `.reg` range below 2^32 and says "Constant
    // overflow" at 2^32 (checked); ori declares large ranges lazily, so this
    // compiles in a few MB instead of four billion registers (a fuzzer find).
    let dir = std::env::temp_dir().join(format!("ori-cli-range-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ok = dir.join("big.ptx");
    std::fs::write(
        &ok,
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n  .reg .b32 h<4000000000>;\n  .reg .b64 a;\n  ld.param.u64 a, [p];\n  mov.b32 h3999999999, 7;\n  st.global.b32 [a], h3999999999;\n  ret;\n}\n",
    )
    .unwrap();
    let (rc, sass, err) = ori(&["compile", ok.to_str().unwrap(), "--emit", "sass"]);
    assert_eq!(rc, 0, "{err}");
    assert!(sass.contains("STG.E [a], h3999999999"), "{sass}");
    let over = dir.join("over.ptx");
    std::fs::write(
        &over,
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n  .reg .b32 h<4294967296>;\n  ret;\n}\n",
    )
    .unwrap();
    let (rc, _, err) = ori(&[
        "compile",
        over.to_str().unwrap(),
        "--message-format",
        "ptxas",
    ]);
    assert_eq!(rc, 1);
    assert!(
        err.starts_with("ptxas over.ptx, line 6; error   : Constant overflow\n"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fresh scratch directory for one test.
fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ori-cli-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The IR text of a corpus case, and the offset of its first instruction line.
fn corpus_ir(dir: &std::path::Path) -> (String, usize) {
    let ir = dir.join("x.ori");
    let (rc, _, err) = ori(&[
        "compile",
        &corpus("c7517_read_acc_before_commit.ptx"),
        "--emit",
        "ir",
        "-o",
        ir.to_str().unwrap(),
    ]);
    assert_eq!(rc, 0, "{err}");
    let text = std::fs::read_to_string(ir).unwrap();
    let at = text.find("\n  #").unwrap() + 1;
    (text, at)
}

#[test]
fn unindented_line_without_colon_in_ir_is_an_error_not_a_crash() {
    let dir = scratch("unindented");
    let (text, at) = corpus_ir(&dir);
    let bad = dir.join("bad.ori");
    std::fs::write(
        &bad,
        format!("{}garbage line\n{}", &text[..at], &text[at..]),
    )
    .unwrap();
    let (rc, _, err) = ori(&["compile", bad.to_str().unwrap()]);
    assert_eq!(rc, 1, "{err}");
    assert!(
        err.contains("bad.ori:") && err.contains("expected a block label"),
        "{err}"
    );
}

#[test]
fn deeply_nested_ir_operand_is_an_error_not_a_stack_overflow() {
    let dir = scratch("nested");
    let (text, at) = corpus_ir(&dir);
    let bad = dir.join("deep.ori");
    let operand = format!("{}d1{}", "{".repeat(10_000), "}".repeat(10_000));
    let line = format!("  #999 mov.b32 out d0, {operand}\n");
    std::fs::write(&bad, format!("{}{line}{}", &text[..at], &text[at..])).unwrap();
    let (rc, _, err) = ori(&["compile", bad.to_str().unwrap()]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("nested more than"), "{err}");
}

#[cfg(unix)]
#[test]
fn non_utf8_argument_is_a_usage_error() {
    use std::os::unix::ffi::OsStrExt;
    let out = Command::new(env!("CARGO_BIN_EXE_ori"))
        .arg("compile")
        .arg(std::ffi::OsStr::from_bytes(b"\xff.ptx"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid UTF-8"));
}

#[cfg(target_os = "linux")]
#[test]
fn full_stdout_is_exit_1_not_a_panic() {
    for args in [
        vec!["passes"],
        vec!["compile", "EXAMPLE", "--emit", "sass"],
        vec!["compile", "EXAMPLE", "--print-after", "all"],
    ] {
        let example = format!("{}/../../examples/gemm.ptx", env!("CARGO_MANIFEST_DIR"));
        let args: Vec<&str> = args
            .iter()
            .map(|a| if *a == "EXAMPLE" { example.as_str() } else { a })
            .collect();
        let out = Command::new(env!("CARGO_BIN_EXE_ori"))
            .args(&args)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("cannot write to standard output"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn input_that_is_not_a_regular_file_is_refused() {
    let (rc, _, err) = ori(&["compile", "/dev/zero"]);
    assert_eq!(rc, 1);
    assert!(err.contains("not a regular file"), "{err}");
    let dir = scratch("dir-input");
    let (rc, _, err) = ori(&["compile", dir.to_str().unwrap()]);
    assert_eq!(rc, 1);
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn output_file_is_replaced_through_a_temporary_file() {
    // `-o` writes a temporary file beside the target and renames it over the
    // target, so a failed write (disk full) never truncates the old file;
    // here the write succeeds and leaves no temporary file behind.
    let dir = scratch("atomic");
    let target = dir.join("out.sass");
    std::fs::write(&target, "old").unwrap();
    let (rc, _, _) = ori(&[
        "compile",
        &corpus("c7517_read_acc_before_commit.ptx"),
        "--emit",
        "sass",
        "-o",
        target.to_str().unwrap(),
    ]);
    assert_eq!(rc, 0);
    let new = std::fs::read_to_string(&target).unwrap();
    assert!(new.contains("HGMMA"), "{new}");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("ori-tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn ptx_labels_spelled_like_ir_block_names_survive_the_ir_round_trip() {
    // The IR text names unlabeled blocks `bbN`; a PTX label `bb1` must not
    // be taken for one (it was: the branch then went to another block).
    let dir = scratch("bbN");
    let ptx = dir.join("bb.ptx");
    std::fs::write(
        &ptx,
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p){\n\
         .reg .pred %p<4>; .reg .b32 %r<4>;\nsetp.lt.s32 %p1, %r1, 5;\n@%p1 bra bb1;\n\
         add.s32 %r1, %r1, 1;\nbb1: add.s32 %r1, %r1, 2;\n@%p1 bra bb2;\nbb2: ret; }\n",
    )
    .unwrap();
    let ir = dir.join("bb.ori");
    let (rc, _, err) = ori(&[
        "compile",
        ptx.to_str().unwrap(),
        "--emit",
        "ir",
        "-o",
        ir.to_str().unwrap(),
    ]);
    assert_eq!(rc, 0, "{err}");
    let (rc, direct, _) = ori(&["compile", ptx.to_str().unwrap(), "--emit", "sass"]);
    assert_eq!(rc, 0);
    let (rc, via_ir, err) = ori(&["compile", ir.to_str().unwrap(), "--emit", "sass"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(direct, via_ir);
    assert!(
        direct.contains("BRA bb1_1") && direct.contains(".bb1_1:"),
        "{direct}"
    );
}

#[test]
fn unknown_arch_value_is_ptxas_fatal_error() {
    // ptxas 13.0.88: `ptxas -arch=foo k.ptx` prints this and reads nothing.
    for arch in ["foo", "", "sm_90x"] {
        let (rc, _, err) = ori(&[
            "compile",
            &corpus("c7517_read_acc_before_commit.ptx"),
            &format!("--arch={arch}"),
            "--message-format",
            "ptxas",
        ]);
        assert_eq!(rc, 1, "{arch}");
        assert_eq!(
            err.trim_end(),
            format!("ptxas fatal   : Value '{arch}' is not defined for option 'gpu-name'")
        );
    }
    // Virtual architectures are values ptxas takes (parse only).
    let (rc, _, err) = ori(&[
        "compile",
        &corpus("c7517_read_acc_before_commit.ptx"),
        "--arch=compute_90a",
    ]);
    assert_eq!(rc, 0, "{err}");
}

#[test]
fn cli_errors_follow_message_format_json() {
    let (rc, out, _) = ori(&["compile", "/nonexistent/k.ptx", "--message-format", "json"]);
    assert_eq!(rc, 1);
    let line = out.trim_end();
    assert!(line.starts_with('{') && line.ends_with('}'), "{line}");
    assert!(
        line.contains("\"severity\":\"error\"") && line.contains("cannot read"),
        "{line}"
    );
    let (_, _, err) = ori(&["compile", "/nonexistent/k.ptx"]);
    assert!(err.starts_with("ori: cannot read"), "{err}");
}

#[test]
fn a_large_input_is_read_again_for_its_diagnostics_and_fixit() {
    // From 4 MiB on, `ori compile` drops its input during the passes (a
    // tenth of the peak on a kernel of a million instructions) and reads
    // it again to show the diagnostics on it and to write the fix-it.
    let small = std::fs::read_to_string(corpus("c7517_read_acc_before_commit.ptx")).unwrap();
    let pad = "// padding, so that the input is over 4 MiB\n".repeat(100_000);
    let dir = scratch("large-input");
    let big = dir.join("big.ptx");
    std::fs::write(&big, format!("{pad}{small}")).unwrap();
    let big = big.to_str().unwrap();
    let (rc, _, err) = ori(&["compile", big]);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("big.ptx:100028:3"), "{err}");
    assert!(err.contains("100028 |   add.f32 f0, d0, d1;"), "{err}");
    let (rc, fixed, err) = ori(&["compile", big, "--emit", "ptx"]);
    assert_eq!(rc, 0, "{err}");
    let (_, fixed_small, _) = ori(&[
        "compile",
        &corpus("c7517_read_acc_before_commit.ptx"),
        "--emit",
        "ptx",
    ]);
    // The same fix-it, its line references 100,000 lines further down.
    let fixed_small = fixed_small.replace("from line 29", "from line 100029");
    assert_eq!(fixed, format!("{pad}{fixed_small}"));
}

#[test]
fn a_reader_gone_is_a_write_error_not_a_signal() {
    // SIGPIPE is ignored (Rust's runtime does so before `main`): writing
    // to a pipe nobody reads is an error ori reports. The
    // dumps (72 KB) are more than a pipe holds, so ori is still writing
    // when the reader is gone, whenever it goes.
    let kernel = format!(
        "{}/../../tests/real/triton39/mm_f16acc_64x128x32_s4_w4.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_ori"))
        .args(["compile", &kernel, "--print-after", "all"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot write to standard output"), "{err}");
}

#[test]
fn closed_standard_descriptors_are_no_error() {
    // A parent may start ori with its standard descriptors closed (Rust's
    // runtime opens /dev/null on them before `main`, so a file ori opens
    // never becomes its standard output): the run succeeds and the input
    // is left as it was.
    let example = format!("{}/../../examples/gemm.ptx", env!("CARGO_MANIFEST_DIR"));
    let before = std::fs::read(&example).unwrap();
    let out = Command::new("sh")
        .args(["-c", "exec \"$0\" compile \"$1\" --emit sass >&- <&-"])
        .arg(env!("CARGO_BIN_EXE_ori"))
        .arg(&example)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(std::fs::read(&example).unwrap(), before);
}
