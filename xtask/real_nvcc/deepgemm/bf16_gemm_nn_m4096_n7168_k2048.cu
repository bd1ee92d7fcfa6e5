// DeepGEMM bf16_gemm_nn: NoSF kernel, Normal, bf16 x bf16 -> bf16, A K-major, B MN-major; m=4096 n=7168 k=2048 groups=1.
// Config its sm90 heuristics pick (132 SMs, compiled_dims "nk"): block 256x128x64, cluster 1x2 (TMA multicast 2 on A), 3 stages, smem 213248 B, swizzle A/B/CD 128/128/128, 384 threads.
#include <deep_gemm/impls/sm90_bf16_gemm.cuh>
using namespace deep_gemm;
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&sm90_bf16_gemm_impl<
    cute::UMMA::Major::K, cute::UMMA::Major::MN,
    0, 7168, 2048, 1,
    256, 128, 64, 128, 128, 128, 3,
    128, 256, 2, true, 132,
    GemmType::Normal, false, cutlass::bfloat16_t>);
}
