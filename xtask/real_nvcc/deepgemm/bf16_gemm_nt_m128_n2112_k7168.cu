// DeepGEMM bf16_gemm_nt: NoSF kernel, Normal, bf16 x bf16 -> bf16, A K-major, B K-major; m=128 n=2112 k=7168 groups=1.
// Config its sm90 heuristics pick (132 SMs, compiled_dims "nk"): block 64x32x64, cluster 1x1 (TMA multicast 1), 16 stages, smem 200960 B, swizzle A/B/CD 128/128/64, 256 threads.
#include <deep_gemm/impls/sm90_bf16_gemm.cuh>
using namespace deep_gemm;
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&sm90_bf16_gemm_impl<
    cute::UMMA::Major::K, cute::UMMA::Major::K,
    0, 2112, 7168, 1,
    64, 32, 64, 128, 128, 64, 16,
    128, 128, 1, false, 132,
    GemmType::Normal, false, cutlass::bfloat16_t>);
}
