// FA3 forward (FlashAttnFwdSm90), hdim 64, hdim_v 512, bf16, cluster M 1; varlen, qv, packgqa.
// As run_flash_fwd<90, 64, 512, 1, ...> would instantiate it (from run_mha_fwd_<90, bf16, 64, 512, split=0, paged=0, softcap=0, packgqa=1>). MLA decode: hdim 64 + Qv, hdim_v 512.
#include "ori_fa3.cuh"
using K = ori::Fwd<64, 512, 1, cutlass::bfloat16_t, cutlass::bfloat16_t,
                   /*causal*/ false, /*local*/ false, /*softcap*/ false, /*varlen*/ true,
                   /*paged_non_tma*/ false, /*appendkv*/ false, /*has_qv*/ true,
                   /*packgqa*/ true, /*split*/ false, /*v_colmajor*/ false>;
ORI_EMIT(K)
