# Cases probing ptxas's GMMA pipeline diagnostics. exec'd by gen_corpus.py
# (shares its namespace: case, raw, mma, regs, init, stores, FENCE, COMMIT, WAIT, ...).

D = regs("d", 4)          # n8 f32 accumulator set
E = regs("e", 4)          # a second n8 f32 accumulator set
M = mma("f16", 8, D)
ME = mma("f16", 8, E)
TID = ["mov.u32 r1, %tid.x;", "setp.lt.u32 p1, r1, 64;"]
CTA = ["mov.u32 r2, %ctaid.x;", "setp.eq.u32 p2, r2, 0;"]


def pipe(mid, pre=None, post=None, accs=None):
    """init D; pre; fence; mma; MID; mma; commit; wait 0; post; store D."""
    accs = accs or D
    return (init(accs) + (pre or []) + [FENCE, M] + mid + [M, COMMIT, WAIT(0)]
            + (post or []) + stores(accs))


# --- reads of accumulators ---------------------------------------------------
case("c7517_read_acc_between_mma",
     "Read of an accumulator (add reads d0,d1 and writes d0) between two wgmma of one group.\n"
     "Seed predicts C7514; ptxas injects wait (C7517, line of the add) and arrive (C7519, line of next wgmma).",
     pipe(["add.f32 d0, d0, d1;"]))
case("c7517_pure_read_acc_between_mma",
     "Pure read of accumulators (into f0) between two wgmma of one group.",
     pipe(["add.f32 f0, d0, d1;"], post=["st.global.f32 [ptr+64], f0;"]))
case("c7517_read_acc_before_commit",
     "Read of an accumulator after the last wgmma, before commit.",
     init(D) + [FENCE, M, M, "add.f32 f0, d0, d1;", COMMIT, WAIT(0), "st.global.f32 [ptr+64], f0;"] + stores(D))
case("c7517_read_acc_after_commit",
     "Read of an accumulator after commit, before wait_group.",
     init(D) + [FENCE, M, M, COMMIT, "add.f32 f0, d0, d1;", WAIT(0), "st.global.f32 [ptr+64], f0;"] + stores(D))
case("c7517_no_wait_at_all",
     "Pipeline without wgmma.wait_group: accumulators stored after commit.",
     init(D) + [FENCE, M, COMMIT] + stores(D))
case("c7517_read_acc_wait1_inflight",
     "Two groups (D then E); wait_group 1 then read E (still in flight) -> needs a wait.",
     init(D) + init(E, "0f3F800000") + [FENCE, M, COMMIT, ME, COMMIT, WAIT(1), "add.f32 f0, e0, e1;", WAIT(0),
                          "st.global.f32 [ptr+64], f0;"] + stores(D) + stores(E, 4))
case("clean_wait1_read_completed_group",
     "Two groups (D then E); wait_group 1 then read D (completed) -> legal, no messages expected.",
     init(D) + init(E, "0f3F800000") + [FENCE, M, COMMIT, ME, COMMIT, WAIT(1), "add.f32 f0, d0, d1;", WAIT(0),
                          "st.global.f32 [ptr+64], f0;"] + stores(D) + stores(E, 4))
case("c7517_read_two_accs_between_mma",
     "Two separate reads of accumulators between the same two wgmma (is each reported?).",
     pipe(["add.f32 f0, d0, d1;", "add.f32 f1, d2, d3;"],
          post=["st.global.f32 [ptr+64], f0;", "st.global.f32 [ptr+68], f1;"]))
case("c7517_read_acc_twice_in_sequence",
     "Three wgmma with an accumulator read between each pair (two injection sites).",
     init(D) + [FENCE, M, "add.f32 d0, d0, d1;", M, "add.f32 d2, d2, d3;", M, COMMIT, WAIT(0)] + stores(D))
case("c7517_read_other_set_between_mma",
     "Group of wgmma on D then on E; between them read D (E's wgmma does not use D).",
     init(D) + init(E, "0f3F800000") + [FENCE, M, "add.f32 f0, d0, d1;", ME, COMMIT, WAIT(0),
                          "st.global.f32 [ptr+64], f0;"] + stores(D) + stores(E, 4))

