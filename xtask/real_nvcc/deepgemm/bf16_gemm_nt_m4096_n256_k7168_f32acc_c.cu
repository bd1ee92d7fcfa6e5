// DeepGEMM bf16_gemm_nt: NoSF kernel, Normal, bf16 x bf16 -> f32, accumulate into C, A K-major, B K-major; m=4096 n=256 k=7168 groups=1.
// Config its sm90 heuristics pick (132 SMs, compiled_dims "nk"): block 64x128x64, cluster 1x1 (TMA multicast 1), 8 stages, smem 229632 B, swizzle A/B/CD 128/128/0, 256 threads.
#include <deep_gemm/impls/sm90_bf16_gemm.cuh>
using namespace deep_gemm;
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&sm90_bf16_gemm_impl<
    cute::UMMA::Major::K, cute::UMMA::Major::K,
    0, 256, 7168, 1,
    64, 128, 64, 128, 128, 0, 8,
    128, 128, 1, false, 132,
    GemmType::Normal, true, float>);
}
