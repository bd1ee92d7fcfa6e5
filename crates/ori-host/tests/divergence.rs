//! Divergent control flow: threads of one warpgroup that branch apart run
//! each side with their own threads and meet again at the branch's
//! immediate post-dominator (per-thread loop trip counts, if/else, nested
//! branches, early exit), over two warpgroups joined by a barrier.

use ori_host::{run, GlobalMemory, Launch};

fn lower(src: &str) -> ori_ir::Module {
    let (ast, diags) = ori_ptx::parse_with_diags("d.ptx", src);
    assert!(diags.is_empty(), "{diags:?}");
    let (m, diags) = ori_ptx::lower::lower_module_owned("d.ptx", ast);
    assert!(diags.is_empty(), "{diags:?}");
    m
}

/// `out[t]` is `(t % 7 == 0 ? 1000 : sum of 0..t%7)`, plus
/// `(t % 3 == 0 ? 100 : 200)`, plus `(t % 5 == 1 ? 10 : 0)`, written after
/// a CTA barrier; threads with `t % 11 == 4` exit at once (their element
/// keeps its 0xffffffff).
const KERNEL: &str = r#"
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<8>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    rem.u32 %r2, %r1, 11;
    setp.eq.u32 %p5, %r2, 4;
    @%p5 bra $EXIT;
    rem.u32 %r3, %r1, 7;
    mov.u32 %r4, 0;
    setp.ne.u32 %p1, %r3, 0;
    @%p1 bra $LOOP_START;
    mov.u32 %r4, 1000;
    bra $AFTER_LOOP;
$LOOP_START:
    mov.u32 %r5, 0;
$LOOP:
    add.u32 %r4, %r4, %r5;
    add.u32 %r5, %r5, 1;
    setp.lt.u32 %p2, %r5, %r3;
    @%p2 bra $LOOP;
$AFTER_LOOP:
    rem.u32 %r6, %r1, 3;
    setp.eq.u32 %p3, %r6, 0;
    @%p3 bra $ELSE;
    add.u32 %r4, %r4, 200;
    rem.u32 %r7, %r1, 5;
    setp.ne.u32 %p4, %r7, 1;
    @%p4 bra $JOIN;
    add.u32 %r4, %r4, 10;
    bra $JOIN;
$ELSE:
    add.u32 %r4, %r4, 100;
    rem.u32 %r7, %r1, 5;
    setp.ne.u32 %p4, %r7, 1;
    @%p4 bra $JOIN;
    add.u32 %r4, %r4, 10;
$JOIN:
    bar.sync 0;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r4;
$EXIT:
    ret;
}
"#;

fn expected(t: u32) -> Option<u32> {
    if t % 11 == 4 {
        return None;
    }
    let m = t % 7;
    let mut v = if m == 0 { 1000 } else { (0..m).sum() };
    v += if t.is_multiple_of(3) { 100 } else { 200 };
    if t % 5 == 1 {
        v += 10;
    }
    Some(v)
}

#[test]
fn divergent_threads_run_both_sides_and_meet_again() {
    let m = lower(KERNEL);
    for threads in [128u32, 256, 96] {
        let mut g = GlobalMemory::new();
        let out = g.alloc(vec![0xff; 4 * threads as usize]);
        let launch = Launch {
            params: vec![out],
            block: [threads, 1, 1],
            ..Launch::default()
        };
        run(&m, "k", &launch, &g).unwrap();
        let bytes = g.buffer(out).unwrap();
        for t in 0..threads {
            let got = u32::from_le_bytes(
                bytes[4 * t as usize..4 * t as usize + 4]
                    .try_into()
                    .unwrap(),
            );
            assert_eq!(
                got,
                expected(t).unwrap_or(u32::MAX),
                "thread {t} of {threads}"
            );
        }
    }
}

#[test]
fn a_barrier_some_threads_never_reach_is_a_deadlock_with_its_line() {
    // Warpgroup 1 exits; warpgroup 0 waits for 256 threads forever.
    let src = r#"
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k()
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    mov.u32 %r1, %tid.x;
    setp.ge.u32 %p1, %r1, 128;
    @%p1 bra $OUT;
    bar.sync 1, 256;
$OUT:
    ret;
}
"#;
    let m = lower(src);
    let launch = Launch {
        block: [256, 1, 1],
        ..Launch::default()
    };
    let e = run(&m, "k", &launch, &GlobalMemory::new()).unwrap_err();
    assert_eq!(e.line, 12, "{e}");
    assert!(
        e.message.contains("deadlock") && e.message.contains("128 of its 256"),
        "{e}"
    );
}
