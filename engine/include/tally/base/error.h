// Errors for bad input: every check names the field and the allowed range.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace tally {

// Thrown for invalid user input. `field` is the argument or config key at fault
// ("mfu", "num_key_value_heads"); what() is a full sentence naming it and the allowed range.
class InputError : public std::invalid_argument {
public:
    InputError(std::string field, const std::string& message)
        : std::invalid_argument(without_nul(message)), field_(std::move(field)) {}
    const std::string& field() const noexcept { return field_; }

private:
    // what() is a C string, so a NUL in quoted input would end the message there: it becomes the text \x00.
    static std::string without_nul(const std::string& message) {
        std::string out;
        out.reserve(message.size());
        for (const char c : message) {
            if (c == '\0')
                out += "\\x00";
            else
                out += c;
        }
        return out;
    }
    std::string field_;
};

// Formats a double for error messages without locale surprises ("1.5", "-3", "nan", "inf").
std::string format_number(double value);
// A fraction as a percentage with one decimal for prose: 0.14 -> "14.0".
std::string format_percent(double fraction);

// value must be finite and > 0.
double require_positive(const char* field, double value);
// value must be finite and in [low, high]; a non-empty `unit` follows the range in the message ("[1, 1e+07] hours").
double require_in(const char* field, double value, double low, double high, const char* unit = "");
// value must be finite and in (low, high].
double require_in_left_open(const char* field, double value, double low, double high);
// value must be finite and in [low, high) (a share that must stay below a whole).
double require_in_right_open(const char* field, double value, double low, double high);
// value must be a whole number in [low, high] (given as a double from JSON or a parsed flag).
std::int64_t require_integer(const char* field, double value, std::int64_t low, std::int64_t high);
// value must be in [low, high] (an integer the engine already holds, e.g. a config field or a layout degree).
void require_range(const char* field, std::int64_t value, std::int64_t low, std::int64_t high);

// Byte and parameter counts are exact 64-bit integers; overflow is an input error, never a wrap.
std::uint64_t checked_mul(const char* field, std::uint64_t a, std::uint64_t b);
std::uint64_t checked_add(const char* field, std::uint64_t a, std::uint64_t b);
// a / b rounded up (b > 0): whole units that hold a count, such as layers per pipeline stage.
constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

}  // namespace tally
