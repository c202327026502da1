// Inference memory: the weights plus the key/value cache, with grouped-query attention.
#pragma once

#include <cstdint>

#include "tally/memory.h"
#include "tally/model.h"

namespace tally {

// Inference: KV cache 2 · L · n_kv · d · bytes · tokens · batch, plus weights.
struct KvCache {
    std::uint64_t bytes_per_token = 0;  // one token of one sequence, all layers, K and V
    std::uint64_t kv_cache_bytes = 0;
    std::uint64_t weights_bytes = 0;
    std::uint64_t total_bytes = 0;
};
KvCache kv_cache(const ModelConfig& config, std::int64_t context, std::int64_t batch, DType kv_dtype,
                 DType weights_dtype);

}  // namespace tally
