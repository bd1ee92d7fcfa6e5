// ThunderKittens 0b55588d2769 kernels/gemm/educational_h100/level_05.cu: educational bf16 GEMM, level 5.
// Kernel: kernel.
#include "gemm/educational_h100/level_05.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&kernel); }
