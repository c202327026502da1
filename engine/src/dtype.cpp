// The dtype table (dtype.h) and its lookups.
#include "tally/dtype.h"

#include "tally/error.h"
#include "tally/input.h"

namespace tally {

namespace {

constexpr unsigned kEveryRole = kStorageDType | kPeakDType | kTensorDType;

// Widths: IEEE 754-2019 binary64/32/16; bfloat16 and TF32 (NVIDIA A100 whitepaper, 2020: TF32 has fp32's
// range with a 10-bit mantissa and is stored in 32 bits); OCP 8-bit formats E4M3 and E5M2 ("OCP 8-bit
// Floating Point Specification (OFP8)", 2023), "fp8" naming either; FP4 E2M1 (OCP Microscaling Formats
// (MX) v1.0, 2023, element type of MXFP4); two's-complement integers.
constexpr DTypeInfo kDTypes[] = {
    {DType::FP64, "fp64", "float64", 64, kTensorDType, ""},
    {DType::FP32, "fp32", "float32", 32, kEveryRole, ""},
    {DType::TF32, "tf32", "TensorFloat-32", 32, kPeakDType,
     "fp32 in memory; the tensor cores round the inputs to 10 mantissa bits"},
    {DType::BF16, "bf16", "bfloat16", 16, kEveryRole, ""},
    {DType::FP16, "fp16", "float16", 16, kEveryRole, ""},
    {DType::FP8, "fp8", "8-bit float", 8, kEveryRole, "either OCP FP8 format, E4M3 or E5M2"},
    {DType::E4M3, "e4m3", "FP8 E4M3", 8, kTensorDType, ""},
    {DType::E5M2, "e5m2", "FP8 E5M2", 8, kTensorDType, ""},
    {DType::INT64, "int64", "int64", 64, kTensorDType, ""},
    {DType::INT32, "int32", "int32", 32, kTensorDType, ""},
    {DType::INT8, "int8", "int8", 8, kStorageDType | kTensorDType, ""},
    {DType::FP4, "fp4", "FP4 E2M1", 4, kTensorDType, ""},
    {DType::INT4, "int4", "int4", 4, kTensorDType, ""},
    {DType::None, "none", "none", 0, kStorageDType, "the class is absent (master weights, gradient accumulation)"},
};

}  // namespace

std::span<const DTypeInfo> dtypes() { return kDTypes; }

const DTypeInfo& dtype_info(DType type) {
    for (const DTypeInfo& d : kDTypes)
        if (d.type == type) return d;
    return kDTypes[std::size(kDTypes) - 1];  // unreachable: every enumerator has a row
}

const char* to_string(DType type) { return dtype_info(type).id; }
unsigned dtype_bits(DType type) { return dtype_info(type).bits; }
std::uint64_t dtype_bytes(DType type) { return dtype_info(type).bits / 8; }

std::string dtype_ids(unsigned role) {
    std::string ids;
    for (const DTypeInfo& d : kDTypes)
        if (d.roles & role) ids += (ids.empty() ? "" : ", ") + std::string(d.id);
    return ids;
}

DType dtype_from_string(const std::string& text, const char* field, unsigned role) {
    for (const DTypeInfo& d : kDTypes)
        if ((d.roles & role) && text == d.id) return d.type;
    throw InputError(
        field, std::string(field) + " must be one of " + dtype_ids(role) + ", got \"" + printable(text, 40) + "\"");
}

}  // namespace tally
