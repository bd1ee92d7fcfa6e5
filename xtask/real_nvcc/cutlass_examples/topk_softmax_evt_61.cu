// CUTLASS v4.7.0 examples/61_hopper_gemm_with_topk_and_softmax/61_hopper_gemm_with_topk_and_softmax.cu: GEMM with a top-k + softmax EVT epilogue.
// Kernel: cutlass::device_kernel<Gemm::GemmKernel>.
#include "61_hopper_gemm_with_topk_and_softmax/61_hopper_gemm_with_topk_and_softmax.kernels.cuh"
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&cutlass::device_kernel<Gemm::GemmKernel>);
}
