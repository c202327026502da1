// Host-side companions of tally/precision.h: names, parsing and exact decimal text (std::string; not for CUDA).
// format_from_name("e4m3"), round_from_name("rz"), exact_decimal(0.1) -> "0.1000000000000000055511151231257827...",
// code_hex(e4m3, 0x7e) -> "0x7e", code_binary(e4m3, 0x7e) -> "01111110",
// parse_value("value", "1e-8"), parse_code_text("hex", e4m3, "0x7e"). Parse errors throw tally::InputError.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tally/numerics/precision.h"

namespace tally::fp {

std::span<const Format> all_formats();
std::optional<Format> format_from_name(std::string_view name);
const char* format_name(Format f);
// "fp64, fp32, ..., e8m0" for error messages.
std::string format_names_list();

// nearest_even (aliases rn, rne), nearest_away (rna), toward_zero (rz), up (ru), down (rd).
std::optional<Round> round_from_name(std::string_view name);
const char* round_name(Round r);
const char* class_name(Class c);

// Every finite double is a binary fraction m * 2^k with a finite decimal expansion; this returns all of it
// ("-0", "448", "0.1000000000000000055511151231257827021181583404541015625"). "inf", "-inf", "nan" otherwise.
std::string exact_decimal(double x);

// "0x7e": lower-case, zero-padded to the format's width in hex digits.
std::string code_hex(Format f, uint64_t code);
// "01111110": the code's bits, most significant first, format width.
std::string code_binary(Format f, uint64_t code);

// A decimal (or C hex-float) number, or inf / -inf / +inf / infinity / nan / -nan (any case). Surrounding
// spaces are ignored; anything else left over is an error naming `field`. Magnitudes beyond double's range
// become ±inf or ±0, as a decimal-to-binary conversion must.
double parse_value(const char* field, std::string_view text);
// A code written in hex ("0x7e", "7E"): at most ceil(bits/4) digits and below 2^bits.
uint64_t parse_code_text(const char* field, Format f, std::string_view text);

}  // namespace tally::fp

namespace tally::fp {

// How a format is called on a page: "fp8 E4M3 (OCP)", "bf16 (bfloat16)". The short name stays the id.
const char* format_display_name(Format f);
// "nearest, ties to even", "toward zero", ...: the rounding modes as a reader reads them.
const char* round_label(Round r);

// The value a code stands for, as arithmetic: "(−1)^0 × 2^(7−7) × (1 + 6/8) = 1.75"; NaN and inf in words.
std::string value_formula(Format f, uint64_t code);
// The exact significand: "1.75" for (1 + 6/8), "0.375" for a subnormal's (0 + 3/8); "" for inf and NaN.
std::string significand_text(Format f, uint64_t code);

// Which codes are NaN, in words: "exponent all ones, mantissa non-zero", "0x80 only (...)", "none (...)".
const char* nan_rule_text(Format f);

// One binade of positive values: its range, the gap between neighbours there and how many values it holds.
// Subnormals form one "binade" of their own at the bottom (fixed gap 2^(emin - p)).
struct Binade {
    bool subnormal;
    int exponent;
    double from, to, gap;
    uint64_t count;
};
// Every binade of f from the smallest positive value to max: where the precision goes across the range.
std::vector<Binade> binades(Format f);

// One sentence about what storing a value did, for the CLI and the widgets to show as they are.
// kind: "warn" (information was lost in a way that matters), "good" (stored exactly) or "" (neutral).
struct StoreNote {
    std::string text;
    std::string kind;
};
// What encode(f, input, rounding) did, from its flags: exact, rounded (and how), overflowed or saturated,
// underflowed (to zero, or to E8M0's smallest value), or an infinity or NaN the format cannot hold; plus
// "subnormal" when the result is one. Never empty.
std::vector<StoreNote> store_notes(Format f, double input, Encoded stored, Round rounding);
// A decoded code has no input: only its subnormality is worth a word (empty otherwise).
std::vector<StoreNote> decode_notes(Format f, uint64_t code);

}  // namespace tally::fp
