// tally_float_check: verifies tally::fp's encoder and decoder bit for bit.
//
//   tally_float_check            fast mode (the ctest entry): ~21M float patterns per conversion — every 256th
//                                pattern with a pseudo-random low byte, plus every rounding boundary (ties and
//                                their neighbours at every bit position, for every exponent and sign).
//   tally_float_check --full     all 2^32 float patterns per conversion (minutes; uses every core).
//   options: --threads N, --write-golden (rewrite this mode's hashes in the golden file), --golden PATH
//
// References, when their headers are found at build time (TALLY_HAVE_CUDA_FP):
//   NVIDIA's host conversion code in cuda_fp16.h, cuda_bf16.h, cuda_fp8.h, cuda_fp6.h, cuda_fp4.h (compiled by
//   g++ from /usr/local/cuda/include; no nvcc, no GPU, nothing linked). Always: GCC's _Float16 for fp16, bit
//   casts for fp32, and integer bit tricks for TF32. Every conversion's output table is also hashed (FNV-1a
//   over chunk hashes, in input order) and compared with engine/tools/float_golden.txt, so a machine without
//   the CUDA headers still checks bit-exactness. Decoding is checked over every code of every format of
//   16 bits or fewer.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tally/numerics/precision.h"

#if defined(TALLY_HAVE_CUDA_FP)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>
#endif

// The golden file's path, from float_golden_path.cpp: the one source of this tool compiled with the tree's path,
// so a compiler cache serves this large object to a clone in any folder.
const char* tally_float_golden_path();

using namespace tally::fp;

