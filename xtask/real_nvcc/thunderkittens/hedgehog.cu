// ThunderKittens 0b55588d2769 kernels/hedgehog/hedgehog.cu: Hedgehog: learned feature map + sliding window linear attention forward.
// Kernel: hedgehog_linear_attention_smd.
#include "hedgehog/hedgehog.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&hedgehog_linear_attention_smd); }