# --- definitions of accumulators -----------------------------------------------
case("c7515_def_acc_between_mma",
     "Non-wgmma definition (mov) of an accumulator between two wgmma of one group.",
     pipe(["mov.f32 d0, 0f3F800000;"]))
case("c7515_def_acc_after_fence",
     "Definition of an accumulator between wgmma.fence and the first wgmma (seed's C7515 example).",
     init(D) + [FENCE, "mov.f32 d0, 0f3F800000;", M, COMMIT, WAIT(0)] + stores(D))
case("c7515_def_acc_after_commit",
     "Definition of an accumulator after commit, before wait.",
     init(D) + [FENCE, M, COMMIT, "mov.f32 d0, 0f3F800000;", WAIT(0)] + stores(D))
case("c7515_def_acc_from_load_between_mma",
     "Accumulator redefined by a global load between two wgmma.",
     pipe(["ld.global.f32 d1, [ptr+256];"]))
case("c7515_def_other_set_between_mma",
     "Between wgmma on D and wgmma on E, define E (E not yet in flight).",
     init(D) + init(E, "0f3F800000") + [FENCE, M, "mov.f32 e0, 0f3F800000;", ME, COMMIT, WAIT(0)] + stores(D) + stores(E, 4))

# --- inputs: descriptors and A fragments ----------------------------------------
case("c7513_def_desc_between_mma",
     "Descriptor (a) redefined by add between two wgmma of one group.",
     pipe(["add.s64 a, a, 2;"]))
case("c7513_def_desc_b_between_mma",
     "Descriptor (b) redefined by add between two wgmma of one group.",
     pipe(["add.s64 b, b, 2;"]))
case("clean_desc_in_other_reg_between_mma",
     "Second descriptor computed into a fresh register between two wgmma (no redefinition).",
     init(D) + [FENCE, M, "add.s64 a2, a, 2;", mma("f16", 8, D, a="a2"), COMMIT, WAIT(0)] + stores(D))
RA = "{ra0, ra1, ra2, ra3}"
MRA = mma("f16", 8, D, a=RA)
LDA = [f"ld.global.b32 ra{i}, [ptr+{4096 + 4 * i}];" for i in range(4)]
case("c7513_def_rega_between_mma",
     "A fragment register (ra0) redefined between two register-A wgmma of one group.",
     LDA + init(D) + [FENCE, MRA, "add.s32 ra0, ra0, 1;", MRA, COMMIT, WAIT(0)] + stores(D))
case("c7513_def_rega_after_fence",
     "A fragment register redefined between fence and the first register-A wgmma.",
     LDA + init(D) + [FENCE, "add.s32 ra0, ra0, 1;", MRA, COMMIT, WAIT(0)] + stores(D))
case("c7513_load_rega_between_mma",
     "A fragment registers reloaded from memory between two register-A wgmma.",
     LDA + init(D) + [FENCE, MRA] + [f"ld.global.b32 ra{i}, [ptr+{8192 + 4 * i}];" for i in range(4)]
     + [MRA, COMMIT, WAIT(0)] + stores(D))
case("clean_read_rega_between_mma",
     "A fragment register only read between two register-A wgmma.",
     LDA + init(D) + [FENCE, MRA, "add.s32 r3, ra0, 1;", MRA, COMMIT, WAIT(0), "st.global.b32 [ptr+64], r3;"]
     + stores(D))
case("c7513_def_rega_after_commit",
     "A fragment register redefined after commit, before wait (in-flight wgmma still reads it).",
     LDA + init(D) + [FENCE, MRA, COMMIT, "add.s32 ra0, ra0, 1;", WAIT(0),
                      "st.global.b32 [ptr+64], ra0;"] + stores(D))

# --- structure -------------------------------------------------------------------
case("c7519_no_fence",
     "Pipeline without wgmma.fence (mma, commit, wait).",
     init(D) + [M, COMMIT, WAIT(0)] + stores(D))
case("c7516_no_commit",
     "Pipeline without commit_group (fence, mma, wait).",
     init(D) + [FENCE, M, WAIT(0)] + stores(D))
case("c7516_no_commit_no_wait",
     "fence + wgmma only: no commit, no wait, accumulators stored.",
     init(D) + [FENCE, M] + stores(D))
