// ThunderKittens 0b55588d2769 kernels/gemm/bf16_h100/bf16_h100_gemm.cu: bf16 GEMM, 3x3 64x64 tiles per block (3 consumer warpgroups), SUPER_M 12.
// Kernel: kittens::prototype::lcf::kernel<matmul_template<3, 3, 12>>.
#include "gemm/bf16_h100/bf16_h100_gemm.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&kittens::prototype::lcf::kernel<matmul_template<3, 3, 12>>); }
