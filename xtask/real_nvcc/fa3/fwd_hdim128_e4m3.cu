// FA3 forward (FlashAttnFwdSm90), hdim 128, hdim_v 128, e4m3 -> bf16 out, cluster M 1; plain non-causal.
// As run_flash_fwd<90, 128, 128, 1, ...> would instantiate it (from run_mha_fwd_<90, e4m3, 128, 128, split=0, paged=0, softcap=0, packgqa=0>).
#include "ori_fa3.cuh"
using K = ori::Fwd<128, 128, 1, cutlass::float_e4m3_t, cutlass::bfloat16_t,
                   /*causal*/ false, /*local*/ false, /*softcap*/ false, /*varlen*/ false,
                   /*paged_non_tma*/ false, /*appendkv*/ false, /*has_qv*/ false,
                   /*packgqa*/ false, /*split*/ false, /*v_colmajor*/ false>;
ORI_EMIT(K)
