// Collective communication in the alpha-beta model (Hockney 1994; Thakur, Rabenseifner, Gropp 2005): the time of
// ring all-reduce, reduce-scatter, all-gather, broadcast, all-to-all, (double binary) tree all-reduce and one
// send/recv step (every rank to its next, as ring attention and pipeline stages pass blocks) for n ranks
// placed as ranks_per_node x nodes, with the latency and bandwidth terms apart, the algorithm and bus bandwidth as
// nccl-tests reports them (doc/PERFORMANCE.md), and the communication roofline of the six parallelisms.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tally/hardware/hardware.h"
#include "tally/model/model.h"

namespace tally::collectives {

enum class Kind { AllReduce, ReduceScatter, AllGather, Broadcast, AllToAll, SendRecv };
enum class Algorithm { Ring, Tree };

Kind kind_from_string(const std::string& text);            // InputError field "collective"
Algorithm algorithm_from_string(const std::string& text);  // InputError field "algorithm"
const char* to_string(Kind kind);
const char* to_string(Algorithm algorithm);

// Fraction of the link's line rate NCCL reaches: "with the protocol overhead (~20%) NCCL can get an effective
// NVLink bandwidth of 370GB/s" of 450 on H100 (S. Jeaugey, NVIDIA, nccl-tests issue #212, 2024).
inline constexpr double kDefaultLinkEfficiency = 0.8;
// All-to-all's per-step latencies (grouped sends, outside NCCL's tuning model): 0.4 us a step over NVLink, 0.9 us
// over the network, 3.6 us to launch; the other collectives take NCCL's own model (nccl_cost.h).
inline constexpr double kNvlinkStepLatencySeconds = 0.4e-6;
inline constexpr double kNetworkStepLatencySeconds = 0.9e-6;
inline constexpr double kLaunchLatencySeconds = 3.6e-6;

struct Placement {
    std::int64_t ranks_per_node = 8;
    std::int64_t nodes = 1;
    std::int64_t ranks() const { return ranks_per_node * nodes; }
};

// Link figures per GPU and per direction (hardware.h Interconnect), scaled by efficiency.
struct Links {
    std::int64_t gpus_per_node = 8;
    double intra_node_bytes_per_s = 0;  // NVLink (or PCIe) per GPU
    double network_bytes_per_s = 0;     // network cards per node x card bandwidth / GPUs per node
    double efficiency = kDefaultLinkEfficiency;
};
Links links_of(const Hardware& hw, double efficiency);  // InputError field "hardware" without an interconnect

struct Cost {
    double seconds = 0;
    double latency_seconds = 0;    // launch + steps x per-step latency
    double bandwidth_seconds = 0;  // bytes on the slowest link / its bandwidth
    std::int64_t steps = 0;        // sequential communication steps
    double step_latency_seconds = 0;
    double algorithm_bytes_per_s = 0;  // message bytes / time (nccl-tests algbw)
    double bus_bytes_per_s = 0;        // algbw x bus factor (nccl-tests busbw)
    double bus_factor = 0;  // 2(n-1)/n all-reduce, (n-1)/n gather/scatter/all-to-all, 1 broadcast and send/recv
    double bytes_sent_per_rank = 0;
    double bottleneck_bytes_per_s = 0;  // bandwidth of the link that sets the pace
    std::string bottleneck;             // "nvlink" or "network"
    std::string protocol =
        "Simple";  // NCCL's protocol: LL, LL128 or Simple (all-to-all: Simple; send/recv: LL or Simple)
};

// message_bytes as nccl-tests counts it: the all-reduce/broadcast buffer, all-gather's output, reduce-scatter's
// input, all-to-all's send buffer per rank, send/recv's buffer each rank sends to its next (and receives). InputError naming "message_bytes", "ranks_per_node", "nodes" or
// "algorithm" (tree is an all-reduce algorithm only).
// The bandwidth that bounds a ring over `placement`, and which link it is ("nvlink" or "network"): NVLink within a
// node; across nodes the node's cards together (each rank's card carries its share of the volume leaving the
// node), when they are slower than NVLink. Every ring-priced collective, here and in comm_roofline, reads it.
struct RingLink {
    double bytes_per_s;
    const char* bottleneck;
};
RingLink ring_link(const Placement& placement, const Links& links);
// The bandwidth of one rank's send to another: NVLink within a node, across nodes the sender's own card (a send
// leaves through the card nearest its GPU, not the node's cards together). Send/recv and comm_roofline's stage
// boundary and K, V ring read it.
RingLink point_to_point_link(const Placement& placement, const Links& links);
// The placement of `ranks` consecutive ranks: one node when they fit, else whole nodes of gpus_per_node.
Placement placement_of(std::int64_t ranks, const Links& links);
Cost cost(Kind kind, Algorithm algorithm, double message_bytes, const Placement& placement, const Links& links);

// Communication roofline of one transformer layer per GPU (one training step's forward and backward of the
// tokens a GPU sees), after the JAX scaling book ("Sharded matrices", "Training") and the Ultra-Scale Playbook.
struct RooflineInput {
    std::int64_t seq = 4096;
    std::int64_t micro_batch = 1;  // sequences per GPU (per model replica under TP/PP/CP/EP)
    std::int64_t degree = 8;       // ranks the strategy spans
    double element_bytes = 2;      // bf16 weights, gradients and activations
};
struct StrategyRow {
    std::string id;  // dp, fsdp, tp, pp, ep, cp
    bool applies = true;
    std::string collective;  // what it moves
    double bytes_per_gpu = 0;
    double flops_per_gpu = 0;
    double flops_per_byte = 0;        // the strategy's communication intensity
    double link_bytes_per_s = 0;      // NVLink when the degree fits a node, else the network
    double ridge_flops_per_byte = 0;  // peak FLOP/s / link bandwidth
    bool communication_bound = false;
    double compute_seconds = 0, communication_seconds = 0;
};
struct Roofline {
    double layer_flops_per_token = 0;  // training (3 x forward) FLOPs of one layer per token, engine count
    double layer_params = 0;
    double peak_flops_per_s = 0;
    std::vector<StrategyRow> rows;
};
Roofline comm_roofline(const ModelConfig& config, const Hardware& hw, const RooflineInput& input);

}  // namespace tally::collectives
