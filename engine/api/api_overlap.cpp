// API of the overlap timeline (overlap.h): one GPU's compute and communication lanes for DDP buckets, FSDP
// prefetch or a tensor-parallel collective matmul, with what stays exposed (see docs/API.md, "Overlap").
#include <string>

#include "api_args.h"
#include "tally/api.h"
#include "tally/comm/collectives.h"
#include "tally/hardware/hardware.h"
#include "tally/comm/overlap.h"

namespace tally::api {

namespace {

namespace ov = overlap;

// {scheme, layers?, forward_seconds?, backward_seconds?, layer_bytes?, bucket_bytes?, overlap?, chunks?,
//  hardware?, ranks_per_node?, nodes?, efficiency?}
json overlap_method(const json& args) {
    ov::Input in;
    in.scheme = ov::scheme_from_string(string_or(args, "scheme", "ddp"));
    in.layers = int_or(args, "layers", in.layers, 1, 1024);
    in.forward_seconds = optional_number_arg(args, "forward_seconds").value_or(in.forward_seconds);
    in.backward_seconds = optional_number_arg(args, "backward_seconds").value_or(2 * in.forward_seconds);
    in.layer_bytes = optional_number_arg(args, "layer_bytes").value_or(in.layer_bytes);
    in.bucket_bytes = optional_number_arg(args, "bucket_bytes").value_or(in.bucket_bytes);
    in.overlap = bool_arg(args, "overlap", true);
    in.chunks = int_or(args, "chunks", in.chunks, 1, 64);
    const Hardware hw = find_hardware(string_or(args, "hardware", "h100-sxm"));
    in.links = collectives::links_of(
        hw, optional_number_arg(args, "efficiency").value_or(collectives::kDefaultLinkEfficiency));
    in.placement.ranks_per_node = int_or(args, "ranks_per_node", 8, 0, 1 << 20);
    in.placement.nodes = int_or(args, "nodes", 1, 0, 1 << 20);
    const ov::Timeline t = ov::lay_out(in);
    json ops = json::array();
    for (const ov::Op& op : t.ops)
        ops.push_back(
            {{"lane", op.lane}, {"kind", op.kind}, {"layer", op.layer}, {"start", op.start}, {"end", op.end}});
    json out{{"scheme", ov::to_string(in.scheme)},
             {"hardware", hw.id},
             {"ranks_per_node", in.placement.ranks_per_node},
             {"nodes", in.placement.nodes},
             {"exposed_fraction", t.comm_seconds > 0 ? t.exposed_comm_seconds / t.comm_seconds : 0.0},
             {"ops", ops}};
    out.update(
        TALLY_MEMBERS(in, layers, forward_seconds, backward_seconds, layer_bytes, bucket_bytes, overlap, chunks));
    out.update(TALLY_MEMBERS(t, step_seconds, compute_seconds, comm_seconds, exposed_comm_seconds, hidden_comm_seconds,
                             collectives, collective_seconds));
    return out;
}

using namespace arg;
// The defaults the overlap model starts from (overlap.h), printed by the contract as numbers (Arg::constant).
constexpr ov::Input kCore{};
constexpr Arg core_default(Arg arg, double value) {
    arg.constant = value;
    return arg;
}
constexpr std::array kOverlapArgs{
    choice("scheme", "ddp", "what communicates", "ddp|fsdp|tp"),
    core_default(integer("layers", "layers", 1, 1024, "", "layers in the step"), static_cast<double>(kCore.layers)),
    core_default(number("forward_seconds", "s", "", "one layer's forward"), kCore.forward_seconds),
    number("backward_seconds", "s", "depends: 2 x forward_seconds", "one layer's backward"),
    core_default(number("layer_bytes", "bytes", "", "bytes one layer's collective moves"), kCore.layer_bytes),
    core_default(number("bucket_bytes", "bytes", "", "DDP gradient bucket size"), kCore.bucket_bytes),
    boolean("overlap", "true", "overlap communication with compute"),
    core_default(integer("chunks", "chunks", 1, 64, "", "TP collective-matmul chunks"),
                 static_cast<double>(kCore.chunks)),
    text("hardware", "h100-sxm", "hardware preset whose links time the collectives"),
    core_default(number("efficiency", "", "", "achieved share of link bandwidth"), collectives::kDefaultLinkEfficiency),
    integer("ranks_per_node", "GPUs", 0, 1 << 20, "8", "ranks of the group per node"),
    integer("nodes", "nodes", 0, 1 << 20, "1", "nodes the group spans"),
};
constexpr std::array kOverlapResult = std::to_array<Field>({
    {"step_seconds", "s", "the step with this schedule"},
    {"comm_seconds", "s", "all communication"},
    {"exposed_comm_seconds", "s", "communication compute waits for"},
    {"ops", "", "{lane, kind, layer, start, end} per op"},
    {"scheme", "", "the parallel scheme"},
    {"hardware", "", "the hardware preset id"},
    {"ranks_per_node", "", "ranks per node"},
    {"nodes", "", "nodes"},
    {"layers", "layers", "layers in the step"},
    {"forward_seconds", "s", "one layer's forward"},
    {"backward_seconds", "s", "one layer's backward"},
    {"layer_bytes", "bytes", "bytes one layer's collective moves"},
    {"bucket_bytes", "bytes", "gradient bucket size"},
    {"overlap", "", "whether communication overlaps compute"},
    {"chunks", "", "pieces each collective is split into"},
    {"compute_seconds", "s", "all compute"},
    {"hidden_comm_seconds", "s", "communication hidden under compute"},
    {"exposed_fraction", "", "exposed_comm_seconds / comm_seconds"},
    {"collectives", "", "collectives launched"},
    {"collective_seconds", "s", "one collective"},
});

constexpr Method kMethods[] = {
    {"overlap", overlap_method,
     "one GPU's step timeline, compute and communication lanes: DDP buckets, FSDP prefetch or TP collective matmul; "
     "what stays exposed",
     kOverlapArgs, kOverlapResult, true},
};

}  // namespace

std::span<const Method> overlap_methods() { return kMethods; }

}  // namespace tally::api
