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

#include "tally/precision.h"

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