case("clean_two_groups_wait0",
     "Two commit groups on two accumulator sets, then wait 0.",
     init(D) + init(E, "0f3F800000") + [FENCE, M, COMMIT, ME, COMMIT, WAIT(0)] + stores(D) + stores(E, 4))
case("clean_two_groups_same_acc",
     "Two commit groups on the same accumulators, then wait 0.",
     init(D) + [FENCE, M, COMMIT, M, COMMIT, WAIT(0)] + stores(D))
case("clean_wait1_then_wait0",
     "Two groups, wait 1, wait 0, then reads.",
     init(D) + init(E, "0f3F800000") + [FENCE, M, COMMIT, ME, COMMIT, WAIT(1), WAIT(0)] + stores(D) + stores(E, 4))
case("clean_fence_twice",
     "Two fences in a row before the group.",
     init(D) + [FENCE, FENCE, M, M, COMMIT, WAIT(0)] + stores(D))
case("clean_empty_commit",
     "commit_group + wait_group with no wgmma in between, then a normal pipeline.",
     init(D) + [COMMIT, WAIT(0), FENCE, M, COMMIT, WAIT(0)] + stores(D))
case("clean_wait_without_mma",
     "Only wgmma.fence/commit/wait, no wgmma.mma_async (no GMMA at all).",
     [FENCE, COMMIT, WAIT(0), "st.global.b32 [ptr], r15;"])
case("c7516_mma_after_wait_no_fence",
     "Second pipeline without its own fence (fence, mma, commit, wait, mma, commit, wait).",
     init(D) + [FENCE, M, COMMIT, WAIT(0), M, COMMIT, WAIT(0)] + stores(D))
case("clean_three_groups_wait2",
     "Three groups on three sets, wait 2, wait 1, wait 0 with reads of the completed sets in between.",
     init(D) + init(E, "0f3F800000") + init(regs("d", 4, 8), "0f40000000") + [
         FENCE, M, COMMIT, ME, COMMIT, mma("f16", 8, regs("d", 4, 8)), COMMIT,
         WAIT(2), "add.f32 f0, d0, d1;", WAIT(1), "add.f32 f1, e0, e1;", WAIT(0),
         "st.global.f32 [ptr+200], f0;", "st.global.f32 [ptr+204], f1;"]
     + stores(D) + stores(E, 4) + stores(regs("d", 4, 8), 8))

# --- control flow ------------------------------------------------------------------
case("c7518_divergent_read_acc",
     "Accumulator read inside a divergent (%tid) branch between commit and wait.",
     TID + init(D) + [FENCE, M, COMMIT, "@!p1 bra L1;", "add.f32 d0, d0, d1;", "L1:", WAIT(0)] + stores(D))
case("c7518_divergent_read_acc_between_mma",
     "Accumulator read inside a divergent (%tid) branch between two wgmma.",
     TID + init(D) + [FENCE, M, "@!p1 bra L1;", "add.f32 d0, d0, d1;", "L1:", M, COMMIT, WAIT(0)] + stores(D))
case("c7520_divergent_fence_mma",
     "Whole pipeline inside a divergent (%tid) branch.",
     TID + init(D) + ["@!p1 bra L1;", FENCE, M, COMMIT, WAIT(0), "L1:"] + stores(D))
case("c7520_divergent_mma_only",
     "wgmma inside a divergent branch, fence before and commit/wait after the branch.",
     TID + init(D) + [FENCE, "@!p1 bra L1;", M, "L1:", COMMIT, WAIT(0)] + stores(D))
case("c7517_uniform_branch_read_acc",
     "Accumulator read inside a uniform (%ctaid) branch between commit and wait.",
     CTA + init(D) + [FENCE, M, COMMIT, "@!p2 bra L1;", "add.f32 d0, d0, d1;", "L1:", WAIT(0)] + stores(D))
case("clean_uniform_branch_pipeline",
     "Whole pipeline inside a uniform branch on a kernel parameter.",
     ["setp.eq.u32 p3, r15, 0;"] + init(D) + ["@p3 bra L1;", FENCE, M, COMMIT, WAIT(0), "L1:"] + stores(D))
case("c7520_divergent_def_acc",
     "Accumulator defined in a divergent branch between two wgmma.",
     TID + init(D) + [FENCE, M, "@!p1 bra L1;", "mov.f32 d0, 0f3F800000;", "L1:", M, COMMIT, WAIT(0)] + stores(D))
