#!/usr/bin/env python3
"""Generate the probes of the PTX front end from the ISA (issue 40):

* tests/corpus/c75NN_shfl_*: which `shfl.sync` results ptxas 13.0.88 takes
  as warp-uniform (R-shfl-idx-broadcast). A branch on the shuffled value
  skips a wgmma: uniform gives an injected arrive (C7519), divergent
  serializes (C7520).
* tests/corpus/clean_grammar_*: lexical forms ptxas accepts (blanks and
  comments between modifiers, vector registers by component, WARP_SZ,
  special registers, nested scopes, .pragma, .loc forms, a TMA
  reduce-store).
* tests/bad_input/grammar_*: near misses ptxas rejects.

    python3 xtask/gen_corpus_isa.py
    cargo xtask oracle record c7519_shfl_... (each new case)
    cargo xtask oracle record --corpus tests/bad_input grammar_...

Deterministic; each file opens with `//` lines saying what it probes.
"""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "corpus")
BAD = os.path.join(ROOT, "tests", "bad_input")

SHFL_HEAD = """.version 8.0
.target sm_90a
.address_size 64

.visible .entry k(.param .u64 p_out, .param .u64 p_da, .param .u64 p_db, .param .u32 p_n)
{
  .reg .f32 d<4>;
  .reg .b32 r<16>;
  .reg .b64 a, b, ptr;
  .reg .pred p<8>;
  ld.param.u64 ptr, [p_out];
  ld.param.u64 a, [p_da];
  ld.param.u64 b, [p_db];
  ld.param.u32 r15, [p_n];
  mov.b32 d0, 0f00000000;
  mov.b32 d1, 0f00000000;
  mov.b32 d2, 0f00000000;
  mov.b32 d3, 0f00000000;
  mov.u32 r1, %tid.x;
  shr.u32 r2, r1, 5;
"""

SHFL_TAIL = """  setp.lt.u32 p1, r3, 2;
  wgmma.fence.sync.aligned;
  @!p1 bra L1;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {d0, d1, d2, d3}, a, b, 1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
L1:
  st.global.b32 [ptr+0], d0;
  st.global.b32 [ptr+4], d1;
  st.global.b32 [ptr+8], d2;
  st.global.b32 [ptr+12], d3;
  ret;
}
"""

# (name, what ptxas printed, comment, the shuffle)
SHFL = [
    ("idx_lane0_c31_full", "c7519", "the warp-index broadcast CUTLASS writes: uniform",
     "shfl.sync.idx.b32 r3, r2, 0, 31, -1;"),
    ("idx_lane5_c31_full", "c7519", "any constant lane: uniform",
     "shfl.sync.idx.b32 r3, r2, 5, 31, -1;"),
    ("idx_lane_param_c31", "c7519", "a lane from a parameter (uniform): uniform",
     "shfl.sync.idx.b32 r3, r2, r15, 31, -1;"),
    ("idx_lane_ctaid_c31", "c7519", "a lane from %ctaid (uniform): uniform",
     "mov.u32 r6, %ctaid.x;\n  shfl.sync.idx.b32 r3, r2, r6, 31, -1;"),
    ("idx_c31_from_mov", "c7519", "c in a register a mov of 31 sets: folded, uniform",
     "mov.u32 r5, 31;\n  shfl.sync.idx.b32 r3, r2, 0, r5, -1;"),
    ("idx_c31_half_mask", "c7519", "a partial member mask: still uniform",
     "shfl.sync.idx.b32 r3, r2, 0, 31, 0xffff;"),
    ("idx_c31_mask_from_tid", "c7519", "a member mask from %tid: still uniform",
     "shfl.sync.idx.b32 r3, r2, 0, 31, r1;"),
    ("idx_c31_pred_out", "c7519", "with the predicate result d|p: uniform",
     "shfl.sync.idx.b32 r3|p2, r2, 0, 31, -1;"),
    ("idx_c31_source_laneid", "c7519", "a source from %laneid: the broadcast is uniform",
     "mov.u32 r4, %laneid;\n  shfl.sync.idx.b32 r3, r4, 0, 31, -1;"),
    ("idx_lane_tid_c31", "c7520", "a lane from %tid: divergent",
     "shfl.sync.idx.b32 r3, r2, r1, 31, -1;"),
    ("idx_c0", "c7520", "c = 0: divergent (only 31 is folded)",
     "shfl.sync.idx.b32 r3, r2, 0, 0, -1;"),
    ("idx_c63", "c7520", "c = 63: divergent",
     "shfl.sync.idx.b32 r3, r2, 0, 63, -1;"),
    ("idx_c0x1c1f_segments", "c7520", "segments of 4 lanes (c = 0x1c1f): divergent",
     "shfl.sync.idx.b32 r3, r2, 0, 0x1c1f, -1;"),
    ("idx_c_param", "c7520", "c from a parameter: divergent",
     "shfl.sync.idx.b32 r3, r2, 0, r15, -1;"),
    ("down_0_c31", "c7520", "shfl.down by 0: divergent",
     "shfl.sync.down.b32 r3, r2, 0, 31, -1;"),
    ("bfly_0_c31", "c7520", "shfl.bfly by 0: divergent",
     "shfl.sync.bfly.b32 r3, r2, 0, 31, -1;"),
    ("up_0_c0", "c7520", "shfl.up by 0: divergent",
     "shfl.sync.up.b32 r3, r2, 0, 0, -1;"),
]

