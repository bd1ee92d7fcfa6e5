// CUTLASS v4.7.0 examples/88_hopper_fmha: forward, e4m3, head dim 128, cooperative 128x256, causal.
// FwdRunner<cute::Shape<cute::_128, cute::_256, cute::_128>, KernelCooperative, CausalFusion> as run_fwd_128 instantiates it (FP8 build).
// nvcc-extra: --use_fast_math
#include "ori_fmha88.cuh"
ORI_EMIT(ori::Fwd<cutlass::float_e4m3_t, cute::Shape<cute::_128, cute::_256, cute::_128>, ori::KernelCooperative, ori::CausalFusion>::Kernel)
