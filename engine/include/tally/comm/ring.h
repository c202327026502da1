// A ring collective priced by NCCL's cost model over a placement (nccl_cost.h), which the step model's tensor-,
// context- and data-parallel and FSDP traffic use (step.h step_collective_seconds).
#pragma once

#include <cstdint>

#include "tally/comm/collectives.h"

namespace tally {

// All-reduce and all-gather (or reduce-scatter) over ranks_per_node x nodes ranks at NCCL's fastest algorithm and
// protocol for the message (an all-reduce across nodes may run as a tree); bytes_per_s is the Simple ring's per-rank
// bus bandwidth.
double nccl_all_reduce_seconds(double bytes, const collectives::Placement& placement, double bytes_per_s);
double nccl_gather_seconds(double bytes, const collectives::Placement& placement, double bytes_per_s);

}  // namespace tally
