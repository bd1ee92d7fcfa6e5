// ThunderKittens 0b55588d2769 kernels/gemm/fp8_h100/fp8_h100_gemm.cu: fp8 e4m3 GEMM with fp8 output, SUPER_M 8 (fp8_gemm binding and benchmark).
// Kernel: kittens::prototype::lcf::kernel<matmul_template<8>>.
#include "gemm/fp8_h100/fp8_h100_gemm.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&kittens::prototype::lcf::kernel<matmul_template<8>>); }
