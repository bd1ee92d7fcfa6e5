// DeepGEMM fp8_gemm_nt: 1D2D kernel, Normal, fp8 x fp8 -> bf16, A K-major, B K-major; m=4096 n=7168 k=2048 groups=1.
// Config its sm90 heuristics pick (132 SMs, compiled_dims "nk"): block 256x128x128, cluster 1x2 (TMA multicast 2 on A), 3 stages, smem 216384 B, swizzle A/B/CD 128/128/128, 384 threads.
#include <deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh>
using namespace deep_gemm;
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&sm90_fp8_gemm_1d2d_impl<
    cute::UMMA::Major::K,
    0, 7168, 2048, 1,
    256, 128, 128, 128, 128, 128, 3,
    128, 256, 2, true, 132, GemmType::Normal,
    cutlass::bfloat16_t, epilogue::transform::EpilogueIdentity>);
}
