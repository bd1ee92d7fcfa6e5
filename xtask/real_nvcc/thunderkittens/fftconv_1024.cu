// ThunderKittens 0b55588d2769 kernels/fftconv/fftconv_pc.cu: FFT convolution, sequence 1024 (Monarch FFT as GEMMs).
// Kernel: kittens::prototype::lcsf::kernel<fft_1024_template>.
#include "fftconv/fftconv_pc.kernels.cuh"
void *ori_kernel_entry() { return reinterpret_cast<void *>(&kittens::prototype::lcsf::kernel<fft_1024_template>); }
