// FA3 backward (FlashAttnBwdSm90 dQ/dK/dV kernel), hdim 64, bf16, tile 128x128; plain non-causal.
// Template arguments as run_mha_bwd_hdim64<90, bf16, softcap=0> dispatches them (run_mha_bwd_dispatch<90, T, 128, 128, 64, ..., 2, 2, true, false, false, 2, 1, 2, 2, false>).
#include "ori_fa3.cuh"
using K = ori::Bwd<64, 128, 128, cutlass::bfloat16_t,
                   /*causal*/ false, /*local*/ false, /*softcap*/ false, /*varlen*/ false,
                   /*deterministic*/ false, /*gqa*/ false,
                   2, 2, true, false, false, 2, 1, 2, 2, false>;
ORI_EMIT(K)
