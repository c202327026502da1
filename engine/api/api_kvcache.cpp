// API of the inference memory (kvcache.h): weights plus KV cache, and the decode speed bound.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/hardware/hardware.h"
#include "tally/memory/kvcache.h"
#include "tally/model/model.h"
#include "tally/numerics/precision.h"

namespace tally::api {

namespace {

using u64 = std::uint64_t;

// ---------------------------------------------------------------- KV cache
using namespace arg;
inline constexpr double kMaxContext = static_cast<double>(std::int64_t{1} << 40);
constexpr Arg kContext = integer("context", "tokens", 1, kMaxContext, "required", "tokens cached per sequence");
constexpr Arg kBatch = integer("batch", "sequences", 1, 1'000'000'000, "1", "sequences decoded together");
constexpr Arg kKvDtype = text("kv_dtype", "bf16", "storage dtype of the cache");
constexpr Arg kWeightsDtype = text("weights_dtype", "bf16", "storage dtype of the weights");
constexpr Arg kEncoderContext =
    integer("encoder_context", "tokens", 0, kMaxContext, "0", "encoder-decoder: the encoder's tokens (0: context)");
constexpr auto kKvArgs =
    join_args(kModelArgs, std::array{kContext, kBatch, kKvDtype, kWeightsDtype, kEncoderContext}, kCapacityArgs);
constexpr std::array kKvOwnResult = std::to_array<Field>({
    {"model", "", "the resolved tally config"},
    {"bytes_per_token", "bytes", "KV cache per token of one sequence"},
    {"kv_cache_bytes", "bytes", "the whole cache: batch x context"},
    {"weights_bytes", "bytes", "inference weights"},
    {"total_bytes", "bytes", "weights + cache"},
    {"formula", "", "the cache formula for this attention kind"},
    {"mha_kv_cache_bytes", "bytes", "the cache with full multi-head attention, to compare"},
    {"kv_layers", "", "the cache by layer kind"},
    {"state_bytes_per_sequence", "bytes", "hybrids: the linear-attention and Mamba-2 layers' state of one sequence"},
    {"state_formula", "", "hybrids: the state of one layer, per kind"},
    {"index_key_bytes_per_token", "bytes",
     "DeepSeek Sparse Attention: the indexer's FP8 keys and scales per token, all layers (in bytes_per_token)"},
    {"fits", "", "with a capacity: total <= usable"},
    {"max_batch", "sequences", "with a capacity: most sequences at context"},
    {"max_context", "tokens", "with a capacity: longest context at batch"},
    {"decode_tokens_per_s_bound", "tokens/s", "with hardware: the bandwidth bound per sequence"},
    {"context", "tokens", "tokens per sequence"},
    {"batch", "sequences", "sequences cached"},
    {"kv_dtype", "", "dtype of the cache"},
    {"weights_dtype", "", "dtype of the weights"},
    {"capacity_bytes", "bytes", "with a capacity: one GPU's memory"},
    {"usable_bytes", "bytes", "with a capacity: capacity less the allowance"},
    {"memory_bandwidth_bytes_per_s", "bytes/s", "with hardware: memory bandwidth"},
    {"decode_bytes_per_step", "bytes", "with hardware: bytes one decode step reads (weights + cache)"},
    {"decode_batch_tokens_per_s_bound", "tokens/s", "with hardware: the bandwidth bound of the whole batch"},
});

json kv_cache_method(const json& args) {
    const ModelConfig c = resolve_model(args);
    const std::int64_t context = arg_int(args, kContext);
    const std::int64_t batch = arg_int(args, kBatch);
    const DType kv = dtype_from_string(arg_string(args, kKvDtype), "kv_dtype", kStorageDType);
    const DType w = dtype_from_string(arg_string(args, kWeightsDtype), "weights_dtype", kStorageDType);
    const std::int64_t encoder_context = arg_int(args, kEncoderContext);
    const KvCache k = kv_cache(c, context, batch, kv, w, encoder_context);
    json out{{"model", model_to_json(c)},
             {"context", context},
             {"batch", batch},
             {"kv_dtype", to_string(kv)},
             {"weights_dtype", to_string(w)},
             {"formula", c.is_encoder_decoder() ? kKvCacheEncoderDecoderFormula
                         : c.has_indexer()      ? kKvCacheMlaIndexerFormula
                         : c.is_mla()           ? kKvCacheMlaFormula
                         : c.sliding_window > 0 ? kKvCacheWindowFormula
                                                : kKvCacheFormula},
             {"kv_layers", kv_layers_json(kv_layer_groups(c, k, context, kv, w))}};
    out.update(TALLY_MEMBERS(k, bytes_per_token, kv_cache_bytes, weights_bytes, total_bytes, mha_kv_cache_bytes));
    if (c.has_indexer()) out["index_key_bytes_per_token"] = k.index_key_bytes_per_token;
    if (c.is_hybrid()) {
        out["state_bytes_per_sequence"] = k.state_bytes_per_sequence;
        const char* mamba = c.is_mamba1() ? kMamba1StateFormula : kMambaStateFormula;
        out["state_formula"] = c.num_mamba_layers > 0 && c.num_linear_layers > 0
                                   ? std::string(mamba) + "; " + kLinearStateFormula
                               : c.num_mamba_layers > 0 ? mamba
                                                        : kLinearStateFormula;
    }
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
        out.update(TALLY_MEMBERS(fit, fits, max_batch, max_context));
    }
    // The decode bound needs a hardware preset: capacity_bytes carries no bandwidth.
    if (const auto given = optional_hardware_arg(args)) {
        const Hardware& hw = *given;
        const DecodeBound bound = decode_bound(k, batch, hw.memory_bandwidth_bytes_per_s);
        out["memory_bandwidth_bytes_per_s"] = hw.memory_bandwidth_bytes_per_s;
        out["decode_bytes_per_step"] = bound.bytes_per_step;
        out["decode_tokens_per_s_bound"] = bound.tokens_per_s;
        out["decode_batch_tokens_per_s_bound"] = bound.batch_tokens_per_s;
    }
    return out;
}

constexpr auto kKvResult = join_args(kKvOwnResult, arg::kCapacityFields);
constexpr Method kMethods[] = {
    {"kv_cache", kv_cache_method, "inference weights plus KV cache", kKvArgs, kKvResult, true},
};

}  // namespace

json kv_layers_json(const std::vector<KvLayerGroup>& groups) {
    json out = json::array();
    for (const KvLayerGroup& g : groups) {
        out.push_back(TALLY_MEMBERS(g, kind, layers, latent, key_values, value_values, mha_values,
                                    bytes_per_layer_token, bytes_per_token, tokens, bytes_per_sequence));
        // A hybrid's recurrent layers: their fixed state per sequence.
        if (g.recurrent) out.back().update(TALLY_MEMBERS(g, recurrent, state_values));
        if (g.index_key_bytes > 0) out.back()["index_key_bytes"] = g.index_key_bytes;  // DeepSeek Sparse Attention
    }
    return out;
}

std::span<const Method> kvcache_methods() { return kMethods; }

}  // namespace tally::api
