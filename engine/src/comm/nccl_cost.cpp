#include "tally/comm/nccl_cost.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tally::collectives {

namespace {

// NVIDIA/nccl b6475625, src/graph/tuning.cc. Microseconds; [algorithm: tree, ring][protocol: LL, LL128, Simple].
constexpr double kBaseLatUs[2][3] = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}};
constexpr double kNvlinkLatUs[2][3] = {{0.6, 1.25, 28}, {0.6, 1.9, 3.4}};
constexpr double kNetLatUs[2][3] = {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}};
// getNetOverhead: 1 us a network post on x86 (Intel; 2 on AMD), three of them per Simple step.
constexpr double kNetOverheadUs = 1.0;
// The LL protocol's busBw caps (llMaxBws, GB/s; Ampere/Hopper in one node, Intel hosts across 2 and more nodes).
constexpr double kLlMaxBusGbS[3] = {87.7, 39.0, 20.4};
// treeCorrectionFactor[protocol][log2(bytes / 64)], 64 B to 256 MiB: trees run slower than modelled mid-size.
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
// Channels NCCL opens on an 8-GPU NVSwitch node with a card per GPU (the plateau rule below reads per-channel bytes).
constexpr double kChannels = 16;
// Send/recv runs outside the tuning model: LL up to P2P_LL_THRESHOLD (16384 bytes) per channel of the peer, Simple
// above (src/enqueue.cc, addP2pToPlan: protoLL &= bytes <= nChannelsMax * ncclParamP2pLLThreshold()), over 2
// channels a peer (NCCL_NCHANNELS_PER_NET_PEER's default, docs/env; NVLink peers may open more).
constexpr double kP2pLlThresholdBytes = 2 * 16384.0;

int algo_index(Algorithm a) { return a == Algorithm::Tree ? 0 : 1; }
int proto_index(Protocol p) { return p == Protocol::LL ? 0 : p == Protocol::LL128 ? 1 : 2; }

int log2i(double x) { return x < 2 ? 0 : static_cast<int>(std::floor(std::log2(x))); }

// steps and inter-node steps of a ring (ncclTopoTuneModel's nsteps, nInterSteps).
void ring_steps(Kind kind, const Placement& p, double& steps, double& inter) {
    const double n = static_cast<double>(p.ranks()), nodes = static_cast<double>(p.nodes);
    switch (kind) {
        case Kind::AllReduce: steps = 2 * (n - 1), inter = nodes > 1 ? 2 * nodes : 0; break;
        case Kind::ReduceScatter:
        case Kind::AllGather:
        case Kind::AllToAll: steps = n - 1, inter = nodes - 1; break;
        case Kind::Broadcast: steps = n, inter = nodes; break;
        case Kind::SendRecv: steps = 1, inter = nodes > 1 ? 1 : 0; break;  // one hop, off the node when it spans
    }
}

// Share of the Simple ring's busBw a protocol keeps (ncclTopoTuneModel's refinements), and the algorithm's
// bus-to-algorithm ratio folded in as seconds = bytes x factor / link.
double bandwidth_seconds(Kind kind, Algorithm a, Protocol p, double bytes, const Placement& pl, double link) {
    const double n = static_cast<double>(pl.ranks());
    double steps = 0, inter = 0;
    ring_steps(kind, pl, steps, inter);
    double bus = link;
    const int ll_cap = pl.nodes <= 2 ? static_cast<int>(pl.nodes) - 1 : 2;
    if (a == Algorithm::Ring) {
        if (p == Protocol::LL) {
            const bool quarter = pl.nodes > 1 || kind == Kind::AllReduce;
            bus = std::min(kLlMaxBusGbS[ll_cap] * 1e9, bus * (quarter ? 0.25 : 1.0 / 3.0));
        }
        if (p == Protocol::LL128) bus *= pl.ranks_per_node < 2 ? 0.7 : 0.92;
        if (kind == Kind::SendRecv) return bytes / bus;  // one hop carries the whole buffer
        // Ring algorithm bandwidth = busBw x n / steps.
        return bytes * steps / (n * bus);
    }
    bus *= 0.92;
    if (p == Protocol::LL) bus = std::min(bus / 3.8, kLlMaxBusGbS[ll_cap] * 1e9);
    if (p == Protocol::LL128) bus *= pl.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
    const int log_size = log2i(bytes / 64);
    if (log_size < 23) bus *= kTreeCorrection[proto_index(p)][log_size];
    return bytes / (0.5 * bus);  // tree algorithm bandwidth = busBw / 2
}

}  // namespace

