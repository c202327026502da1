// Tests of engine/api/api_precision.cpp: the float_* methods the widget and CLI use.
#include <catch2/catch.hpp>

#include <string>

#include "api_helpers.h"
#include "tally/api.h"

using nlohmann::json;

using tally_test::ok;
const auto err = tally_test::error;

TEST_CASE("float_encode of 500 in E4M3 reports code 126, value 448, saturated, error 52") {
    const json r = ok("float_encode", {{"format", "e4m3"}, {"value", "500"}});
    CHECK(r["code"] == 126);
    CHECK(r["hex"] == "0x7e");
    CHECK(r["value"] == 448.0);
    CHECK(r["exact"] == "448");
    CHECK(r["class"] == "normal");
    CHECK(r["saturated"] == true);
    CHECK(r["overflowed"] == true);
    CHECK(r["error_abs"] == 52.0);
    CHECK(r["fields"]["exponent"] == 15);
    CHECK(r["fields"]["mantissa"] == 6);
    CHECK(r["unbiased_exponent"] == 8);
    CHECK(r["field_bits"]["exponent"] == "1111");
    CHECK(r["next"].is_null());
    CHECK(r["prev"]["value"] == 416.0);
    CHECK(r["formula"] == "(−1)^0 × 2^(15−7) × (1 + 6/8) = 448");
}

TEST_CASE("float_encode without saturation turns 500 into E4M3's NaN, with value null") {
    const json r = ok("float_encode", {{"format", "e4m3"}, {"value", 500}, {"saturate", false}});
    CHECK(r["code"] == 127);
    CHECK(r["class"] == "nan");
    CHECK(r["value"].is_null());
    CHECK(r["became_nan"] == true);
    CHECK(r["error_abs"].is_null());
}

TEST_CASE("float_encode accepts -0, inf and nan as text") {
    CHECK(ok("float_encode", {{"format", "fp16"}, {"value", "-0"}})["code"] == 0x8000);
    const json inf = ok("float_encode", {{"format", "fp16"}, {"value", "inf"}});
    CHECK(inf["code"] == 0x7C00);
    CHECK(inf["class"] == "inf");
    CHECK(inf["value"].is_null());
    CHECK(ok("float_encode", {{"format", "bf16"}, {"value", "nan"}})["code"] == 0x7FFF);
}

TEST_CASE("float_compare shows 1e-8 vanishing in fp16 and surviving in bf16") {
    const json r = ok("float_compare", {{"value", "1e-8"}});
    REQUIRE(r["results"].size() == 13);
    json fp16, bf16;
    for (const json& row : r["results"]) {
        if (row["format"] == "fp16") fp16 = row;
        if (row["format"] == "bf16") bf16 = row;
    }
    CHECK(fp16["value"] == 0.0);
    CHECK(fp16["underflowed"] == true);
    CHECK(bf16["code"] == 0x322C);
    CHECK(bf16["underflowed"] == false);
    CHECK(bf16["error_rel"].get<double>() < 0.004);  // bf16 keeps 8 significant bits: relative error < 2^-8
}

TEST_CASE("float_decode reads hex or code, flips a bit, and names the field on bad input") {
    CHECK(ok("float_decode", {{"format", "fp16"}, {"hex", "0x3c00"}})["value"] == 1.0);
    CHECK(ok("float_decode", {{"format", "e4m3"}, {"code", 0x38}})["value"] == 1.0);
    CHECK(ok("float_decode", {{"format", "fp16"}, {"hex", "0x3c00"}, {"flip_bit", 15}})["value"] == -1.0);
    CHECK(ok("float_decode", {{"format", "fp64"}, {"hex", "0x3ff0000000000000"}})["value"] == 1.0);
    CHECK(err("float_decode", {{"format", "e4m3"}, {"hex", "0x1234"}})["field"] == "hex");
    CHECK(err("float_decode", {{"format", "e4m3"}, {"hex", ""}})["field"] == "hex");
    CHECK(err("float_decode", {{"format", "fp16"}, {"hex", "xyz"}})["field"] == "hex");
    CHECK(err("float_decode", {{"format", "e4m3"}, {"code", 256}})["field"] == "code");
    CHECK(err("float_decode", {{"format", "e4m3"}, {"code", -1}})["field"] == "code");
    CHECK(err("float_decode", {{"format", "e4m3"}, {"hex", "0x7e"}, {"flip_bit", 8}})["field"] == "flip_bit");
    CHECK(err("float_decode", {{"format", "e4m3"}, {"hex", "0x7e"}, {"flip_bit", -1}})["field"] == "flip_bit");
    CHECK(err("float_encode", {{"format", "e4m3"}, {"value", "abc"}})["field"] == "value");
    CHECK(err("float_encode", {{"format", "e4m3"}, {"value", ""}})["field"] == "value");
    CHECK(err("float_encode", {{"format", "fp12"}, {"value", "1"}})["field"] == "format");
    CHECK(err("float_encode", {{"format", "e4m3"}, {"value", 1}, {"rounding", "sideways"}})["field"] == "rounding");
}

