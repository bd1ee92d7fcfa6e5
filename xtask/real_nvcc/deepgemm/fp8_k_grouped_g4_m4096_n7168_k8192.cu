// DeepGEMM k_grouped_fp8_gemm_tn_contiguous: 1D1D kernel, KGroupedContiguous, fp8 x fp8 -> f32, accumulate into C, A K-major, B K-major; m=4096 n=7168 k=32768 groups=4 (expected m=4096 k=8192 groups=4).
// Config its sm90 heuristics pick (132 SMs, compiled_dims "mn"): block 128x152x128, cluster 2x1 (TMA multicast 2 on B), 4 stages, smem 226560 B, swizzle A/B/CD 128/128/0, 384 threads.
#include <deep_gemm/impls/sm90_fp8_gemm_1d1d.cuh>
using namespace deep_gemm;
void *ori_kernel_entry() {
  return reinterpret_cast<void *>(&sm90_fp8_gemm_1d1d_impl<
    4096, 7168, 0, 4,
    128, 152, 128, 128, 128, 4,
    128, 256, 2, false, 132, GemmType::KGroupedContiguous, float>);
}
