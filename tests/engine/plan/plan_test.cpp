// Tests of engine/src/plan/plan.cpp: the planner returns fitting layouts, fastest first.
#include <catch2/catch.hpp>

#include "accounting_helpers.h"
#include "tally/hardware/hardware.h"
#include "tally/plan/plan.h"

using namespace tally;
using tally_test::error_field;
using tally_test::preset;

namespace {

// The planner's input for `gpus` GPUs, `seq`-token sequences, `global_batch` sequences a step, with FlashAttention,
// asking for the `top` best layouts.
PlanInput planner_input(std::int64_t gpus, std::int64_t seq, std::int64_t global_batch, std::int64_t top) {
    PlanInput in;
    in.base.setup.gpus = gpus, in.base.setup.seq = seq, in.base.setup.global_batch = global_batch;
    in.base.setup.flash_attention = true;
    in.top = top;
    return in;
}

}  // namespace

TEST_CASE("plan: best layouts fit in memory, are sorted by throughput, and the losers are explained") {
    const ModelConfig c = preset("llama-3-70b");
    const Hardware hw = find_hardware("h100-sxm");
    const PlanInput in = planner_input(64, 8192, 512, 4);
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
    const PlanInput in = planner_input(32, 4096, 256, 10);
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

TEST_CASE("plan: each best layout's result and memory are bit for bit those of step_time and memory_budget alone") {
    // The planner reuses one FLOP count per recomputation choice and the plain budget for v = 1; evaluated on
    // their own, its 100 best layouts must give the same numbers (memory with the interleaved schedule's v).
    const ModelConfig c = preset("llama-3-70b");
    const Hardware hw = find_hardware("h100-sxm");
    PlanInput in;
    in.base.setup.gpus = 256, in.base.setup.seq = 4096, in.base.setup.global_batch = 512;
    in.top = 100;
    const PlanResult p = plan_layouts(c, hw, in);
    REQUIRE(p.best.size() == 100);
    std::int64_t interleaved = 0;
    for (const PlanEntry& e : p.best) {
        const StepResult alone = step_time(c, hw, e.layout);
        CHECK(e.result.step_seconds == alone.step_seconds);
        CHECK(e.result.mfu == alone.mfu);
        CHECK(e.result.hfu == alone.hfu);
        REQUIRE(e.result.breakdown.size() == alone.breakdown.size());
        for (std::size_t i = 0; i < alone.breakdown.size(); ++i)
            CHECK(e.result.breakdown[i].seconds == alone.breakdown[i].seconds);
        CHECK(e.layout.setup.virtual_stages == e.layout.interleave);
        const MemoryBudget mem = memory_budget(c, e.layout.setup);
        CHECK(e.memory_bytes == mem.bytes.total);
        CHECK(e.interleave_extra_bytes == mem.activations.interleave_extra_bytes);
        if (e.layout.interleave > 1 && mem.stage == std::string("first")) CHECK(e.interleave_extra_bytes > 0);
        interleaved += e.layout.interleave > 1;
    }
    CHECK(interleaved > 0);  // the sample covers the shared-budget path
}

TEST_CASE("plan: the search covers over a thousand layouts (micro-batch, recomputation, SP on/off, interleave, ZeRO)") {
    // 1,224 here, since an interleaved layout needs the 80 layers divisible by pp·v (Megatron-LM).
    PlanInput in;
    in.base.setup.gpus = 1024, in.base.setup.seq = 8192, in.base.setup.global_batch = 1024;
    const PlanResult p = plan_layouts(preset("llama-3-70b"), find_hardware("h100-sxm"), in);
    CHECK(p.evaluated > 1000);
    CHECK(p.fit + p.rejected_memory == p.evaluated);
}

TEST_CASE(
    "plan: sequence parallelism never needs more memory than the same layout without it (the planner skips on it)") {
    const Hardware hw = find_hardware("h100-sxm");
    for (const char* id : {"llama-3-70b", "mixtral-8x7b", "gpt3-175b"}) {
        const ModelConfig c = preset(id);
        for (Recompute rc : {Recompute::None, Recompute::Selective, Recompute::Full})
            for (bool flash : {false, true})
                for (std::int64_t tp : {2, 8})
                    for (std::int64_t pp : {1, 4})
                        for (std::int64_t b : {1, 4}) {
                            TrainingSetup st;
                            st.gpus = 256, st.tp = tp, st.pp = pp, st.seq = 4096, st.global_batch = 512,
                            st.micro_batch = b;
                            st.recompute = rc, st.flash_attention = flash, st.zero = 1;
                            st.sequence_parallel = true;
                            const std::uint64_t with_sp = memory_budget(c, st).bytes.total;
                            st.sequence_parallel = false;
                            CHECK(with_sp <= memory_budget(c, st).bytes.total);
                        }
    }
}

TEST_CASE("plan: interleaving's extra first-stage activations push a layout out of memory that fits without them") {
    // Llama 3 70B, t 8 · p 8 · b 1 with v = 2 chunks holds 1 + 7/16 of the plain schedule's layer activations on
    // its first stage (Korthikanti et al. 2022, sec. 4.2.3). With exactly that budget as capacity the layout fits;
    // one byte less and the planner drops it (it fitted both ways when interleaving counted as free).
    const ModelConfig c = preset("llama-3-70b");
    Hardware hw = find_hardware("h100-sxm");
    PlanInput in;
    in.base.setup.gpus = 64, in.base.setup.seq = 4096, in.base.setup.global_batch = 256;
    in.base.setup.flash_attention = true;
    TrainingSetup st = in.base.setup;
    st.tp = 8, st.pp = 8, st.zero = 1, st.sequence_parallel = true;
    const std::uint64_t plain = memory_budget(c, st).bytes.total;
    st.virtual_stages = 2;
    const MemoryBudget inter = memory_budget(c, st);
    REQUIRE(std::string(inter.stage) == "first");
    CHECK(inter.bytes.total - plain == inter.activations.interleave_extra_bytes);
    hw.memory_bytes = inter.bytes.total;
    const PlanResult fits = plan_layouts(c, hw, in);
    hw.memory_bytes = inter.bytes.total - 1;
    const PlanResult tight = plan_layouts(c, hw, in);
    CHECK(tight.evaluated == fits.evaluated);
    CHECK(tight.fit < fits.fit);
    CHECK(tight.rejected_memory > fits.rejected_memory);
    for (const PlanEntry& e : tight.best) CHECK(e.memory_bytes <= hw.memory_bytes);
}

TEST_CASE("plan: an interleaved layout splits every stage's layers evenly into its chunks, as Megatron-LM requires") {
    // Llama 3 70B has 80 layers: PP 8 gives 10 layers per stage, which 2 chunks split and 4, 6 or 8 do not.
    const ModelConfig c = preset("llama-3-70b");
    const PlanInput in = planner_input(64, 8192, 512, 100);
    const PlanResult p = plan_layouts(c, find_hardware("h100-sxm"), in);
    std::int64_t interleaved = 0;
    for (const PlanEntry& e : p.best) {
        const std::int64_t pp = e.layout.setup.pp, v = e.layout.interleave;
        if (v == 1) continue;
        ++interleaved;
        INFO("pp " << pp << ", " << v << " chunks per stage");
        CHECK(c.num_layers % pp == 0);
        CHECK((c.num_layers / pp) % v == 0);
    }
    CHECK(interleaved > 0);  // the check above ran on some interleaved layouts
}

TEST_CASE("plan: with the embedding and output layer as chunks of their own, layers + 2 divide into the chunks") {
    // Llama 3 405B's 126 layers + 2 = 128 chunks' worth (Llama 3 paper, sec. 3.3.2).
    const ModelConfig c = preset("llama-3-405b");
    PlanInput in = planner_input(1024, 8192, 2048, 100);
    in.base.embedding_chunks = true;
    const PlanResult p = plan_layouts(c, find_hardware("h100-sxm"), in);
    std::int64_t interleaved = 0;
    for (const PlanEntry& e : p.best) {
        if (e.layout.interleave == 1) continue;
        ++interleaved;
        CHECK((c.num_layers + 2) % (e.layout.setup.pp * e.layout.interleave) == 0);
    }
    CHECK(interleaved > 0);
}
