#include "tally/base/error.h"

#include <cstdio>
#include <cstdlib>

namespace tally {

std::string format_percent(double fraction) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", fraction * 100);
    return buffer;
}

std::string format_number(double value) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.17g", value);
    // Prefer the shortest form that reads back the same, for messages a person reads.
    for (int precision = 1; precision <= 17; ++precision) {
        char shorter[64];
        std::snprintf(shorter, sizeof shorter, "%.*g", precision, value);
        if (std::strtod(shorter, nullptr) == value) return shorter;
    }
    return buffer;
}

double require_positive(const char* field, double value) {
    if (!std::isfinite(value) || !(value > 0))
        throw InputError(field, std::string(field) + " must be a finite number > 0, got " + format_number(value));
    return value;
}

double require_in(const char* field, double value, double low, double high, const char* unit) {
    if (!std::isfinite(value) || value < low || value > high)
        throw InputError(field, std::string(field) + " must be in [" + format_number(low) + ", " + format_number(high) +
                                    "]" + (*unit != '\0' ? std::string(" ") + unit : std::string()) + ", got " +
                                    format_number(value));
    return value;
}

double require_in_right_open(const char* field, double value, double low, double high) {
    if (!std::isfinite(value) || !(value >= low) || !(value < high))
        throw InputError(field, std::string(field) + " must be in [" + format_number(low) + ", " + format_number(high) +
                                    "), got " + format_number(value));
    return value;
}

double require_in_left_open(const char* field, double value, double low, double high) {
    if (!std::isfinite(value) || !(value > low) || !(value <= high))
        throw InputError(field, std::string(field) + " must be in (" + format_number(low) + ", " + format_number(high) +
                                    "], got " + format_number(value));
    return value;
}

std::int64_t require_integer(const char* field, double value, std::int64_t low, std::int64_t high) {
    if (!std::isfinite(value) || value != std::floor(value) || value < static_cast<double>(low) ||
        value > static_cast<double>(high))
        throw InputError(field, std::string(field) + " must be a whole number in [" + std::to_string(low) + ", " +
                                    std::to_string(high) + "], got " + format_number(value));
    return static_cast<std::int64_t>(value);
}

void require_range(const char* field, std::int64_t value, std::int64_t low, std::int64_t high) {
    if (value < low || value > high)
        throw InputError(field, std::string(field) + " must be a whole number in [" + std::to_string(low) + ", " +
                                    std::to_string(high) + "], got " + std::to_string(value));
}

std::uint64_t checked_mul(const char* field, std::uint64_t a, std::uint64_t b) {
    std::uint64_t result;
    if (__builtin_mul_overflow(a, b, &result))
        throw InputError(field, std::string(field) + " overflows a 64-bit count (the inputs are too large)");
    return result;
}

std::uint64_t checked_add(const char* field, std::uint64_t a, std::uint64_t b) {
    std::uint64_t result;
    if (__builtin_add_overflow(a, b, &result))
        throw InputError(field, std::string(field) + " overflows a 64-bit count (the inputs are too large)");
    return result;
}

}  // namespace tally
