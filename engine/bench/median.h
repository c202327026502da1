// The timing loop the native benchmarks share: the median seconds per call over samples of a minimum length.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace tally::bench {

inline double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median seconds per call of fn over `samples` samples, each repeating fn for >= min_sample_s, after `warmup`
// untimed calls.
template <typename Fn>
double median_per_call(Fn fn, int samples, double min_sample_s, int warmup = 0) {
    for (int i = 0; i < warmup; ++i) fn();
    std::vector<double> per_call;
    for (int s = 0; s < samples; ++s) {
        long calls = 0;
        const double start = now_s();
        double elapsed = 0;
        do {
            fn();
            ++calls;
            elapsed = now_s() - start;
        } while (elapsed < min_sample_s);
        per_call.push_back(elapsed / static_cast<double>(calls));
    }
    std::sort(per_call.begin(), per_call.end());
    return per_call[per_call.size() / 2];
}

}  // namespace tally::bench
