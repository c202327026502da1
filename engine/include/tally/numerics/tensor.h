// Bytes of one tensor: elements (the product of its shape) times the bits of its number format,
// rounded up to whole bytes. Exact 64-bit integers; overflow is an InputError, never a wrap.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tally {

// Bits per element come from the dtype table (dtype.h: dtype_bits, role kTensorDType).

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
