// FA3 forward (FlashAttnFwdSm90), hdim 192, hdim_v 192, e4m3 -> bf16 out, cluster M 2; plain non-causal.
// As run_flash_fwd<90, 192, 192, 2, ...> would instantiate it (from run_mha_fwd_<90, e4m3, 192, 192, split=0, paged=0, softcap=0, packgqa=0>).
#include "ori_fa3.cuh"
using K = ori::Fwd<192, 192, 2, cutlass::float_e4m3_t, cutlass::bfloat16_t,
                   /*causal*/ false, /*local*/ false, /*softcap*/ false, /*varlen*/ false,
                   /*paged_non_tma*/ false, /*appendkv*/ false, /*has_qv*/ false,
                   /*packgqa*/ false, /*split*/ false, /*v_colmajor*/ false>;
ORI_EMIT(K)
