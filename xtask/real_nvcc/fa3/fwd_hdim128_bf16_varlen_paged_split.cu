// FA3 forward (FlashAttnFwdSm90), hdim 128, hdim_v 128, bf16, cluster M 1; varlen, paged_non_tma, split.
// As run_flash_fwd<90, 128, 128, 1, ...> would instantiate it (from run_mha_fwd_<90, bf16, 128, 128, split=1, paged=1, softcap=0, packgqa=0>). paged KV (non-TMA), split-KV, varlen (decode).
#include "ori_fa3.cuh"
using K = ori::Fwd<128, 128, 1, cutlass::bfloat16_t, cutlass::bfloat16_t,
                   /*causal*/ false, /*local*/ false, /*softcap*/ false, /*varlen*/ true,
                   /*paged_non_tma*/ true, /*appendkv*/ false, /*has_qv*/ false,
                   /*packgqa*/ false, /*split*/ true, /*v_colmajor*/ false>;
ORI_EMIT(K)
