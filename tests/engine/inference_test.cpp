// Tests of engine/src/inference.cpp and api_inference.cpp: the decode step's two limits, the
// crossover batch, the prefill rate, and errors that name their field.
#include <catch2/catch.hpp>

#include <cmath>

#include "tally/api.h"
#include "tally/flops.h"
#include "tally/hardware.h"
#include "tally/inference.h"
#include "accounting_helpers.h"

using nlohmann::json;

namespace {

json ok(const json& args) {
    const json envelope = json::parse(tally::api::call("inference", args.dump()));
    INFO(envelope.dump());
    REQUIRE(envelope["ok"] == true);
    return envelope["result"];
}

json error(const json& args) {
    const json envelope = json::parse(tally::api::call("inference", args.dump()));
    REQUIRE(envelope["ok"] == false);
    return envelope["error"];
}

}  // namespace

TEST_CASE("a decode step at batch 1 is memory-bound and streams the weights plus one cache", "[inference]") {
    const json r = ok({{"model", "llama-3-8b"}, {"context", 8192}, {"hardware", "h100-sxm"}});
    const double bytes = r["weights_bytes"].get<double>() + r["kv_bytes_per_sequence"].get<double>();
    CHECK(r["decode"]["bound"] == "memory");
    CHECK(r["decode"]["memory_seconds"].get<double>() == Approx(bytes / r["memory_bandwidth_bytes_per_s"].get<double>()));
    // The same bound as kv_cache's decode_tokens_per_s_bound (both are bandwidth / bytes per step).
    const json envelope = json::parse(tally::api::call(
        "kv_cache", json{{"model", "llama-3-8b"}, {"context", 8192}, {"hardware", "h100-sxm"}}.dump()));
    CHECK(r["decode"]["per_sequence_tokens_per_s"].get<double>() ==
          Approx(envelope["result"]["decode_tokens_per_s_bound"].get<double>()));
}

TEST_CASE("the crossover batch is where the decode step turns compute-bound", "[inference]") {
    const json r = ok({{"model", "llama-3-8b"}, {"context", 256}, {"hardware", "h100-sxm"}});
    REQUIRE(r["crossover_batch"].is_number());
    const auto whole = r["crossover_batch_whole"].get<std::int64_t>();
    const json below = ok({{"model", "llama-3-8b"}, {"context", 256}, {"hardware", "h100-sxm"}, {"batch", whole - 1}});
    const json at = ok({{"model", "llama-3-8b"}, {"context", 256}, {"hardware", "h100-sxm"}, {"batch", whole}});
    CHECK(below["decode"]["bound"] == "memory");
    CHECK(at["decode"]["bound"] == "compute");
}

TEST_CASE("batching raises total throughput and lowers each sequence's rate", "[inference]") {
    const json r = ok({{"model", "llama-3-8b"}, {"context", 1024}, {"hardware", "h100-sxm"}});
    const json& sweep = r["sweep"];
    REQUIRE(sweep.size() >= 4);
    for (std::size_t i = 1; i < sweep.size(); ++i) {
        CHECK(sweep[i]["batch"].get<int>() == 2 * sweep[i - 1]["batch"].get<int>());
        CHECK(sweep[i]["tokens_per_s"].get<double>() > sweep[i - 1]["tokens_per_s"].get<double>());
        CHECK(sweep[i]["per_sequence_tokens_per_s"].get<double>() < sweep[i - 1]["per_sequence_tokens_per_s"].get<double>());
    }
}

TEST_CASE("a long multi-head cache keeps decoding memory-bound at every batch", "[inference]") {
    // GPT-2 small has no GQA: 36,864 bytes of cache per token, read once per token decoded.
    const json r = ok({{"model", "gpt2-small"}, {"context", 1024}, {"hardware", "h100-sxm"}});
    CHECK(r["crossover_batch"].is_null());
    CHECK(r["crossover_reason"].is_string());
    for (const json& step : r["sweep"]) CHECK(step["bound"] == "memory");
}

TEST_CASE("grouped-query attention moves the crossover to a smaller batch", "[inference]") {
    tally::ModelConfig gqa = tally_test::preset("llama-3-8b");
    tally::ModelConfig mha = gqa;
    mha.num_kv_heads = mha.num_heads;
    const tally::Hardware h100 = tally::find_hardware("h100-sxm");
    tally::InferenceInput in;
    in.context = 64;
    const auto with_gqa = tally::inference(gqa, in, h100);
    const auto without = tally::inference(mha, in, h100);
    REQUIRE(with_gqa.crossover_batch);
    REQUIRE(without.crossover_batch);
    CHECK(*with_gqa.crossover_batch < *without.crossover_batch);
    CHECK(with_gqa.kv_per_sequence * 4 == without.kv_per_sequence);  // 32 query heads share 8 KV heads
    // At 128 tokens the multi-head cache already costs more time than its FLOPs; the grouped one does not.
    in.context = 128;
    CHECK(tally::inference(gqa, in, h100).crossover_batch.has_value());
    CHECK_FALSE(tally::inference(mha, in, h100).crossover_batch.has_value());
}

