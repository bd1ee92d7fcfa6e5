// Shared scaffolding for FlashAttention-3 (hopper/) kernels in the real-kernel corpus
// (see xtask/gen_real_nvcc.py). The kernel types are built exactly as FA3's
// run_flash_fwd / run_flash_bwd (flash_fwd_launch_template.h, flash_bwd_launch_template.h)
// build them for Arch == 90; ORI_EMIT takes the address of
// cutlass::device_kernel<AttnKernel> so exactly that kernel (one .entry) is emitted.
#pragma once
#include "flash_fwd_launch_template.h"
#include "flash_bwd_launch_template.h"

namespace ori {
using namespace cute;

// == run_flash_fwd<90, kHeadDim, kHeadDimV, ClusterM, Element, ElementOut, ...>'s AttnKernel.
template <int kHeadDim, int kHeadDimV, int ClusterM, typename Element, typename ElementOut,
          bool Is_causal, bool Is_local, bool Has_softcap, bool Varlen, bool PagedKVNonTMA,
          bool AppendKV, bool HasQv, bool PackGQA, bool Split, bool V_colmajor>
struct Fwd {
  static constexpr int Arch = 90;
  static constexpr bool Is_FP8 = cute::is_same_v<Element, cutlass::float_e4m3_t> || cute::is_same_v<Element, cutlass::float_e5m2_t>;
  static constexpr bool FP8_TransposeV = Is_FP8 && !V_colmajor;
  static constexpr std::tuple<int, int, bool, bool> kBlockMN_RS_IntraWGOverlap = tile_size_fwd_sm90(
      kHeadDim, kHeadDimV, Is_causal, Is_local, sizeof(Element), V_colmajor, PagedKVNonTMA, Has_softcap);
  static constexpr int kBlockM = std::get<0>(kBlockMN_RS_IntraWGOverlap);
  static constexpr int kBlockN = std::get<1>(kBlockMN_RS_IntraWGOverlap);
  static constexpr bool MmaPV_is_RS = std::get<2>(kBlockMN_RS_IntraWGOverlap);
  static constexpr bool IntraWGOverlap = std::get<3>(kBlockMN_RS_IntraWGOverlap);
  static constexpr int kStages = 2;
  using TileShape_MNK = cute::Shape<Int<kBlockM>, Int<kBlockN>, Int<kHeadDim>>;
  using TileShape_MNK_PV = cute::Shape<Int<kBlockM>, Int<kHeadDimV>, Int<kBlockN>>;
  using ClusterShape = cute::Shape<Int<ClusterM>, _1, _1>;
  using CollectiveMainloop = flash::CollectiveMainloopFwdSm90<kStages, ClusterShape, TileShape_MNK, kHeadDimV,
      Element, float, cutlass::arch::Sm90, Is_causal, Is_local, Has_softcap, Varlen, PagedKVNonTMA, AppendKV,
      HasQv, MmaPV_is_RS, IntraWGOverlap, PackGQA, Split, V_colmajor>;
  using CollectiveEpilogue = flash::CollectiveEpilogueFwd<TileShape_MNK_PV, ClusterShape, ElementOut,
      cutlass::arch::Sm90, CollectiveMainloop::NumMmaThreads, Varlen, PackGQA, Split, FP8_TransposeV>;
  static constexpr int NumProducerThreads = CollectiveMainloop::NumProducerThreads;
  static constexpr bool LPT = Is_causal || Is_local;
  static constexpr bool Sort = !Is_local;
  using SchedulerPersistent = std::conditional_t<Varlen,
      flash::VarlenDynamicPersistentTileScheduler<kBlockM, kBlockN, CollectiveMainloop::NumMmaThreads,
          NumProducerThreads, Split, PackGQA, true /*WarpSpecialized*/, LPT, Sort, true /*Prepared*/>,
      std::conditional_t<!Is_causal && !Is_local,
          flash::StaticPersistentTileScheduler<Split>,
          flash::DynamicPersistentTileScheduler<CollectiveMainloop::NumMmaThreads, NumProducerThreads, Split,
                                                PackGQA, true /*WarpSpecialized*/>>>;
  using SchedulerSingleTile = flash::SingleTileScheduler<Varlen, Split, PackGQA, kBlockM>;
  static constexpr bool UsePersistentScheduler = !(Split && !Varlen);
  using Scheduler = std::conditional_t<!UsePersistentScheduler, SchedulerSingleTile, SchedulerPersistent>;
  using AttnKernel = flash::enable_sm90<flash::FlashAttnFwdSm90<CollectiveMainloop, CollectiveEpilogue, Scheduler>>;
};

// == run_flash_bwd<90, kHeadDim, kBlockM, kBlockN, Element, ...>'s AttnKernel (the dQ/dK/dV kernel).
template <int kHeadDim, int kBlockM, int kBlockN, typename Element,
          bool Is_causal, bool Is_local, bool Has_softcap, bool Varlen, bool Deterministic, bool GQA,
          int Stages_dO, int Stages_dS_or_QSm80, bool SdP_swapAB, bool dKV_swapAB, bool dQ_swapAB,
          int NumMmaWarpGroups, int AtomLayoutMSdP, int AtomLayoutNdKV, int AtomLayoutMdQ, bool V_in_regs>
struct Bwd {
  using ElementAccum = float;
  using TileShape_MNK = cute::Shape<Int<kBlockM>, Int<kBlockN>, Int<kHeadDim>>;
  using ClusterShape = cute::Shape<_1, Int<1>, _1>;
  static constexpr int Stages = 2;
  static constexpr int Stages_dS = Stages_dS_or_QSm80;
  using CollectiveMainloop = flash::CollectiveMainloopBwdSm90<Stages, Stages_dO, Stages_dS, ClusterShape,
      TileShape_MNK, Element, ElementAccum, cutlass::arch::Sm90, Is_causal, Is_local, Has_softcap, Varlen,
      Deterministic, SdP_swapAB, dKV_swapAB, dQ_swapAB, NumMmaWarpGroups, AtomLayoutMSdP, AtomLayoutNdKV,
      AtomLayoutMdQ, V_in_regs>;
  using CollectiveEpilogue = std::conditional_t<!GQA,
      flash::CollectiveEpilogueBwd<TileShape_MNK, Element, cutlass::arch::Sm90, CollectiveMainloop::NumMmaThreads,
                                   Varlen, dKV_swapAB, NumMmaWarpGroups / AtomLayoutNdKV>,
      flash::CollectiveEpilogueBwdGQA<TileShape_MNK, ElementAccum, cutlass::arch::Sm90,
                                      CollectiveMainloop::NumMmaThreads, Varlen, Deterministic>>;
  using Scheduler = std::conditional_t<Is_causal,
      flash::SingleTileBwdLPTScheduler<Varlen, kBlockN, Is_causal && Deterministic /*SPT*/>,
      flash::SingleTileScheduler<Varlen, false /*Split*/, false /*PackGQA*/, kBlockN>>;
  using AttnKernel = flash::enable_sm90<flash::FlashAttnBwdSm90<CollectiveMainloop, CollectiveEpilogue, Scheduler>>;
};
}  // namespace ori

#define ORI_EMIT(...)                                                      \
  using OriAttnKernel = typename __VA_ARGS__::AttnKernel;                  \
  void *ori_kernel_entry() {                                               \
    return reinterpret_cast<void *>(&cutlass::device_kernel<OriAttnKernel>); \
  }
