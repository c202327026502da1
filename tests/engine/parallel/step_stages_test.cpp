// Tests of engine/src/parallel/step_stages.cpp: how a stack splits the layers over pipeline stages. nanotron v0.5 balances
// its stages by compute cost with the LM head counted (models/base.py build_model at c252843), so on the sweep's
// models with a 131,072-token vocabulary the stage holding the head gets fewer layers than an even split gives it.
#include <catch2/catch.hpp>

#include <cmath>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/step/step.h"
#include "tally/parallel/step_stages.h"

using namespace tally;

namespace {

// The nanotron sweep's Llama shapes (scripts/scaling_benchmarks.py at c252843), as the validation runs give them.
ModelConfig sweep_model(const std::string& run_id) {
    const nlohmann::json run = tally_test::modern_run(run_id);
    REQUIRE(run.contains("args"));
    return resolve_model(run["args"]);
}

}  // namespace

TEST_CASE("nanotron's pipeline split: blocks placed in order, the rank moving on past each cost threshold") {
    // 1.34B (16 layers of 4·2048² + 3·8192·2048 = 2^26, LM head 131,072·2048 = 4 layers' cost), pp 2: the first
    // threshold is 10 layers' cost; layer 10 reaches it without exceeding it, layer 11 exceeds it, so rank 0 holds
    // 11 layers and rank 1 the other 5 with the head (build_model moves on only after placing the block that
    // crossed).
    const StageSplit small = cost_balanced_stages(sweep_model("nanotron-1p34b-8gpu"), 2);
    CHECK(small.layers == std::vector<std::int64_t>{11, 5});
    CHECK(small.head_stage == 1);
    // 3.57B (28 layers, head 3.56 layers' cost), pp 2: 16 and 12. 8.86B (32 layers, head 2.2), pp 4: 9, 9, 8, 6.
    CHECK(cost_balanced_stages(sweep_model("nanotron-3p57b-8gpu"), 2).layers == std::vector<std::int64_t>{16, 12});
    CHECK(cost_balanced_stages(sweep_model("nanotron-8p86b-8gpu"), 4).layers == std::vector<std::int64_t>{9, 9, 8, 6});
    // 80B (80 layers, head 1.1 layers' cost), pp 16: the greedy overshoot gives the first stage 6 layers, the last 3.
    const StageSplit deep = cost_balanced_stages(sweep_model("nanotron-80b-64gpu"), 16);
    CHECK(deep.layers.front() == 6);
    CHECK(deep.layers.back() == 3);
    CHECK(deep.head_stage == 15);
    std::int64_t total = 0;
    for (std::int64_t n : deep.layers) total += n;
    CHECK(total == 80);
    CHECK(tally_test::error_field([] { cost_balanced_stages(sweep_model("nanotron-1p34b-8gpu"), 17); }) == "pp");
}

TEST_CASE("other stacks, interleaving and separate embedding chunks keep the even split with the head last") {
    const ModelConfig c = sweep_model("nanotron-1p34b-8gpu");
    const StageSplit even = pipeline_stages(c, 2, 1, false, false);
    CHECK(even.layers == stage_layers(16, 2, 1, false));
    CHECK(even.head_stage == 1);
    CHECK(pipeline_stages(c, 2, 2, false, true).layers == stage_layers(16, 2, 2, false));
    CHECK(pipeline_stages(c, 4, 1, true, true).layers == stage_layers(16, 4, 1, true));
    CHECK(pipeline_stages(c, 1, 1, false, true).layers == std::vector<std::int64_t>{16});
}

TEST_CASE("step_time: nanotron's split moves the 8.86B one-node run towards its published MFU") {
    // nanotron's scaling sweep (docs/benchmark_summary.svg at c252843): 8.86B on 8 H100s, tp 1, pp 4, dp 2, 128
    // micro-batches of one sequence, published 45.2 % MFU. With layers split evenly the last stage runs 8 layers and
    // the 131,072 x 4,096 output layer; nanotron's split leaves it 6, and the busiest stage runs 9 layers.
    nlohmann::json run = tally_test::modern_run("nanotron-8p86b-8gpu");
    const double published = run["published"]["value"].get<double>();
    REQUIRE(published == Approx(0.4522));
    const nlohmann::json nano = api::invoke("step_time", run["args"]);
    CHECK(nano["stage_layers"] == nlohmann::json::array({9, 9, 8, 6}));
    CHECK(nano["busiest_stage_layers"] == 9);
    nlohmann::json generic_args = run["args"];
    generic_args["stack"] = "generic";
    const nlohmann::json generic = api::invoke("step_time", generic_args);
    CHECK(generic["stage_layers"] == nlohmann::json::array({8, 8, 8, 8}));
    const double err_nano = nano["mfu"].get<double>() / published - 1;
    const double err_generic = generic["mfu"].get<double>() / published - 1;
    CHECK(std::fabs(err_nano) < std::fabs(err_generic));
    CHECK(std::fabs(err_nano) < 0.10);
}