TEST_CASE("prefill runs at peak over the causal forward FLOPs per token", "[inference]") {
    const json r = ok({{"model", "llama-3-8b"}, {"context", 8192}, {"hardware", "h100-sxm"}});
    CHECK(r["prefill_flops_per_token"].get<double>() < r["decode_flops_per_token"].get<double>());
    CHECK(r["prefill_tokens_per_s"].get<double>() ==
          Approx(r["peak_flops_per_s"].get<double>() / r["prefill_flops_per_token"].get<double>()));
    // Prefill is far faster per token than memory-bound decoding at batch 1.
    CHECK(r["prefill_tokens_per_s"].get<double>() > 100 * r["decode"]["tokens_per_s"].get<double>());
}

TEST_CASE("inference names the field at fault", "[inference]") {
    CHECK(error({{"model", "llama-3-8b"}, {"context", 4096}})["field"] == "hardware");
    CHECK(error({{"model", "llama-3-8b"}, {"context", 0}, {"hardware", "h100-sxm"}})["field"] == "context");
    CHECK(error({{"model", "llama-3-8b"}, {"context", 64}, {"batch", 0}, {"hardware", "h100-sxm"}})["field"] == "batch");
    CHECK(error({{"model", "llama-3-8b"}, {"context", 64}, {"kv_dtype", "fp7"}, {"hardware", "h100-sxm"}})["field"] == "kv_dtype");
    CHECK(error({{"model", "llama-3-8b"}, {"context", 64}, {"compute_dtype", "int3"}, {"hardware", "h100-sxm"}})["field"] == "compute_dtype");
}

TEST_CASE("a weight matmul's intensity grows with the tokens and crosses the ridge", "[inference]") {
    const auto at = [](int tokens) {
        const json envelope = json::parse(tally::api::call(
            "matmul_roofline", json{{"m", tokens}, {"k", 4096}, {"n", 4096}, {"hardware", "h100-sxm"}}.dump()));
        REQUIRE(envelope["ok"] == true);
        return envelope["result"];
    };
    // 2mnk FLOPs over 2(mk + kn + mn) bytes in bf16: one token is about 1 FLOP per byte.
    CHECK(at(1)["intensity"].get<double>() == Approx(2.0 * 4096 * 4096 / (2.0 * (4096 + 4096 * 4096 + 4096))));
    CHECK(at(1)["bound"] == "memory");
    CHECK(at(64)["intensity"].get<double>() > at(8)["intensity"].get<double>());
    CHECK(at(8192)["bound"] == "compute");
    const json bad = json::parse(tally::api::call("matmul_roofline", json{{"m", 0}, {"k", 1}, {"n", 1}, {"hardware", "h100-sxm"}}.dump()));
    CHECK(bad["error"]["field"] == "m");
}

TEST_CASE("GPT-3's 3.14e23 FLOPs are about 3,640 petaFLOP/s-days (its paper's table D.1)", "[inference]") {
    const json r = json::parse(tally::api::call("compute_units", json{{"flops", 3.14e23}}.dump()))["result"];
    CHECK(r["petaflop_s_days"].get<double>() == Approx(3634.26).epsilon(1e-4));
}

TEST_CASE("GPUs for a deadline: one more day of GPU time than the deadline allows needs one more GPU", "[inference]") {
    // 6 · 70e9 · 15e12 FLOPs at 40% of 989.5 TFLOP/s.
    const json r = json::parse(tally::api::call(
        "compute_units", json{{"params", 70e9}, {"tokens", 15e12}, {"hardware", "h100-sxm"}, {"mfu", 0.4}, {"days", 30}}.dump()))["result"];
    const double gpu_days = 6 * 70e9 * 15e12 / (989.5e12 * 0.4) / 86400;
    CHECK(r["gpu_days"].get<double>() == Approx(gpu_days));
    CHECK(r["gpus_for_days"].get<double>() == std::ceil(gpu_days / 30));
    CHECK(r["gpus_for_days"].get<double>() * 30 >= gpu_days);
    CHECK((r["gpus_for_days"].get<double>() - 1) * 30 < gpu_days);
    const json bad = json::parse(tally::api::call("compute_units", json{{"flops", 1e20}, {"hardware", "h100-sxm"}, {"mfu", 2}}.dump()));
    CHECK(bad["error"]["field"] == "mfu");
}

TEST_CASE("a resumable bf16 mixed-precision checkpoint is 14 bytes per parameter, an inference one 2", "[inference]") {
    const json r = json::parse(tally::api::call("checkpoint_size", json{{"model", "llama-2-7b"}}.dump()))["result"];
    CHECK(r["resume_bytes_per_param"].get<double>() == 14);
    CHECK(r["inference_bytes"].get<double>() == 2 * r["params"].get<double>());
    CHECK(r["resume_bytes"].get<double>() == 14 * r["params"].get<double>());
    const json fp32 = json::parse(tally::api::call("checkpoint_size", json{{"model", "llama-2-7b"}, {"recipe", "fp32_adamw"}}.dump()))["result"];
    CHECK(fp32["master_bytes"].get<double>() == 0);  // fp32 weights are their own master copy
    CHECK(fp32["resume_bytes_per_param"].get<double>() == 12);
}
