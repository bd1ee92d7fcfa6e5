// FA3 backward (FlashAttnBwdSm90 dQ/dK/dV kernel), hdim 128, bf16, tile 80x128; plain non-causal.
// Template arguments as run_mha_bwd_hdim128<90, bf16, softcap=0> dispatches them (run_mha_bwd_dispatch<90, T, 80, 128, 128, ..., 2, 2, true, false, true, 2, 1, 2, 1, false>).
#include "ori_fa3.cuh"
using K = ori::Bwd<128, 80, 128, cutlass::bfloat16_t,
                   /*causal*/ false, /*local*/ false, /*softcap*/ false, /*varlen*/ false,
                   /*deterministic*/ false, /*gqa*/ false,
                   2, 2, true, false, true, 2, 1, 2, 1, false>;
ORI_EMIT(K)