TEST_CASE("the data-parallel reduction covers the parameters of nanotron's fullest stage") {
    // 1.34B with tied embeddings on tp 2, pp 2: rank 0 holds the 131,072 x 2,048 input embedding and 11 layers
    // (4·2048² + 3·2048·8192 each), half of each per TP rank; the head stage holds 5 layers and the embedding's
    // tied copy. ZeRO-1 all-reduces that stage's whole fp32 gradient buffer (step_dp.cpp).
    const ModelConfig c = sweep_model("nanotron-1p34b-512gpu");
    const StageSplit split = cost_balanced_stages(c, 2);
    REQUIRE(split.layers == std::vector<std::int64_t>{11, 5});
    const double embedding = 131072.0 * 2048 / 2, layer = (4.0 * 2048 * 2048 + 3.0 * 2048 * 8192) / 2;
    const double busiest = static_cast<double>(busiest_stage_params(c, split, 2, 1, 0));
    CHECK(busiest == Approx(embedding + 11 * layer).epsilon(1e-3));  // the norms' weights are the rest
    CHECK(busiest > static_cast<double>(busiest_stage_params(c, pipeline_stages(c, 2, 1, false, false), 2, 1, 0)));
    CHECK(busiest_stage_params(c, split, 2, 1, 0) == shard_params(c, ShardSpec{2, 11, true, false, false, 1, 0}));
}

TEST_CASE("nanotron all-reduces a tied embedding's fp32 gradient between the first and the head stage") {
    // sync_tied_weights_gradients (parallel/tied_parameters.py at c252843): the input embedding (rank 0) and the
    // output layer (head stage) are tied with ReduceOp.SUM (trainer.py mark_tied_parameters), so after the
    // data-parallel sync the two stages all-reduce the fp32 gradient buffer of the 131,072 x 2,048 matrix.
    const ModelConfig c = sweep_model("nanotron-1p34b-16gpu");
    REQUIRE(c.tied_embeddings);
    const StageSplit split = cost_balanced_stages(c, 2);
    CHECK(tied_embedding_sync_bytes(c, split, 131072.0 * 2048, 4) == 131072.0 * 2048 * 4);
    // One stage holding both (no pipeline) or an untied model (8.86B): nothing to sync.
    CHECK(tied_embedding_sync_bytes(c, pipeline_stages(c, 1, 1, false, true), 131072.0 * 2048, 4) == 0);
    CHECK(tied_embedding_sync_bytes(sweep_model("nanotron-8p86b-8gpu"), split, 131072.0 * 2048, 4) == 0);
    // step_time: the 16-GPU run (pp 2, stages on two nodes) pays it in its exposed gradient reduction: against the
    // same model untied (the same split and first stage), the difference is one 2-rank all-reduce of 1.07 GB over
    // the pair's network cards (50 GB/s each way per H100, the h100-sxm preset).
    nlohmann::json run = tally_test::modern_run("nanotron-1p34b-16gpu");
    const nlohmann::json tied = api::invoke("step_time", run["args"]);
    run["args"]["model"]["tied_embeddings"] = false;
    const nlohmann::json untied = api::invoke("step_time", run["args"]);
    REQUIRE(untied["stage_layers"] == tied["stage_layers"]);
    const double extra =
        tally_test::breakdown_seconds(tied, "dp_comm") - tally_test::breakdown_seconds(untied, "dp_comm");
    CHECK(extra > 0.9 * 131072.0 * 2048 * 4 / 50e9);
    CHECK(extra < 1.5 * 131072.0 * 2048 * 4 / 50e9);
    // Priced as the `collective` method prices a 2-node all-reduce of those bytes at the step's 0.77 of the links.
    const double collective = api::invoke("collective", {{"collective", "all_reduce"},
                                                         {"message_bytes", 131072.0 * 2048 * 4},
                                                         {"ranks_per_node", 1},
                                                         {"nodes", 2},
                                                         {"hardware", "h100-sxm"},
                                                         {"efficiency", 0.77}})["seconds"]
                                  .get<double>();
    CHECK(extra == Approx(collective).epsilon(1e-9));
}

TEST_CASE("nanotron's fp32 cross-entropy moves 52 bytes per logit, against the 20 tally charges other stacks") {
    // Loss.forward and _ShardedCrossEntropy (tensor_parallel/functional.py at c252843): cast_to_fp32 (read 2, write
    // 4), max (4), subtract (4 + 4), exp (4 + 4), sum (4), divide in place (4 + 4); backward: multiply in place
    // (4 + 4) and the cast's gradient back to bf16 (4 + 2).
    CHECK(stack_profile("nanotron").defaults.logits_bytes == 6 + 4 + 8 + 8 + 4 + 8 + 8 + 6);
    CHECK(stack_profile("megatron-te").defaults.logits_bytes == 0);
    // The sweep's 1.34B on 128 H100s (tp 2, pp 1, dp 64, four sequences a micro-batch): the output layer is on the
    // only stage, so its 16,384 x 65,536 fp32 logits cost 32 bytes each more than the generic 5 passes. Against the
    // same layout on one GPU group (dp 1, no data-parallel path), nanotron's step less its gradient passes exceeds the
    // generic stack's by about that much at the H100's 3.35 TB/s (h100-sxm preset).
    nlohmann::json args = tally_test::modern_run("nanotron-1p34b-128gpu")["args"];
    args["gpus"] = 2, args["global_batch"] = 4;
    const nlohmann::json nano = api::invoke("step_time", args);
    args["stack"] = "generic";
    const nlohmann::json generic = api::invoke("step_time", args);
    // Its gradient passes and its eager SwiGLU (the next test) set aside.
    const double extra = nano["step_seconds"].get<double>() - tally_test::breakdown_seconds(nano, "grad_accum") -
                         tally_test::breakdown_seconds(nano, "memory_bound") - generic["step_seconds"].get<double>() +
                         tally_test::breakdown_seconds(generic, "memory_bound");
    const double at_full_bandwidth = 32.0 * 16384 * 65536 / 3.35e12;
    CHECK(extra > at_full_bandwidth);
    CHECK(extra < 1.5 * at_full_bandwidth);
}

