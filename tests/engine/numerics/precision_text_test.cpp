// Tests of engine/src/numerics/precision_text.cpp: the sentences the CLI and the widgets show about a stored value.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "tally/numerics/precision.h"
#include "tally/numerics/precision_text.h"

using namespace tally::fp;

namespace {

std::vector<StoreNote> store(Format f, double x, Round r = Round::nearest_even) {
    return store_notes(f, x, encode(f, x, r), r);
}
std::vector<StoreNote> store(Format f, double x, bool saturate) {
    return store_notes(f, x, encode(f, x, Round::nearest_even, saturate), Round::nearest_even);
}

}  // namespace

TEST_CASE("storing 1.5 in bf16 is exact and 0.1 is rounded, named by its rounding mode") {
    const auto exact = store(Format::bf16, 1.5);
    REQUIRE(exact.size() == 1);
    CHECK(exact[0].text == "exact");
    CHECK(exact[0].kind == "good");
    const auto rounded = store(Format::bf16, 0.1, Round::toward_zero);
    REQUIRE(rounded.size() == 1);
    CHECK(rounded[0].text == "rounded (toward zero)");
    CHECK(rounded[0].kind == "");
}

TEST_CASE("500 in E4M3 saturates to +max by default and overflows to NaN without saturation") {
    CHECK(store(Format::e4m3, 500.0, true)[0].text == "overflowed: saturated to +max");
    CHECK(store(Format::e4m3, -500.0, true)[0].text == "overflowed: saturated to −max");
    const auto nan = store(Format::e4m3, 500.0, false);
    CHECK(nan[0].text == "overflowed to NaN");
    CHECK(nan[0].kind == "warn");
    CHECK(store(Format::fp16, 1e6, false)[0].text == "overflowed to inf");
}

TEST_CASE("1e-8 underflows to 0 in fp16; 2^-26 rounded up is fp16's smallest subnormal 2^-24, not zero") {
    const auto zero = store(Format::fp16, 1e-8);
    CHECK(zero[0].text == "underflowed to 0");
    CHECK(zero[0].kind == "warn");
    // Rounded to nearest, 2^-26 is below half of 2^-24 and becomes zero; rounded up it is the smallest subnormal.
    CHECK(store(Format::fp16, std::ldexp(1.0, -26))[0].text == "underflowed to 0");
    const auto sub = store(Format::fp16, std::ldexp(1.0, -26), Round::up);
    REQUIRE(sub.size() == 2);
    CHECK(sub[0].text == "rounded (up (toward +∞))");
    CHECK(sub[1].text == "subnormal: fewer significant bits");
}

TEST_CASE("E8M0 has no zero: 0 is stored as its smallest value 2^-127") {
    const auto notes = store(Format::e8m0, 0.0);
    CHECK(notes[0].text == "no zero in e8m0: stored 2^-127, its smallest value");
}

TEST_CASE("formats without infinity or NaN say what they did with one") {
    CHECK(store(Format::e2m1, INFINITY)[0].text == "no infinity in e2m1: saturated to +max (6)");
    CHECK(store(Format::e2m1, NAN)[0].text == "no NaN in e2m1: stored +max");
    CHECK(store(Format::e4m3, INFINITY, false)[0].text == "no infinity in e4m3: became NaN");
    CHECK(store(Format::fp32, NAN)[0].text == "NaN stays NaN");
}

TEST_CASE("a decoded subnormal code is flagged; a normal one has nothing to say") {
    CHECK(decode_notes(Format::fp16, 0x0001).size() == 1);
    CHECK(decode_notes(Format::fp16, 0x3c00).empty());
}

TEST_CASE("value formulas spell out sign, biased exponent and mantissa: E4M3 0x7e = 448, fp16 0x0001 = 2^-24") {
    CHECK(value_formula(Format::e4m3, 0x7e) == "(−1)^0 × 2^(15−7) × (1 + 6/8) = 448");
    CHECK(value_formula(Format::fp16, 0x0001).rfind("(−1)^0 × 2^(1−15) × (0 + 1/1024) = 0.0000000596", 0) == 0);
    CHECK(value_formula(Format::e8m0, 0x7f) == "2^(127−127) = 1");
    CHECK(significand_text(Format::e4m3, 0x7e) == "1.75");
    CHECK(significand_text(Format::fp16, 0x7c00).empty());
}

TEST_CASE("every format and rounding mode has a display name distinct from the others") {
    std::vector<std::string> names;
    for (Format f : all_formats()) names.push_back(format_display_name(f));
    for (size_t i = 0; i < names.size(); ++i) {
        CHECK(names[i] != "?");
        for (size_t j = i + 1; j < names.size(); ++j) CHECK(names[i] != names[j]);
    }
    CHECK(std::string(round_label(Round::nearest_away)) == "nearest, ties away (TF32)");
}

TEST_CASE("E4M3's binades: subnormals with gap 2^-9, then 2^-6 up to 448 where neighbours are 32 apart") {
    const auto rows = binades(Format::e4m3);
    REQUIRE(rows.size() == 16);  // the subnormal row, then exponents -6 .. 8 (max 448 = 1.75 · 2^8)
    CHECK(rows.front().subnormal);
    CHECK(rows.front().gap == std::ldexp(1.0, -9));
    CHECK(rows.front().count == 7);
    CHECK(rows[1].exponent == -6);
    CHECK(rows.back().exponent == 8);
    CHECK(rows.back().to == 448.0);
    CHECK(rows.back().gap == 32.0);
    CHECK(rows.back().count == 7);  // S.1111.111 is NaN, so the top binade stops one short
    uint64_t total = 0;
    for (const auto& b : rows) total += b.count;
    CHECK(total * 2 + 2 == finite_count(Format::e4m3));  // ± every positive value, plus +0 and -0
}

TEST_CASE("NaN rules in words: IEEE pattern for fp16, one code for E4M3FNUZ, none for E2M1") {
    CHECK(std::string(nan_rule_text(Format::fp16)) == "exponent all ones, mantissa non-zero");
    CHECK(std::string(nan_rule_text(Format::e4m3fnuz)) == "0x80 only (the would-be negative zero)");
    CHECK(std::string(nan_rule_text(Format::e2m1)) == "none (NaN inputs become +max)");
}
