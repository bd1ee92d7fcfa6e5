// ThunderKittens 0b55588d2769 kernels/flux/flux_gate.cu: Flux: GEMM + bias + gate + residual epilogue, tile 192x192x64.
// Kernel: kittens::prototype::lcf::kernel<flux_matmul_gate_template<192, 192, 64>>.
#include "flux/flux_gate.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&kittens::prototype::lcf::kernel<flux_matmul_gate_template<192, 192, 64>>); }
