//! Each hazard kind on a small IR-text input that has it, and the fixed
//! input that must come out clean: straight line, branches, loops, injected
//! `_warpgroup.*` ops, guards and calls.

use ori_hazard::{check_function, Hazard, HazardKind};

const HEAD: &str = "module version 8.0 target sm_90a address_size 64\n\nfunction k entry line 1 {\n  reg d0 f32 class 6\n  reg d1 f32 class 6\n  reg d2 f32 class 6\n  reg d3 f32 class 6\n  reg d4 f32 class 6\n  reg d5 f32 class 6\n  reg d6 f32 class 6\n  reg d7 f32 class 6\n  reg e0 f32 class 6\n  reg e1 f32 class 6\n  reg e2 f32 class 6\n  reg e3 f32 class 6\n  reg ra0 b32 class 3\n  reg ra1 b32 class 3\n  reg ra2 b32 class 3\n  reg ra3 b32 class 3\n  reg f0 f32 class 3\n  reg r5 b32 class 3\n  reg a b64 class 4\n  reg b b64 class 4\n  reg ptr b64 class 4\n  reg p pred class 1\n";

const MMA_D: &str =
    "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 inout {d0, d1, d2, d3}, a, b, 1, 1, 1, 0, 0";
const MMA_E: &str =
    "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 inout {e0, e1, e2, e3}, a, b, 1, 1, 1, 0, 0";
const MMA_D16: &str = "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 inout {d0, d1, d2, d3, d4, d5, d6, d7}, a, b, 1, 1, 1, 0, 0";
const MMA_RA: &str = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 inout {d0, d1, d2, d3}, {ra0, ra1, ra2, ra3}, b, 1, 1, 1, 0";
const FENCE: &str = "wgmma.fence.sync.aligned";
const COMMIT: &str = "wgmma.commit_group.sync.aligned";

fn wait(n: u32) -> String {
    format!("wgmma.wait_group.sync.aligned {n}")
}

/// Parse `body` (blocks of `#LINE inst` lines) and check it.
fn check(body: &str) -> Vec<Hazard> {
    let text = format!("{HEAD}{body}}}\n");
    let m = ori_ir::parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    check_function(m.funcs.values().next().unwrap())
}

/// Number the instructions of a straight-line body `#1`, `#2`, ... in one block.
fn straight(insts: &[&str]) -> String {
    let mut s = String::from("bb0:\n");
    for (k, i) in insts.iter().enumerate() {
        s.push_str(&format!("  #{} {i}\n", k + 1));
    }
    s
}

/// (kind, line, register name) of each failing hazard.
fn failing(body: &str) -> Vec<(HazardKind, u32, Option<String>)> {
    let text = format!("{HEAD}{body}}}\n");
    let m = ori_ir::parse_module(&text).unwrap();
    let f = m.funcs.values().next().unwrap();
    check_function(f)
        .into_iter()
        .filter(|h| h.kind.is_failing())
        .map(|h| (h.kind, h.line, h.reg.map(|r| f.vregs[r].name.to_string())))
        .collect()
}

fn kinds(hs: &[Hazard]) -> Vec<HazardKind> {
    hs.iter().map(|h| h.kind).collect()
}

const W0: &str = "wgmma.wait_group.sync.aligned 0";

#[test]
fn clean_pipeline_has_no_hazard() {
    let h = check(&straight(&[
        "mov.b32 out d0, 0f00000000",
        FENCE,
        MMA_D,
        MMA_D,
        COMMIT,
        W0,
        "st.global.b32 [ptr], d0",
    ]));
    assert!(h.is_empty(), "{h:?}");
}

#[test]
fn missing_fence_since_entry() {
    let bad = straight(&[MMA_D, COMMIT, W0]);
    assert_eq!(failing(&bad), vec![(HazardKind::MissingFence, 1, None)]);
    assert!(check(&straight(&[FENCE, MMA_D, COMMIT, W0])).is_empty());
}

#[test]
fn missing_fence_after_a_write_of_the_accumulator() {
    let bad = straight(&[FENCE, "mov.b32 out d1, 0f00000000", MMA_D, COMMIT, W0]);
    let h = check(&bad);
    assert_eq!(kinds(&h), vec![HazardKind::MissingFence]);
    assert_eq!((h[0].line, h[0].prior.is_some()), (3, true));
    let good = straight(&["mov.b32 out d1, 0f00000000", FENCE, MMA_D, COMMIT, W0]);
    assert!(check(&good).is_empty());
}

#[test]
fn accumulator_chains_need_the_same_shape() {
    let bad = straight(&[FENCE, MMA_D16, MMA_D, COMMIT, W0]);
    let h = failing(&bad);
    assert_eq!(h.len(), 4, "d0..d3 shared across shapes: {h:?}");
    assert!(h
        .iter()
        .all(|x| x.0 == HazardKind::MissingFence && x.1 == 3));
    let fenced = straight(&[FENCE, MMA_D16, FENCE, MMA_D, COMMIT, W0]);
    assert!(failing(&fenced).is_empty());
}

