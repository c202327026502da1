// Tests of engine/api/api_finetune.cpp: the finetune method's arguments (PEFT-style target lists, mode-specific
// fields) and its capacity verdict with paged optimizer states.
#include <catch2/catch.hpp>

#include "api_helpers.h"

using nlohmann::json;
using tally_test::error;
using tally_test::ok;

TEST_CASE("finetune reads PEFT's target_modules list and the comma form alike") {
    const json listed = ok("finetune", {{"model", "llama-2-7b"}, {"lora_targets", {"q_proj", "v_proj"}}});
    const json comma = ok("finetune", {{"model", "llama-2-7b"}, {"lora_targets", "q,v"}});
    CHECK(listed == comma);
    CHECK(listed["lora"]["params"] == 4'194'304);  // PEFT, Llama-2-7B r 8 q,v
    CHECK(listed["lora"]["scaling"] == 2.0);       // alpha 16 / r 8
    CHECK(error("finetune", {{"model", "llama-2-7b"}, {"lora_targets", {"q", 3}}})["field"] == "lora_targets");
}

TEST_CASE("finetune full rejects the adapter fields it would ignore, naming each") {
    for (const char* field : {"lora_rank", "lora_targets", "base_dtype", "double_quant"}) {
        json args = {{"model", "llama-2-7b"}, {"method", "full"}};
        args[field] = field == std::string("lora_rank") ? json(8) : json("q");
        CHECK(error("finetune", args)["field"] == field);
    }
}

TEST_CASE("finetune's verdict: a budget over capacity may still fit once paged optimizer states leave the GPU") {
    const json args = {{"model", "llama-2-7b"},     {"method", "full"}, {"recipe", "bf16_adamw_no_master"},
                       {"optimizer", "adamw_8bit"}, {"paged", true},    {"recompute", "full"}};
    const json probe = ok("finetune", args);
    const std::uint64_t total = probe["per_gpu_bytes"]["total"], floor = probe["paged_floor_bytes"];
    REQUIRE(floor < total);
    json between = args;
    between["capacity_bytes"] = (floor + total) / 2;
    const json r = ok("finetune", between);
    CHECK(r["fits"] == false);
    CHECK(r["fits_paged"] == true);
    CHECK(ok("finetune", {{"model", "llama-2-7b"}})["fits"].is_null());
}

TEST_CASE("finetune trains adapters and computes in float dtypes only: block-scaled and 8-bit formats are refused") {
    for (const char* dtype : {"nvfp4", "mxfp8", "mxfp4", "fp8", "int8"}) {
        CAPTURE(dtype);
        const json adapter = error("finetune", {{"model", "llama-2-7b"}, {"adapter_dtype", dtype}});
        CHECK(adapter["field"] == "adapter_dtype");
        CHECK(adapter["message"].get<std::string>().find("fp32, bf16, fp16") != std::string::npos);
        CHECK(error("finetune", {{"model", "llama-2-7b"}, {"compute_dtype", dtype}})["field"] == "compute_dtype");
    }
}
