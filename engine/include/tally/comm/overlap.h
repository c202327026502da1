// Communication overlap on one GPU's step timeline: a compute lane and a communication lane (a CUDA stream each,
// ops in issue order), laid out for three schemes. DDP reduces gradients in buckets as the backward pass
// produces them (Li et al. 2020, PyTorch Distributed, sec. 3.2.3); FSDP/ZeRO-3 gathers each layer's weights
// before it runs and reduce-scatters its gradients, prefetching the next gather (Zhao et al. 2023, PyTorch
// FSDP, sec. 3.3.3); tensor parallelism splits a layer's collective and its matmul into chunks so that chunk
// j's matmul runs while chunk j+1 moves (Wang et al. 2023, "Overlap communication with dependent computation
// via decomposition"). Collective times come from the alpha-beta model (collectives.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tally/comm/collectives.h"

namespace tally::overlap {

enum class Scheme { Ddp, Fsdp, Tp };
Scheme scheme_from_string(const std::string& text);  // InputError field "scheme"
const char* to_string(Scheme scheme);

// PyTorch DDP's default bucket_cap_mb = 25 (torch.nn.parallel.DistributedDataParallel).
inline constexpr double kDefaultBucketBytes = 25.0 * 1024 * 1024;

struct Input {
    Scheme scheme = Scheme::Ddp;
    std::int64_t layers = 8;
    double forward_seconds = 1e-3;   // one layer's forward compute
    double backward_seconds = 2e-3;  // one layer's backward compute (2x forward for matmuls)
    // DDP: a layer's gradient bytes; FSDP: a layer's unsharded weight bytes (gathered) and gradient bytes
    // (reduce-scattered); TP: the bytes one layer's collectives move in one direction (lumped into one).
    double layer_bytes = 100e6;
    double bucket_bytes = kDefaultBucketBytes;  // DDP only
    bool overlap = true;      // DDP: reduce during backward; FSDP: prefetch; TP: chunked collective matmul
    std::int64_t chunks = 4;  // TP only, when overlapping
    // FSDP only: one layer's gather / reduce-scatter seconds as given (> 0; step time's own link model) instead of
    // the alpha-beta cost of layer_bytes over placement and links.
    double gather_seconds = 0, scatter_seconds = 0;
    collectives::Placement placement;
    collectives::Links links;
};

struct Op {
    std::string lane;        // "compute" or "comm"
    std::string kind;        // forward, backward, all_reduce, all_gather, reduce_scatter
    std::int64_t layer = 0;  // 0-based layer (DDP buckets: the bucket's index)
    double start = 0, end = 0;
};

struct Timeline {
    std::vector<Op> ops;
    double step_seconds = 0;          // first op start to last op end (the optimizer step excluded)
    double compute_seconds = 0;       // busy time of the compute lane
    double comm_seconds = 0;          // busy time of the communication lane
    double exposed_comm_seconds = 0;  // step - compute: time the compute lane waits on communication
    double hidden_comm_seconds = 0;   // comm - exposed (never below 0)
    std::int64_t collectives = 0;     // communication ops (DDP: buckets)
    double collective_seconds = 0;    // one full-size collective (DDP: one bucket; FSDP/TP: one layer's)
};

// InputError naming layers (1..1024), forward_seconds / backward_seconds (> 0, at most 1e4), layer_bytes
// (1..1e15), bucket_bytes (1..1e15), chunks (1..64), or the placement's fields (collectives::cost).
Timeline lay_out(const Input& input);

}  // namespace tally::overlap
