// Tests of engine/api/api_blockscale.cpp: the block_* methods the widget and CLI use.
#include <catch2/catch.hpp>

#include <string>

#include "api_helpers.h"
#include "tally/api.h"

using nlohmann::json;

using tally_test::ok;
const auto err = tally_test::error;

TEST_CASE("block_compare quantizes a generated vector with MXFP4, NVFP4 and per-tensor fp8") {
    const json r = ok("block_compare", {{"generate", {{"n", 64}, {"seed", 3}, {"outlier", 40}}}});
    REQUIRE(r["results"].size() == 3);
    CHECK(r["results"][0]["scheme"] == "mxfp4");
    CHECK(r["results"][0]["scales"].size() == 2);
    CHECK(r["results"][1]["scales"].size() == 4);
    CHECK(r["values"].size() == 64);
    CHECK(r["values"][64 / 3] == 40.0);
    CHECK(ok("block_quantize", {{"scheme", "mxfp4"}, {"values", "1, 2, 3, -6"}})["dequantized"] ==
          json::array({1.0, 2.0, 3.0, -6.0}));
    CHECK(err("block_quantize", {{"scheme", "mxfp4"}, {"values", "1, abc"}})["field"] == "values[1]");
    CHECK(err("block_quantize", {{"scheme", "mxfp9"}, {"values", "1"}})["field"] == "scheme");
    CHECK(err("block_quantize", {{"scheme", "mxfp4"}, {"values", ""}})["field"] == "values");
}
