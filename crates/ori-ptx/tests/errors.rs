//! Error diagnostics: each case in `CASES` was run through the real ptxas
//! 13.0.88 (`ptxas -arch=sm_90a FILE -o x.cubin`); the expected line is
//! ptxas's own first output line, byte for byte. Further tests check columns
//! (which ptxas omits) and recovery (ptxas stops at the first fatal error, we
//! go on).

use ori_ptx::*;

fn diags(file: &str, src: &str) -> Vec<Diag> {
    match parse(file, src) {
        Ok(_) => panic!("{file}: expected an error"),
        Err(d) => d,
    }
}

/// (file name, source, ptxas's first output line)
const CASES: &[(&str, &str, &str)] = &[
    (
        "semi.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 a)
{
 .reg .b32 %r<3>;
 mov.u32 %r1, 1
 ret;
}
"#,
        r#"ptxas semi.ptx, line 8; fatal   : Parsing error near 'ret': syntax error"#,
    ),
    (
        "unkdir.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.foo bar;
.visible .entry k(.param .u64 a)
{
 ret;
}
"#,
        r#"ptxas unkdir.ptx, line 4; fatal   : Parsing error near '.foo': syntax error"#,
    ),
    (
        "unkdir2.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 a)
{
 .blah .b32 x;
 ret;
}
"#,
        r#"ptxas unkdir2.ptx, line 6; fatal   : Parsing error near '.blah': syntax error"#,
    ),
    (
        "label.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 a)
{
 bra $L__BB0_9;
 ret;
}
"#,
        r#"ptxas label.ptx, line 6; error   : Unknown symbol '$L__BB0_9'"#,
    ),
    (
        "unkop.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 a)
{
 .reg .b32 %r<3>;
 frob.u32 %r1, 1;
 ret;
}
"#,
        r#"ptxas unkop.ptx, line 7; error   : Not a name of any known instruction: 'frob'"#,
    ),
    (
        "badtok.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 a)
{
 .reg .b32 %r<3>;
 mov.u32 %r1, #;
 ret;
}
"#,
        r#"ptxas badtok.ptx, line 7; fatal   : Parsing error near '#': syntax error"#,
    ),
    (
        "eof.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 a)
{
 .reg .b32 %r<3>;
 mov.u32 %r1, 1;
"#,
        r#"ptxas eof.ptx, line 8; fatal   : Parsing error near '': syntax error"#,
    ),
    (
        "dup.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 a)
{
L1:
L1:
 ret;
}
"#,
        r#"ptxas dup.ptx, line 7; error   : Duplicate definition of label 'L1'"#,
    ),
    (
        "unterm.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 a)
{
 /* foo
 ret;
}
"#,
        r#"ptxas unterm.ptx, line 6; fatal   : Parsing error near '': unexpected EOF while scanning"#,
    ),
    (
        "str.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.pragma "nounroll
.visible .entry k(.param .u64 a)
{
 ret;
}
"#,
        r#"ptxas str.ptx, line 4; fatal   : Parsing error near '"': syntax error"#,
    ),
    (
        "hex.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 a)
{
 .reg .b32 %r<3>;
 mov.u32 %r1, 0x;
 ret;
}
"#,
        r#"ptxas hex.ptx, line 7; fatal   : Parsing error near 'x': syntax error"#,
    ),
    (
        "big.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 a)
{
 .reg .b64 %r<3>;
 mov.u64 %r1, 99999999999999999999999;
 ret;
}
"#,
        r#"ptxas big.ptx, line 7; error   : Constant overflow"#,
    ),
    (
        "badreg.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 a)
{
 .reg .b33 %r<3>;
 ret;
}
"#,
        r#"ptxas badreg.ptx, line 6; fatal   : Parsing error near '.b33': syntax error"#,
    ),
    (
        "closebrace.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 a)
{
 ret;
}
}
"#,
        r#"ptxas closebrace.ptx, line 8; fatal   : Parsing error near '}': syntax error"#,
    ),
    (
        "ver.ptx",
        r#".version 9.9
.target sm_90a
.entry k(){ret;}
"#,
        r#"ptxas ver.ptx, line 1; fatal   : Unsupported .version 9.9; current version is '9.0'"#,
    ),
    (
        "nover.ptx",
        r#".target sm_90a
.entry k(){ret;}
"#,
        r#"ptxas nover.ptx, line 2; fatal   : Missing .version directive at start of file 'nover.ptx'"#,
    ),
    (
        "tgt.ptx",
        r#".version 8.5
.target sm_99z
.entry k(){ret;}
"#,
        r#"ptxas tgt.ptx, line 2; fatal   : Unsupported .target 'sm_99z'"#,
    ),
    (
        "as.ptx",
        r#".version 8.5
.target sm_90a
.address_size 48
.entry k(){ret;}
"#,
        r#"ptxas as.ptx, line 3; error   : Illegal value for .address_size directive (must be 32 or 64)"#,
    ),
    (
        "notgt.ptx",
        r#".version 8.5
.entry k(){ret;}
"#,
        r#"ptxas notgt.ptx, line 2; fatal   : Missing .target directive at start of file 'notgt.ptx'"#,
    ),
    (
        "ne.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k()
{
	ret;
"#,
        r#"ptxas ne.ptx, line 7; fatal   : Parsing error near '': syntax error"#,
    ),
    (
        "p.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 a
{
ret;
}
"#,
        r#"ptxas p.ptx, line 5; fatal   : Parsing error near '{': syntax error"#,
    ),
    (
        "p2.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k()
{
mov.u32 %r1, [;
}
"#,
        r#"ptxas p2.ptx, line 6; fatal   : Parsing error near ';': syntax error"#,
    ),
    (
        "p3.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k()
{
.reg .b32 %r<3>;
mov.u32 %r1, 08;
ret;}
"#,
        r#"ptxas p3.ptx, line 7; fatal   : Parsing error near '8': syntax error"#,
    ),
    (
        "p4.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k()
{
.reg .b32 %r<3>;
mov.u32 %r1, 0f3F80;
ret;}
"#,
        r#"ptxas p4.ptx, line 7; fatal   : Parsing error near 'f3F80': syntax error"#,
    ),
    (
        "p6.ptx",
        r#".version 8.5
.target sm_90a
.address_size 64
.visible .entry k()
{
.reg .b32 %r<3>;
mov.u32 %r1, 1;
$L: ;
 ret;}
"#,
        r#"ptxas p6.ptx, line 8; fatal   : Parsing error near ';': syntax error"#,
    ),
    (
        "list6.ptx",
        ".version 8.5\n.target sm_90a\n.address_size 64\n.global .b8 t[8] = {1, 2,\n  3, 4,\n  5 6, 7, 8};\n.visible .entry k() { ret; }\n",
        r#"ptxas list6.ptx, line 6; fatal   : Parsing error near '6': syntax error"#,
    ),
    (
        "list8.ptx",
        ".version 8.5\n.target sm_90a\n.address_size 64\n.global .b8 t[4] = {1, 2, /* c */ 3, 0x4, 5,};\n.visible .entry k() { ret; }\n",
        r#"ptxas list8.ptx, line 4; fatal   : Parsing error near '}': syntax error"#,
    ),
];

#[test]
fn first_diag_matches_ptxas() {
    let mut bad = Vec::new();
    for (file, src, want) in CASES {
        let d = diags(file, src);
        let got = d[0].render_ptxas();
        if got != *want {
            bad.push(format!("{file}:\n  got  {got}\n  want {want}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Several non-fatal errors in one function: ptxas prints all of them, the
/// branch-target check last (verified; ptxas additionally reports the
/// semantic "Arguments mismatch for instruction 'mov'", which is not ours).
#[test]
fn multiple_errors_in_ptxas_order() {
    let src = ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n\
               \t.reg .b32 %r<3>;\n\tfrob.u32 %r1, 1;\n\tbra $L__nowhere;\nL1:\nL1:\n\
               \tmov.u64 %r1, 99999999999999999999999;\n\tret;\n}\n";
    let got: Vec<String> = diags("multi.ptx", src)
        .iter()
        .map(Diag::render_ptxas)
        .collect();
    assert_eq!(
        got,
        vec![
            "ptxas multi.ptx, line 7; error   : Not a name of any known instruction: 'frob'",
            "ptxas multi.ptx, line 10; error   : Duplicate definition of label 'L1'",
            "ptxas multi.ptx, line 11; error   : Constant overflow",
            "ptxas multi.ptx, line 8; error   : Unknown symbol '$L__nowhere'",
        ]
    );
}

#[test]
fn empty_and_comment_only_files() {
    // ptxas: line 1 for an empty file, the EOF line for a comment-only file.
    let d = diags("empty.ptx", "");
    assert_eq!(
        d[0].render_ptxas(),
        "ptxas empty.ptx, line 1; fatal   : Missing .version directive at start of file 'empty.ptx'"
    );
    let d = diags("cmt.ptx", "// only a comment\n");
    assert_eq!(
        d[0].render_ptxas(),
        "ptxas cmt.ptx, line 2; fatal   : Missing .version directive at start of file 'cmt.ptx'"
    );
    let d = diags("v.ptx", ".version 8.5\n");
    assert!(d[0].message.starts_with("Missing .target directive"));
}

const HDR: &str = ".version 8.5\n.target sm_90a\n.address_size 64\n";

#[test]
fn columns() {
    // Missing `;`: reported at the next token, with its column.
    let d = diags(
        "c.ptx",
        &format!("{HDR}.entry k()\n{{\n  mov.u32 %r1, 1\n    ret;\n}}\n"),
    );
    assert_eq!((d[0].line, d[0].col), (7, 5));
    assert_eq!(d[0].severity, Severity::Fatal);
    assert_eq!(
        d[0].render_with_col(),
        "c.ptx:7:5: fatal: Parsing error near 'ret': syntax error"
    );
    // Junk character.
    let d = diags(
        "c.ptx",
        &format!("{HDR}.entry k()\n{{\n  add.s32 %r1, %r2, #;\n}}\n"),
    );
    assert_eq!((d[0].line, d[0].col), (6, 21));
    // Unknown branch target: at the operand.
    let d = diags(
        "c.ptx",
        &format!("{HDR}.entry k()\n{{\n\t@%p1 bra   $L9;\n}}\n"),
    );
    assert_eq!(
        (d[0].line, d[0].col, d[0].message.as_str()),
        (6, 13, "Unknown symbol '$L9'")
    );
    // Unknown opcode: at the opcode after the predicate.
    let d = diags(
        "c.ptx",
        &format!("{HDR}.entry k()\n{{\n  @!%p1 frob;\n}}\n"),
    );
    assert_eq!((d[0].line, d[0].col), (6, 9));
    // In an initializer list read past its lines and comments.
    let d = diags(
        "c.ptx",
        &format!("{HDR}.global .b8 t[9] = {{1, 2,\r\n  3 /* 4 */, 4,\n\t5, 6 7, 8}};\n"),
    );
    assert_eq!((d[0].line, d[0].col), (6, 7));
}

#[test]
fn recovery_reports_several_syntax_errors() {
    let src = format!(
        "{HDR}.entry k()\n{{\n  .reg .b32 %r<3>;\n  mov.u32 %r1, #;\n  add.s32 %r1, %r1 %r2;\n  \
         ld.global.v2.u32 {{%r1, @}}, [%r2];\n  .blah x;\n  ret;\n}}\n.foo;\n\
         .entry k2() {{ ret }}\n.entry k3() {{ ret; }}\n"
    );
    let (m, d) = parse_with_diags("r.ptx", &src);
    let lines: Vec<(u32, &str)> = d.iter().map(|d| (d.line, d.message.as_str())).collect();
    assert_eq!(
        lines,
        vec![
            (7, "Parsing error near '#': syntax error"),
            (8, "Parsing error near '%r2': syntax error"),
            (9, "Parsing error near '@': syntax error"),
            (10, "Parsing error near '.blah': syntax error"),
            (13, "Parsing error near '.foo': syntax error"),
            (14, "Parsing error near '}': syntax error"),
        ]
    );
    // All three functions survive; the first keeps its good statements.
    let names: Vec<&str> = m
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Function(f) => Some(f.name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(names, vec!["k", "k2", "k3"]);
}

#[test]
fn unterminated_things() {
    let d = diags("u.ptx", &format!("{HDR}.entry k()\n{{\n  ret;\n"));
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].message, "Parsing error near '': syntax error");
    assert_eq!(d[0].line, 7);
    let d = diags("u.ptx", &format!("{HDR}.entry k(.param .u32 a\n"));
    assert_eq!(d.len(), 1);
    let d = diags("u.ptx", &format!("{HDR}.section .debug_info {{ .b8 1\n"));
    assert_eq!(d.len(), 1);
    let d = diags("u.ptx", &format!("{HDR}.entry k() {{ /* ret; }}\n"));
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0].message.ends_with("unexpected EOF while scanning"));
}

#[test]
fn deep_nesting_is_bounded() {
    let deep = "{".repeat(100_000);
    let (_, d) = parse_with_diags("d.ptx", &format!("{HDR}.entry k() {deep}"));
    assert!(!d.is_empty());
    let deep = format!("{}ret;{}", "{".repeat(5000), "}".repeat(5000));
    let (_, d) = parse_with_diags("d.ptx", &format!("{HDR}.entry k() {{{deep}}}\n"));
    assert!(d.iter().any(|d| d.message.contains("nested too deeply")));
    let init = format!("{}1{}", "{".repeat(5000), "}".repeat(5000));
    let (_, d) = parse_with_diags("d.ptx", &format!("{HDR}.global .b32 x[1] = {init};\n"));
    assert!(!d.is_empty());
    let neg = "-".repeat(100_000);
    let _ = parse_with_diags(
        "d.ptx",
        &format!("{HDR}.entry k() {{ mov.b32 %r1, {neg}1; }}\n"),
    );
}

#[test]
fn garbage_never_panics() {
    let samples = [
        "",
        "{",
        "}",
        ";",
        ".",
        "@",
        "@!",
        "%",
        "\"",
        "/*",
        "0x",
        "0f",
        "[",
        "(",
        "<",
        ".version",
        ".version 8",
        ".version 8.5\n.target",
        ".target ,",
        ".address_size",
        ".entry",
        ".entry k(",
        ".entry k(.param",
        ".entry k(.param .u32",
        ".func (",
        ".func ()",
        ".global",
        ".global .b32",
        ".global .b32 x[",
        ".global .b32 x = {",
        ".global .b32 x = {1,",
        ".file",
        ".file 1",
        ".section",
        ".section .x {",
        ".pragma",
        ".alias a",
        ".entry k() { .reg .b32 %r<; }",
        ".entry k() { .loc 1 2 3, foo }",
        ".entry k() { .loc 1 2 3, inlined_at 1 }",
        ".entry k() { a: .callprototype }",
        ".entry k() { bra [; }",
        ".entry k() { mov %r1, [%r2+; }",
        ".entry k() { call (, }",
        ".entry k() { mov %r1, generic(; }",
        ".entry k() { mov %r1, x+; }",
        ".entry k() { mov %r1, ~0f3F800000; }",
        ".entry k() { mov %r1, [0f3F800000]; }",
        ".entry k() { mov %r1, [x, ; }",
        ".entry k() { mov %p1|; }",
        "é",
        "\u{0}",
        ".entry k() { mov.u64 %r1, 0xFFFFFFFFFFFFFFFFFFFFF; }",
        ".entry k() { mov %r1, -18446744073709551615-18446744073709551615; }",
        ".entry k() { ld %r1, [%r2+9223372036854775807+1]; }",
        ".entry k() { ld %r1, [-9223372036854775808-1]; }",
        ".entry k() { ld %r1, [x, [x, [x, [x]]]]; }",
    ];
    for s in samples {
        let _ = parse_with_diags("g.ptx", s);
        let _ = parse_with_diags("g.ptx", &format!("{HDR}{s}"));
    }
}
