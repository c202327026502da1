// Tests of engine/src/numerics/dtype.cpp: one table of dtypes, each field accepting only the dtypes of its role,
// errors naming the field and listing the allowed ids.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/numerics/blockscale.h"
#include "tally/numerics/dtype.h"
#include "tally/base/error.h"
#include "tally/numerics/precision.h"

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
    CHECK(tally::dtype_ids(tally::kStorageDType) == "fp32, bf16, fp16, fp8, int8, nvfp4, mxfp8, mxfp4, none");
    CHECK(tally::dtype_ids(tally::kPeakDType) == "fp32, tf32, bf16, fp16, fp8, fp4");
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
        CHECK(std::string(e.what()) == "compute_dtype must be one of fp32, tf32, bf16, fp16, fp8, fp4, got \"int8\"");
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
        {"training_cost", R"({"params":7e9,"tokens":1e12,"hardware":"h100-sxm","mfu":0.4,"dtype":"int4"})", "dtype"},
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
        if (d["id"] == "nvfp4") {
            CHECK(d["bytes"] == 0.5625);
            CHECK(d["block"] == 16);
            CHECK(d["scale_bits"] == 8);
        }
        if (d["id"] == "bf16") CHECK(!d.contains("block"));
    }
}

TEST_CASE("block-scaled storage: NVFP4 4.5 bits, MXFP8 8.25 bits, MXFP4 4.25 bits a value, scales included") {
    // NVFP4: 16 E2M1 values (64 bits) share one E4M3 scale (8 bits) = 72 bits / 16 = 4.5 (NVIDIA, "Introducing
    // NVFP4", 2025); MX: 32 elements share one E8M0 scale (OCP MX v1.0, sec. 5): (32·8 + 8) / 32 = 8.25 and
    // (32·4 + 8) / 32 = 4.25 bits.
    CHECK(tally::dtype_bytes_256(tally::DType::NVFP4) * 8 == 4.5 * 256);
    CHECK(tally::dtype_bytes_256(tally::DType::MXFP8) * 8 == 8.25 * 256);
    CHECK(tally::dtype_bytes_256(tally::DType::MXFP4) * 8 == 4.25 * 256);
    CHECK(tally::dtype_element_bytes(tally::DType::NVFP4) == 0.5625);
    CHECK(tally::dtype_bytes_256(tally::DType::BF16) == 512);
    CHECK(tally::dtype_bytes_256(tally::DType::None) == 0);
    // The same blocks as the block-quantization schemes the float widget runs (blockscale.h).
    const auto check_scheme = [](tally::DType type, tally::fp::Scheme scheme) {
        const auto s = tally::fp::scheme_info(scheme);
        const auto& d = tally::dtype_info(type);
        CHECK(d.block == static_cast<unsigned>(s.block_size));
        CHECK(d.scale_bits == tally::fp::format_info(s.scale).bits);
        CHECK(d.bits == tally::fp::format_info(s.element).bits);
    };
    check_scheme(tally::DType::NVFP4, tally::fp::Scheme::nvfp4);
    check_scheme(tally::DType::MXFP8, tally::fp::Scheme::mxfp8_e4m3);
    check_scheme(tally::DType::MXFP8, tally::fp::Scheme::mxfp8_e5m2);
    check_scheme(tally::DType::MXFP4, tally::fp::Scheme::mxfp4);
}

TEST_CASE("storage bytes of a count round up to a whole byte and name the field past 2^64") {
    CHECK(tally::dtype_storage_bytes("weights", 16, tally::DType::NVFP4) == 9);   // 16 · 4.5 bits = 72 bits
    CHECK(tally::dtype_storage_bytes("weights", 17, tally::DType::NVFP4) == 10);  // 9.5625 rounds up
    CHECK(tally::dtype_storage_bytes("weights", 32, tally::DType::MXFP8) == 33);
    CHECK(tally::dtype_storage_bytes("weights", 7'000'000'000, tally::DType::BF16) == 14'000'000'000);
    CHECK(error_field([] { tally::dtype_storage_bytes("kv_cache", ~std::uint64_t{0}, tally::DType::FP32); }) ==
          "kv_cache");
}
