// DeepGEMM m_grouped_bf16_gemm_nt_contiguous: NoSF kernel, MGroupedContiguous, bf16 x bf16 -> bf16, A K-major, B K-major; m=32768 n=6144 k=7168 groups=4.
// Config its sm90 heuristics pick (132 SMs, compiled_dims "nk"): block 128x256x64, cluster 2x1 (TMA multicast 2 on B), 3 stages, smem 213248 B, swizzle A/B/CD 128/128/128, 384 threads.
#include <deep_gemm/impls/sm90_bf16_gemm.cuh>
using namespace deep_gemm;
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&sm90_bf16_gemm_impl<
    cute::UMMA::Major::K, cute::UMMA::Major::K,
    0, 6144, 7168, 4,
    128, 256, 64, 128, 128, 128, 3,
    128, 256, 2, false, 132,
    GemmType::MGroupedContiguous, false, cutlass::bfloat16_t>);
}