case("c7518_predicated_read_acc",
     "Accumulator read by a %tid-predicated instruction between commit and wait (no branch).",
     TID + init(D) + [FENCE, M, COMMIT, "@p1 add.f32 d0, d0, d1;", WAIT(0)] + stores(D))
case("c7518_divergent_branch_wait_inside",
     "Divergent branch between commit and wait; the wait itself is inside the branch.",
     TID + init(D) + [FENCE, M, COMMIT, "@!p1 bra L1;", WAIT(0), "add.f32 d0, d0, d1;", "L1:"] + stores(D))

# loops
case("clean_loop_pipeline_wait0",
     "Run-time trip count loop; each iteration: fence, 2 wgmma, commit, wait 0.",
     init(D) + ["mov.u32 r4, 0;", "LOOP:", FENCE, M, M, COMMIT, WAIT(0), "add.u32 r4, r4, 1;",
                "setp.lt.u32 p3, r4, r15;", "@p3 bra LOOP;"] + stores(D),
     notcomp="loop body may be unrolled/scheduled by ptxas")
case("clean_loop_mainloop_wait1",
     "Mainloop shape: prologue group, loop {fence; mma; commit; wait 1}, wait 0 after loop.",
     init(D) + ["mov.u32 r4, 0;", FENCE, M, COMMIT, "LOOP:", FENCE, M, COMMIT, WAIT(1),
                "add.s64 a, a, 2;", "add.u32 r4, r4, 1;", "setp.lt.u32 p3, r4, r15;", "@p3 bra LOOP;",
                WAIT(0)] + stores(D),
     notcomp="loop body may be unrolled/scheduled by ptxas")
case("c7517_loop_read_acc_in_loop",
     "Loop with read of accumulators inside the loop body between two wgmma.",
     init(D) + ["mov.u32 r4, 0;", "LOOP:", FENCE, M, "add.f32 d0, d0, d1;", M, COMMIT, WAIT(0),
                "add.u32 r4, r4, 1;", "setp.lt.u32 p3, r4, r15;", "@p3 bra LOOP;"] + stores(D),
     notcomp="loop body may be unrolled/scheduled by ptxas")
case("c7517_loop_pipeline_across_backedge",
     "Loop whose body is fence+mma+commit; wait_group 0 only after the loop.",
     init(D) + ["mov.u32 r4, 0;", "LOOP:", FENCE, M, COMMIT, "add.u32 r4, r4, 1;",
                "setp.lt.u32 p3, r4, r15;", "@p3 bra LOOP;", WAIT(0)] + stores(D),
     notcomp="loop body may be unrolled/scheduled by ptxas")
case("c7517_loop_no_wait_read_after",
     "Loop of fence+mma+commit; accumulators read after the loop without any wait.",
     init(D) + ["mov.u32 r4, 0;", "LOOP:", FENCE, M, COMMIT, "add.u32 r4, r4, 1;",
                "setp.lt.u32 p3, r4, r15;", "@p3 bra LOOP;"] + stores(D),
     notcomp="loop body may be unrolled/scheduled by ptxas")
case("clean_loop_desc_advance",
     "Loop advancing the descriptor after wait 0 each iteration.",
     init(D) + ["mov.u32 r4, 0;", "LOOP:", FENCE, M, COMMIT, WAIT(0), "add.s64 a, a, 2;", "add.s64 b, b, 2;",
                "add.u32 r4, r4, 1;", "setp.lt.u32 p3, r4, r15;", "@p3 bra LOOP;"] + stores(D),
     notcomp="loop body may be unrolled/scheduled by ptxas")

# --- calls ---------------------------------------------------------------------------
EXT = ".extern .func (.reg .b32 rv) ext_fn(.reg .b32 x);"
INT_FN = """.func (.reg .b32 rv) int_fn(.reg .b32 x)
{
  add.u32 rv, x, 1;
  ret;
}"""
VIS_FN = """.visible .func (.reg .b32 rv) vis_fn(.reg .b32 x)
{
  add.u32 rv, x, 1;
  ret;
}"""
CALLST = ["st.global.b32 [ptr+128], r5;"]
case("c7509_extern_call_in_pipeline",
     "Call to an extern .func between two wgmma of one group (-c).",
     pipe(["call (r5), ext_fn, (r15);"], post=CALLST), flags="-c", pre=EXT)
