// FA3 backward (FlashAttnBwdSm90 dQ/dK/dV kernel), hdim 192, bf16, tile 64x96; causal.
// Template arguments as run_mha_bwd_hdim192<90, bf16, softcap=0> dispatches them (run_mha_bwd_dispatch<90, T, 64, 96, 192, ..., 1, 1, false, true, false, 3, 1, 1, 1, false>).
#include "ori_fa3.cuh"
using K = ori::Bwd<192, 64, 96, cutlass::bfloat16_t,
                   /*causal*/ true, /*local*/ false, /*softcap*/ false, /*varlen*/ false,
                   /*deterministic*/ false, /*gqa*/ false,
                   1, 1, false, true, false, 3, 1, 1, 1, false>;
ORI_EMIT(K)
