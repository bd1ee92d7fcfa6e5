// ThunderKittens 0b55588d2769 kernels/gemm/educational_h100/level_08.cu: educational bf16 GEMM, level 8.
// Kernel: kernel.
#include "gemm/educational_h100/level_08.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&kernel); }
