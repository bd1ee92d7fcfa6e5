// FA3 backward (FlashAttnBwdSm90 dQ/dK/dV kernel), hdim 64, fp16, tile 96x128; causal, softcap.
// Template arguments as run_mha_bwd_hdim64<90, fp16, softcap=1> dispatches them (run_mha_bwd_dispatch<90, T, 96, 128, 64, ..., 2, 2, true, false, true, 2, 1, 2, 2, false>).
#include "ori_fa3.cuh"
using K = ori::Bwd<64, 96, 128, cutlass::half_t,
                   /*causal*/ true, /*local*/ false, /*softcap*/ true, /*varlen*/ false,
                   /*deterministic*/ false, /*gqa*/ false,
                   2, 2, true, false, true, 2, 1, 2, 2, false>;
ORI_EMIT(K)
