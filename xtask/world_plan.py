"""The kernels of the real-world Triton corpus and the configurations an H100 user gets.

Each entry names the project's module and kernel, the constexprs the
project's launcher or autotuner picks on Hopper (its Config lists, read from
the pinned package), the pointer types and the launch options. Model shapes:
16 heads of 128 (fla), Llama-style 32 query / 8 KV heads of 128 (attention),
Mamba-2 2.7B (64 heads of 64, state 128, chunks of 256), a Mixtral-like MoE.
"""

import triton.language as tl

FLA = "fla.ops"
VLLM = "vllm"
SGL = "sglang.kernels.ops"


def fla_specs(S):
    o = f"{FLA}.common.chunk_o"
    fp = dict(g="*fp32", g_gamma="*fp32")
    none = dict(cu_seqlens=None, chunk_indices=None)
    dims = dict(H=16, HV=16, K=128, V=128, BT=64)
    out = []
    for tag, g, gamma in (("g", True, False), ("plain", False, False), ("gamma", False, True)):
        for bk, w in ((64, 4), (128, 8), (32, 2))[:3 if g else 2]:
            c = dict(dims, **none, BK=bk, BV=bk, USE_G=g, USE_G_GAMMA=gamma, STATE_V_FIRST=False, IS_VARLEN=False)
            if not g:
                c["g"] = None
            if not gamma:
                c["g_gamma"] = None
            out.append(S(f"fla_chunk_fwd_o_{tag}_bk{bk}_w{w}", o, "chunk_fwd_kernel_o", c, w, 3,
                         ints="T", floats="scale", types={k: v for k, v in fp.items() if k not in c}))
    c = dict(dims, **none, BK=64, BV=64, USE_G=True, USE_G_GAMMA=False, STATE_V_FIRST=True, IS_VARLEN=False,
             g_gamma=None)
    out.append(S("fla_chunk_fwd_o_g_vfirst_bk64_w4", o, "chunk_fwd_kernel_o", c, 4, 3, ints="T", floats="scale",
                 types={"g": "*fp32"}))
    c = dict(dims, **none, BK=64, BV=64, B=4, USE_G=True, USE_G_GAMMA=False, USE_DW=False, STATE_V_FIRST=False,
             IS_VARLEN=False, g_gamma=None, dw=None)
    for w, s in ((4, 2), (8, 3)):
        out.append(S(f"fla_chunk_bwd_dqkwg_g_w{w}_s{s}", o, "chunk_bwd_kernel_dqkwg", c, w, s, ints="T",
                     floats="scale", types={"g": "*fp32", "dg": "*fp32"}))
    c = dict(dims, **none, BK=64, BV=64, USE_G=True, USE_G_GAMMA=False, USE_A=False, IS_VARLEN=False, g_gamma=None,
             A=None)
    out.append(S("fla_chunk_bwd_dv_local_g_w4", o, "chunk_bwd_kernel_dv_local", c, 4, 2, ints="T", floats="scale",
                 types={"g": "*fp32"}))
    h = f"{FLA}.common.chunk_h"
    for g, bv, w in ((True, 64, 4), (False, 32, 2)):
        c = dict(H=16, K=128, V=128, BT=64, BS=64, BK=64, BV=bv, USE_G=g, USE_G_GAMMA=False, USE_GK=False,
                 USE_GV=False, USE_INITIAL_STATE=False, STORE_FINAL_STATE=True, IS_VARLEN=False, STATE_V_FIRST=False,
                 g_gamma=None, gk=None, gv=None, h0=None, cu_seqlens=None, split_offsets=None)
        if not g:
            c["g"] = None
        out.append(S(f"fla_chunk_fwd_h_{'g' if g else 'plain'}_bv{bv}_w{w}", h, "chunk_fwd_kernel_h", c, w, 2,
                     ints="T", types={"g": "*fp32", "ht": "*fp32"} if g else {"ht": "*fp32"}))
    d = f"{FLA}.common.chunk_delta_h"
    for bv, w, s in ((32, 4, 2), (64, 4, 3)):
        c = dict(H=16, HV=16, K=128, V=128, BT=64, BV=bv, USE_G=True, USE_GK=False, USE_INITIAL_STATE=True,
                 STORE_FINAL_STATE=True, SAVE_NEW_VALUE=True, STATE_V_FIRST=False, IS_VARLEN=False, gk=None,
                 cu_seqlens=None, chunk_offsets=None)
        out.append(S(f"fla_gdn_fwd_h_bv{bv}_w{w}_s{s}", d, "chunk_gated_delta_rule_fwd_kernel_h_blockdim64", c, w, s,
                     ints="T", types={"g": "*fp32", "h0": "*fp32", "ht": "*fp32"}))
    kkt = f"{FLA}.common.chunk_scaled_dot_kkt"
    c = dict(H=16, HV=16, K=128, BT=64, BK=64, IS_VARLEN=False, USE_G=True, cu_seqlens=None, chunk_indices=None)
    out.append(S("fla_scaled_dot_kkt_g_bk64_w4", kkt, "chunk_scaled_dot_kkt_fwd_kernel", c, 4, 3, ints="T",
                 types={"g": "*fp32", "A": "*fp32"}))
    wy = f"{FLA}.gated_delta_rule.wy_fast"
    c = dict(H=16, HV=16, K=128, V=128, BT=64, BK=64, BV=64, USE_G=True, IS_VARLEN=False, cu_seqlens=None,
             chunk_indices=None)
    out.append(S("fla_gdn_recompute_w_u_w4", wy, "recompute_w_u_fwd_kernel", c, 4, 3, ints="T",
                 types={"g": "*fp32"}))
    tri = f"{FLA}.utils.solve_tril"
    c = dict(H=16, BT=64, USE_TMA=False, IS_VARLEN=False, DOT_PRECISION="tf32", cu_seqlens=None, chunk_indices=None)
    out.append(S("fla_solve_tril_64x64_tf32_w4", tri, "merge_16x16_to_64x64_inverse_kernel", c, 4, 3, ints="T",
                 types={"A": "*fp32"}))
    par = f"{FLA}.attn.parallel"
    c = dict(W=0, B=4, H=16, HQ=16, G=1, K=128, V=128, BT=128, BS=64, BK=128, BV=128, USE_G=False,
             USE_SINK_BIAS=False, USE_WINDOW=False, IS_VARLEN=False, g_cumsum=None, sink_bias=None, cu_seqlens=None,
             chunk_indices=None)
    out.append(S("fla_parallel_attn_fwd_d128_w8", par, "parallel_attn_fwd_kernel", c, 8, 2, ints="T",
                 floats="scale", types={"lse": "*fp32"}))
    return out


