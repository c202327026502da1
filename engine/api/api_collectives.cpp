// API of the collectives (collectives.h): one collective's alpha-beta cost on a hardware preset, and the
// communication roofline of DP, FSDP, TP, PP, EP and CP for one layer of a model (see docs/API.md, "Collectives").
#include <string>

#include "api_args.h"
#include "tally/api.h"
#include "tally/comm/collectives.h"
#include "tally/base/error.h"
#include "tally/hardware/hardware.h"
#include "tally/model/model.h"

namespace tally::api {

namespace {

namespace co = collectives;

using namespace arg;
constexpr Arg kCoHardware = text("hardware", "h100-sxm", "a hardware preset id: its links");
constexpr double kMaxRanks = 1 << 20;
constexpr std::array kCollectiveArgs{
    choice("collective", "all_reduce", "the collective",
           "all_reduce|all_gather|reduce_scatter|all_to_all|broadcast|send_recv"),
    choice("algorithm", "ring", "the algorithm", "ring|tree"),
    number("message_bytes", "bytes", "required", "bytes each rank contributes"),
    integer("ranks_per_node", "GPUs", 0, kMaxRanks, "required", "ranks on each node"),
    integer("nodes", "nodes", 0, kMaxRanks, "1", "nodes"),
    kCoHardware,
    number("efficiency", "", "0.8", "share of the link bandwidth achieved"),
};
constexpr std::array kCommOwn{
    kCoHardware,
    integer("seq", "tokens", 0, std::int64_t{1} << 40, "4096", "sequence length"),
    integer("micro_batch", "sequences", 0, std::int64_t{1} << 40, "1", "sequences per micro-batch"),
    integer("degree", "GPUs", 0, std::int64_t{1} << 40, "8", "the parallel degree each strategy splits over"),
};
constexpr auto kCommArgs = join_args(kModelArgs, kCommOwn);
constexpr std::array kCollectiveResult = std::to_array<Field>({
    {"seconds", "s", "time of the collective"},
    {"latency_seconds", "s", "the latency term"},
    {"bandwidth_seconds", "s", "the bandwidth term"},
    {"steps", "", "communication steps"},
    {"algorithm_bytes_per_s", "bytes/s", "message_bytes / seconds"},
    {"bus_bytes_per_s", "bytes/s", "algorithm bandwidth x bus factor (nccl-tests)"},
    {"bottleneck", "", "the slowest link"},
    {"collective", "", "the collective"},
    {"algorithm", "", "the algorithm"},
    {"message_bytes", "bytes", "the message each rank holds"},
    {"ranks_per_node", "", "ranks per node"},
    {"nodes", "", "nodes"},
    {"ranks", "", "ranks in all"},
    {"hardware", "", "{id, name, source} of the interconnect"},
    {"efficiency", "", "share of the link bandwidth achieved"},
    {"step_latency_seconds", "s", "latency of one step (NCCL's latency / steps)"},
    {"protocol", "", "NCCL's protocol its cost model picks: LL, LL128 or Simple"},
    {"bus_factor", "", "bus bandwidth / algorithm bandwidth"},
    {"bytes_sent_per_rank", "bytes", "bytes each rank sends"},
    {"bottleneck_bytes_per_s", "bytes/s", "bandwidth of the slowest link"},
});
constexpr std::array kCommResult = std::to_array<Field>({
    {"layer_flops_per_token", "FLOP", "one layer's training FLOPs per token"},
    {"layer_params", "parameters", "one layer's parameters"},
    {"peak_flops_per_s", "FLOP/s", "the preset's bf16 peak"},
    {"strategies", "", "per parallel strategy: bytes, FLOPs, intensity, ridge, communication_bound, seconds"},
    {"model", "", "the model's name"},
    {"hardware", "", "the hardware preset id"},
    {"seq", "tokens", "sequence length"},
    {"micro_batch", "sequences", "sequences per micro-batch"},
    {"degree", "", "the parallel degree"},
    {"element_bytes", "bytes", "bytes per activation element"},
});

Hardware hardware_of(const json& args) { return find_hardware(arg_string(args, kCoHardware)); }

// {collective, algorithm?, message_bytes, ranks_per_node, nodes?, hardware?, efficiency?}
json collective(const json& args) {
    const co::Kind kind = co::kind_from_string(arg_string(args, kCollectiveArgs[0]));
    const co::Algorithm algorithm = co::algorithm_from_string(arg_string(args, kCollectiveArgs[1]));
    const double message_bytes = number_arg(args, "message_bytes");
    const Hardware hw = hardware_of(args);
    const co::Links links =
        co::links_of(hw, optional_number_arg(args, "efficiency").value_or(co::kDefaultLinkEfficiency));
    co::Placement placement;
    placement.ranks_per_node = arg_int(args, kCollectiveArgs[3]);
    placement.nodes = arg_int(args, kCollectiveArgs[4]);
    const co::Cost c = co::cost(kind, algorithm, message_bytes, placement, links);
    json out{{"collective", co::to_string(kind)},
             {"algorithm", co::to_string(algorithm)},
             {"message_bytes", message_bytes},
             {"ranks_per_node", placement.ranks_per_node},
             {"nodes", placement.nodes},
             {"ranks", placement.ranks()},
             {"hardware", {{"id", hw.id}, {"name", hw.name}, {"source", hw.interconnect.source}}},
             {"efficiency", links.efficiency}};
    out.update(TALLY_MEMBERS(c, seconds, latency_seconds, bandwidth_seconds, steps, step_latency_seconds,
                             algorithm_bytes_per_s, bus_bytes_per_s, bus_factor, bytes_sent_per_rank, bottleneck,
                             bottleneck_bytes_per_s, protocol));
    return out;
}

// {model, hardware?, seq?, micro_batch?, degree?}
json comm_roofline(const json& args) {
    const ModelConfig c = resolve_model(args);
    const Hardware hw = hardware_of(args);
    co::RooflineInput in;
    in.seq = arg_int(args, kCommOwn[1], in.seq);
    in.micro_batch = arg_int(args, kCommOwn[2], in.micro_batch);
    in.degree = arg_int(args, kCommOwn[3], in.degree);
    const co::Roofline r = co::comm_roofline(c, hw, in);
    json rows = json::array();
    for (const co::StrategyRow& row : r.rows) {
        json item = TALLY_MEMBERS(row, id, applies, collective);
        if (row.applies) {
            item.update(TALLY_MEMBERS(row, bytes_per_gpu, flops_per_gpu, flops_per_byte, link_bytes_per_s,
                                      ridge_flops_per_byte, communication_bound, compute_seconds,
                                      communication_seconds));
        }
        rows.push_back(std::move(item));
    }
    json out{{"model", c.name}, {"hardware", hw.id}, {"strategies", rows}};
    out.update(TALLY_MEMBERS(in, seq, micro_batch, degree, element_bytes));
    out.update(TALLY_MEMBERS(r, layer_flops_per_token, layer_params, peak_flops_per_s));
    return out;
}

constexpr Method kMethods[] = {
    {"collective", collective,
     "alpha-beta time, algorithm and bus bandwidth of one collective for ranks_per_node x nodes on a hardware preset",
     kCollectiveArgs, kCollectiveResult, true},
    {"comm_roofline", comm_roofline,
     "bytes moved per FLOP of one layer under DP, FSDP, TP, PP, EP, CP against the link's ridge point", kCommArgs,
     kCommResult, true},
};

}  // namespace

std::span<const Method> collectives_methods() { return kMethods; }

}  // namespace tally::api
