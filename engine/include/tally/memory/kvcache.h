// Inference memory: the weights plus the key/value cache, with grouped-query attention.
#pragma once

#include <cstdint>
#include <vector>

#include "tally/memory/memory.h"
#include "tally/model/model.h"

namespace tally {

// Inference: KV cache 2 · L · n_kv · d · bytes · tokens · batch, plus weights.
inline constexpr const char* kKvCacheFormula = "2 · L · n_kv · d · bytes · tokens · batch";
// Encoder-decoder (T5): only the decoder's L_dec layers decode. Their self-attention cache grows with the
// generated tokens; their cross-attention K and V are projected once from the encoder's output and stay at
// the encoder length (Vaswani et al. 2017, sec. 3.2.3; past_key_values of T5 in transformers hold both).
inline constexpr const char* kKvCacheEncoderDecoderFormula =
    "2 · L_dec · n_kv · d · bytes · (tokens + encoder_tokens) · batch";
// Multi-head latent attention caches one latent and one RoPE key per layer, shared by every head
// (DeepSeek-AI 2024, DeepSeek-V2, sec. 2.1.2: (d_c + d_h^R)·l elements per token).
inline constexpr const char* kKvCacheMlaFormula = "L · (r_kv + d_rope) · bytes · tokens · batch";
// DeepSeek Sparse Attention adds the lightning indexer's key per layer, stored as the reference stores it whatever
// the cache dtype: d_I FP8 values and one FP32 scale per 128 of them (DeepSeek-V3.2-Exp inference/model.py,
// Indexer.k_cache and k_scale_cache, @6d8cb70dfdd6f37c83c5208105a3e2c8da117485).
inline constexpr const char* kKvCacheMlaIndexerFormula =
    "L · ((r_kv + d_rope) · bytes + d_I + 4 · ⌈d_I / 128⌉) · tokens · batch";
std::uint64_t indexer_key_bytes(const ModelConfig& config);  // one token, one layer (0 without an indexer)
// Sliding-window layers keep only the last W tokens' K and V.
inline constexpr const char* kKvCacheWindowFormula =
    "2 · n_kv · d · bytes · ((L − L_w) · tokens + L_w · min(tokens, W)) · batch";
// Hybrid layers hold a recurrent state per sequence instead: its size does not depend on the context.
// Mamba-2: the conv window over x, B, C and the SSM state of every head; gated DeltaNet: the conv window over Q, K,
// V and a d_k x d_v matrix per value head. The conv keeps its last k − 1 inputs, as vLLM's state shapes do
// (vllm/model_executor/layers/mamba/mamba_utils.py, MambaStateShapeCalculator.mamba2_state_shape and
// gated_delta_net_state_shape; transformers' cache keeps a k-wide window, one column more).
inline constexpr const char* kMambaStateFormula = "(d_inner + 2·G·N)·(k_conv − 1) + H·P·N";
// Mamba-1 (Jamba): the conv window over x and a state row of N per channel (vllm-project/vllm@02d71083 mamba_utils.py,
// mamba1_state_shape: (d_inner, k − 1) and (d_inner, N); transformers' HybridMambaAttentionDynamicCache keeps k
// columns). KDA's state has gated DeltaNet's shape with H_k = H_v (kda_state_shape there); vLLM keeps its d x d
// matrices in float32, tally in the weights' dtype like the other states.
inline constexpr const char* kMamba1StateFormula = "d_inner·(k_conv − 1) + d_inner·N";
inline constexpr const char* kLinearStateFormula = "(2·H_k·d_k + H_v·d_v)·(k_conv − 1) + H_v·d_k·d_v";
std::uint64_t mamba_state_values(const ModelConfig& config);   // one Mamba-2 or Mamba-1 layer, one sequence (elements)
std::uint64_t linear_state_values(const ModelConfig& config);  // one gated DeltaNet or KDA layer, one sequence
struct KvCache {
    std::uint64_t bytes_per_token = 0;  // one generated token of one sequence, all decoding layers, K and V
    // Past the sliding window a token adds only the global layers' share (= bytes_per_token without windows).
    std::uint64_t global_bytes_per_token = 0;
    std::int64_t sliding_window = 0;  // W (0: no windowed layers)
    // DeepSeek Sparse Attention: the indexer's keys of one token, all layers (in bytes_per_token too); 0 otherwise.
    std::uint64_t index_key_bytes_per_token = 0;
    // Encoder-decoder: the cross-attention K and V of one sequence (fixed at encoder_context tokens); 0 otherwise.
    std::uint64_t cross_bytes_per_sequence = 0;
    std::uint64_t cross_tokens = 0;  // encoder tokens the cross-attention K/V hold (0: not an encoder-decoder)
    // Hybrids: the linear-attention and Mamba-2 layers' recurrent state of one sequence, in the weights' dtype (the
    // dtype transformers allocates its conv and SSM states in); 0 for other models. Fixed, like cross K/V.
    std::uint64_t state_bytes_per_sequence = 0;
    std::uint64_t kv_cache_bytes = 0;  // self-attention cache + cross-attention K/V + recurrent state, whole batch
    std::uint64_t weights_bytes = 0;
    std::uint64_t total_bytes = 0;
    // The same cache with n_kv = a (no GQA), for comparison; for MLA, every head's full K and V (a·(d + d_v)).
    std::uint64_t mha_kv_cache_bytes = 0;
    // One sequence of `context` tokens, all decoding layers (windowed layers capped at W), cross K/V and a hybrid's
    // recurrent state included.
    std::uint64_t bytes_per_sequence(std::int64_t context) const;
};
// encoder_context: an encoder-decoder's input tokens (0 = context); must be 0 for a decoder. An encoder
// (BERT) does not decode and has no KV cache: InputError naming "model".
KvCache kv_cache(const ModelConfig& config, std::int64_t context, std::int64_t batch, DType kv_dtype,
                 DType weights_dtype, std::int64_t encoder_context = 0);

// One kind of layer in the cache, so a reader sees what each holds: full-attention layers keep every token,
// windowed layers the last W, cross-attention layers the encoder's tokens; MLA layers hold a latent and a
// RoPE key instead of per-head K and V. The groups' bytes_per_sequence add up to bytes_per_sequence(context).
struct KvLayerGroup {
    const char* kind = "full";  // "full", "windowed", "cross", "linear_attention" or "mamba"
    std::int64_t layers = 0;
    bool latent = false;                      // MLA: holds the compressed latent and the decoupled RoPE key
    std::uint64_t index_key_bytes = 0;        // per token per layer: the indexer's FP8 key and its scales
    std::uint64_t key_values = 0;             // per token per layer: K of the KV heads (MLA: the RoPE key)
    std::uint64_t value_values = 0;           // per token per layer: V of the KV heads (MLA: the latent)
    std::uint64_t mha_values = 0;             // per token per layer with every query head's own K and V
    std::uint64_t bytes_per_layer_token = 0;  // key_values + value_values in the cache's format, + index_key_bytes
    std::uint64_t bytes_per_token = 0;        // all layers of the group, one token
    std::uint64_t tokens = 0;                 // tokens one layer holds at `context` (windowed: min(context, W))
    std::uint64_t bytes_per_sequence = 0;     // all layers of the group at `context`
    // linear_attention / mamba: a recurrent state, not a per-token cache (key_values, value_values, tokens and the
    // per-token bytes are 0): state_values elements per layer per sequence, in the weights' dtype.
    bool recurrent = false;
    std::uint64_t state_values = 0;
};
// The groups of `cache` (made by kv_cache for `config`) at `context` tokens, in layer-kind order.
std::vector<KvLayerGroup> kv_layer_groups(const ModelConfig& config, const KvCache& cache, std::int64_t context,
                                          DType kv_dtype, DType weights_dtype = DType::BF16);

// What fits in `usable_bytes` of device memory beside the weights.
struct KvCapacity {
    bool fits = false;              // weights + KV cache <= usable
    std::uint64_t max_batch = 0;    // sequences of `context` tokens that fit (0 when the weights alone do not)
    std::uint64_t max_context = 0;  // tokens per sequence that fit at `batch` sequences
};
KvCapacity kv_capacity(const KvCache& cache, std::int64_t context, std::int64_t batch, std::uint64_t usable_bytes);

// Decoding speed limit from memory bandwidth. One decoding step multiplies every weight matrix by the batch's
// vectors and reads every sequence's KV cache, so it streams weights + KV cache from memory at least once and
// yields one token per sequence: steps/s <= bandwidth / (weights + KV cache). The KV cache is the full context
// (the last, slowest step); compute, activations and caching are ignored, so this is an upper bound.
struct DecodeBound {
    std::uint64_t bytes_per_step = 0;
    double tokens_per_s = 0;        // per sequence
    double batch_tokens_per_s = 0;  // whole batch
};
DecodeBound decode_bound(const KvCache& cache, std::int64_t batch, double bandwidth_bytes_per_s);

}  // namespace tally
