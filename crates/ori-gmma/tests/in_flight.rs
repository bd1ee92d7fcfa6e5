//! Phase 85's in-flight facts on straight-line, branching and loop inputs,
//! written in the IR text form.

use ori_gmma::propagate_gmma::propagate;

const HEAD: &str = "module version 8.0 target sm_90a address_size 64\n\nfunction k entry line 1 {\n  reg d0 f32 class 6\n  reg d1 f32 class 6\n  reg e0 f32 class 6\n  reg e1 f32 class 6\n  reg a b64 class 4\n  reg p pred class 1\n";
const MMA_D: &str =
    "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 inout {d0, d1, d0, d1}, a, a, 1, 1, 1, 0, 0";
const MMA_E: &str =
    "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 inout {e0, e1, e0, e1}, a, a, 1, 1, 1, 0, 0";

fn facts(body: &str) -> (ori_ir::Function, ori_ir::GmmaFacts) {
    let text = format!("{HEAD}{body}}}\n");
    let m = ori_ir::parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut f = m.funcs.values().next().unwrap().clone();
    let g = propagate(&mut f);
    (f, g)
}

/// The indices of the sets in flight at the entry of the `k`-th block.
fn entry(f: &ori_ir::Function, g: &ori_ir::GmmaFacts, k: usize) -> Vec<u32> {
    let sets = &g.in_flight_at_entry[f.layout.blocks()[k]];
    sets.iter().map(|s| s.as_u32()).collect()
}

#[test]
fn straight_line_sets_and_words() {
    let (f, g) = facts(&format!("bb0:\n  #1 {MMA_D}\n  #2 {MMA_E}\n  #3 {MMA_D}\n"));
    assert_eq!(
        g.sets.len(),
        2,
        "two distinct sets, the repeated one interned once"
    );
    let words: Vec<_> = f
        .layout
        .all_insts()
        .map(|i| f.insts[i].accum.unwrap())
        .collect();
    assert_eq!(words[0].src_word(), 0x9000_0000);
    assert_eq!(words[0].dst_word(), 0x1000_0000);
    assert_eq!(words[1].dst_word(), 0x1000_0001);
    assert_eq!(words[2], words[0]);
    assert_eq!(g.max_active, 2);
}

#[test]
fn branch_joins_union_of_paths() {
    let body = format!(
        "bb0:\n  #1 @p bra L1\nbb1:\n  #2 {MMA_D}\n  #3 wgmma.commit_group.sync.aligned\nL1:\n  #4 wgmma.wait_group.sync.aligned 0\n  #5 ret\n"
    );
    let (f, g) = facts(&body);
    assert_eq!(entry(&f, &g, 0), Vec::<u32>::new());
    assert_eq!(
        entry(&f, &g, 2),
        vec![0],
        "the set is in flight on one incoming path"
    );
}

#[test]
fn loop_carries_groups_around_the_back_edge() {
    // wait_group 1 inside the loop keeps the newest group in flight across iterations.
    let body = format!(
        "bb0:\n  #1 mov.b32 out d0, 0\nL1:\n  #2 {MMA_D}\n  #3 wgmma.commit_group.sync.aligned\n  #4 wgmma.wait_group.sync.aligned 1\n  #5 @p bra L1\nbb2:\n  #6 wgmma.wait_group.sync.aligned 0\n  #7 ret\n"
    );
    let (f, g) = facts(&body);
    assert_eq!(
        entry(&f, &g, 1),
        vec![0],
        "back edge brings the set in flight into the header"
    );
    assert_eq!(entry(&f, &g, 2), vec![0]);
}

#[test]
fn scale_d_zero_reads_nothing() {
    let mma = MMA_D.replace(", 1, 1, 1, 0, 0", ", 0, 1, 1, 0, 0");
    let (f, g) = facts(&format!("bb0:\n  #1 {mma}\n"));
    let w = f.insts[f.layout.all_insts().next().unwrap()].accum.unwrap();
    assert!(g.sets[w.src].is_empty());
    assert_eq!(g.sets[w.dst].len(), 2);
}
