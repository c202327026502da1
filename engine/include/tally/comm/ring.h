// A ring collective's time in the alpha-beta model: the bandwidth term of each ring step plus one latency; the
// primitive that the step model's tensor-, context- and data-parallel traffic and the pipeline's tied-embedding sync
// are priced with.
#pragma once

#include <cstdint>

namespace tally {

// Ring all-reduce of `bytes` among n GPUs: 2(n-1)/n · bytes / bandwidth + latency (Patarasuk & Yuan 2009).
double ring_all_reduce_seconds(double bytes, std::int64_t n, double bytes_per_s, double latency_s);
// Reduce-scatter or all-gather: (n-1)/n · bytes / bandwidth + latency.
double ring_gather_seconds(double bytes, std::int64_t n, double bytes_per_s, double latency_s);

}  // namespace tally
