// Tests of engine/src/numerics/tensor.cpp and the tensor_bytes API method (engine/api/api_tensor.cpp):
// bytes = ceil(elements · bits / 8), exact 64-bit integers, bad shapes named.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "accounting_helpers.h"
#include "tally/api.h"
#include "tally/numerics/dtype.h"
#include "tally/numerics/tensor.h"

using nlohmann::json;
using tally_test::error_field;

namespace {

json call(const json& args) { return json::parse(tally::api::call("tensor_bytes", args.dump())); }
// Bits per element as the tensor_bytes method reads them: the dtype table's tensor role.
unsigned bits(const char* id) { return tally::dtype_bits(tally::dtype_from_string(id, "dtype", tally::kTensorDType)); }

}  // namespace

TEST_CASE("a 49152×12288 matrix in fp32 is 2,415,919,104 bytes (2304 MiB)") {
    // GPT-3's first feed-forward matrix: d_ff = 4 · d_model = 49152, d_model = 12288 (Brown et al. 2020,
    // Table 2.1). Seed notes quote "2306 MB": the exact figure is 2,415.9 MB decimal = 2,304 MiB.
    const json envelope = call({{"shape", {49152, 12288}}, {"dtype", "fp32"}});
    REQUIRE(envelope["ok"] == true);
    const json& r = envelope["result"];
    CHECK(r["elements"] == 603'979'776);
    CHECK(r["bits_per_element"] == 32);
    CHECK(r["bytes"] == 2'415'919'104);
    CHECK(r["bytes"].is_number_integer());
    CHECK(r["bytes"].get<std::uint64_t>() == std::uint64_t{2304} << 20);  // 2304 MiB exactly
    CHECK(r["bytes"].get<std::uint64_t>() / 1'000'000 == 2415);           // 2,415.9 MB, not 2306
    // The same elements as GPT-3's params table reports for layers.*.mlp.up.weight.
    const json params = json::parse(tally::api::call("params", R"({"model":"gpt3-175b"})"))["result"];
    std::uint64_t up = 0;
    for (const json& t : params["tensors"])
        if (t["name"] == "layers.*.mlp.up.weight") up = t["count"].get<std::uint64_t>();
    CHECK(up == r["elements"].get<std::uint64_t>());
}

TEST_CASE("bytes per element follow the format: fp64 8, bf16 2, e4m3 and e5m2 1, int64 8") {
    const std::uint64_t shape[] = {1024, 1024};
    CHECK(tally::tensor_bytes(shape, bits("fp64")).bytes == 8u << 20);
    CHECK(tally::tensor_bytes(shape, bits("bf16")).bytes == 2u << 20);
    CHECK(tally::tensor_bytes(shape, bits("fp16")).bytes == 2u << 20);
    CHECK(tally::tensor_bytes(shape, bits("e4m3")).bytes == 1u << 20);
    CHECK(tally::tensor_bytes(shape, bits("e5m2")).bytes == 1u << 20);
    CHECK(tally::tensor_bytes(shape, bits("int64")).bytes == 8u << 20);
    CHECK(error_field([] { bits("fp12"); }) == "dtype");
}

TEST_CASE("fp4 packs two values per byte and an odd element count rounds up to a whole byte") {
    const std::uint64_t even[] = {4096, 4096};
    CHECK(tally::tensor_bytes(even, 4).bytes == 4096u * 4096u / 2);
    const std::uint64_t odd[] = {3, 5};  // 15 values × 4 bits = 60 bits -> 8 bytes
    const tally::TensorBytes t = tally::tensor_bytes(odd, 4);
    CHECK(t.elements == 15);
    CHECK(t.bytes == 8);
    const std::uint64_t one[] = {1};
    CHECK(tally::tensor_bytes(one, 4).bytes == 1);
}

TEST_CASE("a tensor whose byte count passes 2^64 is an error, not a wrap; one just below is exact") {
    // 2^61 elements of fp64 = 2^64 bytes: overflows although the element count itself fits.
    CHECK(call({{"shape", {std::uint64_t{1} << 31, std::uint64_t{1} << 30}}, {"dtype", "fp64"}})["error"]["field"] ==
          "shape");
    // 2^61 elements of fp32 = 2^63 bytes fits in 64 bits.
    const json ok = call({{"shape", {std::uint64_t{1} << 31, std::uint64_t{1} << 30}}, {"dtype", "fp32"}});
    REQUIRE(ok["ok"] == true);
    CHECK(ok["result"]["bytes"].get<std::uint64_t>() == std::uint64_t{1} << 63);
    // Elements overflowing: 2^40 · 2^40.
    CHECK(call({{"shape", {std::uint64_t{1} << 40, std::uint64_t{1} << 40}}, {"dtype", "int8"}})["error"]["field"] ==
          "shape");
}

TEST_CASE("tensor_bytes rejects empty, zero, negative, fractional, non-numeric and too many dimensions") {
    const auto bad = [](const json& shape) {
        const json e = call({{"shape", shape}, {"dtype", "fp32"}});
        INFO(shape.dump() << " -> " << e.dump());
        REQUIRE(e["ok"] == false);
        CHECK(e["error"]["field"] == "shape");
        return e["error"]["message"].get<std::string>();
    };
    CHECK_THAT(bad(json::array()), Catch::Contains("1 to 32 dimensions, got 0"));
    CHECK_THAT(bad({4096, 0}), Catch::Contains("shape[1]"));
    CHECK_THAT(bad({4096, -3}), Catch::Contains("shape[1] must be a whole number in [1, 2^63), got -3"));
    CHECK_THAT(bad({4096.5, 2}), Catch::Contains("shape[0]"));
    CHECK_THAT(bad({"4096", 2}), Catch::Contains("shape[0] must be a number"));
    CHECK_THAT(bad(std::vector<int>(33, 2)), Catch::Contains("got 33"));
    CHECK_THAT(bad(4096), Catch::Contains("array"));
    CHECK(call({{"shape", std::vector<int>(32, 2)}, {"dtype", "int8"}})["result"]["bytes"] == std::uint64_t{1} << 32);
    CHECK(call({{"shape", {4096.0, 2.0}}, {"dtype", "fp32"}})["result"]["bytes"] == 32768);  // whole floats are fine
    CHECK(call({{"shape", {2, 2}}})["error"]["field"] == "dtype");
    CHECK(call({{"shape", {2, 2}}, {"dtype", "fp128"}})["error"]["field"] == "dtype");
}
