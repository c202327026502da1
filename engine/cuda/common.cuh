// common.cuh: helpers shared by the CUDA verification programs in engine/cuda/.
//
// What lives here and why:
//   - cudaCheck / cublasCheck: abort with file:line on any failed CUDA call (llm.c style),
//   - probe_device(): the one place that decides "no CUDA device: skipped" (every program
//     exits 0 with that line when no device or no driver is present, so CI without a GPU passes),
//   - Checker: the abs_tol + tol_i comparison with the first few mismatches printed,
//   - gamma_k(): the classic accumulation error bound used to scale tolerances with k,
//   - a tiny JSON writer (the programs emit reports the roofline widget can load),
//   - a deterministic RNG so host self-tests and device runs see the same inputs.
// Host-only helpers are plain C++; nothing here needs a device to run.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// ----------------------------------------------------------------------------
// error checking

inline void cuda_check(cudaError_t err, const char* file, int line) {
    if (err != cudaSuccess) {
        std::fprintf(stderr, "[CUDA ERROR] at %s:%d: %s\n", file, line, cudaGetErrorString(err));
        std::exit(EXIT_FAILURE);
    }
}
#define cudaCheck(err) cuda_check((err), __FILE__, __LINE__)

// ----------------------------------------------------------------------------
// device probe: the "no CUDA device: skipped" path

// The skip line every program prints (tests match it exactly).
inline constexpr const char* kNoDeviceLine = "no CUDA device: skipped";

struct DeviceProbe {
    bool available = false;
    int device = 0;
    std::string reason;  // why not available (driver missing, no device, forced by env)
    cudaDeviceProp prop{};
};

// TALLY_CUDA_FORCE_NO_DEVICE=1 makes the probe report "no device" even on a GPU machine, so the
// skip path is testable everywhere (the test suite sets it; real runs never do).
inline DeviceProbe probe_device() {
    DeviceProbe p;
    const char* forced = std::getenv("TALLY_CUDA_FORCE_NO_DEVICE");
    if (forced != nullptr && std::strcmp(forced, "1") == 0) {
        p.reason = "TALLY_CUDA_FORCE_NO_DEVICE=1";
        return p;
    }
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        // cudaErrorNoDevice, cudaErrorInsufficientDriver (no libcuda.so.1), ...: all mean "cannot run here".
        p.reason = cudaGetErrorString(err);
        (void)cudaGetLastError();  // clear the sticky-free error so later calls are not confused
        return p;
    }
    if (count == 0) {
        p.reason = "cudaGetDeviceCount returned 0";
        return p;
    }
    const char* dev = std::getenv("TALLY_CUDA_DEVICE");
    p.device = dev ? std::atoi(dev) : 0;
    if (p.device < 0 || p.device >= count) {
        std::fprintf(stderr, "TALLY_CUDA_DEVICE must be in [0, %d), got %d\n", count, p.device);
        std::exit(EXIT_FAILURE);
    }
    cudaCheck(cudaSetDevice(p.device));
    cudaCheck(cudaGetDeviceProperties(&p.prop, p.device));
    p.available = true;
    return p;
}

// Prints the skip line (with the reason on the same line, after it) and returns the exit code 0.
inline int skip_no_device(const DeviceProbe& p) {
    std::printf("%s (%s)\n", kNoDeviceLine, p.reason.c_str());
    return 0;
}

// ----------------------------------------------------------------------------
// timing with CUDA events

// Runs `fn` once to warm up, then `repeats` times, timing each run with events; returns the median
// in seconds (the median ignores one-off stalls better than the mean does).
template <class Fn>
double time_median_s(Fn&& fn, int repeats) {
    cudaEvent_t start, stop;
    cudaCheck(cudaEventCreate(&start));
    cudaCheck(cudaEventCreate(&stop));
    fn();
    cudaCheck(cudaGetLastError());
    cudaCheck(cudaDeviceSynchronize());
    std::vector<double> t;
    for (int r = 0; r < repeats; r++) {
        cudaCheck(cudaEventRecord(start));
        fn();
        cudaCheck(cudaEventRecord(stop));
        cudaCheck(cudaEventSynchronize(stop));
        cudaCheck(cudaGetLastError());
        float ms = 0.f;
        cudaCheck(cudaEventElapsedTime(&ms, start, stop));
        t.push_back(ms * 1e-3);
    }
    cudaCheck(cudaEventDestroy(start));
    cudaCheck(cudaEventDestroy(stop));
    std::vector<double> s = t;
    for (size_t i = 1; i < s.size(); i++)  // insertion sort: repeats is small
        for (size_t j = i; j > 0 && s[j] < s[j - 1]; j--) std::swap(s[j], s[j - 1]);
    return s[s.size() / 2];
}

