#include "tally/comm/ring.h"

#include "tally/comm/nccl_cost.h"

namespace tally {

double nccl_all_reduce_seconds(double bytes, const collectives::Placement& placement, double bytes_per_s) {
    if (placement.ranks() <= 1 || bytes <= 0) return 0;
    return collectives::nccl_time(collectives::Kind::AllReduce, bytes, placement, bytes_per_s, true).seconds;
}

double nccl_gather_seconds(double bytes, const collectives::Placement& placement, double bytes_per_s) {
    if (placement.ranks() <= 1 || bytes <= 0) return 0;
    return collectives::nccl_time(collectives::Kind::AllGather, bytes, placement, bytes_per_s, false).seconds;
}

}  // namespace tally
