// Tests of engine/src/plan.cpp: the planner returns fitting layouts, fastest first.
#include <catch2/catch.hpp>

#include "accounting_helpers.h"
#include "tally/hardware.h"
#include "tally/plan.h"

using namespace tally;
using tally_test::error_field;
using tally_test::preset;

TEST_CASE("plan: best layouts fit in memory, are sorted by throughput, and the losers are explained") {
    const ModelConfig c = preset("llama-3-70b");
    const Hardware hw = find_hardware("h100-sxm");
    PlanInput in;
    in.base.setup.gpus = 64, in.base.setup.seq = 8192, in.base.setup.global_batch = 512;
    in.base.setup.flash_attention = true;
    in.top = 4;
    const PlanResult p = plan_layouts(c, hw, in);
    REQUIRE(p.best.size() == 4);
    CHECK(p.fit + p.rejected_memory == p.evaluated);
    for (std::size_t i = 0; i < p.best.size(); ++i) {
        CHECK(p.best[i].memory_bytes <= hw.memory_bytes);
        if (i > 0) CHECK(p.best[i].result.tokens_per_second <= p.best[i - 1].result.tokens_per_second);
    }
    // 70B with 16 B/param of state cannot sit on one GPU per replica: tp·pp = 1 never fits.
    CHECK(p.best.front().layout.setup.tp * p.best.front().layout.setup.pp > 1);
    std::int64_t explained = 0;
    for (const PlanLoser& l : p.losers) explained += l.count;
    CHECK(explained == p.fit - 4 + p.rejected_memory);
}

TEST_CASE("plan: a model that fits nowhere names gpus") {
    PlanInput in;
    in.base.setup.gpus = 1;
    CHECK(error_field([&] { plan_layouts(preset("llama-3-405b"), find_hardware("h100-sxm"), in); }) == "gpus");
}

TEST_CASE("plan: a mixture of experts also chooses its expert-parallel degree") {
    const ModelConfig c = preset("mixtral-8x7b");
    const Hardware hw = find_hardware("h100-sxm");
    PlanInput in;
    in.base.setup.gpus = 32, in.base.setup.seq = 4096, in.base.setup.global_batch = 256;
    in.base.setup.flash_attention = true;
    in.top = 10;
    const PlanResult p = plan_layouts(c, hw, in);
    REQUIRE(!p.best.empty());
    bool sharded = false;
    for (const PlanEntry& e : p.best) {
        const TrainingSetup& st = e.layout.setup;
        CHECK(c.num_experts % st.ep == 0);
        CHECK((st.gpus / (st.tp * st.pp)) % st.ep == 0);
        sharded = sharded || st.ep > 1;
    }
    // Sharding the experts frees memory and the all-to-all stays in a node when tp·ep <= 8.
    CHECK(sharded);
}
