// DeepGEMM fp8_gemm_nt: 1D2D kernel, Normal, fp8 x fp8 -> bf16, A K-major, B K-major; m=128 n=2112 k=7168 groups=1.
// Config its sm90 heuristics pick (132 SMs, compiled_dims "nk"): block 64x32x128, cluster 1x1 (TMA multicast 1), 16 stages, smem 205280 B, swizzle A/B/CD 128/128/64, 256 threads.
#include <deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh>
using namespace deep_gemm;
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&sm90_fp8_gemm_1d2d_impl<
    cute::UMMA::Major::K,
    0, 2112, 7168, 1,
    64, 32, 128, 128, 128, 64, 16,
    128, 128, 1, false, 132, GemmType::Normal,
    cutlass::bfloat16_t, epilogue::transform::EpilogueIdentity>);
}
