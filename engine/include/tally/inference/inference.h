// Serving costs: the decode step's memory and compute times as the batch grows, the prefill rate,
// and the batch at which decoding stops being memory-bound (the roofline of Williams et al. 2009
// applied to one decoding step).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tally/hardware/hardware.h"
#include "tally/memory/kvcache.h"
#include "tally/model/model.h"

namespace tally {

struct InferenceInput {
    std::int64_t context = 4096;  // tokens of context each sequence holds (prompt + generated so far)
    std::int64_t batch = 1;       // sequences decoded together
    DType kv_dtype = DType::BF16;
    DType weights_dtype = DType::BF16;
    DType compute_dtype = DType::BF16;  // which dense peak of the hardware the matmuls run at
};

// One decoding step of the whole batch: it reads the weights once and every sequence's KV cache.
struct DecodeStep {
    std::int64_t batch = 0;
    double memory_seconds = 0;             // (weights + batch · KV per sequence) / bandwidth
    double compute_seconds = 0;            // batch · forward FLOPs per token / peak
    double step_seconds = 0;               // the larger of the two: a lower bound on the step's time
    double tokens_per_s = 0;               // whole batch: batch / step_seconds
    double per_sequence_tokens_per_s = 0;  // 1 / step_seconds (what one user sees)
    bool memory_bound = true;
};

struct InferenceResult {
    KvCache memory;                      // at the chosen batch
    std::uint64_t kv_per_sequence = 0;   // bytes of one sequence's cache at `context`
    double decode_flops_per_token = 0;   // forward FLOPs of one new token attending to `context`
    double prefill_flops_per_token = 0;  // forward FLOPs per prompt token, causal attention over `context`
    double prefill_tokens_per_s = 0;     // compute-bound: peak / prefill FLOPs per token
    double prefill_seconds = 0;          // one prompt of `context` tokens at that rate
    DecodeStep at_batch;                 // the decode step at the chosen batch
    // Smallest batch whose step is compute-bound; nullopt when the KV traffic per sequence costs
    // more time than its FLOPs, so no batch ever gets there.
    std::optional<double> crossover_batch;
    // The preset's usable capacity (preset_usable_capacity: reported bytes less the default allowances), the
    // figure every fit verdict on the page uses.
    std::uint64_t usable_bytes = 0;
    bool fits = false;              // weights + the batch's caches <= usable_bytes
    std::int64_t max_batch = 0;     // sequences whose caches fit beside the weights in usable_bytes (0 if none)
    std::vector<DecodeStep> sweep;  // batch = 1, 2, 4, … and then max_batch itself; empty when nothing fits
};

// Pure function of the model, the inputs and one accelerator; InputError naming the field on bad input.
DecodeStep decode_step(double weights_bytes, double kv_per_sequence, double flops_per_token, std::int64_t batch,
                       double bandwidth_bytes_per_s, double peak_flops_per_s);
InferenceResult inference(const ModelConfig& config, const InferenceInput& input, const Hardware& hardware);

}  // namespace tally
