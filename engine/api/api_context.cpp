// API of context parallelism (context.h): the causal attention work of each CP rank with contiguous and
// load-balanced chunks, and one ring-attention step's compute against its K, V transfer on a hardware preset
// (see docs/API.md, "Context parallelism").
#include <string>

#include "api_args.h"
#include "tally/api.h"
#include "tally/comm/context.h"
#include "tally/hardware/hardware.h"
#include "tally/model/model.h"

namespace tally::api {

namespace {

namespace cx = context;

json work_json(const cx::RankWork& w) { return {{"pairs", w.pairs}, {"max_over_mean", w.max_over_mean}}; }

// {model, seq, cp, hardware?}
json context_parallel(const json& args) {
    const ModelConfig c = resolve_model(args);
    const Hardware hw = find_hardware(string_or(args, "hardware", "h100-sxm"));
    const std::int64_t seq = int_or(args, "seq", 131072, 1, std::int64_t{1} << 24);
    const std::int64_t cp = int_or(args, "cp", 8, 2, std::int64_t{1} << 24);
    const cx::RingStep r = cx::ring_step(c, hw, seq, cp);
    json out = {{"model", c.name},
                {"hardware", hw.id},
                {"seq", seq},
                {"cp", cp},
                {"contiguous", work_json(cx::causal_work(seq, cp, false))},
                {"ring", TALLY_MEMBERS(r, block_tokens, block_flops, kv_block_bytes, link_bytes_per_s, compute_seconds,
                                       transfer_seconds, hidden, min_block_tokens)}};
    // The balanced split needs 2·cp | seq; say why when it does not apply rather than fail the whole call.
    if (seq % (2 * cp) == 0) out["balanced"] = work_json(cx::causal_work(seq, cp, true));
    return out;
}

using namespace arg;
constexpr std::array kContextOwn{
    text("hardware", "h100-sxm", "hardware preset (peak and links)"),
    integer("seq", "tokens", 1, 1 << 24, "131072", "sequence length"),
    integer("cp", "GPUs", 2, 1 << 24, "8", "context-parallel degree"),
};
constexpr auto kContextArgs = join_args(kModelArgs, kContextOwn);
constexpr std::array kContextResult = std::to_array<Field>({
    {"contiguous", "", "{pairs, max_over_mean}: causal work per rank with contiguous chunks"},
    {"balanced", "", "the same with 2·cp load-balanced chunks (when 2·cp divides seq)"},
    {"ring", "", "{block_tokens, block_flops, kv_block_bytes, compute_seconds, transfer_seconds, hidden, ...}"},
    {"model", "", "the model's name"},
    {"hardware", "", "the hardware preset id"},
    {"seq", "tokens", "sequence length"},
    {"cp", "GPUs", "context-parallel degree"},
});

constexpr Method kMethods[] = {
    {"context_parallel", context_parallel,
     "context parallelism: causal attention work per CP rank (contiguous vs load-balanced chunks) and one "
     "ring-attention step's compute against its K, V transfer",
     kContextArgs, kContextResult, true},
};

}  // namespace

std::span<const Method> context_methods() { return kMethods; }

}  // namespace tally::api
