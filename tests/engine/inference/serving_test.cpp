// Tests of engine/src/inference/serving.cpp: paged KV caches, speculative decoding, tensor-parallel decoding and
// quantized weights, each against arithmetic done here by hand from the preset files.
#include <catch2/catch.hpp>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/comm/collectives.h"
#include "tally/hardware/hardware.h"
#include "tally/inference/inference.h"
#include "tally/inference/serving.h"

using nlohmann::json;

namespace {

json ok(const char* method, const json& args) {
    const json envelope = json::parse(tally::api::call(method, args.dump()));
    INFO(envelope.dump());
    REQUIRE(envelope["ok"] == true);
    return envelope["result"];
}

json refused(const char* method, const json& args) {
    const json envelope = json::parse(tally::api::call(method, args.dump()));
    INFO(envelope.dump());
    REQUIRE(envelope["ok"] == false);
    return envelope["error"];
}

// Llama 3 8B in bf16: 8,030,261,248 parameters; 2 · 32 layers · 8 KV heads · 128 · 2 bytes = 131,072 bytes a token.
constexpr double kLlama8Weights = 2.0 * 8'030'261'248;
constexpr double kLlama8KvPerToken = 131'072;
// One H100's usable bytes: 85,520,809,984 reported, less 512 MiB and ceil(5 %) (see inference_test.cpp).
constexpr double kH100Usable = 80'707'898'572;

}  // namespace

TEST_CASE("expected tokens per verification step is the geometric sum 1 + a + ... + a^g", "[serving]") {
    // One drafted token accepted half the time: 2 tokens or 1, 1.5 on average.
    CHECK(tally::expected_tokens_per_step(0.5, 1) == 1.5);
    // a = 0.8, g = 4: 1 + 0.8 + 0.64 + 0.512 + 0.4096 = 3.3616 (Leviathan et al. 2023, eq. 1).
    CHECK(tally::expected_tokens_per_step(0.8, 4) == Approx(3.3616).epsilon(1e-12));
    CHECK(tally::expected_tokens_per_step(0, 7) == 1);  // nothing accepted: the target's own token
    CHECK(tally::expected_tokens_per_step(1, 7) == 8);  // everything accepted: g + 1
    const auto alpha = tally_test::input_error([] { tally::expected_tokens_per_step(1.2, 4); });
    REQUIRE(alpha);
    CHECK(alpha->field() == "acceptance_rate");
    const auto gamma = tally_test::input_error([] { tally::expected_tokens_per_step(0.8, 0); });
    REQUIRE(gamma);
    CHECK(gamma->field() == "draft_tokens");
}

TEST_CASE("speculative decoding's speedup is Leviathan et al.'s closed form while verification is memory-bound",
          "[serving]") {
    const json r = ok("speculative_decoding", {{"model", "llama-3-70b"},
                                               {"draft_model", "llama-3-8b"},
                                               {"context", 4096},
                                               {"acceptance_rate", 0.8},
                                               {"draft_tokens", 4},
                                               {"hardware", "b200"}});
    const double c = r["draft_step"]["step_seconds"].get<double>() / r["target_step"]["step_seconds"].get<double>();
    CHECK(r["cost_ratio"].get<double>() == Approx(c));
    // Theorem 3.8: (1 − α^(γ+1)) / ((1 − α)(γc + 1)); verifying 5 tokens still reads weights once, so it costs a step.
    CHECK(r["verify_seconds"].get<double>() == r["target_step"]["step_seconds"].get<double>());
    CHECK(r["speedup"].get<double>() == Approx(3.3616 / (4 * c + 1)));
    CHECK(r["tokens_per_s"].get<double>() == Approx(3.3616 / (4 * r["draft_step"]["step_seconds"].get<double>() +
                                                              r["target_step"]["step_seconds"].get<double>())));
    CHECK(r["fits"] == true);  // 141 + 16 GB of weights in a B200's usable bytes
    // The same pair does not fit one H100.
    CHECK(ok("speculative_decoding",
             {{"model", "llama-3-70b"}, {"draft_model", "llama-3-8b"}, {"hardware", "h100-sxm"}})["fits"] == false);
}

