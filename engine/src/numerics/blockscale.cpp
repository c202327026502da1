// Block-scaled quantization (MXFP8/6/4, NVFP4, per-tensor fp8); see tally/blockscale.h for the sources.
#include "tally/numerics/blockscale.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

namespace tally::fp {

namespace {
constexpr std::array<Scheme, kSchemeCount> kSchemes = {Scheme::mxfp8_e4m3, Scheme::mxfp8_e5m2, Scheme::mxfp6_e2m3,
                                                       Scheme::mxfp6_e3m2, Scheme::mxfp4,      Scheme::nvfp4,
                                                       Scheme::fp8_tensor};

// floor(log2 |x|) of a finite non-zero double, exactly (from its bits).
int floor_log2(double x) {
    const uint64_t b = double_bits(x) & 0x7FFFFFFFFFFFFFFFull;
    const int exp = (int)(b >> 52);
    if (exp) return exp - 1023;
    return top_bit(b) - 1074;
}

// Exponent of the element format's largest normal binade (OCP MX v1.0 table "emax_elem": E5M2 15, E4M3 8,
// E3M2 4, E2M3 2, E2M1 2).
int emax_elem(Format f) {
    const FormatInfo fi = format_info(f);
    return (int)(fi.max_mag >> fi.man_bits) - fi.bias;
}
}  // namespace

SchemeInfo scheme_info(Scheme s) {
    switch (s) {
        case Scheme::mxfp8_e4m3:
            return {"mxfp8_e4m3", "MXFP8 (E4M3, E8M0 scale / 32)", Format::e4m3, Format::e8m0, 32, false};
        case Scheme::mxfp8_e5m2:
            return {"mxfp8_e5m2", "MXFP8 (E5M2, E8M0 scale / 32)", Format::e5m2, Format::e8m0, 32, false};
        case Scheme::mxfp6_e2m3:
            return {"mxfp6_e2m3", "MXFP6 (E2M3, E8M0 scale / 32)", Format::e2m3, Format::e8m0, 32, false};
        case Scheme::mxfp6_e3m2:
            return {"mxfp6_e3m2", "MXFP6 (E3M2, E8M0 scale / 32)", Format::e3m2, Format::e8m0, 32, false};
        case Scheme::mxfp4: return {"mxfp4", "MXFP4 (E2M1, E8M0 scale / 32)", Format::e2m1, Format::e8m0, 32, false};
        case Scheme::nvfp4:
            return {"nvfp4", "NVFP4 (E2M1, E4M3 scale / 16, fp32 / tensor)", Format::e2m1, Format::e4m3, 16, true};
        case Scheme::fp8_tensor:
            return {"fp8_tensor", "fp8 E4M3, one fp32 scale per tensor", Format::e4m3, Format::fp32, 0, false};
    }
    return {"?", "?", Format::fp32, Format::fp32, 0, false};
}

std::optional<Scheme> scheme_from_name(std::string_view name) {
    for (Scheme s : kSchemes)
        if (name == scheme_info(s).name) return s;
    return std::nullopt;
}

std::span<const Scheme> all_schemes() { return kSchemes; }

BlockResult block_quantize(Scheme s, std::span<const double> values) {
    const SchemeInfo si = scheme_info(s);
    const FormatInfo ei = format_info(si.element);
    const double elem_max = decode_to_double(si.element, ei.max_mag);
    const size_t n = values.size();
    const size_t bs = si.block_size ? (size_t)si.block_size : std::max<size_t>(n, 1);
    BlockResult r;
    r.scheme = s;
    r.codes.resize(n);
    r.dequantized.resize(n);

    double tensor_amax = 0;
    for (double v : values) tensor_amax = std::max(tensor_amax, std::fabs(v));
    if (s == Scheme::nvfp4) {
        // fp32 tensor scale so that amax / tensor_scale = 6 * 448: the largest block's scale is E4M3's max.
        const double e4m3_max = decode_to_double(Format::e4m3, format_info(Format::e4m3).max_mag);
        r.tensor_scale =
            tensor_amax > 0
                ? decode_to_double(Format::fp32, encode_from_double(Format::fp32, tensor_amax / (elem_max * e4m3_max)))
                : 1.0;
        if (r.tensor_scale == 0) r.tensor_scale = 1.0;  // amax so small the fp32 scale underflows
    }

    for (size_t begin = 0; begin < std::max<size_t>(n, 1) && begin < n; begin += bs) {
        const size_t end = std::min(n, begin + bs);
        double amax = 0;
        for (size_t i = begin; i < end; ++i) amax = std::max(amax, std::fabs(values[i]));
        uint64_t scale_code = 0;
        double scale_value = 1.0, eff = 1.0;  // eff: the multiplier from element value to real value
        switch (s) {
            case Scheme::mxfp8_e4m3:
            case Scheme::mxfp8_e5m2:
            case Scheme::mxfp6_e2m3:
            case Scheme::mxfp6_e3m2:
            case Scheme::mxfp4: {
                // OCP MX v1.0 6.3: shared_exp = floor(log2(amax)) - emax_elem, clamped to E8M0's [-127, 127].
                int shared = amax > 0 ? floor_log2(amax) - emax_elem(si.element) : -127;
                shared = std::clamp(shared, -127, 127);
                scale_code = (uint64_t)(shared + 127);
                scale_value = pow2(shared);
                eff = scale_value;
                break;
            }
            case Scheme::nvfp4: {
                // Block scale: amax / 6 in units of the tensor scale, rounded to E4M3 (nearest even, satfinite).
                const double want = amax / elem_max / r.tensor_scale;
                scale_code = encode_from_double(Format::e4m3, want, Round::nearest_even, true);
                scale_value = decode_to_double(Format::e4m3, scale_code);
                eff = scale_value * r.tensor_scale;  // exact: 4-bit times 24-bit significands
                break;
            }
            case Scheme::fp8_tensor: {
                const double want = amax > 0 ? amax / elem_max : 1.0;
                scale_code = encode_from_double(Format::fp32, want);
                scale_value = decode_to_double(Format::fp32, scale_code);
                if (scale_value == 0) scale_value = 1.0;
                eff = scale_value;
                r.tensor_scale = scale_value;
                break;
            }
        }
        r.scale_codes.push_back(scale_code);
        r.scale_values.push_back(scale_value);
        for (size_t i = begin; i < end; ++i) {
            const double x = values[i];
            Encoded e;
            if (eff == 0) {
                e = encode(si.element, 0.0 * x, Round::nearest_even, true);  // block scale underflowed
            } else {
                e = encode(si.element, x / eff, Round::nearest_even, true);
            }
            r.codes[i] = e.code;
            r.dequantized[i] = decode_to_double(si.element, e.code) * eff;
            if (e.flags & kSaturated) ++r.saturated;
            if (x != 0 && r.dequantized[i] == 0) ++r.zeroed;
        }
    }

    double sum_sq_err = 0, sum_sq = 0;
    for (size_t i = 0; i < n; ++i) {
        const double d = values[i] - r.dequantized[i];
        r.max_abs_error = std::max(r.max_abs_error, std::fabs(d));
        sum_sq_err += d * d;
        sum_sq += values[i] * values[i];
    }
    r.rms_error = n ? std::sqrt(sum_sq_err / (double)n) : 0;
    r.relative_error = sum_sq > 0 ? std::sqrt(sum_sq_err / sum_sq) : 0;
    const FormatInfo sci = format_info(si.scale);
    const double blocks = (double)r.scale_codes.size();
    r.bits_per_value = n ? ei.bits + (blocks * sci.bits + (si.tensor_scale ? 32.0 : 0.0)) / (double)n : 0;
    return r;
}

std::vector<double> demo_vector(uint64_t seed, int n, double scale, double outlier, int outlier_index) {
    std::vector<double> v((size_t)std::max(n, 0));
    uint64_t state = seed;
    auto next = [&state]() {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        return (double)(z >> 11) * 0x1.0p-53;  // uniform in [0, 1)
    };
    for (double& x : v) {
        const double s = next() + next() + next() + next();  // mean 2, variance 4/12
        x = (s - 2.0) * 1.7320508075688772 * scale;          // sqrt(3): unit variance
    }
    if (outlier != 0 && outlier_index >= 0 && outlier_index < n) v[(size_t)outlier_index] = outlier;
    return v;
}

}  // namespace tally::fp
