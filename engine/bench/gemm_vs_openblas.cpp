// GEMM ladder vs OpenBLAS cblas_sgemm, single-threaded, same inputs, same process.
//
// Build: cmake --build build/native --target tally_gemm_vs_openblas
// Run:   OPENBLAS_NUM_THREADS=1 build/native/tally_gemm_vs_openblas --n 1024,2048 --runs 7
//        build/native/tally_gemm_vs_openblas --threads 2 --kernels simd-mt   (both on 2 cores)
//
// For each size: R runs; in each run, OpenBLAS and the chosen kernels are warmed up and then timed
// in alternation (reps calls each, median per kernel), so a noisy neighbour slows both alike; the
// ratio kernel / OpenBLAS is taken within the run. Prints median [min, max] over the runs of the
// GFLOP/s and of the ratio, and the max difference between each kernel's C and OpenBLAS's.
//
// Equal terms: every contender gets the same warm-up rule (tally's gemm_bench rule: at least one call,
// then more while a call is over 10 % faster than the best so far, at most 40), the same resident inputs
// and preallocated C, and the same timed region (one call, nothing else); the order of the contenders
// rotates from run to run. The header prints the conditions: the kernel OpenBLAS chose (its core name),
// every OPENBLAS_/GOTO_/OMP_ environment variable, threads, the CPU, the UTC time and the load average,
// which is printed again at the end, and the process's nice value. OPENBLAS_CORETYPE forces OpenBLAS's kernel: leave it unset for the
// library as installed.
#include <cblas.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "tally/gemm.h"

extern "C" {
void openblas_set_num_threads(int);
char* openblas_get_config(void);
char* openblas_get_corename(void);
}

namespace {

struct Summary {
    double median, min, max;
};

Summary summarize(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t mid = v.size() / 2;
    return {v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]), v.front(), v.back()};
}

std::vector<int> parse_list(const char* text) {
    std::vector<int> out;
    std::string item;
    for (const char* p = text;; ++p) {
        if (*p == ',' || *p == '\0') {
            out.push_back(std::atoi(item.c_str()));
            item.clear();
            if (*p == '\0') break;
        } else {
            item += *p;
        }
    }
    return out;
}

std::string first_line(const char* path, const char* prefix) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);)
        if (line.rfind(prefix, 0) == 0) {
            const std::size_t colon = line.find(':');
            return colon == std::string::npos ? line : line.substr(line.find_first_not_of(" \t", colon + 1));
        }
    return "(unknown)";
}

// The load average (1, 5, 15 min) and the UTC time, for the conditions printed beside each figure.
void print_load(const char* when) {
    const std::time_t t = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", std::gmtime(&t));
    std::printf("%s: %s UTC, load average %s\n", when, stamp, first_line("/proc/loadavg", "").substr(0, 14).c_str());
}

