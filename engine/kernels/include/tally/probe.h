// Probes that measure this machine's roofline instead of assuming it: the peak arithmetic rate
// (independent multiply-add chains in vector registers) and the main-memory bandwidth (streaming
// over buffers larger than the last-level cache). Single core, natively and in wasm.
#pragma once

#include <cstdint>

namespace tally::probe {

struct PeakResult {
    double flops_per_s = 0;  // median of the samples, FLOP/s
    double flops_per_s_min = 0, flops_per_s_max = 0;
    int samples = 0;
    double seconds_per_sample = 0;
    const char* isa = "";  // vector ISA of the probe loop (gemm::simd_isa())
    int lanes = 0;         // fp32 lanes per vector
    bool fma = false;      // fused multiply-add (wasm simd128: separate mul and add)
};

// samples in [1, 50]; each sample runs at least min_sample_s in [0.001, 5]. relaxed: time the
// relaxed-SIMD module's f32x4.relaxed_madd chains instead (wasm with that module only; the ceiling of
// the simd-relaxed kernel).
PeakResult peak(int samples, double min_sample_s, bool relaxed = false);

struct BandwidthResult {
    double read_bytes_per_s = 0;  // median bytes/s of a read-only sum over the buffer
    double read_bytes_per_s_min = 0, read_bytes_per_s_max = 0;
    double triad_bytes_per_s = 0;  // median bytes/s of a[i] = b[i] + s c[i] over three arrays, counting
    double triad_bytes_per_s_min = 0, triad_bytes_per_s_max = 0;  // 12 bytes per element (no write-allocate traffic)
    std::int64_t bytes = 0;  // size of the read buffer (the triad uses three arrays of bytes/3)
    int samples = 0;
};

// bytes in [1 MiB, 1 GiB] (use several times the last-level cache: 32 MiB L3 here), samples in [1, 50].
BandwidthResult bandwidth(std::int64_t bytes, int samples);

}  // namespace tally::probe
