// CUTLASS v4.7.0 examples/88_hopper_fmha: forward, f16, head dim 64, ping-pong, causal.
// FwdRunner<cute::Shape<cute::_128, cute::_64, cute::_64>, KernelPingpong, CausalFusion> as run_fwd_64 instantiates it.
// nvcc-extra: --use_fast_math
#include "ori_fmha88.cuh"
ORI_EMIT(ori::Fwd<cutlass::half_t, cute::Shape<cute::_128, cute::_64, cute::_64>, ori::KernelPingpong, ori::CausalFusion>::Kernel)
