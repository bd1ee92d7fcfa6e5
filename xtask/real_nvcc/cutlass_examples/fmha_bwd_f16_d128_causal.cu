// CUTLASS v4.7.0 examples/88_hopper_fmha: backward (dQ/dK/dV), f16, head dim 128, causal.
// BwdRunner<cute::Shape<cute::_64, cute::_128, cute::_128>, KernelCooperative, CausalFusion> as run_bwd_128 instantiates it.
// nvcc-extra: --use_fast_math
#include "ori_fmha88.cuh"
ORI_EMIT(ori::Bwd<cute::Shape<cute::_64, cute::_128, cute::_128>, ori::CausalFusion>::Kernel)
