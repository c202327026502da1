#include "tally/comm/ring.h"

namespace tally {

double ring_all_reduce_seconds(double bytes, std::int64_t n, double bytes_per_s, double latency_s) {
    if (n <= 1 || bytes <= 0) return 0;
    const double nd = static_cast<double>(n);
    return 2 * (nd - 1) / nd * bytes / bytes_per_s + latency_s;
}

double ring_gather_seconds(double bytes, std::int64_t n, double bytes_per_s, double latency_s) {
    if (n <= 1 || bytes <= 0) return 0;
    const double nd = static_cast<double>(n);
    return (nd - 1) / nd * bytes / bytes_per_s + latency_s;
}

}  // namespace tally
