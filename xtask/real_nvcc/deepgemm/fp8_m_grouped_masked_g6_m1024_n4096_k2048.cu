// DeepGEMM m_grouped_fp8_gemm_nt_masked: 1D2D kernel, MGroupedMasked, fp8 x fp8 -> bf16, A K-major, B K-major; m=4096 n=4096 k=2048 groups=6 (expected m=1024 k=2048 groups=6).
// Config its sm90 heuristics pick (132 SMs, compiled_dims "nk"): block 128x192x128, cluster 2x1 (TMA multicast 2 on B), 4 stages, smem 215424 B, swizzle A/B/CD 128/128/128, 384 threads.
#include <deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh>
using namespace deep_gemm;
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&sm90_fp8_gemm_1d2d_impl<
    cute::UMMA::Major::K,
    0, 4096, 2048, 6,
    128, 192, 128, 128, 128, 128, 4,
    128, 256, 2, false, 132, GemmType::MGroupedMasked,
    cutlass::bfloat16_t, epilogue::transform::EpilogueIdentity>);
}