GRAMMAR_HEAD = """.version 8.5
.target sm_90a
.address_size 64
.file 1 "k.cu"

.visible .entry k(.param .u64 p0)
{
  .reg .b32 %r<10>;
  .reg .b64 %rd<10>;
  .reg .pred %p<4>;
  .reg .f32 %f<8>;
  ld.param.u64 %rd1, [p0];
"""

GRAMMAR_TAIL = """  st.global.u32 [%rd1], %r1;
  ret;
}
"""

# (name, comment, body): ptxas 13.0.88 accepts each.
GRAMMAR_OK = [
    ("modifier_after_comment", "a comment and blanks between an opcode and its modifiers",
     "mov.u32 %r2, 7;\n  add /* c */ .u32 %r1, %r2, %r2;"),
    ("modifier_after_newline", "a newline between modifiers",
     "mov.u32 %r2, 7;\n  add\n  .u32 %r1, %r2, %r2;"),
    ("tma_store_cache_hint_spaced", "TileLang's `.bulk_group .L2::cache_hint` with a blank",
     "mov.u32 %r2, 0;\n  mov.u64 %rd2, 0;\n"
     "  cp.async.bulk.tensor.2d.global.shared::cta.bulk_group .L2::cache_hint [%rd1, {%r2, %r2}], [%r2], %rd2;\n"
     "  mov.u32 %r1, 0;"),
    ("tma_reduce_store", "a TMA reduce-store reads its operands (writes no register)",
     "mov.u32 %r2, 0;\n"
     "  cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd1, {%r2, %r2}], [%r2];\n"
     "  cp.async.bulk.commit_group;\n  cp.async.bulk.wait_group.read 0;\n  mov.u32 %r1, %r2;"),
    ("tma_reduce_store_modifiers_reordered", "modifiers after the family in another order",
     "mov.u32 %r2, 0;\n"
     "  cp.reduce.async.bulk.tensor.2d.global.add.shared::cta.bulk_group.tile [%rd1, {%r2, %r2}], [%r2];\n"
     "  mov.u32 %r1, %r2;"),
    ("vector_register_components", "`.reg .v2 .f32 mx;` used by component, also .r .g .b .a",
     ".reg .v4 .f32 mx;\n  mov.f32 mx.x, 0f3F800000;\n  mov.f32 mx.g, mx.r;\n"
     "  add.f32 mx.w, mx.x, mx.y;\n  cvt.rzi.u32.f32 %r1, mx.a;"),
    ("vector_register_component_spaced", "`mx .x` with a blank, `%tid .x` too",
     ".reg .v2 .f32 mx;\n  mov.f32 mx .x, 0f3F800000;\n  cvt.rzi.u32.f32 %r1, mx .x;\n"
     "  mov.u32 %r2, %tid .x;\n  add.u32 %r1, %r1, %r2;"),
    ("warp_sz", "the predefined constant WARP_SZ, alone and in expressions",
     "mov.u32 %r1, WARP_SZ;\n  add.u32 %r1, %r1, WARP_SZ+1;\n  mov.u64 %rd2, WARP_SZ;\n"
     "  ld.global.u32 %r2, [%rd1+WARP_SZ];\n  add.u32 %r1, %r1, %r2;"),
    ("special_registers", "special registers of the ISA read by mov",
     "mov.u32 %r1, %warpid;\n  mov.u32 %r2, %nwarpid;\n  add.u32 %r1, %r1, %r2;\n"
     "  mov.u32 %r2, %clock_hi;\n  mov.u32 %r3, %reserved_smem_offset_begin;\n"
     "  mov.u32 %r3, %reserved_smem_offset_cap;\n  mov.u32 %r3, %reserved_smem_offset_end;\n"
     "  mov.u64 %rd2, %current_graph_exec;\n  mov.u64 %rd3, %pm0_64;\n  mov.u32 %r2, %aggr_smem_size;\n"
     "  mov.pred %p1, %is_explicit_cluster;"),
    ("vector_register_ranges", "vector register ranges `%v<2>`, `q<2>` by component",
     ".reg .v4 .b32 %v<2>;\n  .reg .v2 .b32 q<2>;\n  mov.b32 %v1.x, 1;\n  mov.b32 q0.y, %v1.x;\n"
     "  add.u32 %r1, q0.y, %v1.x;"),
    ("mov_sizes", "mov of registers and special registers in the sizes ptxas takes",
     ".reg .b16 %h<2>;\n  mov.u16 %h1, %tid.x;\n  mov.u64 %rd2, %gridid;\n  mov.u32 %r2, %gridid;\n"
     "  mov.b32 %f1, %r2;\n  mov.f32 %r3, %f1;\n  mov.u64 %rd3, %clock64;\n  mov.u32 %r1, %laneid;"),
    ("nested_scopes", "registers and labels in nested scopes shadowing outer ones",
     "mov.u32 %r1, 1;\n  { .reg .b32 a; mov.u32 a, 2; { .reg .b32 a; mov.u32 a, 3; L: add.u32 %r1, %r1, a; } "
     "add.u32 %r1, %r1, a; }"),
    ("pragma_and_loc", ".pragma in a body and .loc with function_name and inlined_at",
     ".pragma \"nounroll\";\n  .loc 1 2 3\n  mov.u32 %r1, 1;\n"
     "  .loc 1 4 5, function_name $L__info_string0, inlined_at 1 2 3\n  add.u32 %r1, %r1, 1;"),
    ("shfl_pred_pair", "shfl.sync with its predicate result d|p",
     "mov.u32 %r2, 0;\n  shfl.sync.idx.b32 %r1|%p1, %r2, 0, 31, -1;"),
    ("vector_sizes", "vectors of the sizes their instructions take: a sink in a load's list, a one-element "
     "list without .vN, a list packed by mov, wider registers than a load's type",
     ".reg .v2 .b64 vd;\n  ld.global.v2.f32 {%f1, _}, [%rd1];\n  ld.global.f32 {%f2}, [%rd1];\n"
     "  ld.global.v2.f32 vd, [%rd1];\n  mov.b64 %rd2, {%r2, %r3};\n  mov.b64 {%r4, %r5}, %rd2;\n"
     "  st.global.v4.f32 [%rd1], {%f1, %f2, %f1, %f2};\n  add.u32 %r1, %r4, %r5;"),
    ("st_async_16_bit", "st.async of 16-bit integers, two operands (found by the grammar fuzzer)",
     ".reg .b16 h;\n  mov.b16 h, 3;\n  st.async.shared.b16 [%rd1], 21;\n  st.async.weak.u16 [%rd1], h;\n"
     "  st.async.sys.s16 [%rd1], 5;"),
    ("cluster_stack_bits", "the closed forms of mapa, getctarank, szext, bmsk, movmatrix, griddepcontrol and the "
     "stack (stacksave, alloca, stackrestore)",
     "mov.u32 %r2, 5;\n  mapa.shared::cluster.u32 %r3, %r2, 1;\n  getctarank.shared::cluster.u32 %r4, %r3;\n"
     "  szext.clamp.s32 %r5, %r2, %r4;\n  bmsk.wrap.b32 %r6, %r5, 3;\n  movmatrix.sync.aligned.m8n8.trans.b16 %r7, %r6;\n"
     "  griddepcontrol.wait;\n  stacksave.u64 %rd2;\n  alloca.u64 %rd3, 64, 16;\n  st.local.u32 [%rd3], %r7;\n"
     "  ld.local.u32 %r1, [%rd3];\n  stackrestore.u64 %rd2;\n  griddepcontrol.launch_dependents;"),
    ("bit_and_address_forms", "the closed forms of prmt, lop3 (with its predicate form), shf.l/shf.r, bfe, bfi, fns, "
     "popc, clz, brev, cvta, cvta.to, isspacep (of a 32-bit register), testp (without its test) and copysign",
     "mov.u32 %r2, 5;\n  prmt.b32.f4e %r3, %r2, %r2, %r2;\n  lop3.b32 %r4, %r3, %r2, %r2, 0x96;\n"
     "  lop3.or.b32 %r5|%p1, %r4, %r3, %r2, 0xe8, %p2;\n  shf.l.wrap.b32 %r6, %r5, %r4, %r3;\n"
     "  shf.r.clamp.b32 %r6, %r6, %r4, 7;\n  bfe.u32 %r7, %r6, 8, 4;\n  bfi.b32 %r7, %r7, %r6, 4, 4;\n"
     "  fns.b32 %r8, %r7, 0, 1;\n  popc.b64 %r9, %rd1;\n  clz.b32 %r3, %r8;\n  brev.b32 %r4, %r9;\n"
     "  cvta.to.global.u64 %rd2, %rd1;\n  cvta.shared.u64 %rd3, %rd2;\n  isspacep.shared %p1, %r3;\n"
     "  mov.b32 %f1, %r4;\n  testp.f32 %p2, %f1;\n  copysign.f32 %f2, %f1, %f1;\n"
     "  selp.u32 %r5, 1, 0, %p2;\n  add.u32 %r1, %r5, %r4;"),
    ("cache_line_forms", "discard and applypriority of a 128-byte L2 line, with and without .global",
     "discard.global.L2 [%rd1], 128;\n  discard.L2 [%rd1], 128;\n  applypriority.global.L2::evict_normal [%rd1], 128;\n"
     "  applypriority.L2::evict_normal [%rd1], 128;\n  mov.u32 %r1, 0;"),
    ("mbarrier_forms", "mbarrier arrive with a sink, try_wait.parity",
     "mov.u32 %r2, 0;\n  mbarrier.init.shared::cta.b64 [bar], 1;\n"
     "  mbarrier.arrive.shared::cta.b64 _, [bar];\n  mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], %r2;\n"
     "  selp.u32 %r1, 1, 0, %p1;"),
]

