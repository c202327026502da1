#include "tally/comm/collectives.h"

#include "tally/comm/nccl_cost.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tally/base/error.h"
#include "tally/compute/flops.h"
#include "tally/base/input.h"
#include "tally/model/params.h"

namespace tally::collectives {

namespace {

constexpr double kMaxMessageBytes = 1e15;  // 1 PB: far above any buffer a GPU holds
constexpr std::int64_t kMaxNodes = 100000;

std::int64_t ceil_log2(std::int64_t n) {
    std::int64_t steps = 0;
    for (std::int64_t span = 1; span < n; span *= 2) ++steps;
    return steps;
}

}  // namespace

Kind kind_from_string(const std::string& text) {
    if (text == "all_reduce") return Kind::AllReduce;
    if (text == "reduce_scatter") return Kind::ReduceScatter;
    if (text == "all_gather") return Kind::AllGather;
    if (text == "broadcast") return Kind::Broadcast;
    if (text == "all_to_all") return Kind::AllToAll;
    if (text == "send_recv") return Kind::SendRecv;
    throw InputError("collective",
                     "collective must be one of all_reduce, reduce_scatter, all_gather, broadcast, "
                     "all_to_all, send_recv, got \"" +
                         printable(text, 40) + "\"");
}

Algorithm algorithm_from_string(const std::string& text) {
    if (text == "ring") return Algorithm::Ring;
    if (text == "tree") return Algorithm::Tree;
    throw InputError("algorithm", "algorithm must be ring or tree, got \"" + printable(text, 40) + "\"");
}

const char* to_string(Kind kind) {
    switch (kind) {
        case Kind::AllReduce: return "all_reduce";
        case Kind::ReduceScatter: return "reduce_scatter";
        case Kind::AllGather: return "all_gather";
        case Kind::Broadcast: return "broadcast";
        case Kind::AllToAll: return "all_to_all";
        case Kind::SendRecv: return "send_recv";
    }
    return "all_reduce";
}

const char* to_string(Algorithm algorithm) { return algorithm == Algorithm::Tree ? "tree" : "ring"; }

Links links_of(const Hardware& hw, double efficiency) {
    if (!hw.interconnect.present)
        throw InputError("hardware", "hardware " + hw.id + " has no interconnect figures; pick another preset");
    if (!(efficiency > 0 && efficiency <= 1))
        throw InputError("efficiency", "efficiency must be in (0, 1], got " + format_number(efficiency));
    return {hw.interconnect.gpus_per_node, hw.interconnect.intra_node_bytes_per_s, hw.interconnect.network_bytes_per_s,
            efficiency};
}

RingLink ring_link(const Placement& placement, const Links& links) {
    const double nvlink = links.efficiency * links.intra_node_bytes_per_s;
    // A ring crossing nodes sends its whole volume out of each node once, spread over the cards of the node's
    // ranks (one NCCL channel per card), while each rank's NVLink carries that volume too.
    const double node_network =
        static_cast<double>(placement.ranks_per_node) * links.efficiency * links.network_bytes_per_s;
    if (placement.nodes > 1 && (placement.ranks_per_node == 1 || node_network < nvlink))
        return {node_network, "network"};
    return {nvlink, "nvlink"};
}

RingLink point_to_point_link(const Placement& placement, const Links& links) {
    if (placement.nodes > 1) return {links.efficiency * links.network_bytes_per_s, "network"};
    return {links.efficiency * links.intra_node_bytes_per_s, "nvlink"};
}

Placement placement_of(std::int64_t ranks, const Links& links) {
    if (ranks <= links.gpus_per_node) return {ranks, 1};
    return {links.gpus_per_node, (ranks + links.gpus_per_node - 1) / links.gpus_per_node};
}

Cost cost(Kind kind, Algorithm algorithm, double message_bytes, const Placement& placement, const Links& links) {
    if (!(message_bytes >= 1 && message_bytes <= kMaxMessageBytes))
        throw InputError("message_bytes",
                         "message_bytes must be from 1 to 1e15 bytes, got " + format_number(message_bytes));
    if (placement.ranks_per_node < 1 || placement.ranks_per_node > links.gpus_per_node)
        throw InputError("ranks_per_node", "ranks_per_node must be from 1 to " + std::to_string(links.gpus_per_node) +
                                               " (GPUs per node), got " + std::to_string(placement.ranks_per_node));
    if (placement.nodes < 1 || placement.nodes > kMaxNodes)
        throw InputError("nodes", "nodes must be from 1 to " + std::to_string(kMaxNodes) + ", got " +
                                      std::to_string(placement.nodes));
    if (placement.ranks() < 2)
        throw InputError("ranks_per_node",
                         "a collective needs at least 2 ranks: ranks_per_node x nodes is 1; raise either");
    if (algorithm == Algorithm::Tree && kind != Kind::AllReduce)
        throw InputError("algorithm",
                         "algorithm tree applies to all_reduce only; use ring for " + std::string(to_string(kind)));

    const double n = static_cast<double>(placement.ranks());
    const double rpn = static_cast<double>(placement.ranks_per_node);
    const bool spans_nodes = placement.nodes > 1;
    const double nvlink = links.efficiency * links.intra_node_bytes_per_s;
    const double card = links.efficiency * links.network_bytes_per_s;
    const RingLink ring = ring_link(placement, links);
    double link = ring.bytes_per_s;
    std::string bottleneck = ring.bottleneck;

    Cost c;
    c.step_latency_seconds = spans_nodes ? kNetworkStepLatencySeconds : kNvlinkStepLatencySeconds;
    const double steps_all_reduce = 2 * (n - 1);
    switch (kind) {
        case Kind::AllReduce:
            c.bus_factor = 2 * (n - 1) / n;
            c.bytes_sent_per_rank = c.bus_factor * message_bytes;
            if (algorithm == Algorithm::Tree) {
                // Double binary tree (NCCL 2.4): reduce up and broadcast down log2(n) levels, each tree carrying
                // half the message, so every rank sends and receives about the whole message twice.
                c.steps = 2 * ceil_log2(placement.ranks());
                c.bytes_sent_per_rank = message_bytes;
            } else {
                c.steps = static_cast<std::int64_t>(steps_all_reduce);
            }
            break;
        case Kind::ReduceScatter:
        case Kind::AllGather:
            c.bus_factor = (n - 1) / n;
            c.bytes_sent_per_rank = c.bus_factor * message_bytes;
            c.steps = placement.ranks() - 1;
            break;
        case Kind::Broadcast:
            // Pipelined ring: every rank but the last forwards the whole message, chunk by chunk.
            c.bus_factor = 1;
            c.bytes_sent_per_rank = message_bytes;
            c.steps = placement.ranks() - 1;
            break;
        case Kind::AllToAll: {
            // Pairwise exchange (Thakur et al. 2005): 1/n of the buffer to each peer, NVLink and network at once.
            c.bus_factor = (n - 1) / n;
            c.bytes_sent_per_rank = c.bus_factor * message_bytes;
            c.steps = placement.ranks() - 1;
            const double in_node = (rpn - 1) / n * message_bytes / nvlink;
            const double off_node = spans_nodes ? (n - rpn) / n * message_bytes / card : 0;
            c.bandwidth_seconds = std::max(in_node, off_node);
            bottleneck = off_node > in_node ? "network" : "nvlink";
            link = off_node > in_node ? card : nvlink;
            break;
        }
        case Kind::SendRecv: {
            // One step of a ring shift: each rank sends the buffer to its next and receives one from its previous
            // at once (links are per direction); the hop that crosses nodes sets the pace (nccl-tests sendrecv_perf
            // counts busbw = algbw).
            c.bus_factor = 1;
            c.bytes_sent_per_rank = message_bytes;
            c.steps = 1;
            const RingLink p2p = point_to_point_link(placement, links);
            link = p2p.bytes_per_s;
            bottleneck = p2p.bottleneck;
            break;
        }
    }
    if (kind == Kind::AllToAll) {
        c.latency_seconds = kLaunchLatencySeconds + static_cast<double>(c.steps) * c.step_latency_seconds;
    } else {
        // NCCL's own model (nccl_cost.h): the protocol it would pick, its latency and the bandwidth it keeps.
        const NcclTime t = nccl_time(kind, algorithm, message_bytes, placement, link);
        c.latency_seconds = t.latency_seconds;
        c.bandwidth_seconds = t.bandwidth_seconds;
        c.protocol = to_string(t.protocol);
        c.step_latency_seconds = c.steps > 0 ? t.latency_seconds / static_cast<double>(c.steps) : 0;
    }
    c.seconds = c.latency_seconds + c.bandwidth_seconds;
    c.algorithm_bytes_per_s = message_bytes / c.seconds;
    c.bus_bytes_per_s = c.algorithm_bytes_per_s * c.bus_factor;
    c.bottleneck_bytes_per_s = link;
    c.bottleneck = bottleneck;
    return c;
}

Roofline comm_roofline(const ModelConfig& config, const Hardware& hw, const RooflineInput& in) {
    if (in.seq < 1 || in.seq > (1 << 20))
        throw InputError("seq", "seq must be from 1 to 1048576 tokens, got " + std::to_string(in.seq));
    if (in.micro_batch < 1 || in.micro_batch > 65536)
        throw InputError("micro_batch",
                         "micro_batch must be from 1 to 65536 sequences, got " + std::to_string(in.micro_batch));
    if (in.degree < 2 || in.degree > kMaxNodes)
        throw InputError("degree", "degree must be from 2 to " + std::to_string(kMaxNodes) + " ranks, got " +
                                       std::to_string(in.degree));
    const Links links = links_of(hw, kDefaultLinkEfficiency);

    FlopsInput flops_in;
    flops_in.seq = in.seq;
    const FlopsResult flops = count_flops(config, flops_in);
    double head_forward_per_token = 0;
    for (const FlopsTerm& term : flops.terms)
        if (std::string(term.id) == "lm_head")
            head_forward_per_token = term.forward_per_sequence / static_cast<double>(in.seq);
    const double layers = static_cast<double>(config.num_layers);
    const ParamCount params = count_params(config);

    Roofline out;
    out.layer_flops_per_token = 3 * (flops.forward_per_token - head_forward_per_token) / layers;
    out.layer_params = static_cast<double>(params.per_layer);
    out.peak_flops_per_s = hw.peak("bf16");

    const double k = static_cast<double>(in.degree);
    const double tokens = static_cast<double>(in.seq * in.micro_batch);
    const double e = in.element_bytes;
    const double d = static_cast<double>(config.hidden_size);
    const double kv = static_cast<double>(config.num_kv_heads * config.head_dim);
    const double layer_flops = out.layer_flops_per_token * tokens;  // one layer, the tokens of one replica
    // Rings (DP, FSDP, TP) at the bandwidth `collective` prices them at; a stage boundary (PP) and the K, V ring
    // (CP) at send_recv's, and the expert all-to-all (EP), once it crosses nodes, at one card per GPU, as
    // `collective`'s all-to-all.
    const Placement placement = placement_of(in.degree, links);
    const double ring = ring_link(placement, links).bytes_per_s;
    const double point_to_point = point_to_point_link(placement, links).bytes_per_s;
    const auto row = [&](const char* id, const char* what, double bytes, double flops_per_gpu, bool applies,
                         double link) {
        StrategyRow r;
        r.id = id;
        r.collective = what;
        r.applies = applies;
        if (applies) {
            r.bytes_per_gpu = bytes;
            r.flops_per_gpu = flops_per_gpu;
            r.flops_per_byte = flops_per_gpu / bytes;
            r.link_bytes_per_s = link;
            r.ridge_flops_per_byte = out.peak_flops_per_s / link;
            r.communication_bound = r.flops_per_byte < r.ridge_flops_per_byte;
            r.compute_seconds = flops_per_gpu / out.peak_flops_per_s;
            r.communication_seconds = bytes / link;
        }
        out.rows.push_back(r);
    };
    const double share = (k - 1) / k;
    // DP: the layer's gradients all-reduced once per step.
    row("dp", "all-reduce of the layer's gradients", 2 * share * out.layer_params * e, layer_flops, true, ring);
    // FSDP (ZeRO-3): weights all-gathered for the forward and again for the backward, gradients reduce-scattered.
    row("fsdp", "2 all-gathers of weights + 1 reduce-scatter of gradients", 3 * share * out.layer_params * e,
        layer_flops, true, ring);
    // TP (Megatron-LM): 2 all-reduces of the activations in the forward, 2 in the backward.
    row("tp", "4 all-reduces of the layer's activations", 4 * 2 * share * tokens * d * e, layer_flops / k, true, ring);
    // PP: activations out and gradients back once per stage of layers/k layers.
    row("pp", "point-to-point activations and their gradients at the stage boundary", 2 * tokens * d * e * k / layers,
        layer_flops, in.degree <= config.num_layers, point_to_point);
    // EP: dispatch and combine all-to-alls, forward and backward, each token to its top-k experts.
    row("ep", "4 all-to-alls of routed tokens (dispatch, combine; forward, backward)",
        4 * share * tokens * static_cast<double>(config.experts_per_token) * d * e, layer_flops, config.is_moe(),
        point_to_point);
    // CP (ring attention): K and V blocks passed round the ring in the forward, K, V and their gradients backward.
    row("cp", "K and V blocks round a ring (forward), K, V and dK, dV (backward)", 3 * share * tokens * 2 * kv * e,
        layer_flops / k, true, point_to_point);
    return out;
}

}  // namespace tally::collectives
