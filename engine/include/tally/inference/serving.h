// Serving techniques on top of the decode step (inference.h): a paged KV cache against one reserved per sequence,
// speculative decoding, tensor-parallel decoding, and what quantized weights buy. Each is a pure function of the
// model(s), a config struct and one accelerator; bad input throws InputError naming the field.
#pragma once

#include <cstdint>

#include "tally/hardware/hardware.h"
#include "tally/inference/inference.h"
#include "tally/model/model.h"
#include "tally/numerics/dtype.h"

namespace tally {

// ---------------------------------------------------------------- paged KV cache
// vLLM's default block: 16 tokens of K and V (vllm/config/cache.py, CacheConfig.DEFAULT_BLOCK_SIZE); blocks are the
// paging unit of PagedAttention (Kwon et al. 2023, sec. 4.1).
inline constexpr std::int64_t kDefaultKvBlockTokens = 16;

struct PagedKvInput {
    std::int64_t reserved_context = 8192;  // tokens reserved per sequence without paging (the longest it may reach)
    std::int64_t mean_context = 2048;      // tokens a sequence actually holds, on average
    std::int64_t block_tokens = kDefaultKvBlockTokens;
    DType kv_dtype = DType::BF16;
    DType weights_dtype = DType::BF16;
    DType compute_dtype = DType::BF16;
};

struct PagedKv {
    std::uint64_t usable_bytes = 0;  // preset_usable_capacity, as every fit verdict
    std::uint64_t weights_bytes = 0;
    std::uint64_t used_bytes_per_sequence = 0;      // the cache of mean_context tokens
    std::uint64_t reserved_bytes_per_sequence = 0;  // the cache of reserved_context tokens, held from the start
    std::int64_t blocks_per_sequence = 0;           // ceil(mean_context / block)
    std::int64_t paged_tokens_per_sequence = 0;     // those blocks' tokens (capped at reserved_context)
    std::uint64_t paged_bytes_per_sequence = 0;     // the cache of those tokens
    double reserved_used_fraction = 0;              // used / reserved
    double paged_used_fraction = 0;                 // used / paged (only the last block is part-empty)
    std::int64_t reserved_sequences = 0;            // (usable − weights) / reserved bytes
    std::int64_t paged_sequences = 0;               // (usable − weights) / paged bytes
    double sequences_ratio = 0;                     // paged / reserved sequences (0 when none fit reserved)
    // Decode steps at those batches; both read only the used bytes (a reservation is held, not read).
    DecodeStep reserved_step, paged_step;
    double throughput_ratio = 0;  // paged / reserved whole-batch tokens/s (0 when none fit reserved)
};
PagedKv paged_kv(const ModelConfig& config, const PagedKvInput& input, const Hardware& hardware);

// ---------------------------------------------------------------- speculative decoding
// Tokens one verification step yields when each of γ drafted tokens is accepted with probability α independently:
// (1 − α^(γ+1)) / (1 − α), and γ + 1 at α = 1 (Leviathan et al. 2023, eq. 1; Chen et al. 2023, sec. 3).
double expected_tokens_per_step(double acceptance_rate, std::int64_t draft_tokens);

struct SpeculativeInput {
    std::int64_t context = 4096;    // tokens each sequence holds (one sequence, batch 1)
    double acceptance_rate = 0.8;   // α: the chance the target accepts a drafted token
    std::int64_t draft_tokens = 4;  // γ: tokens the draft proposes per verification step
    DType kv_dtype = DType::BF16;
    DType weights_dtype = DType::BF16;
    DType compute_dtype = DType::BF16;
};

struct Speculative {
    double expected_tokens = 0;  // per verification step (expected_tokens_per_step)
    DecodeStep target_step;      // the target alone, batch 1
    DecodeStep draft_step;       // the draft, batch 1
    // The target scoring γ + 1 positions at once: it reads its weights and cache once and does γ + 1 tokens' FLOPs.
    double verify_seconds = 0;
    double cost_ratio = 0;             // c = draft step / target step
    double round_seconds = 0;          // γ draft steps + one verification
    double tokens_per_s = 0;           // expected tokens / round seconds
    double baseline_tokens_per_s = 0;  // 1 / target step
    double speedup = 0;                // tokens_per_s / baseline
    // Leviathan et al. 2023, Theorem 3.8: (1 − α^(γ+1)) / ((1 − α)(γc + 1)), which takes verification to cost one
    // target step; equal to speedup while verifying γ + 1 tokens stays memory-bound.
    double speedup_closed_form = 0;
    std::uint64_t total_bytes = 0;   // both models' weights and caches, on one GPU
    std::uint64_t usable_bytes = 0;  // preset_usable_capacity
    bool fits = false;               // total <= usable
};
Speculative speculative_decoding(const ModelConfig& target, const ModelConfig& draft, const SpeculativeInput& input,
                                 const Hardware& hardware);

// ---------------------------------------------------------------- tensor-parallel decoding
struct TpServingInput {
    std::int64_t tp = 8;  // GPUs the model is split over (Megatron-LM: heads and MLP columns)
    std::int64_t context = 4096;
    std::int64_t batch = 1;
    DType kv_dtype = DType::BF16;
    DType weights_dtype = DType::BF16;
    DType compute_dtype = DType::BF16;
};

struct TpServing {
    std::uint64_t usable_bytes = 0;                   // per GPU
    std::uint64_t weights_bytes_per_gpu = 0;          // weights / t
    std::uint64_t kv_bytes_per_sequence_per_gpu = 0;  // the KV heads a GPU holds (MLA's latent: every GPU, whole)
    std::int64_t kv_heads_per_gpu = 0;                // n_kv / t, at least 1 (replicated when t > n_kv); 0 for MLA
    bool fits = false;                                // weights and the batch's caches per GPU <= usable
    std::int64_t max_batch = 0;                       // sequences that fit per GPU beside its weights
    double memory_seconds = 0;                        // per GPU: (weights + batch · cache) / bandwidth
    double compute_seconds = 0;                       // per GPU: batch · FLOPs per token / t / peak
    std::int64_t all_reduces_per_step = 0;            // 2 per layer (after attention, after the MLP)
    double all_reduce_bytes = 0;                      // batch · hidden · activation bytes
    double all_reduce_seconds = 0;                    // one, ring over the t GPUs (collectives.h)
    double comm_seconds = 0;                          // all of them, on the critical path between layers
    double step_seconds = 0;                          // max(memory, compute) + comm
    double tokens_per_s = 0;                          // whole batch
    double per_sequence_tokens_per_s = 0;
    double comm_fraction = 0;  // comm / step
    bool memory_bound = true;  // memory time >= compute time
};
TpServing tp_decode(const ModelConfig& config, const TpServingInput& input, const Hardware& hardware);

// ---------------------------------------------------------------- quantized weights
struct WeightQuantInput {
    std::int64_t context = 4096;
    std::int64_t batch = 1;
    DType quantized_dtype = DType::FP8;  // the weights' storage dtype after quantization
    DType kv_dtype = DType::BF16;
    DType compute_dtype = DType::BF16;
};

struct WeightQuant {
    std::uint64_t weights_bytes = 0, quantized_weights_bytes = 0;
    std::uint64_t kv_bytes = 0;  // the batch's caches, read every step in both
    double weights_share = 0;    // bf16 weights / bytes read per step
    DecodeStep baseline, quantized;
    double speedup = 0;        // baseline step / quantized step
    double ideal_speedup = 0;  // weights / quantized weights: the speedup if weights were all that is read
    std::int64_t max_batch = 0, quantized_max_batch = 0;  // sequences that fit beside each
};
WeightQuant weight_quantization(const ModelConfig& config, const WeightQuantInput& input, const Hardware& hardware);

}  // namespace tally
