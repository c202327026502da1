// API of the GEMM ladder (gemm.h): kernels, timed runs, one deterministic run, and each kernel's modelled
// traffic (see docs/API.md, "GEMM and roofline").
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/gemm.h"
#include "tally/compute/roofline.h"

namespace tally::api {

namespace {

constexpr double kDefaultCacheBytes = 1 << 20;  // 1 MiB: the per-core L2 of AMD Zen 4/5 (our bench machine)

// Limits that keep one measuring call to seconds and its memory small. WebAssembly memory never
// shrinks, so whatever one call allocates stays reserved by the page: the caps bound that too.
// Largest square size: three n x n fp32 matrices at 2048 are 48 MiB.
constexpr int kMaxBenchN = 2048;
// The naive kernel is 100-500x slower than the others (BENCHMARKS.md: 0.4 GFLOP/s at n = 1024,
// ~40 s per call at 2048), so it gets a smaller size limit.
constexpr int kMaxNaiveN = 512;
// Modelled duration of one call, from the slowest measured speed of each kernel (BENCHMARKS.md,
// native ladder) and the number of kernel calls the timing loop makes; wasm runs 2-4x slower.
constexpr double kMaxModelledSeconds = 60;

int max_n_of(const gemm::Kernel& kernel) { return std::string_view(kernel.name) == "naive" ? kMaxNaiveN : kMaxBenchN; }

json tiling_json(const gemm::Tiling& t) { return TALLY_MEMBERS(t, mr, nr, mc, kc, nc); }

void require_available(const gemm::Kernel& kernel) {
    if (!gemm::kernel_available(kernel))
        throw InputError("kernel", std::string(kernel.name) +
                                       " needs the relaxed-SIMD module (f32x4.relaxed_madd), which this engine "
                                       "instance was not given (the browser lacks relaxed SIMD or the host did "
                                       "not load it); use simd");
}

using namespace arg;
constexpr Arg kSeed = integer("seed", "", 0, 1LL << 40, "1", "seed of the deterministic inputs");
constexpr Arg kCacheBytes{"cache_bytes",
                          Num,
                          "bytes",
                          0,
                          kNo,
                          "1048576",
                          "the cache the traffic model assumes (1 MiB: a Zen 4/5 core's L2)",
                          nullptr,
                          nullptr,
                          true};
constexpr std::array kBenchArgs{
    text("kernel", "all", "all, or a comma-separated list of kernel names (see gemm_kernels)"),
    Arg{"n", Any, "", 1, kMaxBenchN, "256", "the size, or a list of 1 to 16 sizes"},
    integer("m", "", 1, 8192, "depends: n (square)", "rows of A and C (fewer: one worker's stripe)"),
    integer("reps", "", 1, 100, "5", "timed repetitions"),
    integer("warmup", "", 0, 100, "3", "untimed repetitions first"),
    Arg{"min_sample_ms", Num, "ms", 0, 10000, "20", "shortest timed sample", nullptr, nullptr, true},
    kSeed,
    kCacheBytes,
};
constexpr std::array kRunArgs{
    integer("m", "", 1, 4096, "required", "rows of A and C"),
    integer("n", "", 1, 4096, "required", "columns of B and C"),
    integer("k", "", 1, 4096, "required", "the shared dimension"),
    text("kernel", "required", "a kernel name (see gemm_kernels)"),
    kSeed,
    integer("entries", "", 0, 4096, "64", "values of C returned"),
};
constexpr std::array kIntensityArgs{
    integer("n", "", 1, 1 << 16, "1024", "the size"),
    number("cache_bytes", "bytes", "1048576", kCacheBytes.doc),
    number("peak_flops_per_s", "FLOP/s", "none", "with bandwidth: the roofline bound"),
    number("bandwidth_bytes_per_s", "bytes/s", "none", "with peak: the roofline bound"),
};
constexpr std::array kKernelsResult = std::to_array<Field>({
    {"relaxed_simd", "", "whether this instance runs the relaxed-SIMD kernel"},
    {"kernels", "", "{number, name, adds, ...} per kernel of the ladder"},
    {"isa", "", "the SIMD instruction set of the simd kernels"},
    {"lanes", "", "float lanes per SIMD register"},
    {"fma", "", "whether the SIMD kernels fuse multiply-add"},
});
constexpr std::array kBenchResult = std::to_array<Field>({
    {"isa", "", "the SIMD instruction set of the simd kernels"},
    {"cache_bytes", "bytes", "the cache the traffic model assumed"},
    {"rows", "", "per kernel and size: flops_per_s (median, min, max), check, ratio_to_best"},
    {"skipped", "", "kernels skipped at a size, with the reason"},
});
constexpr std::array kRunResult = std::to_array<Field>({
    {"values", "", "the first entries of C"},
    {"checksum", "", "a checksum of C"},
    {"check", "", "the comparison with the reference kernel"},
    {"kernel", "", "the kernel run"},
    {"m", "", "rows of A and C"},
    {"n", "", "columns of B and C"},
    {"k", "", "the shared dimension"},
    {"seed", "", "seed of the deterministic inputs"},
});
constexpr std::array kIntensityResult = std::to_array<Field>({
    {"cache_bytes", "bytes", "the cache the traffic model assumed"},
    {"rows", "", "per kernel: the traffic model at n (bytes, intensity, and the bound given a roof)"},
    {"compulsory_intensity", "FLOP/byte", "the intensity at compulsory traffic (each matrix moved once)"},
});

std::vector<const gemm::Kernel*> kernels_arg(const json& args) {
    const std::string name = optional_string_arg(args, "kernel").value_or("all");
    std::vector<const gemm::Kernel*> out;
    if (name == "all") {  // every kernel this instance can run (simd-relaxed only with its module)
        for (const gemm::Kernel& kernel : gemm::kernels())
            if (gemm::kernel_available(kernel)) out.push_back(&kernel);
        return out;
    }
    // one name, or several separated by commas ("ikj,simd")
    std::size_t start = 0;
    while (start <= name.size()) {
        const std::size_t comma = std::min(name.find(',', start), name.size());
        const std::string item = name.substr(start, comma - start);
        const gemm::Kernel* kernel = gemm::find_kernel(item);
        if (kernel == nullptr)
            throw InputError("kernel", "kernel must be all or a comma-separated list of " + gemm::kernel_names() +
                                           ", got \"" + name + "\"");
        require_available(*kernel);
        out.push_back(kernel);
        start = comma + 1;
    }
    return out;
}

// n: one integer or an array of integers, each in [1, kMaxBenchN].
std::vector<int> sizes_arg(const json& args, int fallback) {
    std::vector<int> out;
    if (!args.contains("n")) return {fallback};
    const json& value = args.at("n");
    if (value.is_array()) {
        if (value.empty() || value.size() > 16) throw InputError("n", "n must list 1 to 16 sizes");
        for (const json& item : value) {
            if (!item.is_number())
                throw InputError("n", "n must be integers in [1, " + std::to_string(kMaxBenchN) + "]");
            out.push_back(static_cast<int>(require_integer("n", item.get<double>(), 1, kMaxBenchN)));
        }
        return out;
    }
    out.push_back(static_cast<int>(integer_arg(args, "n", 1, kMaxBenchN)));
    return out;
}

json check_json(const gemm::CheckResult& check) {
    return {{"max_abs_err", check.max_abs_err},
            {"tolerance", check.max_tolerance},
            {"worst_error_over_tolerance", check.worst_ratio},
            {"checked_entries", check.checked},
            {"ok", check.ok}};
}

json gemm_kernels(const json&) {
    json list = json::array();
    for (const gemm::Kernel& kernel : gemm::kernels()) {
        list.push_back(json{{"traffic_model", kernel.traffic == gemm::Traffic::Unblocked ? "unblocked" : "blocked"},
                            {"multithreaded", std::string_view(kernel.name) == "simd-mt"},
                            {"available", gemm::kernel_available(kernel)},
                            {"tiling", tiling_json(kernel.tiling)}});
        list.back().update(TALLY_MEMBERS(kernel, number, name, adds));
    }
    return {{"isa", gemm::simd_isa()},
            {"lanes", gemm::simd_lanes()},
            {"fma", gemm::simd_has_fma()},
            {"relaxed_simd", gemm::relaxed_simd_available()},
            {"kernels", list}};
}

// {n: int | [int], m?: rows of A and C (default n: square; fewer for one worker's stripe of C),
//  kernel: name | "all", reps: 5, warmup: 3, min_sample_ms: 20, seed: 1, cache_bytes}
json gemm_bench(const json& args) {
    const auto kernels = kernels_arg(args);
    const auto sizes = sizes_arg(args, 256);
    const auto rows_m = optional_arg_int(args, kBenchArgs[2]);
    const int reps = static_cast<int>(arg_int(args, kBenchArgs[3]));
    const int warmup = static_cast<int>(arg_int(args, kBenchArgs[4]));
    const double min_sample_ms = arg_number(args, kBenchArgs[5]);
    require_in_left_open("min_sample_ms", min_sample_ms, 0.0, 10000.0);
    const auto seed = static_cast<std::uint64_t>(arg_int(args, kSeed));
    const double cache_bytes = optional_number_arg(args, "cache_bytes").value_or(kDefaultCacheBytes);
    require_positive("cache_bytes", cache_bytes);
    // A kernel named explicitly must allow every size; "all" skips the sizes a kernel does not allow.
    const bool all_kernels = optional_string_arg(args, "kernel").value_or("all") == "all";
    json skipped = json::array();
    double modelled_seconds = 0;
    for (int n : sizes)
        for (const gemm::Kernel* kernel : kernels) {
            if (n > max_n_of(*kernel)) {
                if (!all_kernels)
                    throw InputError("n", std::string("n must be at most ") + std::to_string(max_n_of(*kernel)) +
                                              " for the " + kernel->name + " kernel (larger sizes take minutes), got " +
                                              std::to_string(n));
                skipped.push_back({{"kernel", kernel->name},
                                   {"n", n},
                                   {"reason", "n above the kernel's limit of " + std::to_string(max_n_of(*kernel))}});
                continue;
            }
            modelled_seconds += gemm::modelled_bench_seconds(
                gemm::modelled_call_seconds(*kernel, rows_m ? static_cast<int>(*rows_m) : n, n, n), reps,
                min_sample_ms);
        }
    if (modelled_seconds > kMaxModelledSeconds)
        throw InputError("n", "this benchmark would take about " + format_number(std::ceil(modelled_seconds)) +
                                  " s; the limit is " + format_number(kMaxModelledSeconds) +
                                  " s: ask for fewer or smaller sizes, fewer kernels, reps or a shorter min_sample_ms");
    json rows = json::array();
    for (int n : sizes) {
        std::vector<json> size_rows;
        double best = 0;
        for (const gemm::Kernel* kernel : kernels) {
            if (n > max_n_of(*kernel)) continue;
            const int m = rows_m ? static_cast<int>(*rows_m) : n;
            const gemm::BenchRow row = gemm::bench(*kernel, m, n, n, reps, warmup, min_sample_ms * 1e-3, seed);
            const roofline::Traffic traffic =
                roofline::kernel_traffic(kernel->traffic, kernel->tiling, m, n, n, cache_bytes);
            best = std::max(best, row.flops_per_s);
            size_rows.push_back(json{{"max_abs_err", row.check.max_abs_err},
                                     {"tolerance", row.check.max_tolerance},
                                     {"correct", row.check.ok},
                                     {"flops", traffic.flops},
                                     {"bytes", traffic.bytes},
                                     {"intensity", traffic.intensity}});
            size_rows.back().update(TALLY_MEMBERS(row, kernel, number, m, n, flops_per_s, flops_per_s_min,
                                                  flops_per_s_max, median_s, samples));
        }
        for (json& row : size_rows) {
            row["ratio_to_best"] = row["flops_per_s"].get<double>() / best;
            rows.push_back(std::move(row));
        }
    }
    json out = {{"isa", gemm::simd_isa()}, {"cache_bytes", cache_bytes}, {"rows", rows}};
    if (!skipped.empty()) out["skipped"] = skipped;
    return out;
}

// One multiplication on deterministic inputs, for comparing builds: {m, n, k, kernel, seed, entries}
// -> the first `entries` values of C in row-major order, a checksum and the reference check.
json gemm_run(const json& args) {
    const int m = static_cast<int>(arg_int(args, kRunArgs[0]));
    const int n = static_cast<int>(arg_int(args, kRunArgs[1]));
    const int k = static_cast<int>(arg_int(args, kRunArgs[2]));
    const std::string name = string_arg(args, "kernel");
    const gemm::Kernel* kernel = gemm::find_kernel(name);
    if (kernel == nullptr)
        throw InputError("kernel", "kernel must be one of " + gemm::kernel_names() + ", got \"" + name + "\"");
    require_available(*kernel);
    const auto seed = static_cast<std::uint64_t>(arg_int(args, kSeed));
    const auto entries = arg_int(args, kRunArgs[5]);
    // Same bounds as gemm_bench: the matrices' memory and one call's modelled time.
    const double elements = static_cast<double>(m) * k + static_cast<double>(k) * n + static_cast<double>(m) * n;
    if (elements > 3.0 * kMaxBenchN * kMaxBenchN)
        throw InputError("m", "m*k + k*n + m*n must be at most " + format_number(3.0 * kMaxBenchN * kMaxBenchN) +
                                  " elements (48 MiB of fp32), got " + format_number(elements));
    const double call_seconds = gemm::modelled_call_seconds(*kernel, m, n, k);
    if (call_seconds > kMaxModelledSeconds / 10)
        throw InputError("m", std::string("m*n*k is too large for the ") + kernel->name + " kernel: about " +
                                  format_number(std::ceil(call_seconds)) + " s; the limit is " +
                                  format_number(kMaxModelledSeconds / 10) + " s");
    std::vector<float> A(static_cast<std::size_t>(m) * k), B(static_cast<std::size_t>(k) * n),
        C(static_cast<std::size_t>(m) * n);
    gemm::fill_uniform(A, seed);
    gemm::fill_uniform(B, seed + 1);
    kernel->fn(m, n, k, A.data(), B.data(), C.data());
    double checksum = 0;
    for (float value : C) checksum += value;
    json values = json::array();
    for (std::int64_t i = 0; i < entries && i < static_cast<std::int64_t>(C.size()); ++i) values.push_back(C[i]);
    return {{"kernel", kernel->name},
            {"m", m},
            {"n", n},
            {"k", k},
            {"seed", seed},
            {"values", values},
            {"checksum", checksum},
            {"check", check_json(gemm::check_against_reference(m, n, k, A.data(), B.data(), C.data()))}};
}

// {n, cache_bytes, peak_flops_per_s?, bandwidth_bytes_per_s?}: the traffic model of every kernel at
// size n and, given a peak and a bandwidth (both or neither), the roofline bound it implies.
json gemm_intensity(const json& args) {
    const int n = static_cast<int>(arg_int(args, kIntensityArgs[0]));
    const double cache_bytes = optional_number_arg(args, "cache_bytes").value_or(kDefaultCacheBytes);
    const auto peak = optional_number_arg(args, "peak_flops_per_s");
    const auto bandwidth = optional_number_arg(args, "bandwidth_bytes_per_s");
    if (peak.has_value() != bandwidth.has_value())
        throw InputError(peak ? "bandwidth_bytes_per_s" : "peak_flops_per_s",
                         "give both peak_flops_per_s and bandwidth_bytes_per_s, or neither");
    if (peak) {
        require_positive("peak_flops_per_s", *peak);
        require_positive("bandwidth_bytes_per_s", *bandwidth);
    }
    json rows = json::array();
    for (const gemm::Kernel& kernel : gemm::kernels()) {
        const roofline::Traffic t = roofline::kernel_traffic(kernel.traffic, kernel.tiling, n, n, n, cache_bytes);
        json row = {
            {"kernel", kernel.name}, {"n", n}, {"flops", t.flops}, {"bytes", t.bytes}, {"intensity", t.intensity}};
        if (peak) {
            row["attainable_flops_per_s"] = roofline::attainable(t.intensity, *peak, *bandwidth);
            row["bound"] = roofline::to_string(roofline::bound(t.intensity, *peak, *bandwidth));
        }
        rows.push_back(std::move(row));
    }
    const roofline::Traffic ideal = roofline::matmul_min_traffic(n, n, n, 4);
    return {{"cache_bytes", cache_bytes}, {"rows", rows}, {"compulsory_intensity", ideal.intensity}};
}

constexpr Method kMethods[] = {
    {"gemm_kernels",
     gemm_kernels,
     "the GEMM ladder: kernel names, what each adds, tilings, SIMD ISA",
     {},
     kKernelsResult,
     true},
    {"gemm_bench", gemm_bench,
     "time GEMM kernels on n x n x n: {n: int|[int], kernel: name|all, reps, warmup, min_sample_ms} -> rows "
     "{kernel, n, flops_per_s, max_abs_err, intensity}",
     kBenchArgs, kBenchResult, true},
    {"gemm_run", gemm_run, "one GEMM on deterministic inputs: {m, n, k, kernel, seed, entries} -> values of C",
     kRunArgs, kRunResult, true},
    {"gemm_intensity", gemm_intensity,
     "modelled main-memory traffic and arithmetic intensity of each kernel, and its roofline bound for a given "
     "peak and bandwidth",
     kIntensityArgs, kIntensityResult, true},
};

}  // namespace

std::span<const Method> gemm_methods() { return kMethods; }

}  // namespace tally::api
