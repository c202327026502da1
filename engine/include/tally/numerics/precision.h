// tally::fp — bit-exact codecs for every deep-learning float format; host code, wasm and CUDA device code.
// Functions: format_info(Format)->FormatInfo; encode(Format, double, Round[, bool saturate])->Encoded{code, flags};
//   encode_from_double(Format, double, Round[, bool saturate])->uint64_t code; encode_from_float(same, float);
//   decode_to_double(Format, uint64_t code)->double; classify(Format, code)->Class; fields(Format, code)->Fields;
//   next_up / next_down(Format, code, uint64_t* out)->bool; ulp(Format, code)->double;
//   max_code / min_normal_code / min_subnormal_code / canonical_nan_code(Format)->uint64_t; finite_count(Format).
//
// One table (format_info) describes every format: widths, bias and special-value rules. One generic encoder
// and one generic decoder read it; there is no per-format codec. The encoder rounds the exact binary value of
// its input (a double, or a float widened exactly to double), so encode_from_float matches NVIDIA's host
// conversions in cuda_fp16/bf16/fp8/fp6/fp4.h bit for bit (checked over all 2^32 floats by
// engine/tools/float_check.cpp). NaN and infinity policies follow those headers:
//   * a NaN input gives the format's canonical NaN, positive (fp16/bf16 0x7FFF, E4M3/E5M2 0x7F), or +max in
//     formats without NaN (E2M3, E3M2, E2M1: NVIDIA's __nv_cvt_*_to_fp6/fp4 return +maxnorm);
//   * overflow (and infinity) with saturation gives ±max; without it, ±inf where the format has one, otherwise
//     NaN (E4M3: S.1111.111 keeps the sign; FNUZ: 0x80; E8M0: 0xFF); formats without inf or NaN always saturate;
//   * directed rounding toward zero never overflows to inf (IEEE 754: it returns ±max);
//   * unsigned E8M0 encodes |x| (as __nv_cvt_float_to_e8m0 does) and has no zero: anything below 2^-127,
//     zero included, becomes the smallest code 0x00 = 2^-127;
//   * FNUZ formats have no negative zero: -0 and negative underflow give 0x00.
#pragma once

#if defined(__CUDACC__)
#define TALLY_HD __host__ __device__
#else
#define TALLY_HD
#endif

#include <stdint.h>
#include <string.h>

