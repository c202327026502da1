// torchao's rowwise float8 recipe: measured linear-layer speed-ups on H100 and the casts' HBM traffic (step_rowwise.h).
#include "tally/step/step_rowwise.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

namespace tally {

namespace {

// torchao's "Speedup observed vs bfloat16 for LayerNorm -> Linear -> Sigmoid fwd + bwd by forward M, K, N, dynamic
// row-wise scaling, PyTorch version 2.8.0a0+git48807d5" on H100 (torchao/float8/README.md at 6243040, section
// "Rowwise scaling", image docs/static/fp8-rowwise-perf.png, added in pytorch/ao#2312). Index [M][K][N], each over
// 1024, 2048, ..., 32768.
constexpr std::size_t kSide = 6;
constexpr double kFirstLog2 = 10;  // 1024
constexpr std::array<std::array<std::array<double, kSide>, kSide>, kSide> kSpeedup = {{
    {{{0.42, 0.42, 0.50, 0.51, 0.56, 0.56},  // M 1024
      {0.40, 0.38, 0.42, 0.50, 0.50, 0.56},
      {0.48, 0.43, 0.46, 0.53, 0.57, 0.60},
      {0.45, 0.48, 0.54, 0.62, 0.60, 0.62},
      {0.46, 0.48, 0.54, 0.60, 0.60, 0.61},
      {0.45, 0.50, 0.55, 0.60, 0.62, 0.65}}},
    {{{0.43, 0.43, 0.48, 0.55, 0.62, 0.65},  // M 2048
      {0.38, 0.45, 0.58, 0.65, 0.72, 0.75},
      {0.43, 0.50, 0.68, 0.78, 0.81, 0.82},
      {0.46, 0.58, 0.73, 0.82, 0.87, 0.89},
      {0.48, 0.62, 0.75, 0.83, 0.84, 0.85},
      {0.50, 0.64, 0.75, 0.84, 0.83, 0.99}}},
    {{{0.45, 0.47, 0.57, 0.66, 0.72, 0.76},  // M 4096
      {0.43, 0.53, 0.70, 0.83, 0.90, 0.91},
      {0.44, 0.64, 0.84, 1.01, 1.01, 1.04},
      {0.53, 0.72, 0.91, 1.01, 1.07, 1.13},
      {0.53, 0.74, 0.92, 1.05, 1.10, 1.18},
      {0.54, 0.75, 0.93, 1.02, 1.17, 1.18}}},
    {{{0.48, 0.52, 0.65, 0.77, 0.83, 0.84},  // M 8192
      {0.45, 0.64, 0.82, 1.01, 1.03, 1.06},
      {0.52, 0.76, 1.00, 1.13, 1.17, 1.19},
      {0.59, 0.85, 1.05, 1.20, 1.31, 1.41},
      {0.58, 0.82, 1.03, 1.22, 1.37, 1.40},
      {0.59, 0.82, 1.04, 1.30, 1.36, 1.46}}},
    {{{0.48, 0.58, 0.73, 0.86, 0.85, 0.89},  // M 16384
      {0.51, 0.70, 0.90, 1.05, 1.07, 1.15},
      {0.57, 0.79, 1.02, 1.20, 1.26, 1.40},
      {0.61, 0.87, 1.08, 1.33, 1.39, 1.49},
      {0.59, 0.83, 1.07, 1.34, 1.42, 1.55},
      {0.60, 0.85, 1.16, 1.35, 1.48, 1.72}}},
    {{{0.51, 0.62, 0.77, 0.87, 0.88, 0.94},  // M 32768
      {0.54, 0.73, 0.91, 1.08, 1.14, 1.27},
      {0.59, 0.81, 1.04, 1.28, 1.35, 1.49},
      {0.63, 0.87, 1.11, 1.41, 1.50, 1.62},
      {0.60, 0.83, 1.16, 1.39, 1.49, 1.73},
      {0.63, 0.93, 1.16, 1.48, 1.70, 1.52}}},
}};

// Position of a dimension on the table's log2 axis, held at its first and last entries.
struct AxisPoint {
    std::size_t lo;
    double w;  // weight of the entry above lo
};
AxisPoint axis_point(double dim) {
    const double x = std::clamp(std::log2(std::max(dim, 1.0)) - kFirstLog2, 0.0, static_cast<double>(kSide - 1));
    const std::size_t lo = std::min(static_cast<std::size_t>(x), kSide - 2);
    return {lo, x - static_cast<double>(lo)};
}

}  // namespace

double torchao_rowwise_speedup(double m, double k, double n) {
    const AxisPoint pm = axis_point(m), pk = axis_point(k), pn = axis_point(n);
    double out = 0;
    for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t j = 0; j < 2; ++j)
            for (std::size_t l = 0; l < 2; ++l) {
                const double w = (i ? pm.w : 1 - pm.w) * (j ? pk.w : 1 - pk.w) * (l ? pn.w : 1 - pn.w);
                if (w > 0) out += w * kSpeedup[pm.lo + i][pk.lo + j][pn.lo + l];
            }
    return out;
}

double rowwise_cast_bytes_per_element(double element_bytes, double fp8_bytes, bool weight) {
    return (weight ? 4 : 3) * element_bytes + 2 * fp8_bytes;
}

}  // namespace tally
