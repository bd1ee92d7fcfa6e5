// FA3 backward (FlashAttnBwdSm90 dQ/dK/dV kernel), hdim 256, bf16, tile 64x80; plain non-causal.
// Template arguments as run_mha_bwd_hdim256<90, bf16, softcap=0> dispatches them (run_mha_bwd_dispatch<90, T, 64, 80, 256, ..., 1, 1, false, true, true, 2, 1, 1, 1, false>).
#include "ori_fa3.cuh"
using K = ori::Bwd<256, 64, 80, cutlass::bfloat16_t,
                   /*causal*/ false, /*local*/ false, /*softcap*/ false, /*varlen*/ false,
                   /*deterministic*/ false, /*gqa*/ false,
                   1, 1, false, true, true, 2, 1, 1, 1, false>;
ORI_EMIT(K)
