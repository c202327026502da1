// Tests of engine/include/tally/numerics/precision.h and engine/src/numerics/precision_names.cpp: the table-driven float codec.
// (The exhaustive comparison with NVIDIA's conversion code is engine/tools/float_check.cpp, a ctest entry.)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tally/base/error.h"
#include "tally/numerics/precision.h"
#include "tally/numerics/precision_text.h"

using namespace tally::fp;

namespace {
double value(Format f, double x, Round r = Round::nearest_even) {
    return decode_to_double(f, encode_from_double(f, x, r));
}
double value_nosat(Format f, double x) {
    return decode_to_double(f, encode_from_double(f, x, Round::nearest_even, false));
}
// The formats of 16 bits or fewer: few enough codes to check every one.
std::vector<Format> small_formats() {
    std::vector<Format> out;
    for (Format f : all_formats())
        if (format_info(f).bits <= 16) out.push_back(f);
    return out;
}
}  // namespace

TEST_CASE("every format's largest finite value matches its specification") {
    // IEEE 754-2019 binary16/32/64; OCP OFP8 rev 1.0 (E4M3 448, E5M2 57344); OCP MX v1.0 (E2M3 7.5, E3M2 28,
    // E2M1 6, E8M0 2^127); FNUZ (arXiv:2206.02915): E4M3FNUZ 240, E5M2FNUZ 57344.
    CHECK(decode_to_double(Format::fp64, max_code(Format::fp64)) == 1.7976931348623157e308);
    CHECK(decode_to_double(Format::fp32, max_code(Format::fp32)) == 3.4028234663852886e38);
    CHECK(decode_to_double(Format::tf32, max_code(Format::tf32)) ==
          (2.0 - std::ldexp(1.0, -10)) * std::ldexp(1.0, 127));
    CHECK(decode_to_double(Format::fp16, max_code(Format::fp16)) == 65504);
    CHECK(decode_to_double(Format::bf16, max_code(Format::bf16)) == 3.3895313892515355e38);
    CHECK(decode_to_double(Format::e4m3, max_code(Format::e4m3)) == 448);
    CHECK(decode_to_double(Format::e5m2, max_code(Format::e5m2)) == 57344);
    CHECK(decode_to_double(Format::e4m3fnuz, max_code(Format::e4m3fnuz)) == 240);
    CHECK(decode_to_double(Format::e5m2fnuz, max_code(Format::e5m2fnuz)) == 57344);
    CHECK(decode_to_double(Format::e2m3, max_code(Format::e2m3)) == 7.5);
    CHECK(decode_to_double(Format::e3m2, max_code(Format::e3m2)) == 28);
    CHECK(decode_to_double(Format::e2m1, max_code(Format::e2m1)) == 6);
    CHECK(decode_to_double(Format::e8m0, max_code(Format::e8m0)) == std::ldexp(1.0, 127));
}

TEST_CASE("smallest positive values: fp16 2^-24, E4M3 2^-9, E5M2 2^-16, FNUZ 2^-10 and 2^-17, E2M1 0.5, E8M0 2^-127") {
    auto minsub = [](Format f) { return decode_to_double(f, min_subnormal_code(f)); };
    CHECK(minsub(Format::fp16) == std::ldexp(1.0, -24));
    CHECK(minsub(Format::bf16) == std::ldexp(1.0, -133));
    CHECK(minsub(Format::fp32) == std::ldexp(1.0, -149));
    CHECK(minsub(Format::fp64) == std::ldexp(1.0, -1074));
    CHECK(minsub(Format::e4m3) == std::ldexp(1.0, -9));
    CHECK(minsub(Format::e5m2) == std::ldexp(1.0, -16));
    CHECK(minsub(Format::e4m3fnuz) == std::ldexp(1.0, -10));
    CHECK(minsub(Format::e5m2fnuz) == std::ldexp(1.0, -17));
    CHECK(minsub(Format::e2m3) == 0.125);
    CHECK(minsub(Format::e3m2) == 0.0625);
    CHECK(minsub(Format::e2m1) == 0.5);
    CHECK(minsub(Format::e8m0) == std::ldexp(1.0, -127));
    CHECK(decode_to_double(Format::fp16, min_normal_code(Format::fp16)) == std::ldexp(1.0, -14));
    CHECK(decode_to_double(Format::e4m3, min_normal_code(Format::e4m3)) == std::ldexp(1.0, -6));
}

