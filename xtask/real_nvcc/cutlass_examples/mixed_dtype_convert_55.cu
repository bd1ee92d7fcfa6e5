// CUTLASS v4.7.0 examples/55_hopper_mixed_dtype_gemm/55_hopper_mixed_dtype_gemm.cu: int8 x fp16 mixed input, convert only.
// Kernel: cutlass::device_kernel<GemmConvertOnly::GemmKernel>.
#include "55_hopper_mixed_dtype_gemm/55_hopper_mixed_dtype_gemm.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<GemmConvertOnly::GemmKernel>);
}
