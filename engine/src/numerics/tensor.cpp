#include "tally/numerics/tensor.h"

#include <utility>

#include "tally/base/error.h"

namespace tally {

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
