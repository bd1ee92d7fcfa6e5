// FlashInfer fb28d7242b35 sm90 (fa3) paged-KV batch prefill, e4m3, head dim 128, mask causal.
// Config: csrc/batch_prefill_sm90_customize_config.jinja rendered into target/flashinfer-gen/paged_e4m3_d128_causal/; variant DefaultFP8Attention.
#include <flashinfer/attention/hopper/quantization/prefill_sm90.cuh>
#include "paged_e4m3_d128_causal/batch_prefill_sm90_config.inc"
using namespace flashinfer;
namespace flashinfer {
template cudaError_t BatchFP8PrefillWithPagedKVCacheDispatched
    <128, MaskMode::kCausal, /*USE_SLIDING_WINDOW=*/false,
     /*SAME_SCHEDULER_FOR_ALL_HEADS=*/true, DefaultFP8Attention, PagedParams>(
    PagedParams& params, bool enable_pdl, cudaStream_t stream);
}  // namespace flashinfer