case("c7509_extern_call_after_wait",
     "Call to an extern .func after the pipeline completed (-c).",
     pipe([], post=["call (r5), ext_fn, (r15);"] + CALLST), flags="-c", pre=EXT)
case("c7509_extern_call_before_fence",
     "Call to an extern .func before the pipeline (-c).",
     ["call (r5), ext_fn, (r15);"] + pipe([], post=CALLST), flags="-c", pre=EXT)
case("c7509_visible_func_call_after_wait_c",
     "Call to a defined .visible .func after the pipeline, compiled with -c.",
     pipe([], post=["call (r5), vis_fn, (r15);"] + CALLST), flags="-c", pre=VIS_FN)
case("clean_visible_func_call_after_wait",
     "Call to a defined .visible .func after the pipeline, whole-program compile (no -c).",
     pipe([], post=["call (r5), vis_fn, (r15);"] + CALLST), pre=VIS_FN)
case("clean_internal_func_call_after_wait",
     "Call to a defined internal .func after the pipeline (no -c).",
     pipe([], post=["call (r5), int_fn, (r15);"] + CALLST), pre=INT_FN)
case("c7510_internal_func_call_in_pipeline",
     "Call to a defined internal .func between two wgmma of one group (no -c).",
     pipe(["call (r5), int_fn, (r15);"], post=CALLST), pre=INT_FN)
case("c7510_internal_func_call_after_commit",
     "Call to a defined internal .func between commit and wait (no -c).",
     init(D) + [FENCE, M, COMMIT, "call (r5), int_fn, (r15);", WAIT(0)] + CALLST + stores(D), pre=INT_FN)
case("c7510_internal_func_call_after_commit_c",
     "Call to a defined internal .func between commit and wait, compiled with -c.",
     init(D) + [FENCE, M, COMMIT, "call (r5), int_fn, (r15);", WAIT(0)] + CALLST + stores(D), pre=INT_FN,
     flags="-c")

PIPE_FN = """.func pipe_fn(.reg .b64 pa, .reg .b64 pb, .reg .b64 pout)
{
  .reg .f32 c<4>;
  mov.b32 c0, 0f00000000;
  mov.b32 c1, 0f00000000;
  mov.b32 c2, 0f00000000;
  mov.b32 c3, 0f00000000;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {c0, c1, c2, c3}, pa, pb, 1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  st.global.f32 [pout], c0;
  st.global.f32 [pout+4], c1;
  st.global.f32 [pout+8], c2;
  st.global.f32 [pout+12], c3;
  ret;
}"""
case("clean_func_with_pipeline",
     "Kernel calls an internal .func that contains a complete pipeline.",
     ["call pipe_fn, (a, b, ptr);"], pre=PIPE_FN)
case("clean_func_with_pipeline_c",
     "Kernel calls an internal .func that contains a complete pipeline (-c).",
     ["call pipe_fn, (a, b, ptr);"], pre=PIPE_FN, flags="-c")
case("c7510_call_pipeline_func_inside_pipeline",
     "Kernel pipeline (fence, mma) calls a .func with its own pipeline before commit/wait.",
     init(D) + [FENCE, M, "call pipe_fn, (a, b, ptr);", COMMIT, WAIT(0)] + stores(D), pre=PIPE_FN)

COMMIT_FN = """.func commit_wait_fn()
{
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  ret;
}"""
case("c7510_commit_wait_in_callee",
     "Kernel does fence+mma; commit and wait are in a called .func.",
     init(D) + [FENCE, M, "call commit_wait_fn, ();"] + stores(D), pre=COMMIT_FN)

# --- register pressure / live ranges -------------------------------------------------------
def many_sets(nsets, n, group_all=True, name_pfx="d"):
    cnt = n // 2
    sets = [regs(name_pfx, cnt, i * cnt) for i in range(nsets)]
    body = []
    import struct
    for i, s in enumerate(sets):
        # distinct initial values so that ptxas cannot CSE identical wgmma
        body += init(s, "0f%08X" % struct.unpack(">I", struct.pack(">f", float(i)))[0])
    body += [FENCE]
    for s in sets:
        body += [mma("f16", n, s)]
        if not group_all:
            body += [COMMIT]
    if group_all:
        body += [COMMIT]
    body += [WAIT(0)]
    for i, s in enumerate(sets):
        body += stores(s, i * cnt)
    return body