def vllm_specs(S):
    out = []
    moe = f"{VLLM}.model_executor.layers.fused_moe.fused_moe"
    base = dict(naive_block_assignment=False, SPLIT_K=1, top_k=2, compute_type=tl.bfloat16, use_fp8_w8a8=False,
                use_int8_w8a8=False, use_int8_w8a16=False, per_channel_quant=False, HAS_BIAS=False, SWAP_AB=False,
                b_bias_ptr=None, a_scale_ptr=None, b_scale_ptr=None, group_n=0, group_k=0)
    idx = dict(topk_weights_ptr="*fp32", sorted_token_ids_ptr="*i32", expert_ids_ptr="*i32",
               num_tokens_post_padded_ptr="*i32")
    ints = "N K EM num_valid_tokens"
    for bm, bn, bk, g, w, s, mul in ((64, 64, 32, 8, 4, 4, False), (128, 128, 64, 1, 8, 3, True),
                                     (64, 128, 64, 16, 4, 3, False)):
        c = dict(base, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=g, MUL_ROUTED_WEIGHT=mul)
        out.append(S(f"vllm_fused_moe_bf16_{bm}x{bn}x{bk}_w{w}_s{s}{'_mul' if mul else ''}", moe, "fused_moe_kernel", c,
                     w, s, ints=ints, types=dict(idx), nodiv="num_valid_tokens"))
    for bm, w, s in ((64, 4, 3), (128, 8, 3)):
        c = dict(base, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=128, BLOCK_SIZE_K=128, GROUP_SIZE_M=32, MUL_ROUTED_WEIGHT=False,
                 use_fp8_w8a8=True, group_n=128, group_k=128)
        for k in ("a_scale_ptr", "b_scale_ptr"):
            del c[k]
        t = dict(idx, a_ptr="*fp8e4nv", b_ptr="*fp8e4nv", a_scale_ptr="*fp32", b_scale_ptr="*fp32")
        out.append(S(f"vllm_fused_moe_fp8_block128_{bm}x128x128_w{w}_s{s}", moe, "fused_moe_kernel", c, w, s,
                     ints=ints, types=t, nodiv="num_valid_tokens"))
    fp8 = f"{VLLM}.model_executor.layers.quantization.utils.fp8_utils"
    for bm, w, s in ((64, 4, 2), (128, 8, 3)):
        c = dict(BLOCK_SIZE_M=bm, BLOCK_SIZE_N=128, BLOCK_SIZE_K=128, GROUP_SIZE_M=32)
        out.append(S(f"vllm_w8a8_block_fp8_mm_{bm}x128x128_w{w}_s{s}", fp8, "_w8a8_triton_block_scaled_mm", c, w, s,
                     ints="M N K group_n group_k",
                     types=dict(A="*fp8e4nv", B="*fp8e4nv", As="*fp32", Bs="*fp32")))
    pre = f"{VLLM}.v1.attention.ops.triton_prefill_attention"
    for causal, grp in ((True, 4), (False, 1)):
        c = dict(kv_group_num=grp, BLOCK_M=128, BLOCK_DMODEL=128, BLOCK_N=128, IS_CAUSAL=causal, SLIDING_WINDOW_Q=0,
                 SLIDING_WINDOW_K=0, SINKS_BIAS_KEY0=False, USE_SINKS=False, Lk=128, Sinks=None)
        out.append(S(f"vllm_prefill_attn_d128_{'causal' if causal else 'full'}_g{grp}", pre, "_fwd_kernel", c, 8, 1,
                     floats="sm_scale", types={"B_Start_Loc": "*i32", "B_Seqlen": "*i32"}))
    dec = f"{VLLM}.v1.attention.ops.triton_decode_attention"
    c = dict(kv_group_num=4, q_head_num=32, BLOCK_DMODEL=128, BLOCK_DPE=0, BLOCK_DV=128, BLOCK_N=32, BLOCK_H=16,
             NUM_KV_SPLITS=8, PAGE_SIZE=16, logit_cap=0.0, Lk=128, Lv=128)
    out.append(S("vllm_decode_grouped_attn_d128_g4", dec, "_fwd_grouped_kernel_stage1", c, 4, 2, floats="sm_scale",
                 types={"Req_to_tokens": "*i32", "B_Seqlen": "*i32", "Att_Out": "*fp32", "k_scale": "*fp32",
                        "v_scale": "*fp32"}))
    mamba = f"{VLLM}.model_executor.layers.mamba.ops"
    c = dict(chunk_size=256, hdim=64, dstate=128, nheads_ngroups_ratio=64, IS_CAUSAL=True, HAS_D=True,
             D_HAS_HDIM=False, HAS_Z=False, BLOCK_SIZE_DSTATE=128, IS_TRITON_22=True, HAS_INITSTATES=False, z_ptr=None,
             initstates_ptr=None)
    for bm, bn, bk, w, s in ((64, 64, 32, 4, 1), (32, 64, 32, 8, 2), (64, 64, 64, 4, 2)):
        cc = dict(c, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk)
        out.append(S(f"vllm_mamba2_chunk_scan_{bm}x{bn}x{bk}_w{w}_s{s}", f"{mamba}.ssd_chunk_scan",
                     "_chunk_scan_fwd_kernel", cc, w, s,
                     types=dict(cb_ptr="*fp32", dt_ptr="*fp32", dA_cumsum_ptr="*fp32", seq_idx_ptr="*i32",
                                D_ptr="*fp32", cu_chunk_seqlens_ptr="*i32")))
    c = dict(hdim=64, dstate=128, chunk_size=256, nheads_ngroups_ratio=64)
    for bm, bn, bk, w, s in ((64, 128, 32, 4, 3), (128, 64, 64, 8, 2)):
        cc = dict(c, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk)
        out.append(S(f"vllm_mamba2_chunk_state_{bm}x{bn}x{bk}_w{w}_s{s}", f"{mamba}.ssd_chunk_state",
                     "_chunk_state_fwd_kernel", cc, w, s,
                     types=dict(states_ptr="*fp32", dt_ptr="*fp32", dA_cumsum_ptr="*fp32",
                                cu_chunk_seqlens_ptr="*i32")))
    c = dict(chunk_size=256, K=128, ngroups=1, IS_CAUSAL=False, dot_dtype=tl.bfloat16)
    for bm, bn, bk, w, s in ((64, 64, 64, 4, 3), (128, 128, 32, 8, 2)):
        cc = dict(c, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk)
        out.append(S(f"vllm_mamba2_bmm_chunk_{bm}x{bn}x{bk}_w{w}_s{s}", f"{mamba}.ssd_bmm", "_bmm_chunk_fwd_kernel",
                     cc, w, s, types=dict(out_ptr="*fp32", cu_chunk_seqlens_ptr="*i32")))
    return out