# (name, comment, body): ptxas 13.0.88 rejects each.
GRAMMAR_BAD = [
    ("tma_reduce_spaces_swapped", "a reduce-store with its state spaces swapped",
     "mov.u32 %r2, 0;\n"
     "  cp.reduce.async.bulk.tensor.2d.shared::cta.global.add.tile.bulk_group [%rd1, {%r2, %r2}], [%r2];\n"
     "  mov.u32 %r1, 0;"),
    ("tma_reduce_no_op", "a reduce-store without its reduction",
     "mov.u32 %r2, 0;\n"
     "  cp.reduce.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd1, {%r2, %r2}], [%r2];\n"
     "  mov.u32 %r1, 0;"),
    ("tma_reduce_operand_dropped", "a reduce-store without its source",
     "mov.u32 %r2, 0;\n"
     "  cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd1, {%r2, %r2}];\n"
     "  mov.u32 %r1, 0;"),
    ("tma_store_policy_without_hint", "a cache policy without .L2::cache_hint",
     "mov.u32 %r2, 0;\n  mov.u64 %rd2, 0;\n"
     "  cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r2, %r2}], [%r2], %rd2;\n"
     "  mov.u32 %r1, 0;"),
    ("cp_unknown_family", "`cp.frob`: no such cp instruction",
     "cp.frob.u32 %r1, %r2;"),
    ("shfl_wrong_type", "shfl.sync with .u32 (only .b32)",
     "mov.u32 %r2, 0;\n  shfl.sync.idx.u32 %r1, %r2, 0, 31, -1;"),
    ("shfl_operand_dropped", "shfl.sync without its member mask",
     "mov.u32 %r2, 0;\n  shfl.sync.idx.b32 %r1, %r2, 0, 31;"),
    ("shfl_without_sync", "shfl without .sync (gone since PTX 6.4 on sm_70+)",
     "mov.u32 %r2, 0;\n  shfl.idx.b32 %r1, %r2, 0, 31;"),
    ("missing_semicolon_before_reg", "a missing `;` before `.reg`: the directive is no modifier",
     "mov.u32 %r1, %r2\n  .reg .b32 q;"),
    ("loc_between_modifiers", "`.loc` between an opcode and its modifiers",
     "add\n  .loc 1 1 1\n  .u32 %r1, %r2, %r3;"),
    ("warp_sz_destination", "WARP_SZ written to",
     "mov.u32 WARP_SZ, %r1;"),
    ("warp_sz_declared", "WARP_SZ declared as a register (a syntax error: it is the ISA's constant)",
     ".reg .b32 WARP_SZ;"),
    ("mov_special_wrong_size", "a 64-bit special register moved as .u32",
     "mov.u32 %r1, %clock64;"),
    ("mov_special_float", "a special register moved as .f32",
     "mov.f32 %f1, %laneid;"),
    ("mov_register_wrong_size", "a .b64 register moved as .u32",
     "mov.u32 %r1, %rd1;"),
    ("component_of_scalar", "a component of a scalar register",
     "mov.u32 %r1, %r2.x;"),
    ("unknown_special_register", "a special register the ISA does not have",
     "mov.u32 %r1, %warpsz;"),
    ("bmsk_without_mode", "bmsk without .clamp or .wrap",
     "mov.u32 %r2, 5;\n  bmsk.b32 %r1, %r2, 3;"),
    ("szext_wide_type", "szext of a 64-bit type (only .u32 and .s32)",
     "mov.u32 %r2, 5;\n  szext.clamp.u64 %r1, %r2, 3;"),
    ("movmatrix_without_trans", "movmatrix without .trans",
     "mov.u32 %r2, 5;\n  movmatrix.sync.aligned.m8n8.b16 %r1, %r2;"),
    ("mapa_wrong_size", "mapa.u64 of a 32-bit address",
     "mov.u32 %r2, 5;\n  mapa.shared::cluster.u64 %rd2, %r2, 1;\n  cvt.u32.u64 %r1, %rd2;"),
    ("stacksave_wrong_size", "stacksave.u64 into a 32-bit register",
     "stacksave.u64 %r1;"),
    ("cvta_32_bit", "cvta of a 32-bit address with .address_size 64",
     "cvta.global.u32 %r1, %r2;"),
    ("cvta_to_spaced", "`cvta .to`: `cvta.to` is a name, spelt without a blank",
     "cvta .to.global.u64 %rd2, %rd1;\n  cvt.u32.u64 %r1, %rd2;"),
    ("shf_spaced", "`shf .l`: `shf.l` is a name, spelt without a blank",
     "mov.u32 %r2, 5;\n  shf .l.wrap.b32 %r1, %r2, %r2, 3;"),
    ("lop3_register_lut", "lop3 with its lookup table in a register",
     "mov.u32 %r2, 5;\n  lop3.b32 %r1, %r2, %r2, %r2, %r2;"),
    ("discard_register_size", "discard with its size in a register (only the immediate 128)",
     "mov.u32 %r2, 128;\n  discard.global.L2 [%rd1], %r2;"),
    ("vector_ld_too_few", "a .v4 load into two registers",
     "ld.global.v4.f32 {%f1, %f2}, [%rd1];"),
    ("vector_ld_illegal_size", "a .v2 load into a list of three (no vector has three)",
     "ld.global.v2.f32 {%f1, %f2, %f3}, [%rd1];"),
    ("vector_ld_scalar_result", "a .v2 load into one register",
     "ld.global.v2.f32 %f1, [%rd1];"),
    ("vector_ld_list_without_v", "a load without .vN into a list of two",
     "ld.global.f32 {%f1, %f2}, [%rd1];"),
    ("vector_ld_256_bit", "a 256-bit load (.v8.f32: PTX ISA 8.8 and sm_100)",
     "ld.global.v8.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, [%rd1];"),
    ("vector_st_too_many", "a .v2 store of four registers",
     "st.global.v2.f32 [%rd1], {%f1, %f2, %f3, %f4};"),
    ("vector_register_wrong_width", "a .v2 vector register loaded by a .v4 load",
     ".reg .v2 .f32 vf;\n  ld.global.v4.f32 vf, [%rd1];"),
    ("vector_mov_v2_wider_source", "mov.v2 of a .v4 vector register",
     ".reg .v2 .f32 vf;\n  .reg .v4 .f32 vg;\n  mov.v2.f32 vf, vg;"),
    ("vector_mov_pack_three", "mov.b64 packing three registers",
     "mov.b64 %rd2, {%r1, %r2, %r3};"),
    ("vector_mov_pack_wrong_total", "mov.b32 packing two 32-bit registers",
     "mov.b32 %r1, {%r2, %r3};"),
    ("vector_mov_pack_incompatible", "mov.b64 packing a .b32 and a .b64 register",
     "mov.b64 %rd2, {%r1, %rd3};"),
    ("vector_atom_result_size", "a .v2 atom with a result of four",
     "atom.global.v2.f32.add {%f1, %f2, %f3, %f4}, [%rd1], {%f5, %f6};"),
    ("vector_ldmatrix_too_few", "an ldmatrix .x4 into two registers",
     "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2}, [%rd1];"),
    ("vector_stmatrix_scalar", "an stmatrix .x1 of a register not in braces",
     "mov.u32 %r1, 0;\n  stmatrix.sync.aligned.m8n8.x1.shared.b16 [%rd1], %r1;"),
    ("vector_red_scalar_value", "a .v2 red of one register",
     "red.global.v2.f32.add [%rd1], %f1;"),
]


