// NCCL's own cost model of one collective (src/graph/tuning.cc, ncclTopoTuneModel and ncclTopoGetAlgoTime, at
// NVIDIA/nccl b6475625, NCCL 2.19): a latency per algorithm and protocol that grows with the ring's steps and the
// tree's depth, and the share of the link's bandwidth each protocol keeps. NCCL runs the pair its model says is
// fastest for the message, so tally prices every collective with that pair: small messages pay LL's low latency,
// large ones Simple's full bandwidth, and a ring across many nodes pays a step latency per rank.
#pragma once

#include <cstdint>

#include "tally/comm/collectives.h"

namespace tally::collectives {

enum class Protocol { LL, LL128, Simple };
const char* to_string(Protocol protocol);

struct NcclTime {
    double seconds = 0;
    double latency_seconds = 0;
    double bandwidth_seconds = 0;
    Algorithm algorithm = Algorithm::Ring;
    Protocol protocol = Protocol::Simple;
};

// NCCL's latency (seconds) of one collective of `kind` over the placement with the algorithm and protocol:
// baseLat + (steps - inter-node steps) x the NVLink step + inter-node steps x the network step (ring), or
// 2 x (ranks per node - 1) NVLink steps + 2 log2(nodes) network steps (tree, all-reduce only).
double nccl_latency_seconds(Kind kind, Algorithm algorithm, Protocol protocol, const Placement& placement,
                            double message_bytes);

// The fastest (algorithm, protocol) NCCL's model finds for message_bytes (nccl-tests counting, collectives.h) over
// the placement, the Simple ring's per-rank bus bandwidth being link_bytes_per_s; `algorithm` fixes the
// algorithm (tree: all-reduce only), or pass allow_tree to let an all-reduce across nodes pick it. Send/recv: one
// ring hop at the protocol NCCL's p2p path picks by size (LL for small buffers, Simple above), link_bytes_per_s
// being the sender's link.
NcclTime nccl_time(Kind kind, double message_bytes, const Placement& placement, double link_bytes_per_s,
                   bool allow_tree);
NcclTime nccl_time(Kind kind, Algorithm algorithm, double message_bytes, const Placement& placement,
                   double link_bytes_per_s);

}  // namespace tally::collectives
