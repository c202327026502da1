// A ring collective's time: the alpha-beta primitive (a bandwidth term plus one given latency) and the same
// collective priced by NCCL's cost model over a placement (nccl_cost.h), which the step model's tensor- and
// data-parallel and FSDP traffic use.
#pragma once

#include <cstdint>

#include "tally/comm/collectives.h"

namespace tally {

// Ring all-reduce of `bytes` among n GPUs: 2(n-1)/n · bytes / bandwidth + latency (Patarasuk & Yuan 2009).
double ring_all_reduce_seconds(double bytes, std::int64_t n, double bytes_per_s, double latency_s);
// Reduce-scatter or all-gather: (n-1)/n · bytes / bandwidth + latency.
double ring_gather_seconds(double bytes, std::int64_t n, double bytes_per_s, double latency_s);

// The same collectives over ranks_per_node x nodes ranks at NCCL's fastest algorithm and protocol for the message
// (an all-reduce across nodes may run as a tree); bytes_per_s is the Simple ring's per-rank bus bandwidth.
double nccl_all_reduce_seconds(double bytes, const collectives::Placement& placement, double bytes_per_s);
double nccl_gather_seconds(double bytes, const collectives::Placement& placement, double bytes_per_s);

}  // namespace tally
