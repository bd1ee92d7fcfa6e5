// DeepGEMM bf16_gemm_nt: NoSF kernel, Normal, bf16 x bf16 -> f32, A K-major, B K-major; m=4096 n=129280 k=7168 groups=1.
// Config its sm90 heuristics pick (132 SMs, compiled_dims "nk"): block 128x192x64, cluster 2x1 (TMA multicast 2 on B), 3 stages, smem 221440 B, swizzle A/B/CD 128/128/0, 384 threads.
#include <deep_gemm/impls/sm90_bf16_gemm.cuh>
using namespace deep_gemm;
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&sm90_bf16_gemm_impl<
    cute::UMMA::Major::K, cute::UMMA::Major::K,
    0, 129280, 7168, 1,
    128, 192, 64, 128, 128, 0, 3,
    128, 256, 2, false, 132,
    GemmType::Normal, false, float>);
}