for nsets in [2, 4, 8, 16, 32, 64]:
    case(f"probe_live_ranges_{nsets}x_n8_one_group",
         f"{nsets} distinct n8 accumulator sets in one commit group (live-range limit probe, C7407?).",
         many_sets(nsets, 8))
for nsets in [8, 16, 32, 64]:
    case(f"probe_live_ranges_{nsets}x_n8_separate_groups",
         f"{nsets} distinct n8 accumulator sets, one commit group each, single wait 0.",
         many_sets(nsets, 8, group_all=False))
case("probe_regs_2x_n256",
     "Two n256 f32 accumulator sets (256 registers) in one group.",
     many_sets(2, 256))
case("probe_regs_e_n256_plus_d_n256",
     "Two n256 f32 sets in different groups.",
     many_sets(2, 256, group_all=False))
case("probe_maxrreg_n256",
     "n256 f32 pipeline compiled with -maxrregcount=64 (function register budget).",
     clean_single("f16", 256), flags="-maxrregcount=64")
case("probe_maxrreg_n64",
     "n64 f32 pipeline compiled with -maxrregcount=32.",
     clean_single("f16", 64), flags="-maxrregcount=32")

# --- batch 2: refining reads vs. serialization ---------------------------------------------
case("c7514_mov_read_d0_between_mma",
     "Pure read of one accumulator (mov f0, d0) between two wgmma that chain on the same set.",
     pipe(["mov.f32 f0, d0;"], post=["st.global.f32 [ptr+64], f0;"]))
case("c7517_rmw_d0_const_between_mma",
     "Read-modify-write of one accumulator (d0 = d0 + 1.0) between two wgmma.",
     pipe(["add.f32 d0, d0, 0f3F800000;"]))
case("c7517_def_d0_from_d1_between_mma",
     "d0 = d1 + d2 (reads two accumulators, redefines a third) between two wgmma.",
     pipe(["add.f32 d0, d1, d2;"]))
case("c7514_read_then_rmw_between_mma",
     "Pure read (f0 = d1) then RMW of d0 between two wgmma.",
     pipe(["mov.f32 f0, d1;", "add.f32 d0, d0, 0f3F800000;"], post=["st.global.f32 [ptr+64], f0;"]))
case("c7514_read_acc_after_commit_then_mma",
     "Two groups on the same set: read D after the first commit, before the second group's wgmma.",
     init(D) + [FENCE, M, COMMIT, "mov.f32 f0, d0;", M, COMMIT, WAIT(0), "st.global.f32 [ptr+64], f0;"] + stores(D))
case("c7517_rmw_acc_after_commit_then_mma",
     "Two groups on the same set: RMW d0 after the first commit, before the second group's wgmma.",
     init(D) + [FENCE, M, COMMIT, "add.f32 d0, d0, 0f3F800000;", M, COMMIT, WAIT(0)] + stores(D))

# predicated (partial) definitions cannot be renamed away
case("c7515_pred_def_acc_between_mma",
     "Predicated (uniform %ctaid predicate) definition of an accumulator between two wgmma.",
     CTA + pipe(["@p2 mov.f32 d0, 0f3F800000;"]))
case("c7515_pred_def_acc_after_fence",
     "Predicated definition of an accumulator between fence and the first wgmma.",
     CTA + init(D) + [FENCE, "@p2 mov.f32 d0, 0f3F800000;", M, COMMIT, WAIT(0)] + stores(D))
case("c7513_pred_def_rega_between_mma",
     "Predicated (uniform) definition of an A-fragment register between two register-A wgmma.",
     CTA + LDA + init(D) + [FENCE, MRA, "@p2 add.s32 ra0, ra0, 1;", MRA, COMMIT, WAIT(0)] + stores(D))
case("c7513_pred_def_desc_between_mma",
     "Predicated (uniform) redefinition of the A descriptor between two wgmma.",
     CTA + pipe(["@p2 add.s64 a, a, 2;"]))