// ----------------------------------------------------------------------------
// deterministic inputs (xorshift64*, the same on every platform)

struct Rng {
    uint64_t state;
    explicit Rng(uint64_t seed) : state(seed ? seed : 0x9E3779B97F4A7C15ull) {}
    uint64_t next_u64() {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        return state * 0x2545F4914F6CDD1Dull;
    }
    // uniform in [-1, 1) with 24 random bits, so every value is exact in fp32
    float next_signed() { return float(int32_t(next_u64() >> 40) - (1 << 23)) / float(1 << 23); }
    uint64_t below(uint64_t n) { return next_u64() % n; }
};

// ----------------------------------------------------------------------------
// tolerances and the checker

// gamma_k = k*u / (1 - k*u): the worst-case relative error bound of a k-term recursive sum with
// unit roundoff u (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., eq. 3.8).
// |computed - exact| <= gamma_k * sum_i |a_i b_i| for a dot product accumulated in precision u.
inline double gamma_k(double k, double u) {
    double ku = k * u;
    return ku < 1.0 ? ku / (1.0 - ku) : INFINITY;
}

struct Mismatch {
    size_t index;
    double got, ref, tol;
};

// llm.c-style checker: |got - ref| <= tol[i] for every checked index; prints the first `print_max`
// mismatches and counts all of them. NaN in `got` is always a mismatch.
struct Checker {
    const char* name;
    size_t checked = 0;
    size_t failed = 0;
    double max_abs_err = 0.0;
    double max_rel_err = 0.0;  // relative to max(|ref|, tiny)
    std::vector<Mismatch> first;
    int print_max = 5;
    bool quiet = false;

    explicit Checker(const char* n, bool q = false) : name(n), quiet(q) {}

    void check(size_t index, double got, double ref, double tol) {
        checked++;
        double err = std::fabs(got - ref);
        if (!(err <= tol)) {  // written so NaN fails
            failed++;
            if ((int)first.size() < print_max) {
                first.push_back({index, got, ref, tol});
                if (!quiet)
                    std::printf("  MISMATCH %s at %zu: got %.9g, expected %.9g (|diff| %.3g > tol %.3g)\n", name, index,
                                got, ref, err, tol);
            }
            return;
        }
        if (err > max_abs_err) max_abs_err = err;
        double rel = err / std::fmax(std::fabs(ref), 1e-30);
        if (rel > max_rel_err) max_rel_err = rel;
    }
    bool ok() const { return failed == 0 && checked > 0; }
};

// ----------------------------------------------------------------------------
// a tiny JSON writer (enough for flat reports; keeps nlohmann out of nvcc's way)

inline std::string json_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            default:
                if ((unsigned char)c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", (unsigned)c);
                    out += buf;
                } else {
                    out += c;
                }
        }
    }
    return out;
}
inline std::string json_str(const std::string& s) { return "\"" + json_escape(s) + "\""; }
// Doubles: 17 significant digits round-trip; non-finite values become null (JSON has no NaN).
inline std::string json_num(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}
inline std::string json_int(long long v) { return std::to_string(v); }
inline std::string json_bool(bool v) { return v ? "true" : "false"; }

// ----------------------------------------------------------------------------
// command line: --name value pairs and flags

struct Args {
    int argc;
    char** argv;
    bool has(const char* flag) const {
        for (int i = 1; i < argc; i++)
            if (std::strcmp(argv[i], flag) == 0) return true;
        return false;
    }
    const char* value(const char* flag) const {
        for (int i = 1; i + 1 < argc; i++)
            if (std::strcmp(argv[i], flag) == 0) return argv[i + 1];
        return nullptr;
    }
};

// Writes `text` to `path` (or stdout when path is "-"); returns false on I/O failure.
inline bool write_text_file(const char* path, const std::string& text) {
    if (std::strcmp(path, "-") == 0) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        return true;
    }
    FILE* f = std::fopen(path, "w");
    if (!f) {
        std::fprintf(stderr, "cannot open %s for writing\n", path);
        return false;
    }
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = (std::fclose(f) == 0) && ok;
    return ok;
}

// Self-test bookkeeping: EXPECT-style checks that count failures and name the claim.
struct SelfTest {
    int passed = 0, failed = 0;
    void expect(bool cond, const char* claim) {
        if (cond) {
            passed++;
        } else {
            failed++;
            std::printf("  SELF-TEST FAILED: %s\n", claim);
        }
    }
    int finish(const char* program) const {
        std::printf("%s self-test: %d passed, %d failed\n", program, passed, failed);
        if (failed == 0) std::printf("All self-tests passed\n");
        return failed == 0 ? 0 : 1;
    }
};
