// ThunderKittens 0b55588d2769 kernels/gemm/educational_h100/level_07.cu: educational bf16 GEMM, level 7.
// Kernel: kernel.
#include "gemm/educational_h100/level_07.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&kernel); }
