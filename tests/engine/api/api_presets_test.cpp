// Tests of engine/api/api_presets.cpp: presets, model resolution and the assumptions audit.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "api_helpers.h"
#include "tally/hardware/hardware.h"
#include "tally/model/model.h"

using nlohmann::json;
using tally_test::error;
using tally_test::ok;

TEST_CASE("params, flops and kv_cache accept a preset id, a config object or pasted config.json text") {
    const std::string gpt2 =
        R"({"model_type":"gpt2","n_embd":768,"n_layer":12,"n_head":12,"n_positions":1024,"vocab_size":50257})";
    CHECK(ok("params", {{"model", "gpt2-small"}})["total"] == 124'439'808);
    CHECK(ok("params", {{"hf_config", gpt2}})["total"] == 124'439'808);
    CHECK(ok("params", {{"model", json::parse(gpt2)}})["total"] == 124'439'808);
    const json f = ok("flops", {{"model", "gpt2-small"}, {"seq", 1024}, {"tokens", 1e9}});
    CHECK(f["six_nd"].get<double>() == 6.0 * 124'439'808 * 1e9);
    CHECK(f["exact"].get<double>() == f["model_flops"].get<double>());
    CHECK(f["attention_flops"] == "full");
    CHECK(ok("kv_cache", {{"model", "llama-2-70b"}, {"context", 4096}})["bytes_per_token"] == 327'680);
}

TEST_CASE("the assumptions audit gives every preset a value and a source for every assumption") {
    const json a = ok("assumptions", json::object());
    REQUIRE(a["models"].size() >= 13);
    REQUIRE(a["hardware"].size() >= 8);
    for (const char* kind : {"models", "hardware"})
        for (const auto& preset : a[kind]) {
            std::set<std::string> ids;
            for (const auto& row : preset["assumptions"]) {
                INFO(preset["id"].get<std::string>() + " " + row["id"].get<std::string>());
                CHECK(row["source"].get<std::string>().size() > 20);
                CHECK(row["value"].get<std::string>().size() > 0);
                ids.insert(row["id"].get<std::string>());
            }
            if (std::string(kind) == "models") {
                // A model with multi-token prediction modules also says how they are counted (apart).
                std::set<std::string> expected{"dropout",          "tied_embeddings", "attention",
                                               "activation_dtype", "params_compute",  "params_memory"};
                if (tally::model_from_preset(preset["id"].get<std::string>()).mtp_modules > 0) expected.insert("mtp");
                CHECK(ids == expected);
            } else {
                // fp8 and fp4 peaks and the interconnect appear where the preset has them.
                std::set<std::string> expected{"capacity_marketing", "capacity_reported", "usable_capacity",
                                               "dense_peak_bf16", "memory_bandwidth"};
                const auto hw = tally::find_hardware(preset["id"].get<std::string>());
                if (hw.interconnect.present) expected.insert("interconnect");
                if (hw.peak_fp8 > 0) expected.insert("dense_peak_fp8");
                if (hw.peak_fp4 > 0) expected.insert("dense_peak_fp4");
                CHECK(ids == expected);
            }
        }
    // Values are the engine's: Llama 3 8B is GQA without dropout, GPT-2 MHA with dropout 0.1.
    auto value = [&](const char* kind, const char* id, const char* row) {
        for (const auto& p : a[kind])
            if (p["id"] == id)
                for (const auto& r : p["assumptions"])
                    if (r["id"] == row) return r["value"].get<std::string>();
        return std::string("missing");
    };
    CHECK(value("models", "llama-3-8b", "attention").rfind("GQA", 0) == 0);
    CHECK(value("models", "llama-3-8b", "dropout").rfind("none", 0) == 0);
    CHECK(value("models", "gpt2-small", "attention").rfind("MHA", 0) == 0);
    CHECK(value("models", "gpt2-small", "dropout").find("attention 0.1") != std::string::npos);
    CHECK(value("hardware", "h100-sxm", "capacity_reported").rfind("85520809984 bytes", 0) == 0);
    // Blackwell's FP4 and the 72-GPU NVLink domain of an NVL72 rack are audited rows too.
    CHECK(value("hardware", "gb200-nvl72", "dense_peak_fp4") == "10000 TFLOP/s");
    CHECK(value("hardware", "gb200-nvl72", "interconnect").rfind("72 GPUs, 900 GB/s", 0) == 0);
    CHECK(value("hardware", "h100-sxm", "dense_peak_fp4") == "missing");
    CHECK(value("hardware", "mi355x", "capacity_reported").find("288000000000 bytes") == 0);
}
