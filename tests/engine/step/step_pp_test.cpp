// Pipeline schedules as torch.distributed.pipelining runs them for torchtitan (engine/src/step/step_pp.cpp): the looped
// schedules' lock-step grid against its closed form, and the interleaved over 1F1B speed-up torchtitan published.
#include <catch2/catch.hpp>

#include <cmath>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/step/step_pp.h"

using namespace tally;
using tally_test::error_field;
using tally_test::modern_run;

namespace {

// A run's step_time arguments: its args less what only the validation table reads (dp, local_batch, fsdp).
nlohmann::json step_args(const nlohmann::json& run) {
    nlohmann::json args = run["args"];
    for (const char* key : {"dp", "local_batch", "fsdp"}) args.erase(key);
    return args;
}

double per_gpu(const nlohmann::json& args) {
    const nlohmann::json r = api::invoke("step_time", args);
    return r["tokens_per_second"].get<double>() / args["gpus"].get<double>();
}

}  // namespace

TEST_CASE("the lock-step grid costs one chunk forward and 2(p-2) transfers beyond interleaved 1F1B's bubble") {
    // Narayanan et al. 2021 sec. 2.2.2: interleaved 1F1B runs v·m chunk passes and idles (p-1)(F+B) in chunk units.
    for (const std::int64_t p : {2, 3, 4, 8, 16})
        for (const std::int64_t v : {2, 3, 4})
            for (const std::int64_t m : {p, 2 * p, 4 * p})
                for (const double backward : {2.0, 3.0}) {  // without and with full recomputation, forward = 1
                    const double ideal = static_cast<double>(v * m + p - 1) * (1 + backward);
                    const LockstepExtra extra = lockstep_grid_extra(p, v, m);
                    const double free_links = lockstep_grid_makespan(p, v, m, 1, backward, 0);
                    const double slow_links = lockstep_grid_makespan(p, v, m, 1, backward, 1e-3);
                    INFO("p " << p << " v " << v << " m " << m << " B " << backward);
                    CHECK(free_links == Approx(ideal + extra.chunk_forwards).epsilon(1e-12));
                    CHECK((slow_links - free_links) / 1e-3 ==
                          Approx(static_cast<double>(2 * v * m) + extra.transfers).epsilon(1e-6));
                }
    // The single-stage schedules (Schedule1F1B) and one micro-batch pay nothing more.
    CHECK(lockstep_grid_extra(8, 1, 8).chunk_forwards == 0);
    CHECK(lockstep_grid_extra(8, 2, 1).chunk_forwards == 0);
    CHECK(lockstep_grid_makespan(4, 2, 1, 1, 3, 0) == Approx(static_cast<double>(2 + 3) * 4));
    // Uneven rounds (m > p, not a multiple): the grid waits 8 chunk forwards more at p = 8, v = 2, m = 12, which the
    // closed form does not claim to cover and step_time leaves uncharged.
    CHECK(lockstep_grid_makespan(8, 2, 12, 1, 3, 0) == Approx(static_cast<double>(2 * 12 + 7) * 4 + 8));
    CHECK(lockstep_grid_extra(8, 2, 12).chunk_forwards == 0);
}

TEST_CASE("torchtitan Llama 3.1 405B on 512 H100: interleaved 1F1B 1.28x 1F1B (128 over 100 tokens/s per GPU)") {
    // benchmarks/llama3_h100_202412_torchtitan.md, Table 5 (torchtitan 820504e): FSDP 8, TP 8, PP 8, local batch 32,
    // full AC; both schedules split it into pp = 8 micro-batches (torchtitan 9dec370 build_pipeline_schedule).
    const nlohmann::json one = modern_run("torchtitan-llama3-405b-512gpu-fp8-1f1b");
    const nlohmann::json looped = modern_run("torchtitan-llama3-405b-512gpu-fp8-interleaved");
    REQUIRE(one["args"]["micro_batch"] == 4);
    REQUIRE(looped["args"]["micro_batch"] == 4);
    const double published =
        looped["published"]["value"].get<double>() / one["published"]["value"].get<double>();  // 1.28
    const double predicted = per_gpu(step_args(looped)) / per_gpu(step_args(one));
    INFO("published " << published << ", predicted " << predicted);
    CHECK(std::fabs(predicted - published) / published < 0.03);
    // The interleaved run's bubble: the formula's (p-1)/(v·m) of the busiest stage's micro-batches plus one chunk
    // forward (a quarter of a chunk pass under full recomputation); 1F1B's is the formula's alone.
    const nlohmann::json r = api::invoke("step_time", step_args(looped));
    const double stage = r["microbatch_seconds"].get<double>(), m = r["microbatches"].get<double>();
    CHECK(m == 8);
    CHECK(tally_test::breakdown_seconds(r, "bubble") == Approx(7.0 / 16 * m * stage + stage / (2 * 4)));
    const nlohmann::json r1 = api::invoke("step_time", step_args(one));
    CHECK(tally_test::breakdown_seconds(r1, "bubble") == Approx(7.0 / 8 * 8 * r1["microbatch_seconds"].get<double>()));
}

TEST_CASE("lock-step grid input errors name their field") {
    CHECK(error_field([] { lockstep_grid_makespan(1, 2, 8, 1, 2, 0); }) == "pp");
    CHECK(error_field([] { lockstep_grid_makespan(4, 1, 8, 1, 2, 0); }) == "interleave");
    CHECK(error_field([] { lockstep_grid_makespan(4, 2, 0, 1, 2, 0); }) == "microbatches");
    CHECK(error_field([] { lockstep_grid_makespan(4, 2, 9, 1, 2, 0); }) == "microbatches");  // 2 rounds
}
