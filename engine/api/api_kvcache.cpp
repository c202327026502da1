// API of the inference memory (kvcache.h): weights plus KV cache, and the decode speed bound.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/error.h"
#include "tally/hardware.h"
#include "tally/kvcache.h"
#include "tally/model.h"
#include "tally/precision.h"

namespace tally::api {

namespace {

using u64 = std::uint64_t;

// ---------------------------------------------------------------- KV cache
json kv_cache_method(const json& args) {
    const ModelConfig c = resolve_model(args);
    const std::int64_t context = integer_arg(args, "context", 1, std::int64_t{1} << 40);
    const std::int64_t batch = int_or(args, "batch", 1, 1, 1'000'000'000);
    const DType kv = dtype_from_string(string_or(args, "kv_dtype", "bf16"), "kv_dtype", kStorageDType);
    const DType w = dtype_from_string(string_or(args, "weights_dtype", "bf16"), "weights_dtype", kStorageDType);
    const std::int64_t encoder_context = int_or(args, "encoder_context", 0, 0, std::int64_t{1} << 40);
    const KvCache k = kv_cache(c, context, batch, kv, w, encoder_context);
    json out{{"model", model_to_json(c)},
             {"context", context},
             {"batch", batch},
             {"kv_dtype", to_string(kv)},
             {"weights_dtype", to_string(w)},
             {"bytes_per_token", k.bytes_per_token},
             {"kv_cache_bytes", k.kv_cache_bytes},
             {"weights_bytes", k.weights_bytes},
             {"total_bytes", k.total_bytes},
             {"formula", c.is_encoder_decoder() ? kKvCacheEncoderDecoderFormula
                         : c.is_mla()           ? kKvCacheMlaFormula
                         : c.sliding_window > 0 ? kKvCacheWindowFormula
                                                : kKvCacheFormula},
             {"mha_kv_cache_bytes", k.mha_kv_cache_bytes},
             {"kv_layers", kv_layers_json(kv_layer_groups(c, k, context, kv))}};
    if (c.sliding_window > 0) {
        out["sliding_window"] = c.sliding_window;
        out["global_bytes_per_token"] = k.global_bytes_per_token;  // what a token adds past the window
    }
    if (c.is_encoder_decoder()) {
        out["encoder_context"] = encoder_context > 0 ? encoder_context : context;
        out["cross_kv_bytes_per_sequence"] = k.cross_bytes_per_sequence;
    }
    json hardware;
    if (auto cap = capacity_from_args(args, &hardware)) {
        add_capacity(out, *cap, hardware);
        const KvCapacity fit = kv_capacity(k, context, batch, cap->usable_bytes);  // verdicts against the usable bytes
        out["fits"] = fit.fits;
        out["max_batch"] = fit.max_batch;
        out["max_context"] = fit.max_context;
    }
    // The decode bound needs a hardware preset: capacity_bytes carries no bandwidth.
    if (auto id = optional_string_arg(args, "hardware")) {
        const Hardware hw = find_hardware(*id);
        const DecodeBound bound = decode_bound(k, batch, hw.memory_bandwidth_bytes_per_s);
        out["memory_bandwidth_bytes_per_s"] = hw.memory_bandwidth_bytes_per_s;
        out["decode_bytes_per_step"] = bound.bytes_per_step;
        out["decode_tokens_per_s_bound"] = bound.tokens_per_s;
        out["decode_batch_tokens_per_s_bound"] = bound.batch_tokens_per_s;
    }
    return out;
}

constexpr Method kMethods[] = {
    {"kv_cache", kv_cache_method, "inference weights plus KV cache"},
};

}  // namespace

json kv_layers_json(const std::vector<KvLayerGroup>& groups) {
    json out = json::array();
    for (const KvLayerGroup& g : groups)
        out.push_back({{"kind", g.kind},
                       {"layers", g.layers},
                       {"latent", g.latent},
                       {"key_values", g.key_values},
                       {"value_values", g.value_values},
                       {"mha_values", g.mha_values},
                       {"bytes_per_layer_token", g.bytes_per_layer_token},
                       {"bytes_per_token", g.bytes_per_token},
                       {"tokens", g.tokens},
                       {"bytes_per_sequence", g.bytes_per_sequence}});
    return out;
}

std::span<const Method> kvcache_methods() { return kMethods; }

}  // namespace tally::api
