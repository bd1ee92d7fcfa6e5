// FA3 backward (FlashAttnBwdSm90 dQ/dK/dV kernel), hdim 96, bf16, tile 64x128; plain non-causal.
// Template arguments as run_mha_bwd_hdim96<90, bf16, softcap=0> dispatches them (run_mha_bwd_dispatch<90, T, 64, 128, 96, ..., 2, 2, true, false, false, 2, 1, 2, 1, true>).
#include "ori_fa3.cuh"
using K = ori::Bwd<96, 64, 128, cutlass::bfloat16_t,
                   /*causal*/ false, /*local*/ false, /*softcap*/ false, /*varlen*/ false,
                   /*deterministic*/ false, /*gqa*/ false,
                   2, 2, true, false, false, 2, 1, 2, 1, true>;
ORI_EMIT(K)