# A wgmma pipeline, then its accumulators stored through shared memory by a
# TMA reduce-store (the epilogue TileLang and CUTLASS write): the
# reduce-store reads its operands and writes no register.
TMA_REDUCE_AFTER_WGMMA = """// Front-end probe (ptxas accepts): a wgmma pipeline, then a TMA reduce-store (cp.reduce.async.bulk.tensor) of its result.
.version 8.0
.target sm_90a
.address_size 64

.shared .align 128 .b8 smem[1024];

.visible .entry k(.param .u64 p_tmap, .param .u64 p_da, .param .u64 p_db)
{
  .reg .f32 d<4>;
  .reg .b32 r<8>;
  .reg .b64 a, b, tmap;
  ld.param.u64 tmap, [p_tmap];
  ld.param.u64 a, [p_da];
  ld.param.u64 b, [p_db];
  mov.b32 d0, 0f00000000;
  mov.b32 d1, 0f00000000;
  mov.b32 d2, 0f00000000;
  mov.b32 d3, 0f00000000;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {d0, d1, d2, d3}, a, b, 1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  mov.u32 r1, smem;
  st.shared.f32 [r1], d0;
  st.shared.f32 [r1+4], d1;
  st.shared.f32 [r1+8], d2;
  st.shared.f32 [r1+12], d3;
  fence.proxy.async.shared::cta;
  mov.u32 r2, %ctaid.x;
  mov.u32 r3, 0;
  cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [tmap, {r2, r3}], [r1];
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group.read 0;
  ret;
}
"""


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def main():
    for name, code, comment, body in SHFL:
        text = f"// R-shfl-idx-broadcast probe: {comment}.\n" + SHFL_HEAD + "  " + body + "\n" + SHFL_TAIL
        write(os.path.join(CORPUS, f"{code}_shfl_{name}.ptx"), text)
    for name, comment, body in GRAMMAR_OK:
        text = f"// Front-end probe (ptxas accepts): {comment}.\n" + GRAMMAR_HEAD + "  " + body + "\n" + GRAMMAR_TAIL
        if "[bar]" in body:
            # The mbarrier at module scope, where compilers put it.
            text = text.replace(".visible .entry", ".shared .align 8 .b64 bar;\n\n.visible .entry", 1)
        if "function_name" in body:
            # The label function_name names, in the debug strings.
            text += ".section .debug_str\n{\n$L__info_string0:\n.b8 107, 0\n}\n"
        write(os.path.join(CORPUS, f"clean_grammar_{name}.ptx"), text)
    write(os.path.join(CORPUS, "clean_grammar_tma_reduce_store_after_wgmma.ptx"), TMA_REDUCE_AFTER_WGMMA)
    for name, comment, body in GRAMMAR_BAD:
        text = f"// Front-end probe (ptxas rejects): {comment}.\n" + GRAMMAR_HEAD + "  " + body + "\n" + GRAMMAR_TAIL
        write(os.path.join(BAD, f"grammar_{name}.ptx"), text)


if __name__ == "__main__":
    main()