def sglang_specs(S):
    out = []
    pre = f"{SGL}.attention.prefill_attention"
    for causal, grp, d in ((True, 4, 128), (False, 1, 64)):
        c = dict(kv_group_num=grp, BLOCK_M=128, BLOCK_DMODEL=d, BLOCK_N=128, IS_CAUSAL=causal, Lk=d)
        w = 8 if d > 64 else 4
        out.append(S(f"sglang_prefill_attn_d{d}_{'causal' if causal else 'full'}_g{grp}", pre, "_fwd_kernel", c, w,
                     1, floats="sm_scale", types={"B_Start_Loc": "*i32", "B_Seqlen": "*i32"}))
    dec = f"{SGL}.attention.decode_attention"
    for d, dpe, dv, grp, name in ((128, 0, 128, 4, "d128_g4"), (512, 64, 512, 16, "mla_d576")):
        c = dict(kv_group_num=grp, q_head_num=grp * 8 if grp == 4 else 16, BLOCK_DMODEL=d, BLOCK_DPE=dpe,
                 BLOCK_DV=dv, BLOCK_N=32 if d == 128 else 16, BLOCK_H=16, MIN_BLOCK_KV=32, logit_cap=0.0,
                 xai_temperature_len=-1, Lk=d + dpe, Lv=dv, HAS_MLA=dpe > 0, Aux0=None, uneven_batch=None)
        out.append(S(f"sglang_decode_grouped_attn_{name}", dec, "_fwd_grouped_kernel_stage1", c, 4, 2,
                     ints="aux0_stride_t aux0_stride_h aux0_len forced_kv_splits",
                     floats="sm_scale_withk",
                     types={"kv_indptr": "*i32", "kv_indices": "*i32", "num_kv_splits": "*i32", "Att_Out": "*fp32", "Att_Lse": "*fp32"}))
    moe = f"{SGL}.moe.fused_moe_triton_kernels"
    base = dict(MUL_ROUTED_WEIGHT=False, top_k=2, compute_type=tl.bfloat16, use_fp8_w8a8=False, use_int8_w8a8=False,
                use_int8_w8a16=False, per_channel_quant=False, even_Ks=True, c_sorted=False, swap_ab=False,
                FUSE_ADD_TO_OUTPUT=False, MASK_OUTPUT=False, FUSE_SUM_ALL_REDUCE=False, ROUTER_TOPK=2, a_desc=None,
                b_desc=None, bias_ptr=None, a_scale_ptr=None, b_scale_ptr=None, add_mask_ptr=None, group_n=0,
                group_k=0)
    idx = dict(topk_weights_ptr="*fp32", sorted_token_ids_ptr="*i32", expert_ids_ptr="*i32",
               num_tokens_post_padded_ptr="*i32")
    for bm, bn, bk, g, w, s in ((64, 128, 64, 1, 4, 4), (128, 256, 64, 32, 8, 3)):
        c = dict(base, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=g)
        out.append(S(f"sglang_fused_moe_bf16_{bm}x{bn}x{bk}_w{w}_s{s}", moe, "fused_moe_kernel", c, w, s,
                     ints="N K EM num_valid_tokens", types=dict(idx), nodiv="num_valid_tokens"))
    return out


