// ThunderKittens 0b55588d2769 kernels/linear_attention/linear_attention.cu: causal linear attention forward, head dim 64.
// Kernel: la_kernel.
#include "linear_attention/linear_attention.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&la_kernel); }
