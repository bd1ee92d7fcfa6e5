// CUTLASS v4.7.0 examples/88_hopper_fmha: backward (dQ/dK/dV), f16, head dim 64, 64x128.
// BwdRunner<cute::Shape<cute::_64, cute::_128, cute::_64>, KernelCooperative, DefaultFusion> as run_bwd_64 instantiates it.
// nvcc-extra: --use_fast_math
#include "ori_fmha88.cuh"
ORI_EMIT(ori::Bwd<cute::Shape<cute::_64, cute::_128, cute::_64>, ori::DefaultFusion>::Kernel)
