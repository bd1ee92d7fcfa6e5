// ThunderKittens 0b55588d2769 kernels/gemm/bf16_h100/bf16_h100_gemm.cu: bf16 GEMM, 2x4 64x64 tiles per block (2 consumer warpgroups), SUPER_M 8.
// Kernel: kittens::prototype::lcf::kernel<matmul_template<2, 4, 8>>.
#include "gemm/bf16_h100/bf16_h100_gemm.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&kittens::prototype::lcf::kernel<matmul_template<2, 4, 8>>); }
