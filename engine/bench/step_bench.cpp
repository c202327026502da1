// Benchmark of the step-time model and the planner through the JSON API (what the widget calls): the median
// over samples of one step_time call and of one full plan. The wasm twin is engine/bench/step_bench.mjs.
//
//   build/native/tally_step_bench [--samples 15]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "median.h"
#include "tally/api.h"

namespace {

volatile std::size_t g_sink = 0;

// Median seconds of one call over `samples` samples of at least 50 ms each.
double median_call(const char* method, const std::string& args, int samples) {
    return tally::bench::median_per_call([&] { g_sink = g_sink + tally::api::call(method, args).size(); }, samples,
                                         0.05);
}

// The "evaluated" field of a plan's answer, as text.
std::string evaluated_count(const std::string& args) {
    const std::string envelope = tally::api::call("plan", args);
    const auto at = envelope.find("\"evaluated\":");
    if (at == std::string::npos) return "?";
    return envelope.substr(at + 12, envelope.find(',', at) - at - 12);
}

}  // namespace

int main(int argc, char** argv) {
    int samples = 15;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--samples") == 0) samples = std::max(1, std::atoi(argv[i + 1]));
    const std::string step = R"({"model":"llama-3-70b","hardware":"h100-sxm","gpus":64,"tp":4,"pp":4,"seq":8192,)"
                             R"("global_batch":512,"flash_attention":true,"sequence_parallel":true,"zero":1})";
    const std::string plan =
        R"({"model":"llama-3-70b","hardware":"h100-sxm","gpus":1024,"seq":8192,"global_batch":1024})";
    // A mixture of experts adds the expert-parallel degree to the search (the wasm twin runs the same).
    const std::string moe_plan =
        R"({"model":"mixtral-8x7b","hardware":"h100-sxm","gpus":1024,"seq":4096,"global_batch":1024})";
    std::printf("step_time (llama-3-70b, 64 H100, t4 p4): %.1f us\n", 1e6 * median_call("step_time", step, samples));
    std::printf("plan (llama-3-70b, 1024 H100, %s layouts): %.2f ms\n", evaluated_count(plan).c_str(),
                1e3 * median_call("plan", plan, samples));
    std::printf("plan (mixtral-8x7b, 1024 H100, %s layouts): %.2f ms\n", evaluated_count(moe_plan).c_str(),
                1e3 * median_call("plan", moe_plan, samples));
    return 0;
}
