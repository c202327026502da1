// API of tensor sizes (tensor.h): elements, bits per element and exact bytes of one tensor.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/base/input.h"
#include "tally/numerics/dtype.h"
#include "tally/numerics/precision.h"
#include "tally/numerics/tensor.h"

namespace tally::api {

namespace {

using u64 = std::uint64_t;

// ---------------------------------------------------------------- tensor bytes
// One dimension of `shape`: a JSON number that is a whole number in [1, 2^63).
u64 shape_dim(const json& value, std::size_t index) {
    const std::string name = "shape[" + std::to_string(index) + "]";
    const std::string range = " must be a whole number in [1, 2^63), got ";
    if (value.is_number_unsigned()) {
        const u64 v = value.get<u64>();
        if (v == 0 || v >= (u64{1} << 63)) throw InputError("shape", name + range + std::to_string(v));
        return v;
    }
    if (value.is_number_integer()) {
        const std::int64_t v = value.get<std::int64_t>();
        if (v < 1) throw InputError("shape", name + range + std::to_string(v));
        return static_cast<u64>(v);
    }
    if (value.is_number_float()) {
        const double v = value.get<double>();
        // 9223372036854775808.0 = 2^63, exactly representable.
        if (!(v >= 1 && v < 9223372036854775808.0) || v != static_cast<double>(static_cast<u64>(v)))
            throw InputError("shape", name + range + format_number(v));
        return static_cast<u64>(v);
    }
    throw InputError("shape", name + " must be a number, got " + value.dump());
}

constexpr std::array kTensorArgs{
    Arg{"shape", ArgType::Array, "elements", -kNoBound, kNoBound, "required",
        "dimension sizes, e.g. [49152, 12288] (1 to 32 whole numbers >= 1)"},
    Arg{"dtype", ArgType::String, "", -kNoBound, kNoBound, "required", "a tensor dtype (see presets)"},
};
constexpr std::array kTensorResult = std::to_array<Field>({
    {"elements", "elements", "product of the shape"},
    {"bits_per_element", "bits", "the dtype's bits (block scales included)"},
    {"bytes", "bytes", "ceil(elements x bits / 8)"},
    {"formula", "", "the formula"},
    {"shape", "", "the shape given"},
    {"dtype", "", "the element dtype"},
});

json tensor_bytes_method(const json& args) {
    if (!args.contains("shape") || !args["shape"].is_array())
        throw InputError("shape", "shape must be an array of dimension sizes, e.g. [49152, 12288]");
    const json& shape_json = args["shape"];
    if (shape_json.empty() || shape_json.size() > kMaxTensorDims)
        throw InputError("shape", "shape must list 1 to " + std::to_string(kMaxTensorDims) + " dimensions, got " +
                                      std::to_string(shape_json.size()));
    std::vector<u64> shape;
    for (std::size_t i = 0; i < shape_json.size(); ++i) shape.push_back(shape_dim(shape_json[i], i));
    const std::string dtype = string_arg(args, "dtype");
    const TensorBytes t = tensor_bytes(shape, dtype_bits(dtype_from_string(dtype, "dtype", kTensorDType)));
    json out{{"shape", shape}, {"dtype", dtype}, {"formula", "ceil(elements · bits / 8)"}};
    out.update(TALLY_MEMBERS(t, elements, bits_per_element, bytes));
    return out;
}

constexpr Method kMethods[] = {
    {"tensor_bytes", tensor_bytes_method, "elements, bits per element and exact bytes of one tensor", kTensorArgs,
     kTensorResult, true},
};

}  // namespace

std::span<const Method> tensor_methods() { return kMethods; }

}  // namespace tally::api