TEST_CASE("a draft as slow as the target makes speculative decoding slower, and a foreign vocabulary is refused",
          "[serving]") {
    const json same = ok("speculative_decoding", {{"model", "llama-3-8b"},
                                                  {"draft_model", "llama-3-8b"},
                                                  {"acceptance_rate", 0.8},
                                                  {"draft_tokens", 4},
                                                  {"hardware", "h100-sxm"}});
    CHECK(same["cost_ratio"].get<double>() == 1);
    CHECK(same["speedup"].get<double>() == Approx(3.3616 / 5));
    CHECK(refused("speculative_decoding",
                  {{"model", "llama-3-8b"}, {"draft_model", "llama-2-7b"}, {"hardware", "h100-sxm"}})["field"] ==
          "draft_model");
    CHECK(refused("speculative_decoding",
                  {{"model", "llama-3-8b"}, {"draft_model", "nope"}, {"hardware", "h100-sxm"}})["field"] ==
          "draft_model");
    CHECK(refused("speculative_decoding", {{"model", "llama-3-8b"},
                                           {"draft_model", "llama-3-8b"},
                                           {"acceptance_rate", 1.5},
                                           {"hardware", "h100-sxm"}})["field"] == "acceptance_rate");
}

TEST_CASE("a paged cache holds whole blocks of the tokens used; a reservation holds the longest context", "[serving]") {
    const json r =
        ok("paged_kv",
           {{"model", "llama-3-8b"}, {"reserved_context", 8192}, {"mean_context", 2001}, {"hardware", "h100-sxm"}});
    // 2,001 tokens fill 126 blocks of 16 = 2,016 tokens.
    CHECK(r["blocks_per_sequence"] == 126);
    CHECK(r["paged_tokens_per_sequence"] == 2016);
    CHECK(r["used_bytes_per_sequence"].get<double>() == 2001 * kLlama8KvPerToken);
    CHECK(r["paged_bytes_per_sequence"].get<double>() == 2016 * kLlama8KvPerToken);
    CHECK(r["reserved_bytes_per_sequence"].get<double>() == 8192 * kLlama8KvPerToken);
    CHECK(r["paged_used_fraction"].get<double>() == Approx(2001.0 / 2016));
    CHECK(r["reserved_used_fraction"].get<double>() == Approx(2001.0 / 8192));
    const double room = kH100Usable - kLlama8Weights;  // 64,647,376,076 bytes
    CHECK(r["reserved_sequences"] == static_cast<std::int64_t>(room / (8192 * kLlama8KvPerToken)));  // 60
    CHECK(r["paged_sequences"] == static_cast<std::int64_t>(room / (2016 * kLlama8KvPerToken)));     // 244
    // Both batches read only the tokens held: weights once plus batch · 2,001 tokens of cache, over 3.35 TB/s.
    const double bw = tally::find_hardware("h100-sxm").memory_bandwidth_bytes_per_s;
    const double paged = r["paged_sequences"].get<double>();
    CHECK(r["paged_step"]["memory_seconds"].get<double>() ==
          Approx((kLlama8Weights + paged * 2001 * kLlama8KvPerToken) / bw));
    CHECK(refused("paged_kv", {{"model", "llama-3-8b"},
                               {"reserved_context", 1024},
                               {"mean_context", 2048},
                               {"hardware", "h100-sxm"}})["field"] == "mean_context");
}

