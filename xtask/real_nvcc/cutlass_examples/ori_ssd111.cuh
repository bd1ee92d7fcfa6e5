// Scaffolding for CUTLASS example 111_hopper_ssd: the SSD kernel its TestBed builds
// (Sm90SsdBuilder<...>::Kernel with TileShape (L, D, N)), named so that a wrapper emits it.
#pragma once
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/device_kernel.h"
#include "111_hopper_ssd/device/ssd.hpp"
#include "111_hopper_ssd/kernel/sm90_ssd_kernel_builder.hpp"

namespace ori {
using namespace cute;
template <class Element, int L, int D, int N, bool HasD, bool DHasHdim, bool HasZ>
using Ssd = typename cutlass::ssd::kernel::Sm90SsdBuilder<
    Element, float, float, Element, decltype(make_shape(Int<L>{}, Int<D>{}, Int<N>{})),
    HasD, DHasHdim, HasZ>::Kernel;
}  // namespace ori

#define ORI_EMIT(...) \
  void *ori_kernel_entry() { return reinterpret_cast<void *>(&cutlass::device_kernel<__VA_ARGS__>); }