const char* to_string(Protocol protocol) {
    switch (protocol) {
        case Protocol::LL: return "LL";
        case Protocol::LL128: return "LL128";
        case Protocol::Simple: return "Simple";
    }
    return "Simple";
}

double nccl_latency_seconds(Kind kind, Algorithm algorithm, Protocol protocol, const Placement& placement,
                            double message_bytes) {
    const int a = algo_index(algorithm), p = proto_index(protocol);
    const bool multi_node = placement.nodes > 1;
    double intra = kNvlinkLatUs[a][p];
    const double inter = kNetLatUs[a][p];
    double lat = kBaseLatUs[a][p];
    if (algorithm == Algorithm::Tree) {
        lat += 2 * (static_cast<double>(placement.ranks_per_node - 1) * intra + log2i(placement.nodes) * inter);
        return lat * 1e-6;
    }
    double steps = 0, inter_steps = 0;
    ring_steps(kind, placement, steps, inter_steps);
    if (kind == Kind::Broadcast) {
        lat += multi_node ? inter : intra;  // a pipelined chain: one step's latency
        return lat * 1e-6;
    }
    // Inter-node rings still launch a network post per step (x3 for Simple).
    if (multi_node) intra = std::max(intra, kNetOverheadUs * (protocol == Protocol::Simple ? 3 : 1));
    lat += (steps - inter_steps) * intra + inter_steps * inter;
    // ncclTopoGetAlgoTime: the plateau of a multi-node Simple ring all-reduce once each channel carries 64 bytes a
    // rank (x1.4 from compute capability 8.0).
    if (protocol == Protocol::Simple && multi_node && kind == Kind::AllReduce &&
        message_bytes / (kChannels * static_cast<double>(placement.ranks())) >= 64)
        lat *= 1.4;
    return lat * 1e-6;
}

NcclTime nccl_time(Kind kind, Algorithm algorithm, double message_bytes, const Placement& placement,
                   double link_bytes_per_s) {
    if (kind == Kind::SendRecv) {
        // NCCL picks the protocol by size, not by the model; the model's ring latency and bandwidth price one hop.
        const Protocol p = message_bytes <= kP2pLlThresholdBytes ? Protocol::LL : Protocol::Simple;
        const double lat = nccl_latency_seconds(kind, Algorithm::Ring, p, placement, message_bytes);
        const double bw = bandwidth_seconds(kind, Algorithm::Ring, p, message_bytes, placement, link_bytes_per_s);
        return {lat + bw, lat, bw, Algorithm::Ring, p};
    }
    NcclTime best;
    best.seconds = std::numeric_limits<double>::infinity();
    for (Protocol p : {Protocol::LL, Protocol::LL128, Protocol::Simple}) {
        const double lat = nccl_latency_seconds(kind, algorithm, p, placement, message_bytes);
        const double bw = bandwidth_seconds(kind, algorithm, p, message_bytes, placement, link_bytes_per_s);
        if (lat + bw < best.seconds) best = {lat + bw, lat, bw, algorithm, p};
    }
    return best;
}

NcclTime nccl_time(Kind kind, double message_bytes, const Placement& placement, double link_bytes_per_s,
                   bool allow_tree) {
    NcclTime ring = nccl_time(kind, Algorithm::Ring, message_bytes, placement, link_bytes_per_s);
    if (!allow_tree || kind != Kind::AllReduce || placement.nodes < 2) return ring;
    const NcclTime tree = nccl_time(kind, Algorithm::Tree, message_bytes, placement, link_bytes_per_s);
    return tree.seconds < ring.seconds ? tree : ring;
}

}  // namespace tally::collectives