TEST_CASE("float_formats lists 13 formats with E4M3's max 448 and 254 finite values") {
    const json r = ok("float_formats", json::object());
    REQUIRE(r["formats"].size() == 13);
    bool seen = false;
    for (const json& f : r["formats"]) {
        if (f["name"] != "e4m3") continue;
        seen = true;
        CHECK(f["constants"]["max"]["value"] == 448.0);
        CHECK(f["constants"]["min_subnormal"]["exact"] == "0.001953125");
        CHECK(f["constants"]["epsilon"]["value"] == 0.125);
        CHECK(f["constants"]["finite_count"] == 254);
        CHECK(f["has_inf"] == false);
    }
    CHECK(seen);
}

TEST_CASE("float_table lists E2M1's eight non-negative values and fp16's 31 binades") {
    const json v = ok("float_table", {{"format", "e2m1"}, {"kind", "values"}});
    CHECK(v["values"] == json::array({0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0}));
    const json g = ok("float_table", {{"format", "fp16"}, {"kind", "gaps"}});
    CHECK(g["binades"].size() == 31);  // subnormals + exponents -14..15
    CHECK(g["binades"][1]["gap"] == 1.0 / (1 << 24));
    CHECK(g["binades"][30]["gap"] == 32.0);
    CHECK(err("float_table", {{"format", "fp32"}, {"kind", "values"}})["field"] == "kind");
}

TEST_CASE("float_encode_batch hashes the same codes for the same seed and different ones for another seed") {
    const json a = ok("float_encode_batch", {{"format", "e4m3"}, {"count", 10000}, {"seed", 5}});
    const json b = ok("float_encode_batch", {{"format", "e4m3"}, {"count", 10000}, {"seed", 5}});
    const json c = ok("float_encode_batch", {{"format", "e4m3"}, {"count", 10000}, {"seed", 6}});
    CHECK(a["hash"] == b["hash"]);
    CHECK(a["hash"] != c["hash"]);
    CHECK(err("float_encode_batch", {{"format", "e4m3"}, {"count", 0}})["field"] == "count");
}

TEST_CASE("float_explore answers the float explorer in one call: stored value, every format, gaps and blocks") {
    const json r = ok("float_explore", {{"format", "e4m3"},
                                        {"value", "500"},
                                        {"table", true},
                                        {"blocks", {{"generate", {{"n", 64}, {"seed", 1}, {"outlier", 0}}}}}});
    CHECK(r["stored"] == ok("float_encode", {{"format", "e4m3"}, {"value", "500"}}));
    CHECK(r["compare"] == ok("float_compare", {{"value", "500"}}));
    CHECK(r["table"]["gaps"] == ok("float_table", {{"format", "e4m3"}, {"kind", "gaps"}})["binades"]);
    CHECK(r["table"]["values"] == ok("float_table", {{"format", "e4m3"}, {"kind", "values"}})["values"]);
    CHECK(r["blocks"]["results"].size() > 0);
    CHECK(r["stored"]["notes"][0]["text"] == "overflowed: saturated to +max");
}

TEST_CASE("float_explore decodes a flipped bit, compares its exact value, and keeps a bad block argument apart") {
    const json r = ok("float_explore",
                      {{"format", "bf16"}, {"hex", "0x3f80"}, {"flip_bit", 0}, {"blocks", {{"values", "1, banana"}}}});
    CHECK(r["stored"]["hex"] == "0x3f81");
    CHECK(r["compare"]["input_exact"] == r["stored"]["exact"]);
    CHECK_FALSE(r.contains("table"));
    CHECK_FALSE(r.contains("blocks"));
    CHECK(r["blocks_error"]["field"].get<std::string>().find("values") != std::string::npos);
    CHECK(err("float_explore", {{"format", "bf16"}, {"hex", "0x3f80"}, {"value", "1"}})["field"] == "value");
    CHECK(err("float_explore", {{"format", "bf16"}, {"value", "1"}, {"table", "yes"}})["field"] == "table");
}

TEST_CASE("float formats and block schemes carry their display names from the engine") {
    const json f = ok("float_formats", json::object());
    CHECK(f["formats"][5]["display_name"] == "fp8 E4M3 (OCP)");
    CHECK(f["roundings"][0] == json{{"name", "nearest_even"}, {"label", "nearest, ties to even"}});
    const json b = ok("block_compare", {{"values", "1, 2, 3"}, {"schemes", {"nvfp4"}}});
    CHECK(b["results"][0]["display_name"] == "NVFP4 (E2M1, E4M3 scale / 16, fp32 / tensor)");
}