TEST_CASE("nanotron's SwiGLU runs eagerly: two more passes over the f-wide tensor than a fused kernel") {
    // models/llama.py at c252843: GLUActivation returns self.act(gate_states) * up_states (silu reads and writes the
    // gate, the product reads two and writes one: 5 passes, a fused kernel 3); the norms (TritonRMSNorm) and rotary
    // (flash-attn's RotaryEmbedding in training) are fused kernels, as tally's generic accounting has them.
    CHECK(stack_profile("nanotron").defaults.eager_glu);
    CHECK_FALSE(stack_profile("nanotron").defaults.eager_elementwise);
    // 1.34B, 16 layers, one micro-batch of 4 x 4,096 tokens on one GPU: 2 extra passes of 16,384 x 8,192 bf16 in the
    // forward, twice that in the backward (kBackwardOverForward), at most the H100's 3.35 TB/s.
    nlohmann::json args = tally_test::modern_run("nanotron-1p34b-128gpu")["args"];
    args["gpus"] = 1, args["tp"] = 1, args["global_batch"] = 4, args["sequence_parallel"] = false;
    const nlohmann::json nano = api::invoke("step_time", args);
    args["stack"] = "generic";
    const nlohmann::json generic = api::invoke("step_time", args);
    const double extra =
        tally_test::breakdown_seconds(nano, "memory_bound") - tally_test::breakdown_seconds(generic, "memory_bound");
    const double at_full_bandwidth = 16 * 3 * 2 * (16384.0 * 8192 * 2) / 3.35e12;
    CHECK(extra > at_full_bandwidth);
    CHECK(extra < 1.5 * at_full_bandwidth);
}

TEST_CASE("step_time's memory check under the nanotron stack counts what nanotron keeps; an explicit argument wins") {
    // nanotron 8.86B on 16 H100s (tp 4, dp 4, ZeRO-1; published peak 58.34 GB): the stack's fp32 gradient buffer
    // over every parameter (optim/gradient_accumulator.py at c252843) and its cost-balanced stages, as memory_budget
    // counts them when asked (zero1ops26, api_memory_test).
    nlohmann::json args = tally_test::modern_run("nanotron-8p86b-16gpu")["args"];
    for (const char* key : {"dp", "grad_accum_steps", "fabric"}) args.erase(key);
    const nlohmann::json step = api::invoke("step_time", args);
    nlohmann::json asked = args;
    for (const char* key : {"stack", "precision", "dtype"}) asked.erase(key);
    asked["grad_accum"] = "fp32";
    asked["grad_accum_full"] = true;
    // Cost-balanced stages apply with pipelining only (the declaration's rule refuses them at pp 1).
    if (asked.value("pp", 1) > 1) asked["cost_balanced_stages"] = true;
    const nlohmann::json budget = api::invoke("memory_budget", asked);
    CHECK(step["memory_bytes"].get<double>() == budget["per_gpu_bytes"]["total"].get<double>());
    // The generic stack keeps no fp32 buffer: less memory for the same layout.
    nlohmann::json generic = args;
    generic["stack"] = "generic";
    const double generic_bytes = api::invoke("step_time", generic)["memory_bytes"].get<double>();
    CHECK(generic_bytes < step["memory_bytes"].get<double>());
    // Closer to the published peak than without the buffer (58.34 GB, read off the sweep's figure).
    const double published = 58.34e9;
    CHECK(std::fabs(step["memory_bytes"].get<double>() - published) < std::fabs(generic_bytes - published));
    // The caller's own choice is kept.
    nlohmann::json explicit_args = args;
    explicit_args["grad_accum"] = "none";
    nlohmann::json explicit_budget = asked;
    explicit_budget["grad_accum"] = "none";
    if (args.value("pp", 1) > 1)
        explicit_args["cost_balanced_stages"] = explicit_budget["cost_balanced_stages"] = false;
    CHECK(api::invoke("step_time", explicit_args)["memory_bytes"].get<double>() ==
          api::invoke("memory_budget", explicit_budget)["per_gpu_bytes"]["total"].get<double>());
}
