#include "tally/tensor.h"

#include <utility>

#include "tally/error.h"

namespace tally {

namespace {

struct NamedBits {
    const char* name;
    unsigned bits;
};

// Storage widths: IEEE 754 binary64/32/16; bfloat16; OCP 8-bit formats E4M3 and E5M2 ("OCP 8-bit
// Floating Point Specification (OFP8)", 2023), "fp8" naming either; FP4 E2M1 (OCP Microscaling
// Formats (MX) v1.0, 2023, element type of MXFP4); integer types.
constexpr NamedBits kDtypes[] = {
    {"fp64", 64}, {"fp32", 32}, {"bf16", 16}, {"fp16", 16}, {"fp8", 8},   {"e4m3", 8},
    {"e5m2", 8},  {"int8", 8},  {"fp4", 4},   {"int4", 4},  {"int64", 64}, {"int32", 32},
};

}  // namespace

unsigned dtype_bits(const std::string& dtype, const char* field) {
    std::string names;
    for (const NamedBits& d : kDtypes) {
        if (dtype == d.name) return d.bits;
        names += names.empty() ? d.name : std::string(", ") + d.name;
    }
    throw InputError(field, std::string(field) + " must be one of " + names + ", got \"" + dtype + "\"");
}

TensorBytes tensor_bytes(std::span<const std::uint64_t> shape, unsigned bits) {
    if (shape.empty() || shape.size() > kMaxTensorDims)
        throw InputError("shape", "shape must list 1 to " + std::to_string(kMaxTensorDims) + " dimensions, got " +
                                      std::to_string(shape.size()));
    if (bits == 0 || bits > 64) throw InputError("dtype", "bits per element must be in [1, 64]");
    TensorBytes t;
    t.bits_per_element = bits;
    t.elements = 1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == 0)
            throw InputError("shape", "shape[" + std::to_string(i) + "] must be a whole number >= 1, got 0");
        t.elements = checked_mul("shape", t.elements, shape[i]);
    }
    // ceil(elements · bits / 8) without forming elements · bits (which could overflow when bytes do not):
    // whole groups of 8 elements take exactly `bits` bytes; the remainder rounds up.
    const std::uint64_t groups = t.elements / 8, rest = t.elements % 8;
    t.bytes = checked_add("shape", checked_mul("shape", groups, bits), (rest * bits + 7) / 8);
    return t;
}

}  // namespace tally
