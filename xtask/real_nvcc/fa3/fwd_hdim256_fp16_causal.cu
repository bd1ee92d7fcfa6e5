// FA3 forward (FlashAttnFwdSm90), hdim 256, hdim_v 256, fp16, cluster M 1; causal.
// As run_flash_fwd<90, 256, 256, 1, ...> would instantiate it (from run_mha_fwd_<90, fp16, 256, 256, split=0, paged=0, softcap=0, packgqa=0>).
#include "ori_fa3.cuh"
using K = ori::Fwd<256, 256, 1, cutlass::half_t, cutlass::half_t,
                   /*causal*/ true, /*local*/ false, /*softcap*/ false, /*varlen*/ false,
                   /*paged_non_tma*/ false, /*appendkv*/ false, /*has_qv*/ false,
                   /*packgqa*/ false, /*split*/ false, /*v_colmajor*/ false>;
ORI_EMIT(K)