case("c7514_pred_read_acc_between_mma",
     "Predicated (uniform) RMW of an accumulator between two wgmma.",
     CTA + pipe(["@p2 add.f32 d0, d0, d1;"]))
case("c7515_def_acc_between_mma_other_shape",
     "Definition of an accumulator between an n8 wgmma and an n16 wgmma whose set contains it.",
     init(regs("d", 8)) + [FENCE, M, "mov.f32 d0, 0f3F800000;", mma("f16", 16, regs("d", 8)), COMMIT, WAIT(0)]
     + stores(regs("d", 8)))
case("c7515_def_acc_uniform_branch_between_mma",
     "Definition of an accumulator inside a uniform (%ctaid) branch between two wgmma.",
     CTA + pipe(["@!p2 bra L1;", "mov.f32 d0, 0f3F800000;", "L1:"]))

# structure
case("c7516_commit_in_uniform_branch",
     "fence+mma, commit only on one side of a uniform branch, wait after the join.",
     CTA + init(D) + [FENCE, M, "@!p2 bra L1;", COMMIT, "L1:", WAIT(0)] + stores(D))
case("c7516_mma_in_uniform_branch",
     "fence, wgmma only on one side of a uniform branch, commit+wait after the join.",
     CTA + init(D) + [FENCE, "@!p2 bra L1;", M, "L1:", COMMIT, WAIT(0)] + stores(D))
case("c7516_wait_in_uniform_branch",
     "fence+mma+commit, wait only on one side of a uniform branch, stores after the join.",
     CTA + init(D) + [FENCE, M, COMMIT, "@!p2 bra L1;", WAIT(0), "L1:"] + stores(D))
case("c7516_loop_mma_commit_after_loop",
     "Loop of fence+mma with the commit and wait after the loop.",
     init(D) + ["mov.u32 r4, 0;", "LOOP:", FENCE, M, "add.u32 r4, r4, 1;",
                "setp.lt.u32 p3, r4, r15;", "@p3 bra LOOP;", COMMIT, WAIT(0)] + stores(D),
     notcomp="loop body may be unrolled/scheduled by ptxas")
case("c7516_mma_mixed_shapes_same_acc",
     "Two wgmma of different N (n8, n16) chaining on overlapping accumulators in one group.",
     init(regs("d", 8)) + [FENCE, mma("f16", 16, regs("d", 8)), M, COMMIT, WAIT(0)] + stores(regs("d", 8)))
case("c7516_mma_f16_then_bf16_same_acc",
     "f16 then bf16 wgmma chaining on the same accumulators in one group.",
     init(D) + [FENCE, M, mma("bf16", 8, D), COMMIT, WAIT(0)] + stores(D))
case("c7516_divergent_commit",
     "commit_group inside a divergent (%tid) branch.",
     TID + init(D) + [FENCE, M, "@!p1 bra L1;", COMMIT, "L1:", WAIT(0)] + stores(D))
case("c7518_divergent_wait",
     "wait_group inside a divergent (%tid) branch, reads after the join.",
     TID + init(D) + [FENCE, M, COMMIT, "@!p1 bra L1;", WAIT(0), "L1:"] + stores(D))
case("c7518_divergent_read_no_wait",
     "Divergent (%tid) branch after commit reading the accumulators, wait only after the join.",
     TID + init(D) + [FENCE, M, COMMIT, "@!p1 bra L1;", "st.global.f32 [ptr+64], d0;", "L1:", WAIT(0)] + stores(D))
case("c7520_divergent_fence",
     "wgmma.fence inside a divergent (%tid) branch, wgmma after the join.",
     TID + init(D) + ["@!p1 bra L1;", FENCE, "L1:", M, COMMIT, WAIT(0)] + stores(D))
case("c7520_divergent_def_rega",
     "A-fragment register defined in a divergent branch between two register-A wgmma.",
     TID + LDA + init(D) + [FENCE, MRA, "@!p1 bra L1;", "add.s32 ra0, ra0, 1;", "L1:", MRA, COMMIT, WAIT(0)]
     + stores(D))