TEST_CASE("tensor-parallel decoding splits weights and KV heads over t GPUs and adds two all-reduces a layer",
          "[serving]") {
    const json base = {{"model", "llama-3-70b"}, {"context", 8192}, {"batch", 16}, {"hardware", "h100-sxm"}};
    json at8 = base;
    at8["tp"] = 8;
    const json r = ok("tp_serving", at8);
    const json kv = ok("kv_cache", {{"model", "llama-3-70b"}, {"context", 8192}, {"batch", 1}});
    CHECK(r["weights_bytes_per_gpu"].get<double>() == std::ceil(kv["weights_bytes"].get<double>() / 8));
    CHECK(r["kv_bytes_per_sequence_per_gpu"].get<double>() == kv["kv_cache_bytes"].get<double>() / 8);  // 1 head each
    CHECK(r["kv_heads_per_gpu"] == 1);
    CHECK(r["all_reduces_per_step"] == 160);                      // 2 × 80 layers
    CHECK(r["all_reduce_bytes"].get<double>() == 16 * 8192 * 2);  // batch × hidden × bf16
    const tally::collectives::Links links =
        tally::collectives::links_of(tally::find_hardware("h100-sxm"), tally::collectives::kDefaultLinkEfficiency);
    const double one = tally::collectives::cost(tally::collectives::Kind::AllReduce,
                                                tally::collectives::Algorithm::Ring, 16 * 8192 * 2, {8, 1}, links)
                           .seconds;
    CHECK(r["all_reduce_seconds"].get<double>() == one);
    CHECK(r["step_seconds"].get<double>() ==
          Approx(std::max(r["memory_seconds"].get<double>(), r["compute_seconds"].get<double>()) + 160 * one));
    // Sixteen GPUs: still one KV head per GPU (8 heads, each on two GPUs), so the cache per GPU stops shrinking.
    json at16 = base;
    at16["tp"] = 16;
    CHECK(ok("tp_serving", at16)["kv_bytes_per_sequence_per_gpu"] == r["kv_bytes_per_sequence_per_gpu"]);
    // One GPU: no collective, and the step of the inference method.
    json at1 = base;
    at1["tp"] = 1;
    at1["model"] = "llama-3-8b";
    json plain = at1;
    plain.erase("tp");
    CHECK(ok("tp_serving", at1)["comm_seconds"] == 0);
    CHECK(ok("tp_serving", at1)["step_seconds"] == ok("inference", plain)["decode"]["step_seconds"]);
    json odd = base;
    odd["tp"] = 3;
    CHECK(refused("tp_serving", odd)["field"] == "tp");
    // GPT-2 small with 3 KV heads for its 12 heads: 4 GPUs would each hold three quarters of a KV head.
    tally::ModelConfig gqa = tally_test::preset("gpt2-small");
    gqa.num_kv_heads = 3;
    tally::TpServingInput four;
    four.tp = 4;
    const auto uneven = tally_test::input_error([&] { tally::tp_decode(gqa, four, tally::find_hardware("h100-sxm")); });
    REQUIRE(uneven);
    CHECK(uneven->field() == "tp");
    four.tp = 6;  // a multiple of the 3 KV heads: each head on two GPUs
    CHECK(tally::tp_decode(gqa, four, tally::find_hardware("h100-sxm")).kv_heads_per_gpu == 1);
}

TEST_CASE("quantized weights speed a memory-bound step by the bytes they save out of all bytes read", "[serving]") {
    // Llama 3 8B, 16 sequences of 8,192 tokens: 16,060,522,496 bytes of weights, 17,179,869,184 of cache.
    const json r = ok("weight_quantization", {{"model", "llama-3-8b"},
                                              {"context", 8192},
                                              {"batch", 16},
                                              {"quantized_dtype", "fp8"},
                                              {"hardware", "h100-sxm"}});
    const double kv = 16 * 8192 * kLlama8KvPerToken;
    CHECK(r["kv_bytes"].get<double>() == kv);
    CHECK(r["weights_share"].get<double>() == Approx(kLlama8Weights / (kLlama8Weights + kv)));  // 0.483
    CHECK(r["ideal_speedup"].get<double>() == 2);
    CHECK(r["speedup"].get<double>() == Approx((kLlama8Weights + kv) / (kLlama8Weights / 2 + kv)));  // 1.32
    // One sequence: the weights are almost all the traffic, and the speedup nears the ideal.
    const json one =
        ok("weight_quantization",
           {{"model", "llama-3-8b"}, {"context", 8192}, {"quantized_dtype", "fp8"}, {"hardware", "h100-sxm"}});
    CHECK(one["speedup"].get<double>() > r["speedup"].get<double>());
    CHECK(one["speedup"].get<double>() < 2);
    CHECK(r["quantized_max_batch"].get<std::int64_t>() > r["max_batch"].get<std::int64_t>());
    CHECK(refused("weight_quantization", {{"model", "llama-3-8b"},
                                          {"context", 8192},
                                          {"quantized_dtype", "none"},
                                          {"hardware", "h100-sxm"}})["field"] == "quantized_dtype");
}
