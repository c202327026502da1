// The dtype table (dtype.h) and its lookups.
#include "tally/numerics/dtype.h"

#include "tally/base/error.h"
#include "tally/base/input.h"

namespace tally {

namespace {

constexpr unsigned kEveryRole = kStorageDType | kPeakDType | kTensorDType;

// Widths: IEEE 754-2019 binary64/32/16; bfloat16 and TF32 (NVIDIA A100 whitepaper, 2020: TF32 has fp32's
// range with a 10-bit mantissa and is stored in 32 bits); OCP 8-bit formats E4M3 and E5M2 ("OCP 8-bit
// Floating Point Specification (OFP8)", 2023), "fp8" naming either; FP4 E2M1 (OCP Microscaling Formats
// (MX) v1.0, 2023, element type of MXFP4); two's-complement integers. Block-scaled formats: MXFP8 (E4M3 or
// E5M2 elements) and MXFP4 (E2M1) share one E8M0 scale per 32 elements (OCP MX v1.0, sec. 5); NVFP4 shares one
// E4M3 scale per 16 E2M1 elements plus one fp32 scale per tensor (NVIDIA, "Introducing NVFP4", 2025), whose
// 32 bits per tensor are left out of the per-element size.
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
    {DType::FP4, "fp4", "FP4 E2M1", 4, kPeakDType | kTensorDType,
     "the peak is the FP4 tensor-core rate that NVFP4 and MXFP4 run at (Blackwell, CDNA 4)"},
    {DType::INT4, "int4", "int4", 4, kTensorDType, ""},
    {DType::NVFP4, "nvfp4", "NVFP4", 4, kStorageDType,
     "E2M1 values, one E4M3 scale per 16 (4.5 bits a value) and one fp32 scale per tensor", 16, 8},
    {DType::MXFP8, "mxfp8", "MXFP8", 8, kStorageDType,
     "E4M3 or E5M2 values, one E8M0 scale per 32 (8.25 bits a value); runs at the fp8 peak", 32, 8},
    {DType::MXFP4, "mxfp4", "MXFP4", 4, kStorageDType,
     "E2M1 values, one E8M0 scale per 32 (4.25 bits a value); runs at the fp4 peak", 32, 8},
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

std::uint64_t dtype_bytes_256(DType type) {
    const DTypeInfo& d = dtype_info(type);
    return 32 * std::uint64_t{d.bits} + (d.block == 0 ? 0 : 32 * std::uint64_t{d.scale_bits} / d.block);
}

double dtype_element_bytes(DType type) { return static_cast<double>(dtype_bytes_256(type)) / 256.0; }

std::uint64_t dtype_storage_bytes(const char* field, std::uint64_t count, DType type) {
    const std::uint64_t per = dtype_bytes_256(type);
    // Split count so that count · per / 256 never overflows before the check.
    const std::uint64_t whole = count / 256, rest = count % 256;
    return checked_add(field, checked_mul(field, whole, per), (rest * per + 255) / 256);
}

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