# register budget
for rr in [136, 168, 200]:
    case(f"probe_maxrreg{rr}_n256",
         f"n256 f32 pipeline (128 accumulator registers) with -maxrregcount={rr}.",
         clean_single("f16", 256), flags=f"-maxrregcount={rr}")
case("probe_maxrreg200_2x_n256",
     "Two n256 f32 sets in one group with -maxrregcount=200.",
     many_sets(2, 256), flags="-maxrregcount=200")
case("probe_3x_n256_one_group",
     "Three n256 f32 accumulator sets (384 registers) in one commit group.",
     many_sets(3, 256, name_pfx="q"), extra_decls="  .reg .f32 q<384>;")
case("probe_live_ranges_64_groups_wait63",
     "64 n8 sets, one group each, then wait_group 63, ..., wait 0 (groups in flight).",
     [l for l in many_sets(64, 8, group_all=False) if l != WAIT(0)][:-256] + [WAIT(63), WAIT(0)]
     + [l for l in many_sets(64, 8, group_all=False) if l.startswith("st.")])

# --- invalid forms (error path) ---------------------------------------------------------------
def errcase(name, comment, mid, **kw):
    case(name, "Error path: " + comment, init(D) + [FENCE] + mid + [COMMIT, WAIT(0)] + stores(D), **kw)


errcase("err_bad_shape_n9", "shape m64n9k16 does not exist.",
        [M.replace("m64n8k16", "m64n9k16")])
errcase("err_bad_k_for_type", "f16 wgmma with k32 (f16 needs k16).",
        [M.replace("m64n8k16", "m64n8k32")])
errcase("err_bf16_f16_dtype", "bf16 wgmma with .f16 accumulator type (only .f32 allowed).",
        [mma("bf16", 8, regs("h", 2), dtype="f16")])
errcase("err_mixed_f16_bf16", "a-type f16 with b-type bf16.",
        [M.replace(".f16.f16", ".f16.bf16")])
errcase("err_too_few_acc_regs", "n8 f32 wgmma given 3 accumulator registers instead of 4.",
        [mma("f16", 8, regs("d", 3))])
errcase("err_too_many_acc_regs", "n8 f32 wgmma given 5 accumulator registers.",
        [mma("f16", 8, regs("d", 5))])
errcase("err_missing_trans_imm", "f16 descriptor form missing the imm-trans-b operand.",
        [M.replace(", 0, 0;", ", 0;")])
errcase("err_trans_on_tf32", "tf32 wgmma given imm-trans operands (not allowed for tf32).",
        [mma("tf32", 8, D).replace(", 1, 1;", ", 1, 1, 0, 0;")])
errcase("err_missing_sync_aligned", "wgmma.mma_async without .sync.aligned.",
        [M.replace(".sync.aligned", "")])
errcase("err_int_n40", "s8 wgmma with n40 (not a valid integer N).",
        [mma("s8", 40, regs("s", 20))])
errcase("err_satfinite_on_f16", ".satfinite on an f16 wgmma.",
        [M.replace("m64n8k16.", "m64n8k16.satfinite.")])
errcase("err_scale_imm_on_int", "s8 wgmma given imm-scale-a/b operands.",
        [mma("s8", 8, regs("s", 4)).replace(", 1;", ", 1, 1, 1;")])
errcase("err_sm90_target", "wgmma under .target sm_90 (needs sm_90a), compiled for sm_90.",
        [M], target="sm_90", flags="-arch=sm_90")
errcase("err_sm90a_ptx_on_sm90", ".target sm_90a PTX compiled with -arch=sm_90.",
        [M], flags="-arch=sm_90")
errcase("err_ptx_version_7_8", "wgmma under .version 7.8 (needs 8.0).",
        [M], version="7.8")
errcase("err_rega_with_trans_a", "register-A f16 form given imm-trans-a as well.",
        [mma("f16", 8, D, a="{ra0, ra1, ra2, ra3}").replace(", 1, 1, 0;", ", 1, 1, 0, 0;")])
case("err_wait_group_register", "Error path: wgmma.wait_group with a register operand.",
     init(D) + [FENCE, M, COMMIT, "wgmma.wait_group.sync.aligned r15;"] + stores(D))
errcase("err_desc_32bit", "wgmma with a 32-bit register as descriptor.",
        [mma("f16", 8, D, a="r3")])
