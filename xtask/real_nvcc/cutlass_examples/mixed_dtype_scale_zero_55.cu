// CUTLASS v4.7.0 examples/55_hopper_mixed_dtype_gemm/55_hopper_mixed_dtype_gemm.cu: int8 x fp16 mixed input, scales and zero points.
// Kernel: cutlass::device_kernel<GemmScaleWithZeroPoint::GemmKernel>.
#include "55_hopper_mixed_dtype_gemm/55_hopper_mixed_dtype_gemm.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<GemmScaleWithZeroPoint::GemmKernel>);
}