namespace {

// ---------------------------------------------------------------- conversions under test

using Fn = uint32_t (*)(float);

template <Format F, Round R, bool S>
uint32_t ours(float x) {
    return (uint32_t)encode_from_float(F, x, R, S);
}

#if defined(TALLY_HAVE_CUDA_FP)
uint32_t nv_fp16_rn(float x) { return __half_as_ushort(__float2half_rn(x)); }
uint32_t nv_fp16_rz(float x) { return __half_as_ushort(__float2half_rz(x)); }
uint32_t nv_fp16_ru(float x) { return __half_as_ushort(__float2half_ru(x)); }
uint32_t nv_fp16_rd(float x) { return __half_as_ushort(__float2half_rd(x)); }
uint32_t nv_bf16_rn(float x) { return __bfloat16_as_ushort(__float2bfloat16_rn(x)); }
uint32_t nv_bf16_rz(float x) { return __bfloat16_as_ushort(__float2bfloat16_rz(x)); }
uint32_t nv_bf16_ru(float x) { return __bfloat16_as_ushort(__float2bfloat16_ru(x)); }
uint32_t nv_bf16_rd(float x) { return __bfloat16_as_ushort(__float2bfloat16_rd(x)); }
template <__nv_fp8_interpretation_t I, __nv_saturation_t S>
uint32_t nv_fp8(float x) {
    return __nv_cvt_float_to_fp8(x, S, I);
}
template <__nv_fp6_interpretation_t I, cudaRoundMode R>
uint32_t nv_fp6(float x) {
    return __nv_cvt_float_to_fp6(x, I, R);
}
template <cudaRoundMode R>
uint32_t nv_fp4(float x) {
    return __nv_cvt_float_to_fp4(x, __NV_E2M1, R);
}
template <__nv_saturation_t S, cudaRoundMode R>
uint32_t nv_e8m0(float x) {
    return __nv_cvt_float_to_e8m0(x, S, R);
}
#endif

// GCC's _Float16 conversion (libgcc soft-float, round to nearest even). It keeps NaN payloads, so the
// comparison maps every NaN to our canonical 0x7FFF.
uint32_t gcc_fp16(float x) {
    if (std::isnan(x)) return 0x7FFF;
    _Float16 h = (_Float16)x;
    uint16_t u;
    std::memcpy(&u, &h, 2);
    return u;
}
uint32_t bitcast_fp32(float x) {
    if (std::isnan(x)) return 0x7FFFFFFF;
    return float_bits(x);
}
// TF32 (1+8+10 bits) from fp32 by integer arithmetic on the bits: drop 13 bits with the rounding increment.
template <bool Away>
uint32_t bits_tf32(float x) {
    const uint32_t u = float_bits(x);
    if ((u & 0x7FFFFFFF) > 0x7F800000) return 0x3FFFF;
    if ((u & 0x7FFFFFFF) == 0x7F800000) return u >> 13;
    const uint32_t inc = Away ? 0x1000u : 0xFFFu + ((u >> 13) & 1u);
    return (uint32_t)(((uint64_t)u + inc) >> 13);  // a carry into the exponent is the right answer, inf included
}

// Round-to-nearest-even by searching the sorted table of a format's positive values (decoded by
// decode_to_double, which the decode check verifies) — an algorithm independent of the encoder's bit
// arithmetic. Used for the FNUZ formats, which NVIDIA's headers do not provide. Single-NaN (0x80) formats only.
template <Format F, bool Sat>
uint32_t table_ref(float xf) {
    struct Table {
        std::vector<double> v;  // positive finite values, ascending (v[0] = 0)
        std::vector<uint32_t> c;
        Table() {
            const FormatInfo fi = format_info(F);
            for (uint32_t code = 0; code <= fi.max_mag; ++code) {
                v.push_back(decode_to_double(F, code));
                c.push_back(code);
            }
        }
    };
    static const Table t;
    const FormatInfo fi = format_info(F);
    if (std::isnan(xf)) return 0x80;
    const double x = xf, a = std::fabs(x);
    const bool neg = std::signbit(x);
    const double maxv = t.v.back(), max_ulp = maxv - t.v[t.v.size() - 2];
    uint32_t mag;
    if (std::isinf(a) || a > maxv + max_ulp / 2 || (a == maxv + max_ulp / 2 && (t.c.back() & 1))) {
        if (!Sat) return 0x80;
        mag = (uint32_t)fi.max_mag;
    } else if (a >= maxv) {
        mag = (uint32_t)fi.max_mag;
    } else {
        size_t lo = 0, hi = t.v.size() - 1;  // v[lo] <= a < v[hi]
        while (hi - lo > 1) {
            const size_t mid = (lo + hi) / 2;
            (t.v[mid] <= a ? lo : hi) = mid;
        }
        const double dlo = a - t.v[lo], dhi = t.v[hi] - a;  // exact: all values share a small exponent range
        if (dlo < dhi)
            mag = t.c[lo];
        else if (dhi < dlo)
            mag = t.c[hi];
        else
            mag = (t.c[lo] & 1) ? t.c[hi] : t.c[lo];
    }
    if (mag == 0) return 0;  // no negative zero
    return (neg ? 0x80u : 0u) | mag;
}

struct Conversion {
    const char* name;
    Fn ours;
    Fn ref;  // nullptr: golden hash only
    const char* ref_name;
    int code_bytes;  // bytes hashed per code
};

std::vector<Conversion> conversions() {
    std::vector<Conversion> v = {
        {"fp16_rn", ours<Format::fp16, Round::nearest_even, false>, nullptr, "", 2},
        {"fp16_rz", ours<Format::fp16, Round::toward_zero, false>, nullptr, "", 2},
        {"fp16_ru", ours<Format::fp16, Round::up, false>, nullptr, "", 2},
        {"fp16_rd", ours<Format::fp16, Round::down, false>, nullptr, "", 2},
        {"bf16_rn", ours<Format::bf16, Round::nearest_even, false>, nullptr, "", 2},
        {"bf16_rz", ours<Format::bf16, Round::toward_zero, false>, nullptr, "", 2},
        {"bf16_ru", ours<Format::bf16, Round::up, false>, nullptr, "", 2},
        {"bf16_rd", ours<Format::bf16, Round::down, false>, nullptr, "", 2},
        {"e4m3_rn_satfinite", ours<Format::e4m3, Round::nearest_even, true>, nullptr, "", 1},
        {"e4m3_rn_nosat", ours<Format::e4m3, Round::nearest_even, false>, nullptr, "", 1},
        {"e5m2_rn_satfinite", ours<Format::e5m2, Round::nearest_even, true>, nullptr, "", 1},
        {"e5m2_rn_nosat", ours<Format::e5m2, Round::nearest_even, false>, nullptr, "", 1},
        {"e2m3_rn", ours<Format::e2m3, Round::nearest_even, true>, nullptr, "", 1},
        {"e2m3_rz", ours<Format::e2m3, Round::toward_zero, true>, nullptr, "", 1},
        {"e3m2_rn", ours<Format::e3m2, Round::nearest_even, true>, nullptr, "", 1},
        {"e3m2_rz", ours<Format::e3m2, Round::toward_zero, true>, nullptr, "", 1},
        {"e2m1_rn", ours<Format::e2m1, Round::nearest_even, true>, nullptr, "", 1},
        {"e2m1_rz", ours<Format::e2m1, Round::toward_zero, true>, nullptr, "", 1},
        {"e8m0_rz_satfinite", ours<Format::e8m0, Round::toward_zero, true>, nullptr, "", 1},
        {"e8m0_rz_nosat", ours<Format::e8m0, Round::toward_zero, false>, nullptr, "", 1},
        {"e8m0_ru_satfinite", ours<Format::e8m0, Round::up, true>, nullptr, "", 1},
        {"e8m0_ru_nosat", ours<Format::e8m0, Round::up, false>, nullptr, "", 1},
        // Independent non-NVIDIA references.
        {"fp16_rn_vs_gcc_Float16", ours<Format::fp16, Round::nearest_even, false>, gcc_fp16, "GCC _Float16", 2},
        {"fp32_vs_bitcast", ours<Format::fp32, Round::nearest_even, false>, bitcast_fp32, "bit cast", 4},
        {"tf32_rn", ours<Format::tf32, Round::nearest_even, false>, bits_tf32<false>, "integer bit trick", 3},
        {"tf32_rna", ours<Format::tf32, Round::nearest_away, false>, bits_tf32<true>, "integer bit trick", 3},
        // FNUZ: not in NVIDIA's headers; checked against a table search (and the golden hashes).
        {"e4m3fnuz_rn_satfinite", ours<Format::e4m3fnuz, Round::nearest_even, true>, table_ref<Format::e4m3fnuz, true>,
         "table search", 1},
        {"e4m3fnuz_rn_nosat", ours<Format::e4m3fnuz, Round::nearest_even, false>, table_ref<Format::e4m3fnuz, false>,
         "table search", 1},
        {"e5m2fnuz_rn_satfinite", ours<Format::e5m2fnuz, Round::nearest_even, true>, table_ref<Format::e5m2fnuz, true>,
         "table search", 1},
        {"e5m2fnuz_rn_nosat", ours<Format::e5m2fnuz, Round::nearest_even, false>, table_ref<Format::e5m2fnuz, false>,
         "table search", 1},
    };
#if defined(TALLY_HAVE_CUDA_FP)
    const std::map<std::string, Fn> nv = {
        {"fp16_rn", nv_fp16_rn},
        {"fp16_rz", nv_fp16_rz},
        {"fp16_ru", nv_fp16_ru},
        {"fp16_rd", nv_fp16_rd},
        {"bf16_rn", nv_bf16_rn},
        {"bf16_rz", nv_bf16_rz},
        {"bf16_ru", nv_bf16_ru},
        {"bf16_rd", nv_bf16_rd},
        {"e4m3_rn_satfinite", nv_fp8<__NV_E4M3, __NV_SATFINITE>},
        {"e4m3_rn_nosat", nv_fp8<__NV_E4M3, __NV_NOSAT>},
        {"e5m2_rn_satfinite", nv_fp8<__NV_E5M2, __NV_SATFINITE>},
        {"e5m2_rn_nosat", nv_fp8<__NV_E5M2, __NV_NOSAT>},
        {"e2m3_rn", nv_fp6<__NV_E2M3, cudaRoundNearest>},
        {"e2m3_rz", nv_fp6<__NV_E2M3, cudaRoundZero>},
        {"e3m2_rn", nv_fp6<__NV_E3M2, cudaRoundNearest>},
        {"e3m2_rz", nv_fp6<__NV_E3M2, cudaRoundZero>},
        {"e2m1_rn", nv_fp4<cudaRoundNearest>},
        {"e2m1_rz", nv_fp4<cudaRoundZero>},
        {"e8m0_rz_satfinite", nv_e8m0<__NV_SATFINITE, cudaRoundZero>},
        {"e8m0_rz_nosat", nv_e8m0<__NV_NOSAT, cudaRoundZero>},
        {"e8m0_ru_satfinite", nv_e8m0<__NV_SATFINITE, cudaRoundPosInf>},
        {"e8m0_ru_nosat", nv_e8m0<__NV_NOSAT, cudaRoundPosInf>},
    };
    for (auto& c : v) {
        auto it = nv.find(c.name);
        if (it != nv.end()) {
            c.ref = it->second;
            c.ref_name = "NVIDIA cuda_fp*.h host code";
        }
    }
#endif
    return v;
}

// ---------------------------------------------------------------- input sets

uint64_t mix64(uint64_t z) {  // splitmix64 finaliser
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Fast-mode sample, indexed 0..fast_count()-1 so any thread can produce any slice.
//   [0, 2^24): (i << 8) | pseudo-random low byte — every sign/exponent/top-15-mantissa-bits combination.
//   then, for every width L = 1..23 of discarded low bits, sign, exponent field and 64 prefixes of the kept
//   bits: the low part 0, 1, h-1, h, h+1, 2h-1 with h = 2^(L-1): exact values, ties and their neighbours at
//   every rounding position any target format (normal or subnormal) uses.
constexpr uint64_t kStrided = 1ull << 24;
constexpr uint64_t kBoundaryPerL = 2ull * 256 * 64 * 6;
constexpr uint64_t kFastCount = kStrided + 23 * kBoundaryPerL;

uint32_t fast_input(uint64_t i) {
    if (i < kStrided) return (uint32_t)((i << 8) | (mix64(i) & 0xFF));
    i -= kStrided;
    const uint32_t L = (uint32_t)(i / kBoundaryPerL) + 1;
    uint64_t r = i % kBoundaryPerL;
    const uint32_t variant = (uint32_t)(r % 6);
    r /= 6;
    const uint32_t prefix_index = (uint32_t)(r % 64);
    r /= 64;
    const uint32_t exponent = (uint32_t)(r % 256);
    const uint32_t sign = (uint32_t)(r / 256);
    const uint32_t kept_bits = 23 - L;
    const uint32_t kept_mask = kept_bits ? ((1u << kept_bits) - 1) : 0;
    const uint32_t prefix = (prefix_index < 32 ? prefix_index : (uint32_t)mix64(i * 7919 + prefix_index)) & kept_mask;
    const uint32_t h = 1u << (L - 1);
    const uint32_t lows[6] = {0u, 1u, h - 1, h, h + 1, 2 * h - 1};
    const uint32_t low = lows[variant] & ((L == 32) ? ~0u : ((1u << L) - 1));
    return (sign << 31) | (exponent << 23) | (prefix << L) | low;
}

// ---------------------------------------------------------------- hashing

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull, kFnvPrime = 0x100000001b3ull;
inline uint64_t fnv_bytes(uint64_t h, uint32_t code, int bytes) {
    for (int b = 0; b < bytes; ++b) {
        h ^= (code >> (8 * b)) & 0xFF;
        h *= kFnvPrime;
    }
    return h;
}

// ---------------------------------------------------------------- the sweep

struct Result {
    uint64_t checked = 0;
    uint64_t mismatches = 0;
    std::vector<std::pair<uint32_t, std::pair<uint32_t, uint32_t>>> examples;  // input, (ours, ref)
    std::vector<uint64_t> chunk_hashes;
    uint64_t hash = 0;
};

constexpr uint64_t kChunk = 1ull << 20;

void sweep(const std::vector<Conversion>& convs, bool full, unsigned threads, std::vector<Result>& results) {
    const uint64_t count = full ? (1ull << 32) : kFastCount;
    const uint64_t chunks = (count + kChunk - 1) / kChunk;
    results.assign(convs.size(), Result{});
    for (auto& r : results) r.chunk_hashes.assign(chunks, 0);
    std::atomic<uint64_t> next{0};
    uint64_t done = 0;  // chunks finished (guarded by mu)
    std::mutex mu;
    auto worker = [&]() {
        std::vector<uint64_t> h(convs.size());
        std::vector<uint64_t> bad(convs.size());
        for (;;) {
            const uint64_t c = next.fetch_add(1);
            if (c >= chunks) break;
            const uint64_t begin = c * kChunk, end = std::min(count, begin + kChunk);
            for (size_t k = 0; k < convs.size(); ++k) {
                const Conversion& cv = convs[k];
                uint64_t hash = kFnvOffset, miss = 0;
                for (uint64_t i = begin; i < end; ++i) {
                    const uint32_t in = full ? (uint32_t)i : fast_input(i);
                    const float x = bits_float(in);
                    const uint32_t a = cv.ours(x);
                    hash = fnv_bytes(hash, a, cv.code_bytes);
                    if (cv.ref) {
                        const uint32_t b = cv.ref(x);
                        if (a != b) {
                            ++miss;
                            std::lock_guard<std::mutex> lock(mu);
                            if (results[k].examples.size() < 5) results[k].examples.push_back({in, {a, b}});
                        }
                    }
                }
                h[k] = hash;
                bad[k] = miss;
            }
            std::lock_guard<std::mutex> lock(mu);
            for (size_t k = 0; k < convs.size(); ++k) {
                results[k].chunk_hashes[c] = h[k];
                results[k].mismatches += bad[k];
                results[k].checked += end - begin;
            }
            // Progress on stderr in full mode (every 1/32 of the sweep).
            if (full && ++done % (chunks / 32) == 0) {
                std::fprintf(stderr, "  %3llu%% of the 2^32 sweep\n", (unsigned long long)(done * 100 / chunks));
            }
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
    for (auto& r : results) {
        uint64_t hash = kFnvOffset;
        for (uint64_t ch : r.chunk_hashes) {
            for (int b = 0; b < 8; ++b) {
                hash ^= (ch >> (8 * b)) & 0xFF;
                hash *= kFnvPrime;
            }
        }
        r.hash = hash;
    }
}

// ---------------------------------------------------------------- decode over every code

struct DecodeCheck {
    const char* name;
    Format format;
    double (*ref)(uint32_t code);  // nullptr: property checks only
};

#if defined(TALLY_HAVE_CUDA_FP)
double nv_dec_fp16(uint32_t c) { return __half2float(__ushort_as_half((unsigned short)c)); }
double nv_dec_bf16(uint32_t c) { return __bfloat162float(__ushort_as_bfloat16((unsigned short)c)); }
template <__nv_fp8_interpretation_t I>
double nv_dec_fp8(uint32_t c) {
    return __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)c, I)));
}
template <__nv_fp6_interpretation_t I>
double nv_dec_fp6(uint32_t c) {
    return __half2float(__half(__nv_cvt_fp6_to_halfraw((__nv_fp6_storage_t)c, I)));
}
double nv_dec_fp4(uint32_t c) {
    return __half2float(__half(__nv_cvt_fp4_to_halfraw((__nv_fp4_storage_t)c, __NV_E2M1)));
}
double nv_dec_e8m0(uint32_t c) {
    return __bfloat162float(__nv_bfloat16(__nv_cvt_e8m0_to_bf16raw((__nv_fp8_storage_t)c)));
}
#endif
double gcc_dec_fp16(uint32_t c) {
    const uint16_t u = (uint16_t)c;
    _Float16 h;
    std::memcpy(&h, &u, 2);
    return (double)h;
}

