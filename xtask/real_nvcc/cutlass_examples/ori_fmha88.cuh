// Scaffolding for CUTLASS example 88_hopper_fmha: the kernel types its FwdRunner and
// BwdRunner build (88_hopper_fmha.cu), named so that a wrapper emits exactly one of them.
#pragma once
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/device_kernel.h"
#include "88_hopper_fmha/collective/fmha_fusion.hpp"
#include "88_hopper_fmha/device/fmha_device_bwd.hpp"
#include "88_hopper_fmha/device/device_universal.hpp"
#include "88_hopper_fmha/kernel/fmha_kernel_builder.hpp"

namespace ori {
using namespace cute;
using namespace cutlass::fmha::kernel;
using namespace cutlass::fmha::collective;
using namespace cutlass::fmha;
using KernelTma = cutlass::gemm::KernelTma;
using KernelCooperative = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using KernelPingpong = cutlass::gemm::KernelTmaWarpSpecializedPingpong;

template <class U> struct KernelOf;
template <class K> struct KernelOf<cutlass::device::Universal<K>> { using type = K; };

// FwdRunner<TileShape, DispatchPolicy, Fusion, KernelOptions...>::Operation's kernel;
// Element is half_t, or float_e4m3_t as the example's FP8 build has it.
template <class Element, class TileShape, class Policy, class Fusion, class... KernelOptions>
struct Fwd {
  static constexpr bool kFp8 = sizeof(Element) == 1;
  using AccQK = std::conditional_t<kFp8, find_option_t<Tag::kAccQK, float, KernelOptions...>, float>;
  using StrideQ = cute::tuple<int, _1, cute::tuple<int, int>>;
  using StrideK = cute::tuple<int, _1, cute::tuple<int, int>>;
  using StrideV = std::conditional_t<kFp8, cute::tuple<_1, int, cute::tuple<int, int>>,
                                     cute::tuple<int, _1, cute::tuple<int, int>>>;
  using Kernel = typename FmhaBuilder<Element, AccQK, float, TileShape, StrideQ, StrideK, StrideV,
                                      Fusion, Policy, KernelOptions...>::Kernel;
};

// BwdRunner<TileShape, KernelCooperative, Fusion>: the dQ/dK/dV kernel of FmhaBwd.
template <class TileShape, class Fusion>
struct Bwd {
  using Kernel = typename KernelOf<typename cutlass::fmha::device::FmhaBwd<
      cutlass::half_t, float, TileShape, Fusion>::Operation>::type;
};
}  // namespace ori

#define ORI_EMIT(...) \
  void *ori_kernel_entry() { return reinterpret_cast<void *>(&cutlass::device_kernel<__VA_ARGS__>); }
