// Micro-benchmark of the accounting engine: one full evaluation for a configuration (memory budget
// + FLOPs), the quantity the page recomputes on every slider move. Reports the median over
// repeated samples, for the C++ functions and for the JSON API call the widgets make.
//
//   build/native/tally_accounting_bench [--model llama-3-70b] [--samples 31] [--min-sample-ms 20]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "median.h"
#include "tally/api.h"
#include "tally/compute/flops.h"
#include "tally/memory/memory.h"
#include "tally/model/model.h"

namespace {

volatile std::uint64_t g_sink = 0;  // keeps the results alive

// Median seconds per call of fn over `samples` samples, each repeating fn for >= min_sample_s (100 calls warm up).
template <typename Fn>
double median_per_call(Fn fn, int samples, double min_sample_s) {
    return tally::bench::median_per_call(fn, samples, min_sample_s, 100);
}

}  // namespace

int run(int argc, char** argv);

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "tally_accounting_bench: %s\n", error.what());
        return 2;
    }
}

int run(int argc, char** argv) {
    std::string model = "llama-3-70b";
    int samples = 31;
    double min_sample_ms = 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--model"))
            model = argv[i + 1];
        else if (!std::strcmp(argv[i], "--samples"))
            samples = std::max(1, std::atoi(argv[i + 1]));
        else if (!std::strcmp(argv[i], "--min-sample-ms"))
            min_sample_ms = std::atof(argv[i + 1]);
        else {
            std::fprintf(stderr, "usage: tally_accounting_bench [--model ID] [--samples N] [--min-sample-ms MS]\n");
            return 2;
        }
    }
    const nlohmann::json args = {{"model", model},
                                 {"seq", 8192},
                                 {"micro_batch", 1},
                                 {"gpus", 1024},
                                 {"tp", 8},
                                 {"pp", 4},
                                 {"zero", 1},
                                 {"sequence_parallel", true},
                                 {"recompute", "selective"},
                                 {"flash_attention", true},
                                 {"global_batch", 1024},
                                 {"hardware", "h100-sxm"}};
    const tally::ModelConfig config = tally::resolve_model(args);
    tally::TrainingSetup setup;
    setup.seq = 8192;
    setup.gpus = 1024;
    setup.tp = 8;
    setup.pp = 4;
    setup.zero = 1;
    setup.sequence_parallel = true;
    setup.recompute = tally::Recompute::Selective;
    setup.flash_attention = true;
    setup.global_batch = 1024;
    tally::FlopsInput flops_in;
    flops_in.seq = 8192;
    flops_in.recompute = tally::Recompute::Selective;
    flops_in.flash_attention = true;

    const double core = median_per_call(
        [&] {
            const auto budget = tally::memory_budget(config, setup);
            const auto flops = tally::count_flops(config, flops_in);
            g_sink = g_sink + budget.bytes.total + static_cast<std::uint64_t>(flops.forward_per_token);
        },
        samples, min_sample_ms / 1e3);
    const std::string memory_text = args.dump();
    const std::string flops_text =
        nlohmann::json{{"model", model}, {"seq", 8192}, {"tokens", 15e12}, {"recompute", "selective"}}.dump();
    const double api = median_per_call(
        [&] {
            g_sink = g_sink + tally::api::call("memory_budget", memory_text).size() +
                     tally::api::call("flops", flops_text).size();
        },
        samples, min_sample_ms / 1e3);

    std::printf("model %s, seq 8192, 1024 GPUs (tp 8, pp 4, dp 32), ZeRO 1, SP, selective recompute, FlashAttention\n",
                model.c_str());
    std::printf("memory_budget + count_flops (C++):            %8.2f us per evaluation (median of %d samples)\n",
                core * 1e6, samples);
    std::printf("API memory_budget + flops (JSON text in/out,  %8.2f us per evaluation\n", api * 1e6);
    std::printf("  including memory_budget's min_gpus search, ~log2(dp) extra budgets)\n");
    return 0;
}
