// Records one CUTLASS GEMM of the real-kernel corpus on the GPU, for
// `tests/host_cutlass.rs`: compiled together with a kernel wrapper of
// `xtask/real_nvcc/cutlass/` (`nvcc -include WRAPPER.cu record_gemm.cu`,
// see `record.py`), it runs `G::Adapter` on a small problem with fixed
// inputs and writes, into the directory given as argv[1]:
//   params.bin  the kernel's parameter block, exactly as launched
//               (`GemmKernel::to_underlying_arguments`: TMA descriptors
//               encoded by the driver, device addresses of every buffer)
//   a.bin b.bin c.bin  the inputs, d.bin the output the GPU wrote
//   meta.txt    grid, block, shared bytes, each buffer's address, and
//               the cluster shape
// Inputs are small integers (exact in every element type), so the sums
// are exact and the host backend must give the same bytes.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <string>
#include <cuda_runtime.h>
#include "cutlass/util/packed_stride.hpp"

#define CHECK(x)                                                            \
  do {                                                                      \
    cudaError_t e_ = (x);                                                   \
    if (e_ != cudaSuccess) {                                                \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                              \
    }                                                                       \
  } while (0)

using Adapter = G::Adapter;
using Kernel = Adapter::GemmKernel;
using EA = Kernel::ElementA;
using EB = Kernel::ElementB;
using EC = Kernel::ElementC;
using ED = Kernel::ElementD;

template <class T>
static std::vector<T> fill(size_t n, int salt) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = T(float(int((i * 3 + i / 7 + salt) % 7) - 3));
  return v;
}

template <class T>
static T *upload(const std::vector<T> &h) {
  T *d = nullptr;
  CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

static void save(const std::string &path, const void *p, size_t n) {
  FILE *f = fopen(path.c_str(), "wb");
  if (!f || fwrite(p, 1, n, f) != n) { perror(path.c_str()); exit(1); }
  fclose(f);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s OUTDIR M N K\n", argv[0]);
    return 2;
  }
  std::string out = argv[1];
  int M = atoi(argv[2]), N = atoi(argv[3]), K = atoi(argv[4]), L = 1;
  auto sA = cutlass::make_cute_packed_stride(Kernel::StrideA{}, cute::make_shape(M, K, L));
  auto sB = cutlass::make_cute_packed_stride(Kernel::StrideB{}, cute::make_shape(N, K, L));
  auto sC = cutlass::make_cute_packed_stride(Kernel::StrideC{}, cute::make_shape(M, N, L));
  auto sD = cutlass::make_cute_packed_stride(Kernel::StrideD{}, cute::make_shape(M, N, L));
  auto hA = fill<EA>(size_t(M) * K, 1);
  auto hB = fill<EB>(size_t(N) * K, 2);
  auto hC = fill<EC>(size_t(M) * N, 3);
  std::vector<ED> hD(size_t(M) * N);
  EA *dA = upload(hA);
  EB *dB = upload(hB);
  EC *dC = upload(hC);
  ED *dD = nullptr;
  CHECK(cudaMalloc(&dD, hD.size() * sizeof(ED)));
  CHECK(cudaMemset(dD, 0, hD.size() * sizeof(ED)));

  cutlass::KernelHardwareInfo hw;
  hw.device_id = 0;
  hw.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(0);
  typename Adapter::Arguments args{
      cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K, L}, {dA, sA, dB, sB},
      {{}, dC, sC, dD, sD}, hw};
  // D = 1 * AB + 1 * C, with alpha and beta of the epilogue's own scalar
  // type (f32 for most kernels, f16 for the f16-accumulator ones).
  args.epilogue.thread.alpha = decltype(args.epilogue.thread.alpha)(1.0f);
  args.epilogue.thread.beta = decltype(args.epilogue.thread.beta)(1.0f);
  Adapter op;
  if (op.can_implement(args) != cutlass::Status::kSuccess) {
    fprintf(stderr, "can_implement failed\n");
    return 1;
  }
  size_t ws_size = Adapter::get_workspace_size(args);
  void *ws = nullptr;
  if (ws_size) {
    CHECK(cudaMalloc(&ws, ws_size));
    CHECK(cudaMemset(ws, 0, ws_size));
  }
  if (op.initialize(args, ws) != cutlass::Status::kSuccess) {
    fprintf(stderr, "initialize failed\n");
    return 1;
  }
  // The parameter block the adapter launches with (the same function
  // with the same arguments builds it).
  typename Kernel::Params params = Kernel::to_underlying_arguments(args, ws);
  dim3 grid = Kernel::get_grid_shape(params);
  dim3 block = Kernel::get_block_shape();
  if (op.run() != cutlass::Status::kSuccess) {
    fprintf(stderr, "run failed\n");
    return 1;
  }
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(hD.data(), dD, hD.size() * sizeof(ED), cudaMemcpyDeviceToHost));
  save(out + "/params.bin", &params, sizeof(params));
  save(out + "/a.bin", hA.data(), hA.size() * sizeof(EA));
  save(out + "/b.bin", hB.data(), hB.size() * sizeof(EB));
  save(out + "/c.bin", hC.data(), hC.size() * sizeof(EC));
  save(out + "/d.bin", hD.data(), hD.size() * sizeof(ED));
  FILE *m = fopen((out + "/meta.txt").c_str(), "w");
  fprintf(m, "grid %u,%u,%u\nblock %u,%u,%u\nshared %d\n", grid.x, grid.y, grid.z, block.x,
          block.y, block.z, int(Kernel::SharedStorageSize));
  fprintf(m, "a %p %zu\nb %p %zu\nc %p %zu\nd %p %zu\nworkspace %p %zu\n", (void *)dA,
          hA.size() * sizeof(EA), (void *)dB, hB.size() * sizeof(EB), (void *)dC,
          hC.size() * sizeof(EC), (void *)dD, hD.size() * sizeof(ED), ws, ws_size);
  fprintf(m, "mnk %d %d %d\n", M, N, K);
  // The cluster shape the adapter launches with (cudaLaunchKernelEx's
  // cluster dimension; 1,1,1 for a kernel of one-CTA clusters).
  using Cluster = typename Kernel::DispatchPolicy::ClusterShape;
  fprintf(m, "cluster %d,%d,%d\n", int(cute::size<0>(Cluster{})), int(cute::size<1>(Cluster{})),
          int(cute::size<2>(Cluster{})));
  fclose(m);
  return 0;
}
