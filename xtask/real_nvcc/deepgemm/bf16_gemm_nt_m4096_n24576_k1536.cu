// DeepGEMM bf16_gemm_nt: NoSF kernel, Normal, bf16 x bf16 -> bf16, A K-major, B K-major; m=4096 n=24576 k=1536 groups=1.
// Config its sm90 heuristics pick (132 SMs, compiled_dims "nk"): block 128x240x64, cluster 2x1 (TMA multicast 2 on B), 3 stages, smem 203008 B, swizzle A/B/CD 128/128/32, 384 threads.
#include <deep_gemm/impls/sm90_bf16_gemm.cuh>
using namespace deep_gemm;
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&sm90_bf16_gemm_impl<
    cute::UMMA::Major::K, cute::UMMA::Major::K,
    0, 24576, 1536, 1,
    128, 240, 64, 128, 128, 32, 3,
    128, 256, 2, false, 132,
    GemmType::Normal, false, cutlass::bfloat16_t>);
}