// Warm-up rule shared by every contender (tally's gemm_bench rule, engine/kernels/gemm.cpp time_kernel):
// at least one call, then more while a call beats the best so far by over 10 %, at most 40 calls.
template <class Fn>
int warm_up(Fn&& fn) {
    double best = INFINITY;
    int calls = 0;
    while (calls < 40) {
        const double start = tally::gemm::now_s();
        fn();
        const double elapsed = tally::gemm::now_s() - start;
        ++calls;
        const bool faster = elapsed < 0.9 * best;
        best = std::min(best, elapsed);
        if (!faster) break;
    }
    return calls;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<int> sizes = {1024, 2048};
    int runs = 7, reps = 3, threads = 1;
    std::vector<std::string> names = {"packed", "simd"};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--n"))
            sizes = parse_list(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--runs"))
            runs = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--reps"))
            reps = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--threads"))
            threads = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--kernels")) {
            names.clear();
            std::string all = argv[i + 1], item;
            for (char c : all + ",") {
                if (c == ',') {
                    names.push_back(item);
                    item.clear();
                } else
                    item += c;
            }
        } else {
            std::fprintf(stderr,
                         "usage: %s [--n 1024,2048] [--runs 7] [--reps 3] [--kernels packed,simd] [--threads 1]\n",
                         argv[0]);
            return 2;
        }
    }
    if (runs < 1 || reps < 1 || threads < 1) return 2;
    std::vector<const tally::gemm::Kernel*> kernels;
    for (const auto& name : names) {
        const auto* kernel = tally::gemm::find_kernel(name);
        if (!kernel) {
            std::fprintf(stderr, "unknown kernel %s (one of %s)\n", name.c_str(), tally::gemm::kernel_names().c_str());
            return 2;
        }
        kernels.push_back(kernel);
    }
    // Single-threaded unless --threads asks otherwise (then compare with --kernels simd-mt).
    openblas_set_num_threads(threads);
    std::printf("OpenBLAS %s, core %s, %d thread(s); tally SIMD ISA %s\n", openblas_get_config(),
                openblas_get_corename(), threads, tally::gemm::simd_isa());
    std::printf("CPU: %s; scheduling priority (nice) %d\n", first_line("/proc/cpuinfo", "model name").c_str(),
                getpriority(PRIO_PROCESS, 0));
    std::string env;
    for (char** e = environ; *e; ++e)
        if (!std::strncmp(*e, "OPENBLAS_", 9) || !std::strncmp(*e, "GOTO_", 5) || !std::strncmp(*e, "OMP_", 4))
            env += std::string(" ") + *e;
    std::printf("environment:%s\n", env.empty() ? " no OPENBLAS_/GOTO_/OMP_ variable set" : env.c_str());
    print_load("start");
    std::printf(
        "%d runs per size; per run, each contender in turn (order rotating): warm-up (>= 1 call, more while over 10 %% "
        "faster, <= 40), then the median of %d timed calls (one call each, inputs resident, C preallocated)\n\n",
        runs, reps);
    bool all_ok = true;
    for (int n : sizes) {
        const std::size_t count = static_cast<std::size_t>(n) * n;
        std::vector<float> A(count), B(count), C_blas(count), C(count);
        tally::gemm::fill_uniform(A, 1);
        tally::gemm::fill_uniform(B, 2);
        const double flops = 2.0 * n * double(n) * n;
        auto blas = [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A.data(), n, B.data(), n, 0.0f,
                        C_blas.data(), n);
        };
        auto time_one = [&](auto&& fn) {
            std::vector<double> t;
            for (int r = 0; r < reps; ++r) {
                const double start = tally::gemm::now_s();
                fn();
                t.push_back(tally::gemm::now_s() - start);
            }
            return summarize(t).median;
        };
        // correctness first: every kernel against OpenBLAS and against the double reference
        blas();
        const auto blas_check = tally::gemm::check_against_reference(n, n, n, A.data(), B.data(), C_blas.data());
        std::printf("n = %d: OpenBLAS max error vs double reference %.2e (%s)\n", n, blas_check.max_abs_err,
                    blas_check.ok ? "ok" : "OUT OF TOLERANCE");
        for (const auto* kernel : kernels) {
            kernel->fn(n, n, n, A.data(), B.data(), C.data());
            double diff = 0;
            for (std::size_t i = 0; i < count; ++i) diff = std::max(diff, double(std::fabs(C[i] - C_blas[i])));
            const auto check = tally::gemm::check_against_reference(n, n, n, A.data(), B.data(), C.data());
            all_ok = all_ok && check.ok;
            std::printf("  %-8s max |C - C_openblas| %.2e, max error vs double reference %.2e (%s)\n", kernel->name,
                        diff, check.max_abs_err, check.ok ? "ok" : "OUT OF TOLERANCE");
        }
        std::vector<double> blas_gf;
        std::vector<std::vector<double>> gf(kernels.size()), ratio(kernels.size());
        std::vector<int> warm_calls(kernels.size() + 1, 0);
        const std::size_t contenders = kernels.size() + 1;  // 0 is OpenBLAS
        for (int run = 0; run < runs; ++run) {
            std::vector<double> seconds(contenders);
            for (std::size_t turn = 0; turn < contenders; ++turn) {
                const std::size_t who = (turn + static_cast<std::size_t>(run)) % contenders;
                auto fn = [&] {
                    if (who == 0)
                        blas();
                    else
                        kernels[who - 1]->fn(n, n, n, A.data(), B.data(), C.data());
                };
                warm_calls[who] = std::max(warm_calls[who], warm_up(fn));
                seconds[who] = time_one(fn);
            }
            blas_gf.push_back(flops / seconds[0] * 1e-9);
            for (std::size_t q = 0; q < kernels.size(); ++q) {
                gf[q].push_back(flops / seconds[q + 1] * 1e-9);
                ratio[q].push_back(seconds[0] / seconds[q + 1]);
            }
        }
        std::printf("  warm-up calls per run, at most: openblas %d", warm_calls[0]);
        for (std::size_t q = 0; q < kernels.size(); ++q) std::printf(", %s %d", kernels[q]->name, warm_calls[q + 1]);
        std::printf("\n");
        const Summary b = summarize(blas_gf);
        std::printf("  %-8s %7.1f GFLOP/s [%.1f, %.1f]\n", "openblas", b.median, b.min, b.max);
        for (std::size_t q = 0; q < kernels.size(); ++q) {
            const Summary g = summarize(gf[q]), r = summarize(ratio[q]);
            std::printf("  %-8s %7.1f GFLOP/s [%.1f, %.1f]   ratio to OpenBLAS %.3f [%.3f, %.3f]\n", kernels[q]->name,
                        g.median, g.min, g.max, r.median, r.min, r.max);
        }
        std::printf("\n");
    }
    print_load("end");
    return all_ok ? 0 : 1;
}
