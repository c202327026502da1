// API of the collectives (collectives.h): one collective's alpha-beta cost on a hardware preset, and the
// communication roofline of DP, FSDP, TP, PP, EP and CP for one layer of a model (see docs/API.md, "Collectives").
#include <string>

#include "api_args.h"
#include "tally/api.h"
#include "tally/collectives.h"
#include "tally/error.h"
#include "tally/hardware.h"
#include "tally/model.h"

namespace tally::api {

namespace {

namespace co = collectives;

Hardware hardware_of(const json& args) { return find_hardware(string_or(args, "hardware", "h100-sxm")); }

// {collective, algorithm?, message_bytes, ranks_per_node, nodes?, hardware?, efficiency?}
json collective(const json& args) {
    const co::Kind kind = co::kind_from_string(string_or(args, "collective", "all_reduce"));
    const co::Algorithm algorithm = co::algorithm_from_string(string_or(args, "algorithm", "ring"));
    const double message_bytes = number_arg(args, "message_bytes");
    const Hardware hw = hardware_of(args);
    const co::Links links =
        co::links_of(hw, optional_number_arg(args, "efficiency").value_or(co::kDefaultLinkEfficiency));
    co::Placement placement;
    placement.ranks_per_node = integer_arg(args, "ranks_per_node", 0, 1 << 20);
    placement.nodes = int_or(args, "nodes", 1, 0, 1 << 20);
    const co::Cost c = co::cost(kind, algorithm, message_bytes, placement, links);
    return {{"collective", co::to_string(kind)},
            {"algorithm", co::to_string(algorithm)},
            {"message_bytes", message_bytes},
            {"ranks_per_node", placement.ranks_per_node},
            {"nodes", placement.nodes},
            {"ranks", placement.ranks()},
            {"hardware", {{"id", hw.id}, {"name", hw.name}, {"source", hw.interconnect.source}}},
            {"efficiency", links.efficiency},
            {"seconds", c.seconds},
            {"latency_seconds", c.latency_seconds},
            {"bandwidth_seconds", c.bandwidth_seconds},
            {"steps", c.steps},
            {"step_latency_seconds", c.step_latency_seconds},
            {"algorithm_bytes_per_s", c.algorithm_bytes_per_s},
            {"bus_bytes_per_s", c.bus_bytes_per_s},
            {"bus_factor", c.bus_factor},
            {"bytes_sent_per_rank", c.bytes_sent_per_rank},
            {"bottleneck", c.bottleneck},
            {"bottleneck_bytes_per_s", c.bottleneck_bytes_per_s}};
}

// {model, hardware?, seq?, micro_batch?, degree?}
json comm_roofline(const json& args) {
    const ModelConfig c = resolve_model(args);
    const Hardware hw = hardware_of(args);
    co::RooflineInput in;
    in.seq = int_or(args, "seq", in.seq, 0, std::int64_t{1} << 40);
    in.micro_batch = int_or(args, "micro_batch", in.micro_batch, 0, std::int64_t{1} << 40);
    in.degree = int_or(args, "degree", in.degree, 0, std::int64_t{1} << 40);
    const co::Roofline r = co::comm_roofline(c, hw, in);
    json rows = json::array();
    for (const co::StrategyRow& row : r.rows) {
        json item = {{"id", row.id}, {"applies", row.applies}, {"collective", row.collective}};
        if (row.applies) {
            item["bytes_per_gpu"] = row.bytes_per_gpu;
            item["flops_per_gpu"] = row.flops_per_gpu;
            item["flops_per_byte"] = row.flops_per_byte;
            item["link_bytes_per_s"] = row.link_bytes_per_s;
            item["ridge_flops_per_byte"] = row.ridge_flops_per_byte;
            item["communication_bound"] = row.communication_bound;
            item["compute_seconds"] = row.compute_seconds;
            item["communication_seconds"] = row.communication_seconds;
        }
        rows.push_back(std::move(item));
    }
    return {{"model", c.name},
            {"hardware", hw.id},
            {"seq", in.seq},
            {"micro_batch", in.micro_batch},
            {"degree", in.degree},
            {"element_bytes", in.element_bytes},
            {"layer_flops_per_token", r.layer_flops_per_token},
            {"layer_params", r.layer_params},
            {"peak_flops_per_s", r.peak_flops_per_s},
            {"strategies", rows}};
}

constexpr Method kMethods[] = {
    {"collective", collective,
     "alpha-beta time, algorithm and bus bandwidth of one collective for ranks_per_node x nodes on a hardware preset"},
    {"comm_roofline", comm_roofline,
     "bytes moved per FLOP of one layer under DP, FSDP, TP, PP, EP, CP against the link's ridge point"},
};

}  // namespace

std::span<const Method> collectives_methods() { return kMethods; }

}  // namespace tally::api