TEST_CASE("finite value counts: E4M3 254, E5M2 248, E4M3FNUZ 255, E2M1 16, E8M0 255, fp16 63488") {
    CHECK(finite_count(Format::e4m3) == 254);  // 256 minus the two NaNs S.1111.111
    CHECK(finite_count(Format::e5m2) == 248);  // minus 2 infinities and 6 NaNs
    CHECK(finite_count(Format::e4m3fnuz) == 255);
    CHECK(finite_count(Format::e5m2fnuz) == 255);
    CHECK(finite_count(Format::e2m3) == 64);
    CHECK(finite_count(Format::e2m1) == 16);
    CHECK(finite_count(Format::e8m0) == 255);
    CHECK(finite_count(Format::fp16) == 65536 - 2048);
    CHECK(finite_count(Format::fp64) == 18437736874454810624ull);  // 2^64 - 2^53
    // The formula agrees with counting, for every format of 16 bits or fewer.
    for (Format f : small_formats()) {
        const FormatInfo fi = format_info(f);
        uint64_t n = 0;
        for (uint64_t c = 0; c < (1ull << fi.bits); ++c) {
            const Class k = classify(f, c);
            n += k != Class::nan && k != Class::inf;
        }
        CHECK(n == finite_count(f));
    }
}

TEST_CASE("E2M1 holds exactly 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives") {
    const double expect[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    for (uint64_t c = 0; c < 8; ++c) {
        CHECK(decode_to_double(Format::e2m1, c) == expect[c]);
        CHECK(decode_to_double(Format::e2m1, c | 8) == -expect[c]);
        CHECK(classify(Format::e2m1, c) != Class::nan);
    }
}

TEST_CASE("500 saturates to 448 in E4M3 and becomes NaN without saturation") {
    const Encoded e = encode(Format::e4m3, 500, Round::nearest_even, true);
    CHECK(e.code == 0x7E);
    CHECK((e.flags & kSaturated));
    CHECK(encode_from_double(Format::e4m3, 500, Round::nearest_even, false) == 0x7F);
    CHECK(encode_from_double(Format::e4m3, -500, Round::nearest_even, false) == 0xFF);  // NaN keeps the sign
    CHECK(classify(Format::e4m3, 0x7F) == Class::nan);
}

TEST_CASE("ties round to even: E4M3 464 -> 448, E5M2 61440 -> inf, E2M1 5 -> 4 and 7 -> 6 (saturated)") {
    CHECK(value_nosat(Format::e4m3, 464) == 448);  // 448 = 1.110b x 2^8 is even
    CHECK(std::isnan(value_nosat(Format::e4m3, 464.0001)));
    CHECK(std::isinf(value_nosat(Format::e5m2, 61440)));  // 57344 = 1.11b x 2^15 is odd: the tie goes up
    CHECK(value(Format::e5m2, 61440) == 57344);           // saturating
    CHECK(value_nosat(Format::e5m2, 61439.99) == 57344);
    CHECK(value(Format::e2m1, 5) == 4);
    CHECK(value(Format::e2m1, 2.5) == 2);
    CHECK(value(Format::e2m1, 0.25) == 0);  // half the smallest subnormal ties to zero
    CHECK(value(Format::e2m1, 0.250001) == 0.5);
    CHECK(value(Format::e2m1, 7) == 6);  // the tie goes up to 8, which saturates to 6
    CHECK(decode_to_double(Format::fp16, encode_from_double(Format::fp16, 65520, Round::nearest_even, true)) ==
          65504);                                         // saturating (not fp16's default) ...
    CHECK(std::isinf(value_nosat(Format::fp16, 65520)));  // ... and IEEE: the tie above 65504 goes to inf
    CHECK(value_nosat(Format::fp16, 65519.99) == 65504);
}

TEST_CASE("1e-8 underflows to zero in fp16 but survives in bf16; 0.1 is 0x2E66 in fp16") {
    const Encoded h = encode(Format::fp16, 1e-8);
    CHECK(h.code == 0);
    CHECK((h.flags & kUnderflow));
    CHECK(encode_from_double(Format::bf16, 1e-8) == 0x322C);
    CHECK(std::fabs(value(Format::bf16, 1e-8) - 1e-8) < 1e-10);
    CHECK(encode_from_double(Format::fp16, 0.1) == 0x2E66);
    CHECK(value(Format::fp16, 0.1) == 0.0999755859375);
    CHECK(encode_from_double(Format::bf16, 0.1) == 0x3DCD);
    CHECK(encode_from_double(Format::fp16, -0.0) == 0x8000);
    CHECK((encode(Format::fp16, 3e-6).flags & kSubnormal));
}

TEST_CASE("NaN inputs give the positive canonical NaN, or +max in formats without NaN (as NVIDIA's code does)") {
    const double qnan = std::nan(""), neg_nan = -std::nan("");
    CHECK(encode_from_double(Format::fp16, neg_nan) == 0x7FFF);
    CHECK(encode_from_double(Format::bf16, neg_nan) == 0x7FFF);
    CHECK(encode_from_double(Format::e4m3, neg_nan) == 0x7F);
    CHECK(encode_from_double(Format::e5m2, qnan) == 0x7F);
    CHECK(encode_from_double(Format::e4m3fnuz, qnan) == 0x80);
    CHECK(encode_from_double(Format::e2m1, neg_nan) == 0x7);
    CHECK(encode_from_double(Format::e2m3, qnan) == 0x1F);
    CHECK(encode_from_double(Format::e8m0, qnan) == 0xFF);
}

TEST_CASE("infinity saturates to max, or stays infinite / becomes NaN without saturation") {
    const double inf = HUGE_VAL;
    CHECK(encode_from_double(Format::e4m3, -inf, Round::nearest_even, true) == 0xFE);
    CHECK(encode_from_double(Format::e4m3, -inf, Round::nearest_even, false) == 0xFF);
    CHECK(encode_from_double(Format::e5m2, inf, Round::nearest_even, false) == 0x7C);
    CHECK(encode_from_double(Format::fp16, -inf) == 0xFC00);
    CHECK(encode_from_double(Format::e2m1, inf, Round::nearest_even, false) == 0x7);  // no inf, no NaN: max
    CHECK(encode_from_double(Format::e5m2fnuz, inf, Round::nearest_even, false) == 0x80);
    // Round toward zero never produces inf from a finite value (IEEE 754 7.4).
    CHECK(encode_from_double(Format::fp16, 1e6, Round::toward_zero, false) == 0x7BFF);
}

TEST_CASE("FNUZ formats have no negative zero: -0 and tiny negatives encode to 0x00") {
    CHECK(encode_from_double(Format::e4m3fnuz, -0.0) == 0x00);
    CHECK(encode_from_double(Format::e4m3fnuz, -1e-30) == 0x00);
    CHECK(classify(Format::e4m3fnuz, 0x80) == Class::nan);
    CHECK(decode_to_double(Format::e4m3fnuz, 0x08) == std::ldexp(1.0, -7));  // min normal with bias 8
}

TEST_CASE("E8M0 rounds toward zero (floor of log2) or up (ceil), ignores the sign and has no zero") {
    CHECK(encode_from_double(Format::e8m0, 500, Round::toward_zero) == 127 + 8);
    CHECK(encode_from_double(Format::e8m0, 500, Round::up) == 127 + 9);
    CHECK(encode_from_double(Format::e8m0, 512, Round::up) == 127 + 9);
    CHECK(encode_from_double(Format::e8m0, -500, Round::toward_zero) == 127 + 8);
    CHECK(encode_from_double(Format::e8m0, 0.0, Round::up) == 0x00);  // 2^-127, the smallest value
    CHECK(encode_from_double(Format::e8m0, 1e-300, Round::toward_zero) == 0x00);
    CHECK(encode_from_double(Format::e8m0, HUGE_VAL, Round::toward_zero, true) == 0xFE);
    CHECK(encode_from_double(Format::e8m0, HUGE_VAL, Round::toward_zero, false) == 0xFF);
    CHECK(encode_from_double(Format::e8m0, 3e38, Round::up, false) == 0xFF);  // 2^128 does not exist: NaN
    CHECK(encode_from_double(Format::e8m0, 3e38, Round::up, true) == 0xFE);
}

TEST_CASE("TF32's own rounding sends ties away from zero; the default sends them to even") {
    const double tie = 1.0 + std::ldexp(1.0, -11);  // halfway between 1 and 1 + 2^-10
    CHECK(value(Format::tf32, tie, Round::nearest_even) == 1.0);
    CHECK(value(Format::tf32, tie, Round::nearest_away) == 1.0 + std::ldexp(1.0, -10));
    CHECK(value(Format::tf32, -tie, Round::nearest_away) == -(1.0 + std::ldexp(1.0, -10)));
}

TEST_CASE("every code of every format up to 16 bits decodes to a value that encodes back to the same code") {
    for (Format f : small_formats()) {
        const FormatInfo fi = format_info(f);
        uint64_t bad = 0;
        for (uint64_t c = 0; c < (1ull << fi.bits); ++c) {
            const double v = decode_to_double(f, c);
            if (std::isnan(v)) {
                bad += classify(f, c) != Class::nan;
                continue;
            }
            bad += encode_from_double(f, v, Round::nearest_even, false) != c;
        }
        INFO(fi.name);
        CHECK(bad == 0);
    }
}

TEST_CASE("next_up and next_down step to the adjacent value and undo each other") {
    for (Format f : small_formats()) {
        const FormatInfo fi = format_info(f);
        uint64_t bad = 0;
        for (uint64_t c = 0; c < (1ull << fi.bits); ++c) {
            if (classify(f, c) == Class::nan) continue;
            const double v = decode_to_double(f, c);
            uint64_t up, back;
            if (next_up(f, c, &up)) {
                bad += !(decode_to_double(f, up) > v);
                // No code lies strictly between (checked through the encoder at the midpoint).
                if (std::isfinite(decode_to_double(f, up)) && std::isfinite(v) && v != 0) {
                    const double mid = v + (decode_to_double(f, up) - v) * 0.25;
                    const double got = decode_to_double(f, encode_from_double(f, mid));
                    bad += !(got == v || (v == 0 && got == 0));
                }
                if (next_down(f, up, &back)) bad += decode_to_double(f, back) != v && !(v == 0);
            } else {
                bad += !(std::isinf(v) || c == max_code(f));
            }
        }
        INFO(fi.name);
        CHECK(bad == 0);
    }
    uint64_t out = 0;
    CHECK(next_up(Format::fp16, 0x8000, &out));  // -0 -> smallest positive subnormal
    CHECK(out == 0x0001);
    CHECK(!next_up(Format::e4m3, 0x7E, &out));  // 448 has no successor: 0x7F is NaN
    CHECK(next_up(Format::e5m2, 0x7B, &out));
    CHECK(out == 0x7C);  // 57344 -> inf
    CHECK(!next_down(Format::e8m0, 0x00, &out));
}

TEST_CASE("ulp is the spacing of the value's binade: 1 in fp16 has ulp 2^-10, 448 in E4M3 has ulp 32") {
    CHECK(ulp(Format::fp16, 0x3C00) == std::ldexp(1.0, -10));
    CHECK(ulp(Format::e4m3, 0x7E) == 32);
    CHECK(ulp(Format::fp16, 0x0001) == std::ldexp(1.0, -24));
    CHECK(ulp(Format::e8m0, 127) == 1);
}

TEST_CASE("exact_decimal writes every digit of a binary fraction") {
    CHECK(exact_decimal(0.1) == "0.1000000000000000055511151231257827021181583404541015625");
    CHECK(exact_decimal(448) == "448");
    CHECK(exact_decimal(-0.0) == "-0");
    CHECK(exact_decimal(0.0999755859375) == "0.0999755859375");
    CHECK(exact_decimal(std::ldexp(1.0, -24)) == "0.000000059604644775390625");
    CHECK(exact_decimal(std::ldexp(1.0, 64)) == "18446744073709551616");
    const std::string tiny = exact_decimal(std::ldexp(1.0, -1074));  // 2^-1074 = 5^1074 / 10^1074
    CHECK(tiny.size() == 2 + 1074);
    CHECK(tiny.substr(0, 6) == "0.0000");
    CHECK(tiny.back() == '5');
    CHECK(exact_decimal(HUGE_VAL) == "inf");
    CHECK(exact_decimal(std::nan("")) == "nan");
}

TEST_CASE("parse_value accepts 1e-8, -0, inf and nan and rejects abc and empty text naming the field") {
    CHECK(parse_value("value", "1e-8") == 1e-8);
    CHECK(std::signbit(parse_value("value", "-0")));
    CHECK(std::isinf(parse_value("value", "-inf")));
    CHECK(std::isnan(parse_value("value", "NaN")));
    CHECK(parse_value("value", " 0.5 ") == 0.5);
    CHECK(parse_value("value", "1e-400") == 0.0);  // below double's range: rounds to zero
    CHECK_THROWS_AS(parse_value("value", "abc"), tally::InputError);
    CHECK_THROWS_AS(parse_value("value", ""), tally::InputError);
    CHECK_THROWS_AS(parse_value("value", "1.5x"), tally::InputError);
    try {
        parse_value("value", "abc");
    } catch (const tally::InputError& e) {
        CHECK(e.field() == "value");
    }
}

TEST_CASE("parse_code_text accepts a format's hex codes and rejects ones too long for it") {
    CHECK(parse_code_text("hex", Format::e4m3, "0x7e") == 0x7E);
    CHECK(parse_code_text("hex", Format::e4m3, "7E") == 0x7E);
    CHECK(parse_code_text("hex", Format::fp64, "0x3ff0000000000000") == 0x3FF0000000000000ull);
    CHECK_THROWS_AS(parse_code_text("hex", Format::e4m3, "0x123"), tally::InputError);
    CHECK_THROWS_AS(parse_code_text("hex", Format::e2m1, "0x10"), tally::InputError);  // 4 bits: at most 0xf
    CHECK_THROWS_AS(parse_code_text("hex", Format::e2m3, "0x40"), tally::InputError);  // 6 bits: at most 0x3f
    CHECK_THROWS_AS(parse_code_text("hex", Format::e4m3, ""), tally::InputError);
    CHECK_THROWS_AS(parse_code_text("hex", Format::e4m3, "0xzz"), tally::InputError);
    CHECK(code_hex(Format::e2m3, 0x1F) == "0x1f");
    CHECK(code_hex(Format::fp16, 0x3C00) == "0x3c00");
    CHECK(code_binary(Format::e2m1, 0x5) == "0101");
}