#[test]
fn read_of_a_committed_accumulator_before_the_wait() {
    let bad = straight(&[FENCE, MMA_D, COMMIT, "st.global.b32 [ptr], d2", W0]);
    assert_eq!(
        failing(&bad),
        vec![(HazardKind::AccumulatorAccessInFlight, 4, Some("d2".into()))]
    );
    let good = straight(&[FENCE, MMA_D, COMMIT, W0, "st.global.b32 [ptr], d2"]);
    assert!(check(&good).is_empty());
}

#[test]
fn write_of_an_in_flight_accumulator() {
    let bad = straight(&[FENCE, MMA_D, COMMIT, "mov.f32 out d0, 0f3F800000", W0]);
    assert_eq!(
        failing(&bad),
        vec![(HazardKind::AccumulatorAccessInFlight, 4, Some("d0".into()))]
    );
}

#[test]
fn a_wait_does_not_cover_uncommitted_wgmma() {
    let bad = straight(&[FENCE, MMA_D, W0, "st.global.b32 [ptr], d0"]);
    assert_eq!(
        failing(&bad),
        vec![(HazardKind::AccumulatorAccessInFlight, 4, Some("d0".into()))]
    );
}

#[test]
fn wait_n_keeps_the_n_newest_groups() {
    let body = straight(&[
        FENCE,
        MMA_D,
        COMMIT,
        MMA_E,
        COMMIT,
        &wait(1),
        "st.global.b32 [ptr], d0",
        "st.global.b32 [ptr], e0",
        W0,
        "st.global.b32 [ptr], e1",
    ]);
    assert_eq!(
        failing(&body),
        vec![(HazardKind::AccumulatorAccessInFlight, 8, Some("e0".into()))]
    );
}

#[test]
fn injected_ops_act_as_fence_commit_and_wait() {
    let good = straight(&[
        "_warpgroup.arrive",
        MMA_D,
        "_warpgroup.commit_batch",
        "_warpgroup.wait 0",
        "add.f32 out d0, d0, 0f3F800000",
        "_warpgroup.arrive",
        MMA_D,
        COMMIT,
        W0,
    ]);
    assert!(check(&good).is_empty(), "{:?}", check(&good));
    let no_arrive = straight(&[
        "_warpgroup.arrive",
        MMA_D,
        "_warpgroup.commit_batch",
        "_warpgroup.wait 0",
        "add.f32 out d0, d0, 0f3F800000",
        MMA_D,
        COMMIT,
        W0,
    ]);
    assert_eq!(
        failing(&no_arrive),
        vec![(HazardKind::MissingFence, 6, Some("d0".into()))]
    );
    let wait1 = straight(&[
        "_warpgroup.arrive",
        MMA_D,
        "_warpgroup.commit_batch",
        "_warpgroup.wait 1",
        "st.global.b32 [ptr], d3",
    ]);
    assert_eq!(
        failing(&wait1),
        vec![(HazardKind::AccumulatorAccessInFlight, 5, Some("d3".into()))]
    );
}

#[test]
fn guarded_waits_and_fences_give_no_credit() {
    let bad_wait = straight(&[
        FENCE,
        MMA_D,
        COMMIT,
        "@p wgmma.wait_group.sync.aligned 0",
        "st.global.b32 [ptr], d0",
    ]);
    assert_eq!(failing(&bad_wait).len(), 1);
    let bad_fence = straight(&[
        "mov.b32 out d0, 0f00000000",
        "@p wgmma.fence.sync.aligned",
        MMA_D,
        COMMIT,
        W0,
    ]);
    assert_eq!(
        kinds(&check(&bad_fence)),
        vec![HazardKind::MissingFence, HazardKind::MissingFence]
    );
}

#[test]
fn a_wait_on_one_path_only_leaves_the_join_in_flight() {
    let bad = format!(
        "bb0:\n  #1 {FENCE}\n  #2 {MMA_D}\n  #3 {COMMIT}\n  #4 @p bra L1\nbb1:\n  #5 {W0}\nL1:\n  #6 st.global.b32 [ptr], d0\n  #7 ret\n"
    );
    assert_eq!(
        failing(&bad),
        vec![(HazardKind::AccumulatorAccessInFlight, 6, Some("d0".into()))]
    );
    let good = bad.replace("  #6 st", "  #8 wgmma.wait_group.sync.aligned 0\n  #6 st");
    assert!(failing(&good).is_empty());
}

#[test]
fn a_commit_on_one_path_only_leaves_the_wgmma_uncommitted() {
    let bad = format!(
        "bb0:\n  #1 {FENCE}\n  #2 {MMA_D}\n  #3 @p bra L1\nbb1:\n  #4 {COMMIT}\nL1:\n  #5 {W0}\n  #6 st.global.b32 [ptr], d0\n  #7 ret\n"
    );
    assert_eq!(
        failing(&bad),
        vec![(HazardKind::AccumulatorAccessInFlight, 6, Some("d0".into()))]
    );
}

