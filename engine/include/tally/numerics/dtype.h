// The one table of number types (dtypes) tally names: storage classes of the memory budget and the
// KV cache, the matmul types of the hardware peaks, and the element types of tensor sizes. Every
// module and API parser reads it; a field accepts the dtypes whose row carries the field's role.
// Bit layouts of the float formats live in precision.h (tally::fp); this table only names and sizes.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tally {

enum class DType : std::uint8_t {
    FP64,
    FP32,
    TF32,
    BF16,
    FP16,
    FP8,
    E4M3,
    E5M2,
    INT64,
    INT32,
    INT8,
    FP4,
    INT4,
    NVFP4,
    MXFP8,
    MXFP4,
    None
};

// What a field may name (bit flags; a row may carry several).
enum DTypeRole : unsigned {
    kStorageDType = 1,  // a storage type of a memory class (weights, gradients, KV cache, ...), scales included
    kPeakDType = 2,     // a matmul type with a dense peak in the hardware presets
    kTensorDType = 4,   // an element type of a tensor whose size is counted
};

struct DTypeInfo {
    DType type;
    const char* id;           // the name every argument and result uses ("bf16")
    const char* name;         // display name ("bfloat16")
    unsigned bits;            // bits one element occupies in memory (tf32 is stored in 32), block scales excluded
    unsigned roles;           // DTypeRole flags
    const char* note;         // what the id stands for where it names more than one format ("" otherwise)
    unsigned block = 0;       // elements sharing one scale (block-scaled formats), 0 without
    unsigned scale_bits = 0;  // bits of that per-block scale (E8M0 or E4M3: 8)
};

std::span<const DTypeInfo> dtypes();
const DTypeInfo& dtype_info(DType type);
const char* to_string(DType type);
unsigned dtype_bits(DType type);
std::uint64_t dtype_bytes(DType type);  // bits / 8, truncated: whole bytes of the wide types only
// Memory one element occupies in 1/256 byte, its share of the block scale included: 32 · bits + 32 · scale_bits
// / block (NVFP4 144 = 4.5 bits, MXFP8 264 = 8.25 bits, MXFP4 136 = 4.25 bits, bf16 512); exact for every row.
std::uint64_t dtype_bytes_256(DType type);
double dtype_element_bytes(DType type);  // dtype_bytes_256 / 256 (0.5625 for NVFP4)
// Bytes `count` elements occupy, rounded up to a whole byte; InputError(field) past 2^64 bytes.
std::uint64_t dtype_storage_bytes(const char* field, std::uint64_t count, DType type);
// The ids of the dtypes with `role`, in table order ("fp32, bf16, fp16, fp8, int8, none").
std::string dtype_ids(unsigned role);
// Parses an id that carries `role`; InputError(field, "<field> must be one of <ids>, got \"<text>\"").
DType dtype_from_string(const std::string& text, const char* field, unsigned role);

}  // namespace tally
