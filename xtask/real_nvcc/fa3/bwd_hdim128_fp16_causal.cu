// FA3 backward (FlashAttnBwdSm90 dQ/dK/dV kernel), hdim 128, fp16, tile 64x128; causal.
// Template arguments as run_mha_bwd_hdim128<90, fp16, softcap=0> dispatches them (run_mha_bwd_dispatch<90, T, 64, 128, 128, ..., 2, 2, true, false, false, 2, 1, 2, 1, false>).
#include "ori_fa3.cuh"
using K = ori::Bwd<128, 64, 128, cutlass::half_t,
                   /*causal*/ true, /*local*/ false, /*softcap*/ false, /*varlen*/ false,
                   /*deterministic*/ false, /*gqa*/ false,
                   2, 2, true, false, false, 2, 1, 2, 1, false>;
ORI_EMIT(K)
