// Tests of engine/src/dtype.cpp: one table of dtypes, each field accepting only the dtypes of its role,
// errors naming the field and listing the allowed ids.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/dtype.h"
#include "tally/error.h"

using nlohmann::json;
using tally_test::error_field;

TEST_CASE("every dtype enumerator has exactly one table row, with a unique id") {
    std::set<std::string> ids;
    for (const tally::DTypeInfo& d : tally::dtypes()) {
        CHECK(ids.insert(d.id).second);
        CHECK(&tally::dtype_info(d.type) == &d);
        CHECK(std::string(tally::to_string(d.type)) == d.id);
    }
    CHECK(ids.size() == static_cast<std::size_t>(tally::DType::None) + 1);
}

TEST_CASE("storage widths: fp32 4 bytes, bf16 and fp16 2, fp8 and int8 1, tf32 stored in 4, fp4 4 bits") {
    // IEEE 754-2019; TF32 is held in a 32-bit register (NVIDIA A100 whitepaper, 2020); OCP OFP8 and MX v1.0.
    CHECK(tally::dtype_bytes(tally::DType::FP32) == 4);
    CHECK(tally::dtype_bytes(tally::DType::BF16) == 2);
    CHECK(tally::dtype_bytes(tally::DType::FP16) == 2);
    CHECK(tally::dtype_bytes(tally::DType::FP8) == 1);
    CHECK(tally::dtype_bytes(tally::DType::INT8) == 1);
    CHECK(tally::dtype_bytes(tally::DType::TF32) == 4);
    CHECK(tally::dtype_bits(tally::DType::FP4) == 4);
    CHECK(tally::dtype_bytes(tally::DType::None) == 0);
}

TEST_CASE("each role lists its dtypes in table order") {
    CHECK(tally::dtype_ids(tally::kStorageDType) == "fp32, bf16, fp16, fp8, int8, none");
    CHECK(tally::dtype_ids(tally::kPeakDType) == "fp32, tf32, bf16, fp16, fp8");
    CHECK(tally::dtype_ids(tally::kTensorDType) ==
          "fp64, fp32, bf16, fp16, fp8, e4m3, e5m2, int64, int32, int8, fp4, int4");
}

TEST_CASE("a dtype outside the field's role is an error naming the field and listing the role's ids") {
    CHECK(tally::dtype_from_string("tf32", "dtype", tally::kPeakDType) == tally::DType::TF32);
    CHECK(error_field([] { tally::dtype_from_string("tf32", "weights", tally::kStorageDType); }) == "weights");
    try {
        tally::dtype_from_string("int8", "compute_dtype", tally::kPeakDType);
        FAIL("int8 has no dense peak role");
    } catch (const tally::InputError& e) {
        CHECK(std::string(e.what()) == "compute_dtype must be one of fp32, tf32, bf16, fp16, fp8, got \"int8\"");
    }
}

TEST_CASE("every API method reading a dtype rejects one outside its role on the same field") {
    struct Case {
        const char* method;
        const char* args;
        const char* field;
    };
    const Case cases[] = {
        {"memory_budget", R"({"model":"llama-2-7b","weights":"tf32"})", "weights"},
        {"kv_cache", R"({"model":"llama-2-7b","context":4096,"kv_dtype":"e4m3"})", "kv_dtype"},
        {"inference", R"({"model":"llama-2-7b","context":4096,"hardware":"h100-sxm","compute_dtype":"int8"})",
         "compute_dtype"},
        {"roofline", R"({"dtype":"int8"})", "dtype"},
        {"training_cost", R"({"params":7e9,"tokens":1e12,"hardware":"h100-sxm","mfu":0.4,"dtype":"fp4"})", "dtype"},
        {"tensor_bytes", R"({"shape":[4],"dtype":"tf32"})", "dtype"},
    };
    for (const Case& c : cases) {
        INFO(c.method);
        const json out = json::parse(tally::api::call(c.method, c.args));
        REQUIRE(out["ok"] == false);
        CHECK(out["error"]["field"] == c.field);
        CHECK(out["error"]["message"].get<std::string>().find("must be one of") != std::string::npos);
    }
}

TEST_CASE("the presets method lists the dtype table with bits, bytes and roles") {
    const json r = json::parse(tally::api::call("presets", "{}"))["result"];
    REQUIRE(r["dtypes"].size() == tally::dtypes().size());
    for (const json& d : r["dtypes"]) {
        if (d["id"] == "bf16") {
            CHECK(d["bytes"] == 2);
            CHECK(d["bits"] == 16);
            CHECK(d["roles"] == json::array({"storage", "peak", "tensor"}));
        }
        if (d["id"] == "fp4") CHECK(d["bytes"] == 0.5);
    }
}