namespace tally::fp {

enum class Format : uint8_t { fp64, fp32, tf32, fp16, bf16, e4m3, e5m2, e4m3fnuz, e5m2fnuz, e2m3, e3m2, e2m1, e8m0 };
inline constexpr int kFormatCount = 13;

// nearest_even is IEEE 754's default and every NVIDIA conversion's "rn"; nearest_away is TF32's cvt.rna;
// toward_zero and up are E8M0's two modes (cudaRoundZero, cudaRoundPosInf) and also fp6/fp4's "rz".
enum class Round : uint8_t { nearest_even, nearest_away, toward_zero, up, down };
inline constexpr int kRoundCount = 5;

enum class Inf : uint8_t { none, ieee };  // ieee: exponent field all ones, mantissa zero
enum class NaN : uint8_t {
    none,      // no NaN encoding (E2M3, E3M2, E2M1)
    ieee,      // exponent all ones, mantissa non-zero (fp64 ... bf16, E5M2)
    all_ones,  // only exponent and mantissa all ones, either sign (E4M3 "FN"; E8M0's 0xFF)
    neg_zero,  // only the code 1000...0, the would-be negative zero (E4M3FNUZ, E5M2FNUZ)
};
enum class Class : uint8_t { zero, subnormal, normal, inf, nan };

struct FormatInfo {
    const char* name;
    uint8_t bits;      // storage width of a code
    uint8_t exp_bits;  // exponent field width
    uint8_t man_bits;  // stored mantissa (fraction) width
    bool has_sign;
    bool has_subnormals;  // false (E8M0): exponent field 0 is an ordinary binade 2^(0-bias) and zero does not exist
    int16_t bias;
    Inf inf;
    NaN nan;
    bool default_saturate;  // NVIDIA's default for the type (__nv_fp8_e4m3(float) is satfinite; __half is not)
    uint64_t max_mag;       // magnitude bits (sign cleared) of the largest finite value
    uint64_t nan_code;      // what encoders return for a NaN input
};

// The table. Sources: IEEE 754-2019 (fp64, fp32, fp16); bf16 and TF32 (NVIDIA A100 whitepaper, 2020: 8-bit
// exponent, 10-bit mantissa); OCP 8-bit Floating Point Specification (OFP8) rev 1.0, 2023 (E4M3 max 448,
// NaN S.1111.111, no inf; E5M2 IEEE-like, max 57344); OCP Microscaling Formats (MX) v1.0, 2023 (E2M3 max 7.5,
// E3M2 max 28, E2M1 max 6, E8M0 bias 127 with 0xFF NaN); FNUZ: Graphcore/AMD "FP8 formats" (Noune et al.
// 2022, arXiv:2206.02915), bias 8 and 16, single NaN 0x80, E4M3FNUZ max 240, E5M2FNUZ max 57344.
TALLY_HD constexpr FormatInfo format_info(Format f) {
    switch (f) {
        case Format::fp64:
            return {"fp64",
                    64,
                    11,
                    52,
                    true,
                    true,
                    1023,
                    Inf::ieee,
                    NaN::ieee,
                    false,
                    0x7FEFFFFFFFFFFFFFull,
                    0x7FFFFFFFFFFFFFFFull};
        case Format::fp32:
            return {"fp32", 32, 8, 23, true, true, 127, Inf::ieee, NaN::ieee, false, 0x7F7FFFFFull, 0x7FFFFFFFull};
        case Format::tf32:
            return {"tf32", 19, 8, 10, true, true, 127, Inf::ieee, NaN::ieee, false, 0x3FBFFull, 0x3FFFFull};
        case Format::fp16: return {"fp16", 16, 5, 10, true, true, 15, Inf::ieee, NaN::ieee, false, 0x7BFF, 0x7FFF};
        case Format::bf16: return {"bf16", 16, 8, 7, true, true, 127, Inf::ieee, NaN::ieee, false, 0x7F7F, 0x7FFF};
        case Format::e4m3: return {"e4m3", 8, 4, 3, true, true, 7, Inf::none, NaN::all_ones, true, 0x7E, 0x7F};
        case Format::e5m2: return {"e5m2", 8, 5, 2, true, true, 15, Inf::ieee, NaN::ieee, true, 0x7B, 0x7F};
        case Format::e4m3fnuz: return {"e4m3fnuz", 8, 4, 3, true, true, 8, Inf::none, NaN::neg_zero, true, 0x7F, 0x80};
        case Format::e5m2fnuz: return {"e5m2fnuz", 8, 5, 2, true, true, 16, Inf::none, NaN::neg_zero, true, 0x7F, 0x80};
        case Format::e2m3: return {"e2m3", 6, 2, 3, true, true, 1, Inf::none, NaN::none, true, 0x1F, 0x1F};
        case Format::e3m2: return {"e3m2", 6, 3, 2, true, true, 3, Inf::none, NaN::none, true, 0x1F, 0x1F};
        case Format::e2m1: return {"e2m1", 4, 2, 1, true, true, 1, Inf::none, NaN::none, true, 0x7, 0x7};
        case Format::e8m0: return {"e8m0", 8, 8, 0, false, false, 127, Inf::none, NaN::all_ones, true, 0xFE, 0xFF};
    }
    return {"?", 0, 0, 0, false, false, 0, Inf::none, NaN::none, false, 0, 0};
}

// ---- bit helpers --------------------------------------------------------------------------------------------

// The same bits as another type of the same size (memcpy: std::bit_cast is not available in device code).
template <class To, class From>
TALLY_HD inline To same_bits(From from) {
    static_assert(sizeof(To) == sizeof(From), "same_bits needs types of one size");
    To to;
    memcpy(&to, &from, sizeof to);
    return to;
}
TALLY_HD inline uint64_t double_bits(double x) { return same_bits<uint64_t>(x); }
TALLY_HD inline double bits_double(uint64_t u) { return same_bits<double>(u); }
TALLY_HD inline uint32_t float_bits(float x) { return same_bits<uint32_t>(x); }
TALLY_HD inline float bits_float(uint32_t u) { return same_bits<float>(u); }
// Index of the highest set bit of a non-zero value.
TALLY_HD inline int top_bit(uint64_t v) {
#if defined(__CUDA_ARCH__)
    return 63 - __clzll((long long)v);
#else
    return 63 - __builtin_clzll(v);
#endif
}
// 2^k as a double, exactly, for -1074 <= k <= 1023 (built from bits: no libm).
TALLY_HD inline double pow2(int k) {
    if (k >= -1022) return bits_double((uint64_t)(k + 1023) << 52);
    return bits_double((uint64_t)1 << (k + 1074));
}

TALLY_HD constexpr uint64_t code_mask(const FormatInfo& fi) { return fi.bits == 64 ? ~0ull : ((1ull << fi.bits) - 1); }
TALLY_HD constexpr uint64_t sign_mask(const FormatInfo& fi) { return fi.has_sign ? (1ull << (fi.bits - 1)) : 0; }
TALLY_HD constexpr uint64_t exp_all_ones(const FormatInfo& fi) { return (1ull << fi.exp_bits) - 1; }
TALLY_HD constexpr uint64_t man_mask(const FormatInfo& fi) { return (1ull << fi.man_bits) - 1; }

// ---- encoding -----------------------------------------------------------------------------------------------

// Flags describing what happened to the input.
enum : uint8_t {
    kInexact = 1,     // the code's value differs from the input
    kOverflow = 2,    // |input| rounded above max (or was infinite where the format has no inf)
    kUnderflow = 4,   // a non-zero input became zero (or, in E8M0, was clamped up to 2^-127)
    kSubnormal = 8,   // the result is subnormal
    kSaturated = 16,  // overflow gave ±max
    kNanInput = 32,
    kInfInput = 64,
};

struct Encoded {
    uint64_t code;
    uint8_t flags;
};

namespace detail {
// The code an out-of-range input gets. `toward_max`: the rounding direction points back into range (IEEE 754
// 7.4: round toward zero gives ±max, never inf).
TALLY_HD inline Encoded overflow_code(const FormatInfo& fi, uint64_t s, bool toward_max, bool saturate, uint8_t flags) {
    if (toward_max || saturate || (fi.inf == Inf::none && fi.nan == NaN::none))
        return {s | fi.max_mag, (uint8_t)(flags | kSaturated)};
    if (fi.inf == Inf::ieee) return {s | (exp_all_ones(fi) << fi.man_bits), flags};
    if (fi.nan == NaN::neg_zero) return {1ull << (fi.bits - 1), flags};
    return {s | (exp_all_ones(fi) << fi.man_bits) | man_mask(fi), flags};  // all_ones NaN keeps the sign
}
}  // namespace detail

// Rounds the exact value x to format f. `saturate` is ignored by formats that have neither inf nor NaN.
// The overloads without `saturate` use the format's NVIDIA default (fp8/fp6/fp4/E8M0 satfinite, IEEE types not).
TALLY_HD inline Encoded encode(Format f, double x, Round rnd, bool saturate) {
    const FormatInfo fi = format_info(f);
    const int p = fi.man_bits;
    const uint64_t xb = double_bits(x);
    const uint64_t xexp = (xb >> 52) & 0x7FF, xman = xb & 0xFFFFFFFFFFFFFull;
    if (xexp == 0x7FF && xman != 0) return {fi.nan_code, kNanInput};
    const bool neg = fi.has_sign && (xb >> 63) != 0;  // unsigned formats encode |x|
    const uint64_t s = neg ? sign_mask(fi) : 0;
    // Does rounding this sign's magnitude upward count as moving away from the rounding direction?
    const bool dir_down = rnd == Round::toward_zero || (rnd == Round::up && neg) || (rnd == Round::down && !neg);
    if (xexp == 0x7FF) return detail::overflow_code(fi, s, false, saturate, kOverflow | kInfInput);
    if (xexp == 0 && xman == 0) {
        if (!fi.has_subnormals) return {0, kInexact | kUnderflow};  // E8M0: no zero; clamp to 2^-127
        return {fi.nan == NaN::neg_zero ? 0 : s, 0};
    }
    // |x| = m * 2^e exactly, highest bit of m at position t, so floor(log2|x|) = t + e.
    const uint64_t m = xexp ? (xman | (1ull << 52)) : xman;
    const int e = xexp ? (int)xexp - 1075 : -1074;
    const int E = top_bit(m) + e;
    const int emin = 1 - fi.bias;  // exponent of the smallest normal binade
    // q: exponent of the result's last mantissa bit (its quantum).
    const int q = (fi.has_subnormals && E < emin ? emin : E) - p;
    const int shift = q - e;  // low bits of m that do not fit
    uint64_t n;
    bool inexact = false, away = false;
    if (shift <= 0) {
        n = m << (-shift);  // exact; -shift <= p
    } else {
        uint64_t rem, half;
        if (shift >= 64) {
            n = 0;
            rem = 1;  // non-zero, and below half since m < 2^53 <= 2^(shift-1)
            half = 2;
        } else {
            n = m >> shift;
            rem = m & ((1ull << shift) - 1);
            half = 1ull << (shift - 1);
        }
        inexact = rem != 0;
        switch (rnd) {
            case Round::nearest_even: away = rem > half || (rem == half && (n & 1)); break;
            case Round::nearest_away: away = rem >= half; break;
            case Round::toward_zero: away = false; break;
            case Round::up: away = inexact && !neg; break;
            case Round::down: away = inexact && neg; break;
        }
        n += away ? 1 : 0;
    }
    uint8_t flags = inexact ? kInexact : 0;
    if (n == 0) return {fi.nan == NaN::neg_zero ? 0 : s, (uint8_t)(flags | kUnderflow)};
    int Ef = q + p;      // exponent of the binade of n * 2^q when n has p+1 bits
    if (n >> (p + 1)) {  // rounding carried into the next binade: n == 2^(p+1)
        n >>= 1;
        Ef += 1;
    }
    uint64_t biased, mant;
    if (n >> p) {
        const int b = Ef + fi.bias;
        if (b < 0) return {0, (uint8_t)(flags | kInexact | kUnderflow)};  // E8M0 below 2^-127
        biased = (uint64_t)b;
        mant = n & man_mask(fi);
        if (biased > exp_all_ones(fi)) return detail::overflow_code(fi, s, dir_down, saturate, flags | kOverflow);
    } else {
        biased = 0;  // subnormal (n < 2^p happens only at q == emin - p)
        mant = n;
        flags |= kSubnormal;
    }
    const uint64_t mag = (biased << p) | mant;
    if (mag > fi.max_mag) return detail::overflow_code(fi, s, dir_down, saturate, flags | kOverflow);
    return {s | mag, flags};
}

TALLY_HD inline Encoded encode(Format f, double x, Round rnd = Round::nearest_even) {
    return encode(f, x, rnd, format_info(f).default_saturate);
}
TALLY_HD inline uint64_t encode_from_double(Format f, double x, Round rnd, bool saturate) {
    return encode(f, x, rnd, saturate).code;
}
TALLY_HD inline uint64_t encode_from_double(Format f, double x, Round rnd = Round::nearest_even) {
    return encode(f, x, rnd).code;
}
// A float widens to double exactly, so these round the float's own value once.
TALLY_HD inline uint64_t encode_from_float(Format f, float x, Round rnd, bool saturate) {
    return encode(f, (double)x, rnd, saturate).code;
}
TALLY_HD inline uint64_t encode_from_float(Format f, float x, Round rnd = Round::nearest_even) {
    return encode(f, (double)x, rnd).code;
}

// ---- decoding -----------------------------------------------------------------------------------------------

struct Fields {
    uint32_t sign;      // 0 or 1
    uint32_t exponent;  // biased exponent field
    uint64_t mantissa;  // stored fraction field
};

TALLY_HD inline Fields fields(Format f, uint64_t code) {
    const FormatInfo fi = format_info(f);
    code &= code_mask(fi);
    return {fi.has_sign ? (uint32_t)(code >> (fi.bits - 1)) : 0u, (uint32_t)((code >> fi.man_bits) & exp_all_ones(fi)),
            code & man_mask(fi)};
}

TALLY_HD inline Class classify(Format f, uint64_t code) {
    const FormatInfo fi = format_info(f);
    code &= code_mask(fi);
    const Fields fl = fields(f, code);
    const bool exp_ones = fl.exponent == exp_all_ones(fi);
    switch (fi.nan) {
        case NaN::ieee:
            if (exp_ones && fl.mantissa != 0) return Class::nan;
            break;
        case NaN::all_ones:
            if (exp_ones && fl.mantissa == man_mask(fi)) return Class::nan;
            break;
        case NaN::neg_zero:
            if (code == sign_mask(fi)) return Class::nan;
            break;
        case NaN::none: break;
    }
    if (fi.inf == Inf::ieee && exp_ones && fl.mantissa == 0) return Class::inf;
    if (!fi.has_subnormals) return Class::normal;
    if (fl.exponent == 0) return fl.mantissa == 0 ? Class::zero : Class::subnormal;
    return Class::normal;
}

// The exact value of a code (every format here fits a double exactly). NaN codes give a quiet NaN carrying
// the code's sign; there is no other information in them.
TALLY_HD inline double decode_to_double(Format f, uint64_t code) {
    const FormatInfo fi = format_info(f);
    code &= code_mask(fi);
    const Fields fl = fields(f, code);
    const double sign = fl.sign ? -1.0 : 1.0;
    switch (classify(f, code)) {
        case Class::nan: return bits_double((fl.sign ? 0xFFF8000000000000ull : 0x7FF8000000000000ull));
        case Class::inf: return sign * bits_double(0x7FF0000000000000ull);
        case Class::zero: return sign * 0.0;
        case Class::subnormal: return sign * ((double)fl.mantissa * pow2(1 - fi.bias - fi.man_bits));
        case Class::normal: break;
    }
    const uint64_t n = fl.mantissa | (1ull << fi.man_bits);
    return sign * ((double)n * pow2((int)fl.exponent - fi.bias - fi.man_bits));
}

// ---- constants and neighbours ------------------------------------------------------------------------------

TALLY_HD inline uint64_t max_code(Format f) { return format_info(f).max_mag; }
TALLY_HD inline uint64_t min_normal_code(Format f) {
    const FormatInfo fi = format_info(f);
    return fi.has_subnormals ? (1ull << fi.man_bits) : 0;
}
// Smallest positive value: code 1 with subnormals; E8M0 has none, so its smallest value 2^-127 (code 0).
TALLY_HD inline uint64_t min_subnormal_code(Format f) { return format_info(f).has_subnormals ? 1 : 0; }
TALLY_HD inline uint64_t canonical_nan_code(Format f) { return format_info(f).nan_code; }
TALLY_HD inline bool has_inf(Format f) { return format_info(f).inf != Inf::none; }
TALLY_HD inline bool has_nan(Format f) { return format_info(f).nan != NaN::none; }

// Number of codes that are finite numbers (zeros counted once per code: +0 and -0 are two codes).
TALLY_HD inline uint64_t finite_count(Format f) {
    const FormatInfo fi = format_info(f);
    const uint64_t halves = fi.has_sign ? 2 : 1;
    const uint64_t per_half = fi.bits == 64 ? (1ull << 63) : (1ull << (fi.bits - (fi.has_sign ? 1 : 0)));
    uint64_t specials = 0;  // per sign half
    if (fi.inf == Inf::ieee) specials += 1;
    if (fi.nan == NaN::ieee) specials += man_mask(fi);
    if (fi.nan == NaN::all_ones) specials += 1;
    uint64_t total = halves * (per_half - specials);  // cannot overflow: per_half - specials < 2^63 for fp64
    if (fi.nan == NaN::neg_zero) total -= 1;
    return total;
}

// ulp of a finite code: the spacing of the format at that value's binade, 2^(max(E, emin) - man_bits)
// (at max, the spacing of max's binade). Returns 0 for inf and NaN.
TALLY_HD inline double ulp(Format f, uint64_t code) {
    const FormatInfo fi = format_info(f);
    const Class c = classify(f, code);
    if (c == Class::nan || c == Class::inf) return 0.0;
    const Fields fl = fields(f, code);
    int E = (int)fl.exponent - fi.bias;
    if (fi.has_subnormals && fl.exponent == 0) E = 1 - fi.bias;
    return pow2(E - fi.man_bits);
}

// A code taken apart (next_up and next_down): its class, the sign bit, whether it is set, the magnitude bits.
struct CodeParts {
    Class cls;
    uint64_t sign_bit;
    bool neg;
    uint64_t mag;
};
TALLY_HD inline CodeParts code_parts(Format f, const FormatInfo& fi, uint64_t code) {
    code &= code_mask(fi);
    const uint64_t sm = sign_mask(fi);
    return {classify(f, code), sm, (code & sm) != 0, code & ~sm};
}

// One step away from zero from magnitude `mag`, keeping the sign bits `sign`: the next magnitude, or inf past the
// largest finite value where the format has inf; false where it has none (next_up and next_down share it).
TALLY_HD inline bool step_away_from_zero(const FormatInfo& fi, uint64_t sign, uint64_t mag, uint64_t* out) {
    if (mag == fi.max_mag) {
        if (fi.inf != Inf::ieee) return false;
        *out = sign | (exp_all_ones(fi) << fi.man_bits);
        return true;
    }
    *out = sign | (mag + 1);
    return true;
}

// The next representable value toward +inf (IEEE nextUp). false when there is none (max of a format without
// inf, +inf, NaN).
TALLY_HD inline bool next_up(Format f, uint64_t code, uint64_t* out) {
    const FormatInfo fi = format_info(f);
    const auto [c, sm, neg, mag] = code_parts(f, fi, code);
    if (c == Class::nan) return false;
    if (c == Class::inf) {
        if (!neg) return false;
        *out = sm | fi.max_mag;
        return true;
    }
    if (neg && mag != 0) {
        *out = (mag - 1 == 0 && fi.nan == NaN::neg_zero) ? 0 : (sm | (mag - 1));
        return true;
    }
    return step_away_from_zero(fi, 0, mag, out);  // +0, -0 or positive
}

// The next representable value toward -inf (IEEE nextDown).
TALLY_HD inline bool next_down(Format f, uint64_t code, uint64_t* out) {
    const FormatInfo fi = format_info(f);
    const auto [c, sm, neg, mag] = code_parts(f, fi, code);
    if (c == Class::nan) return false;
    if (c == Class::inf) {
        if (neg) return false;
        *out = fi.max_mag;
        return true;
    }
    if (!neg && mag != 0) {
        *out = mag - 1;
        return true;
    }
    if (!fi.has_sign) return false;  // E8M0's smallest value
    // zero or negative
    if (mag == 0) {
        *out = sm | 1;  // -min subnormal
        return true;
    }
    return step_away_from_zero(fi, sm, mag, out);
}

}  // namespace tally::fp