// Returns the number of failures; prints one line per format.
int check_decoders() {
    std::vector<DecodeCheck> checks = {
        {"fp16 vs GCC _Float16", Format::fp16, gcc_dec_fp16},
        {"e4m3fnuz (properties)", Format::e4m3fnuz, nullptr},
        {"e5m2fnuz (properties)", Format::e5m2fnuz, nullptr},
#if defined(TALLY_HAVE_CUDA_FP)
        {"fp16 vs NVIDIA", Format::fp16, nv_dec_fp16},
        {"bf16 vs NVIDIA", Format::bf16, nv_dec_bf16},
        {"e4m3 vs NVIDIA", Format::e4m3, nv_dec_fp8<__NV_E4M3>},
        {"e5m2 vs NVIDIA", Format::e5m2, nv_dec_fp8<__NV_E5M2>},
        {"e2m3 vs NVIDIA", Format::e2m3, nv_dec_fp6<__NV_E2M3>},
        {"e3m2 vs NVIDIA", Format::e3m2, nv_dec_fp6<__NV_E3M2>},
        {"e2m1 vs NVIDIA", Format::e2m1, nv_dec_fp4},
        {"e8m0 vs NVIDIA", Format::e8m0, nv_dec_e8m0},
#endif
    };
    int failures = 0;
    for (const auto& dc : checks) {
        const FormatInfo fi = format_info(dc.format);
        const uint32_t n = 1u << fi.bits;
        uint32_t bad = 0, first_bad = 0;
        for (uint32_t c = 0; c < n; ++c) {
            const double ours = decode_to_double(dc.format, c);
            bool ok = true;
            if (dc.ref) {
                const double ref = dc.ref(c);
                ok = (std::isnan(ours) && std::isnan(ref)) || (ours == ref && std::signbit(ours) == std::signbit(ref));
            }
            // Every finite code re-encodes to itself (FNUZ and the rest), and NaN codes are NaN.
            if (ok && !std::isnan(ours)) {
                ok = encode_from_double(dc.format, ours, Round::nearest_even, false) == c;
            }
            if (!ok) {
                if (bad == 0) first_bad = c;
                ++bad;
            }
        }
        std::printf("  decode %-24s %6u codes  %u mismatches%s\n", dc.name, n, bad,
                    bad ? (" (first code 0x" + std::to_string(first_bad) + ")").c_str() : "");
        failures += bad != 0;
    }
    return failures;
}

