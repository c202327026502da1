// Tests of engine/src/inference/inference.cpp: the decode step's two limits, the crossover batch and the prefill rate.
#include <catch2/catch.hpp>

#include <cmath>

#include "tally/api.h"
#include "tally/compute/flops.h"
#include "tally/hardware/hardware.h"
#include "tally/inference/inference.h"
#include "accounting_helpers.h"

using nlohmann::json;

namespace {

json ok(const json& args) {
    const json envelope = json::parse(tally::api::call("inference", args.dump()));
    INFO(envelope.dump());
    REQUIRE(envelope["ok"] == true);
    return envelope["result"];
}

}  // namespace

TEST_CASE("a decode step at batch 1 is memory-bound and streams the weights plus one cache", "[inference]") {
    const json r = ok({{"model", "llama-3-8b"}, {"context", 8192}, {"hardware", "h100-sxm"}});
    const double bytes = r["weights_bytes"].get<double>() + r["kv_bytes_per_sequence"].get<double>();
    CHECK(r["decode"]["bound"] == "memory");
    CHECK(r["decode"]["memory_seconds"].get<double>() ==
          Approx(bytes / r["memory_bandwidth_bytes_per_s"].get<double>()));
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
        // Powers of two, then the largest batch that fits.
        if (i + 1 < sweep.size()) CHECK(sweep[i]["batch"].get<int>() == 2 * sweep[i - 1]["batch"].get<int>());
        CHECK(sweep[i]["tokens_per_s"].get<double>() > sweep[i - 1]["tokens_per_s"].get<double>());
        CHECK(sweep[i]["per_sequence_tokens_per_s"].get<double>() <
              sweep[i - 1]["per_sequence_tokens_per_s"].get<double>());
    }
}

TEST_CASE("what fits is counted against the usable capacity, the one rule kv_cache uses", "[inference]") {
    // Llama 3 8B at 8,192 tokens on an H100: the preset reports 85,520,809,984 bytes; less 512 MiB of CUDA context
    // and ceil(5 %) = 4,276,040,500 of fragmentation leaves 80,707,898,572 usable. Beside 2 × 8,030,261,248 bytes
    // of bf16 weights that holds floor(64,647,376,076 / (131,072 × 8,192)) = 60 caches (the 80 GB label: 59).
    const json r = ok({{"model", "llama-3-8b"}, {"context", 8192}, {"hardware", "h100-sxm"}});
    CHECK(r["usable_bytes"].get<std::uint64_t>() == 80'707'898'572ULL);
    CHECK(r["max_batch"].get<std::int64_t>() == 60);
    const json kv = json::parse(tally::api::call(
        "kv_cache", json{{"model", "llama-3-8b"}, {"context", 8192}, {"hardware", "h100-sxm"}}.dump()))["result"];
    CHECK(r["max_batch"] == kv["max_batch"]);
    CHECK(r["usable_bytes"] == kv["usable_bytes"]);
    CHECK(ok({{"model", "llama-3-8b"}, {"context", 8192}, {"hardware", "h100-sxm"}, {"batch", 60}})["fits"] == true);
    CHECK(ok({{"model", "llama-3-8b"}, {"context", 8192}, {"hardware", "h100-sxm"}, {"batch", 61}})["fits"] == false);
}

TEST_CASE("the batch sweep ends at the largest batch that fits and is empty when nothing fits", "[inference]") {
    const json r = ok({{"model", "llama-3-8b"}, {"context", 8192}, {"hardware", "h100-sxm"}});
    std::vector<std::int64_t> batches;
    for (const json& step : r["sweep"]) batches.push_back(step["batch"].get<std::int64_t>());
    CHECK(batches == std::vector<std::int64_t>{1, 2, 4, 8, 16, 32, 60});
    // Llama 3 70B's bf16 weights alone (about 141 GB) exceed one H100's usable bytes.
    const json big = ok({{"model", "llama-3-70b"}, {"context", 8192}, {"hardware", "h100-sxm"}});
    CHECK(big["max_batch"] == 0);
    CHECK(big["fits"] == false);
    CHECK(big["sweep"].empty());
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

TEST_CASE("inference refuses an encoder (it never decodes) and an encoder-decoder, naming the model", "[inference]") {
    const json bert = {{"model_type", "bert"},      {"hidden_size", 768},        {"num_hidden_layers", 12},
                       {"num_attention_heads", 12}, {"intermediate_size", 3072}, {"vocab_size", 30522}};
    const json t5 = {{"model_type", "t5"}, {"d_model", 512},  {"d_kv", 64},         {"num_heads", 8},
                     {"d_ff", 2048},       {"num_layers", 6}, {"vocab_size", 32128}};
    for (const json& config : {bert, t5}) {
        const json envelope = json::parse(tally::api::call(
            "inference", json{{"hf_config", config}, {"context", 512}, {"hardware", "h100-sxm"}}.dump()));
        CHECK(envelope["ok"] == false);
        CHECK(envelope["error"]["field"] == "model");
    }
}
