// ThunderKittens 0b55588d2769 kernels/gemm/fp8_h100_scaled/fp8_h100_gemm_scaled.cu: fp8 e4m3 GEMM with per-row/per-column scales, SUPER_M 8.
// Kernel: kittens::prototype::lcf::kernel<matmul_template<8>>.
#include "gemm/fp8_h100_scaled/fp8_h100_gemm_scaled.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&kittens::prototype::lcf::kernel<matmul_template<8>>); }