// ---------------------------------------------------------------- golden file

std::map<std::string, std::string> read_golden(const std::string& path) {
    std::map<std::string, std::string> g;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ls(line);
        std::string mode, name, hash;
        if (ls >> mode >> name >> hash) g[mode + " " + name] = hash;
    }
    return g;
}

std::string hex64(uint64_t v) {
    char buf[20];
    std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)v);
    return buf;
}

}  // namespace

int main(int argc, char** argv) {
    bool full = false, write_golden = false;
    unsigned threads = std::thread::hardware_concurrency();
    if (threads == 0) threads = 2;
    std::string golden_path = tally_float_golden_path();
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--full")
            full = true;
        else if (a == "--fast")
            full = false;
        else if (a == "--write-golden")
            write_golden = true;
        else if (a == "--threads" && i + 1 < argc)
            threads = (unsigned)std::max(1, std::atoi(argv[++i]));
        else if (a == "--golden" && i + 1 < argc)
            golden_path = argv[++i];
        else {
            std::fprintf(stderr, "usage: %s [--full] [--threads N] [--write-golden] [--golden PATH]\n", argv[0]);
            return 2;
        }
    }
    const char* mode = full ? "full" : "fast";
#if defined(TALLY_HAVE_CUDA_FP)
    std::printf("tally_float_check: NVIDIA references built from %s (CUDA %d.%d headers)\n", TALLY_CUDA_INCLUDE,
                CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10);
