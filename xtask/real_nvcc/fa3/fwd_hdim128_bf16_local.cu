// FA3 forward (FlashAttnFwdSm90), hdim 128, hdim_v 128, bf16, cluster M 1; local.
// As run_flash_fwd<90, 128, 128, 1, ...> would instantiate it (from run_mha_fwd_<90, bf16, 128, 128, split=0, paged=0, softcap=0, packgqa=0>).
#include "ori_fa3.cuh"
using K = ori::Fwd<128, 128, 1, cutlass::bfloat16_t, cutlass::bfloat16_t,
                   /*causal*/ false, /*local*/ true, /*softcap*/ false, /*varlen*/ false,
                   /*paged_non_tma*/ false, /*appendkv*/ false, /*has_qv*/ false,
                   /*packgqa*/ false, /*split*/ false, /*v_colmajor*/ false>;
ORI_EMIT(K)
