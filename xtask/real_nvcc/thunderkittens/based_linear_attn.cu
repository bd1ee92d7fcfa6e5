// ThunderKittens 0b55588d2769 kernels/based/linear_attn.cu: Based: Taylor-feature linear attention forward (feature dim 16, head dim 64).
// Kernel: based_linear_attention.
#include "based/linear_attn.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&based_linear_attention); }
