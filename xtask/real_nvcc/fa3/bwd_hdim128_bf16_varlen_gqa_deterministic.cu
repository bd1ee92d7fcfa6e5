// FA3 backward (FlashAttnBwdSm90 dQ/dK/dV kernel), hdim 128, bf16, tile 64x128; local, varlen, deterministic, gqa.
// Template arguments as run_mha_bwd_hdim128<90, bf16, softcap=0> dispatches them (run_mha_bwd_dispatch<90, T, 64, 128, 128, ..., 2, 2, true, false, false, 2, 1, 2, 1, false>). sliding window.
#include "ori_fa3.cuh"
using K = ori::Bwd<128, 64, 128, cutlass::bfloat16_t,
                   /*causal*/ false, /*local*/ true, /*softcap*/ false, /*varlen*/ true,
                   /*deterministic*/ true, /*gqa*/ true,
                   2, 2, true, false, false, 2, 1, 2, 1, false>;
ORI_EMIT(K)
