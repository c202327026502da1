// Bytes of one tensor: elements (the product of its shape) times the bits of its number format,
// rounded up to whole bytes. Exact 64-bit integers; overflow is an InputError, never a wrap.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tally {

// Storage bits per element of a dtype name: fp64 64, fp32 32, bf16/fp16 16, fp8/e4m3/e5m2/int8 8,
// fp4 (E2M1)/int4 4, int64 64, int32 32. InputError naming `field` (listing the names) otherwise.
unsigned dtype_bits(const std::string& dtype, const char* field);

struct TensorBytes {
    std::uint64_t elements = 0;
    unsigned bits_per_element = 0;
    // ceil(elements · bits / 8): sub-byte formats are packed (two fp4 values per byte) and an odd count
    // rounds up to a whole byte. Block scales of MXFP4/NVFP4-style formats are not included.
    std::uint64_t bytes = 0;
};

// Every dimension must be >= 1 (InputError field "shape"); shape must have 1..kMaxTensorDims dims.
inline constexpr std::size_t kMaxTensorDims = 32;  // numpy 1.x's NPY_MAXDIMS; PyTorch allows more
TensorBytes tensor_bytes(std::span<const std::uint64_t> shape, unsigned bits_per_element);

}  // namespace tally