#else
    std::printf(
        "tally_float_check: NVIDIA references NOT built (cuda_fp*.h not found at configure time, or "
        "TALLY_FLOAT_CHECK_NVIDIA=OFF); checking golden hashes and non-NVIDIA references only\n");
#endif
    const auto convs = conversions();
    const uint64_t count = full ? (1ull << 32) : kFastCount;
    std::printf("mode %s: %llu float patterns per conversion, %zu conversions, %u threads\n", mode,
                (unsigned long long)count, convs.size(), threads);
    std::fflush(stdout);

    int failures = check_decoders();

    const auto t0 = std::chrono::steady_clock::now();
    std::vector<Result> results;
    sweep(convs, full, threads, results);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    auto golden = read_golden(golden_path);
    bool golden_missing = false;
    for (size_t k = 0; k < convs.size(); ++k) {
        const Conversion& c = convs[k];
        const Result& r = results[k];
        const std::string key = std::string(mode) + " " + c.name;
        const std::string h = hex64(r.hash);
        std::string gstatus;
        auto it = golden.find(key);
        if (it == golden.end()) {
            gstatus = "golden: none";
            golden_missing = true;
        } else if (it->second == h) {
            gstatus = "golden: match";
        } else {
            gstatus = "golden: MISMATCH (expected " + it->second + ")";
            if (!write_golden) ++failures;
        }
        if (c.ref) {
            std::printf("  %-24s %llu mismatches vs %s; hash %s %s\n", c.name, (unsigned long long)r.mismatches,
                        c.ref_name, h.c_str(), gstatus.c_str());
        } else {
            std::printf("  %-24s (no reference here)        hash %s %s\n", c.name, h.c_str(), gstatus.c_str());
        }
        for (const auto& ex : r.examples)
            std::printf("      input 0x%08x (%.9g): ours 0x%x, reference 0x%x\n", ex.first,
                        (double)bits_float(ex.first), ex.second.first, ex.second.second);
        if (r.mismatches) ++failures;
    }
    std::printf("sweep time %.1f s (%s mode, %u threads)\n", seconds, mode, threads);

    if (write_golden && failures) {
        std::printf("not writing %s: fix the mismatches first\n", golden_path.c_str());
    } else if (write_golden) {
        std::map<std::string, std::string> merged = golden;
        for (size_t k = 0; k < convs.size(); ++k)
            merged[std::string(mode) + " " + convs[k].name] = hex64(results[k].hash);
        std::ofstream out(golden_path);
        out << "# FNV-1a-64 hashes of tally::fp encode_from_float output tables (see engine/tools/float_check.cpp).\n"
               "# fast: the fast-mode sample; full: all 2^32 float patterns. Written by tally_float_check --write-golden\n"
               "# after the NVIDIA comparison reported 0 mismatches.\n";
        for (const auto& [key, h] : merged) out << key << " " << h << "\n";
        std::printf("wrote %s\n", golden_path.c_str());
    } else if (golden_missing) {
        std::printf("note: some %s-mode golden hashes are missing from %s\n", mode, golden_path.c_str());
    }
    std::printf("%s\n", failures ? "FAILED" : "OK: 0 mismatches");
    return failures ? 1 : 0;
}