#[test]
fn the_back_edge_brings_the_epilogue_read_to_the_next_wgmma() {
    // Loop: wgmma, commit, wait, then read d0; the next iteration's wgmma
    // writes d0 again with no fence since that read.
    let bad = format!(
        "bb0:\n  #1 {FENCE}\nL1:\n  #2 {MMA_D}\n  #3 {COMMIT}\n  #4 {W0}\n  #5 add.f32 out d0, d0, 0f3F800000\n  #6 @p bra L1\nbb2:\n  #7 ret\n"
    );
    assert_eq!(
        failing(&bad),
        vec![(HazardKind::MissingFence, 2, Some("d0".into()))]
    );
    let good = bad.replace("L1:\n  #2", &format!("L1:\n  #8 {FENCE}\n  #2"));
    assert!(failing(&good).is_empty(), "{:?}", failing(&good));
}

#[test]
fn a_software_pipelined_loop_with_wait_1() {
    // Triton's shape: each iteration issues one group and keeps one in flight.
    let body = format!(
        "bb0:\n  #1 {FENCE}\nL1:\n  #2 {MMA_D}\n  #3 {COMMIT}\n  #4 {}\n  #5 @p bra L1\nbb2:\n  #6 {W0}\n  #7 st.global.b32 [ptr], d0\n  #8 ret\n",
        wait(1)
    );
    assert!(check(&body).is_empty(), "{:?}", check(&body));
    let no_drain = body.replace(&format!("#6 {W0}"), "#6 mov.b32 out r5, 0");
    assert_eq!(
        failing(&no_drain),
        vec![(HazardKind::AccumulatorAccessInFlight, 7, Some("d0".into()))]
    );
}

#[test]
fn a_fragment_writes_fail_and_reads_are_informational() {
    let bad = straight(&[FENCE, MMA_RA, COMMIT, "ld.global.b32 out ra1, [ptr]", W0]);
    assert_eq!(
        failing(&bad),
        vec![(HazardKind::AFragmentWriteInFlight, 4, Some("ra1".into()))]
    );
    let good = straight(&[FENCE, MMA_RA, COMMIT, W0, "ld.global.b32 out ra1, [ptr]"]);
    assert!(check(&good).is_empty());
    // A plain read of the fragment while in flight: reported, but not failing.
    let read = straight(&[FENCE, MMA_RA, COMMIT, "add.s32 out r5, ra0, 1", W0]);
    let h = check(&read);
    assert_eq!(kinds(&h), vec![HazardKind::AFragmentReadInFlight]);
    assert!(!h[0].kind.is_failing());
}

#[test]
fn a_fragment_write_needs_a_fence_a_read_does_not() {
    let write = straight(&[FENCE, "ld.global.b32 out ra2, [ptr]", MMA_RA, COMMIT, W0]);
    assert_eq!(
        failing(&write),
        vec![(HazardKind::MissingFence, 3, Some("ra2".into()))]
    );
    let read = straight(&[FENCE, "add.s32 out r5, ra2, 1", MMA_RA, COMMIT, W0]);
    let h = check(&read);
    assert_eq!(kinds(&h), vec![HazardKind::AFragmentReadUnfenced]);
    assert!(!h[0].kind.is_failing());
}

#[test]
fn an_accumulator_used_as_a_fragment_needs_a_fence() {
    // ISA example 2 without its second fence: d0..d3 written as accumulators,
    // then read as the A fragment of another wgmma.
    let a_from_d = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 inout {e0, e1, e2, e3}, {d0, d1, d2, d3}, b, 1, 1, 1, 0";
    let bad = straight(&[FENCE, MMA_D, a_from_d, COMMIT, W0]);
    assert_eq!(failing(&bad).len(), 4);
    let good = straight(&[FENCE, MMA_D, FENCE, a_from_d, COMMIT, W0]);
    assert!(failing(&good).is_empty());
}

#[test]
fn calls_touch_their_operands_and_give_no_credit() {
    // A call passing an in-flight accumulator reads it.
    let bad = straight(&[FENCE, MMA_D, COMMIT, "call out (r5), g, (d0)", W0]);
    assert_eq!(
        failing(&bad),
        vec![(HazardKind::AccumulatorAccessInFlight, 4, Some("d0".into()))]
    );
    // A call on other registers touches no caller accumulator.
    let other = straight(&[FENCE, MMA_D, COMMIT, "call out (r5), g, (r5)", W0]);
    assert!(check(&other).is_empty());
    // Nor does it stand in for a wait.
    let no_wait = straight(&[
        FENCE,
        MMA_D,
        COMMIT,
        "call g, ()",
        "st.global.b32 [ptr], d0",
    ]);
    assert_eq!(failing(&no_wait).len(), 1);
}