def liger_specs(S):
    out = []
    moe = "liger_kernel.ops.fused_moe_kernels"
    for bm, bn, bk, w, s in ((64, 128, 64, 4, 3), (128, 128, 64, 8, 3)):
        c = dict(H_dim=4096, I_dim=1024, stride_x_H=1, stride_w_K=1, stride_pre_N=1, stride_post_N=1, BLOCK_M=bm,
                 BLOCK_N=bn, BLOCK_K=bk)
        out.append(S(f"liger_moe_up_proj_swiglu_{bm}x{bn}x{bk}_w{w}", moe, "_fused_up_proj_swiglu_kernel", c, w, s,
                     types={"x_gather_idx_ptr": "*i32", "expert_start_ptr": "*i32", "tile_row_start_ptr": "*i32",
                            "tile_expert_ptr": "*i32"}))
        c = dict(H_dim=4096, I_dim=1024, stride_post_I=1, stride_w_I=1, stride_Y_H=1, BLOCK_M=bm, BLOCK_N=bn,
                 BLOCK_K=bk)
        out.append(S(f"liger_moe_down_proj_{bm}x{bn}x{bk}_w{w}", moe, "_fused_down_proj_kernel", c, w, s,
                     types={"expert_start_ptr": "*i32", "tile_row_start_ptr": "*i32", "tile_expert_ptr": "*i32"}))
    return out


def specs(S):
    return fla_specs(S) + vllm_specs(S) + sglang_specs(S) + liger_specs(S)
