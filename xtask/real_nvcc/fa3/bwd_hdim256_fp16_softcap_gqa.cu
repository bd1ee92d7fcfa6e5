// FA3 backward (FlashAttnBwdSm90 dQ/dK/dV kernel), hdim 256, fp16, tile 64x80; softcap, gqa.
// Template arguments as run_mha_bwd_hdim256<90, fp16, softcap=1> dispatches them (run_mha_bwd_dispatch<90, T, 64, 80, 256, ..., 1, 1, false, true, true, 2, 1, 1, 1, false>).
#include "ori_fa3.cuh"
using K = ori::Bwd<256, 64, 80, cutlass::half_t,
                   /*causal*/ false, /*local*/ false, /*softcap*/ true, /*varlen*/ false,
                   /*deterministic*/ false, /*gqa*/ true,
                   1, 1, false, true, true, 2, 1, 1, 1, false>;
ORI_EMIT(K)
