// Shared scaffolding for the real-kernel corpus (see xtask/gen_real_nvcc.py).
// Each kernel .cu includes this, builds one GemmKernel type with CUTLASS's
// sm90 collective builders and calls ORI_EMIT(GemmKernel): the address of
// cutlass::device_kernel<GemmKernel> is taken in a host function, so nvcc
// emits exactly that __global__ (one .entry) into the PTX.
#pragma once
#include <cstdint>
#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
#include "cutlass/numeric_types.h"
#include "cutlass/gemm/gemm.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/group_array_problem_shape.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/operations.hpp"
#include "cutlass/epilogue/thread/activation.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/gemm/kernel/tile_scheduler.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"

namespace ori {
using namespace cute;
using RowMajor = cutlass::layout::RowMajor;
using ColumnMajor = cutlass::layout::ColumnMajor;

// 16-byte (TMA) alignment in elements; void (no C source) aligns like D.
template <class T, class Fallback = T> struct align16 {
  using E = cute::conditional_t<cute::is_void_v<T>, Fallback, T>;
  static constexpr int value = 128 / cutlass::sizeof_bits<E>::value;
};
template <class T> struct first_elem { using type = T; };
template <class T, class... Ts> struct first_elem<cute::tuple<T, Ts...>> { using type = T; };

// The default fused epilogue: D = alpha * acc + beta * C.
template <class ED, class EC, class Compute = float>
using LinComb = cutlass::epilogue::fusion::LinearCombination<ED, Compute, EC, Compute>;

template <
  class EA, class LA, class EB, class LB, class Acc,
  class EC, class LC, class ED, class LD,
  class Tile, class Cluster,
  class KSched, class ESched,
  class Fusion = LinComb<ED, EC>,
  class Scheduler = void,
  class ProblemShape = Shape<int, int, int, int>,
  class OpClass = cutlass::arch::OpClassTensorOp,
  class EpiOpClass = cutlass::arch::OpClassTensorOp,
  class Compute = float,
  int AlignA = align16<typename first_elem<EA>::type>::value,
  int AlignB = align16<typename first_elem<EB>::type>::value>
struct Gemm {
  static constexpr int AlignC = align16<EC, ED>::value;
  static constexpr int AlignD = align16<ED>::value;
  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, EpiOpClass, Tile, Cluster,
      cutlass::epilogue::collective::EpilogueTileAuto,
      Acc, Compute, EC, LC, AlignC, ED, LD, AlignD, ESched, Fusion>::CollectiveOp;
  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, OpClass, EA, LA, AlignA, EB, LB, AlignB, Acc, Tile, Cluster,
      cutlass::gemm::collective::StageCountAutoCarveout<
          static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
      KSched>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<
      ProblemShape, CollectiveMainloop, CollectiveEpilogue, Scheduler>;
  using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
};
}  // namespace ori

#define ORI_EMIT(...)                                                         \
  using OriGemmKernel = typename __VA_ARGS__::Adapter::GemmKernel;            \
  void *ori_kernel_entry() {                                                  \
    return reinterpret_cast<void *>(&cutlass::device_kernel<OriGemmKernel>); \
  }
