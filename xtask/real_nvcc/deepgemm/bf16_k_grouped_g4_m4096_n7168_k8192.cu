// DeepGEMM k_grouped_bf16_gemm_tn_contiguous: NoSF kernel, KGroupedContiguous, bf16 x bf16 -> f32, accumulate into C, A MN-major, B MN-major; m=4096 n=7168 k=32768 groups=4 (expected m=4096 k=8192 groups=4).
// Config its sm90 heuristics pick (132 SMs, compiled_dims "mn"): block 128x192x64, cluster 2x1 (TMA multicast 2 on B), 3 stages, smem 221952 B, swizzle A/B/CD 128/128/0, 384 threads.
#include <deep_gemm/impls/sm90_bf16_gemm.cuh>
using namespace deep_gemm;
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&sm90_bf16_gemm_impl<
    cute::UMMA::Major::MN, cute::UMMA::Major::MN,
    4096, 7168, 0, 4,
    128, 192, 64, 128, 128, 0, 3,
    128, 256, 2, false, 132,
    GemmType::KGroupedContiguous, true, float>);
}
