// ThunderKittens 0b55588d2769 kernels/flux/flux_gelu.cu: Flux: GEMM + bias + GELU epilogue, tile 128x192x64, transposed lhs.
// Kernel: kittens::prototype::lcf::kernel<flux_matmul_gelu_template<128, 192, 64, 1, 0>>.
#include "flux/flux_gelu.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&kittens::prototype::lcf::kernel<flux_matmul_gelu_template<128, 192, 64, 1, 0>>); }
