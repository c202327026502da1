/*
Float conversions on the device: every one of the 2^32 float bit patterns, converted by NVIDIA's
intrinsics and by tally's own encoder (engine/include/tally/numerics/precision.h, compiled here as device
code through its TALLY_HD = __host__ __device__ macro), compared bit for bit.

Conversions checked (one "check" each):
  bf16 and fp16, round to nearest even and toward zero  (__float2bfloat16_rn/_rz, __float2half_rn/_rz)
  tf32, round to nearest, ties away                      (wmma::__float_to_tf32 = cvt.rna.tf32.f32)
  fp8 E4M3 and E5M2, with and without saturation         (__nv_cvt_float_to_fp8)
  fp6 E2M3 and E3M2, fp4 E2M1, nearest and toward zero   (__nv_cvt_float_to_fp6/_fp4)
  E8M0, toward zero and toward +inf, with and without saturation (__nv_cvt_float_to_e8m0)
Which of these is a hardware instruction depends on the architecture the binary was compiled for:
fp8 with saturation needs sm_89+, fp6/fp4/E8M0 need the sm_100 family-specific targets; elsewhere
the CUDA headers fall back to a software emulation. Each check reports which path ran, and the
ones without an instruction say "hardware instruction not supported on this architecture".

Build: part of the normal CMake build when nvcc is found (sm_80 and sm_90; compiled with
--fmad=false so the device encoder does exactly the host's arithmetic), or scripts/bench/verify-gpu.sh,
which builds for the GPU it finds.
Run:
  ./convert_check                 all 2^32 patterns (seconds to a minute on a recent GPU)
  ./convert_check --json out.json
  ./convert_check --quick         a strided 2^24-pattern sample (what ctest runs on a GPU machine)
  ./convert_check --self-test     host only: known answers and a 2^20-pattern sample through the
                                  CUDA headers' host emulation and the host build of the encoder
Without a CUDA device it prints "no CUDA device: skipped" and exits 0.
*/
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <chrono>
#include <cinttypes>
#include <string>
#include <vector>

#include "common.cuh"
#include "engine_bridge.h"
#include "tally/numerics/precision.h"

namespace fp = tally::fp;

// ----------------------------------------------------------------------------
// the checks

enum Check : int {
    kBf16Rn,
    kBf16Rz,
    kFp16Rn,
    kFp16Rz,
    kTf32Rna,
    kE4m3Sat,
    kE4m3NoSat,
    kE5m2Sat,
    kE5m2NoSat,
    kE2m3Rn,
    kE2m3Rz,
    kE3m2Rn,
    kE3m2Rz,
    kE2m1Rn,
    kE2m1Rz,
    kE8m0RzSat,
    kE8m0RzNoSat,
    kE8m0RpSat,
    kE8m0RpNoSat,
    kCheckCount
};

struct CheckInfo {
    const char* name;       // stable id for the report
    const char* intrinsic;  // what the hardware side calls
    fp::Format format;
    fp::Round round;
    bool saturate;
};

// The engine side of each check: the encoder's format, rounding and saturation that must equal the
// intrinsic's behaviour (NVIDIA: fp16/bf16 overflow to inf; __NV_SATFINITE clamps to ±max).
__host__ __device__ inline CheckInfo check_info(int c) {
    using F = fp::Format;
    using R = fp::Round;
    switch (c) {
        case kBf16Rn: return {"bf16_rn", "__float2bfloat16_rn", F::bf16, R::nearest_even, false};
        case kBf16Rz: return {"bf16_rz", "__float2bfloat16_rz", F::bf16, R::toward_zero, false};
        case kFp16Rn: return {"fp16_rn", "__float2half_rn", F::fp16, R::nearest_even, false};
        case kFp16Rz: return {"fp16_rz", "__float2half_rz", F::fp16, R::toward_zero, false};
        case kTf32Rna: return {"tf32_rna", "wmma::__float_to_tf32 (cvt.rna.tf32.f32)", F::tf32, R::nearest_away, false};
        case kE4m3Sat:
            return {"e4m3_rn_satfinite", "__nv_cvt_float_to_fp8(__NV_SATFINITE, __NV_E4M3)", F::e4m3, R::nearest_even,
                    true};
        case kE4m3NoSat:
            return {"e4m3_rn_nosat", "__nv_cvt_float_to_fp8(__NV_NOSAT, __NV_E4M3)", F::e4m3, R::nearest_even, false};
        case kE5m2Sat:
            return {"e5m2_rn_satfinite", "__nv_cvt_float_to_fp8(__NV_SATFINITE, __NV_E5M2)", F::e5m2, R::nearest_even,
                    true};
        case kE5m2NoSat:
            return {"e5m2_rn_nosat", "__nv_cvt_float_to_fp8(__NV_NOSAT, __NV_E5M2)", F::e5m2, R::nearest_even, false};
        case kE2m3Rn:
            return {"e2m3_rn", "__nv_cvt_float_to_fp6(__NV_E2M3, cudaRoundNearest)", F::e2m3, R::nearest_even, true};
        case kE2m3Rz:
            return {"e2m3_rz", "__nv_cvt_float_to_fp6(__NV_E2M3, cudaRoundZero)", F::e2m3, R::toward_zero, true};
        case kE3m2Rn:
            return {"e3m2_rn", "__nv_cvt_float_to_fp6(__NV_E3M2, cudaRoundNearest)", F::e3m2, R::nearest_even, true};
        case kE3m2Rz:
            return {"e3m2_rz", "__nv_cvt_float_to_fp6(__NV_E3M2, cudaRoundZero)", F::e3m2, R::toward_zero, true};
        case kE2m1Rn:
            return {"e2m1_rn", "__nv_cvt_float_to_fp4(__NV_E2M1, cudaRoundNearest)", F::e2m1, R::nearest_even, true};
        case kE2m1Rz:
            return {"e2m1_rz", "__nv_cvt_float_to_fp4(__NV_E2M1, cudaRoundZero)", F::e2m1, R::toward_zero, true};
        case kE8m0RzSat:
            return {"e8m0_rz_satfinite", "__nv_cvt_float_to_e8m0(__NV_SATFINITE, cudaRoundZero)", F::e8m0,
                    R::toward_zero, true};
        case kE8m0RzNoSat:
            return {"e8m0_rz_nosat", "__nv_cvt_float_to_e8m0(__NV_NOSAT, cudaRoundZero)", F::e8m0, R::toward_zero,
                    false};
        case kE8m0RpSat:
            return {"e8m0_rp_satfinite", "__nv_cvt_float_to_e8m0(__NV_SATFINITE, cudaRoundPosInf)", F::e8m0, R::up,
                    true};
        default: return {"e8m0_rp_nosat", "__nv_cvt_float_to_e8m0(__NV_NOSAT, cudaRoundPosInf)", F::e8m0, R::up, false};
    }
}

// NVIDIA's conversion, returning the code in the same layout as the engine's (tf32: the 19-bit code
// sign|exponent|10-bit mantissa, i.e. the cvt result shifted right by 13). Returns false when this
// build cannot run the intrinsic at all (tf32 on the host: the instruction has no host emulation).
__host__ __device__ inline bool nvidia_convert(int c, float x, uint32_t* code) {
    switch (c) {
        case kBf16Rn: *code = __bfloat16_as_ushort(__float2bfloat16_rn(x)); return true;
        case kBf16Rz: *code = __bfloat16_as_ushort(__float2bfloat16_rz(x)); return true;
        case kFp16Rn: *code = __half_as_ushort(__float2half_rn(x)); return true;
        case kFp16Rz: *code = __half_as_ushort(__float2half_rz(x)); return true;
        case kTf32Rna:
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
            *code = fp::float_bits(nvcuda::wmma::__float_to_tf32(x)) >> 13;
            return true;
#else
            return false;
#endif
        case kE4m3Sat: *code = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3); return true;
        case kE4m3NoSat: *code = __nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3); return true;
        case kE5m2Sat: *code = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2); return true;
        case kE5m2NoSat: *code = __nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E5M2); return true;
        case kE2m3Rn: *code = __nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundNearest); return true;
        case kE2m3Rz: *code = __nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundZero); return true;
        case kE3m2Rn: *code = __nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundNearest); return true;
        case kE3m2Rz: *code = __nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundZero); return true;
        case kE2m1Rn: *code = __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest); return true;
        case kE2m1Rz: *code = __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundZero); return true;
        case kE8m0RzSat: *code = __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundZero); return true;
        case kE8m0RzNoSat: *code = __nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundZero); return true;
        case kE8m0RpSat: *code = __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf); return true;
        default: *code = __nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundPosInf); return true;
    }
}

__host__ __device__ inline uint32_t engine_convert(int c, float x) {
    CheckInfo ci = check_info(c);
    return (uint32_t)fp::encode_from_float(ci.format, x, ci.round, ci.saturate);
}

// Which path the intrinsic takes in the device binary that runs (mirrors the #if conditions of
// cuda_bf16.hpp, cuda_fp8.hpp, cuda_fp6.hpp, cuda_fp4.hpp in CUDA 13):
//   1 = a hardware conversion instruction, 0 = the header's software emulation, -1 = not available
//   on this architecture at all (tf32 before sm_80), 2 = unknown (CUDA headers other than 13.x).
__device__ inline int device_path_is_hardware(int c) {
#if defined(__CUDA_ARCH__)
    if (c == kTf32Rna && __CUDA_ARCH__ < 800) return -1;
    switch (c) {
        case kBf16Rn:
        case kBf16Rz: return __CUDA_ARCH__ >= 800;  // cvt.rn/rz.bf16.f32
        case kFp16Rn:
        case kFp16Rz: return 1;                      // cvt.rn/rz.f16.f32 on every supported arch
        case kTf32Rna: return __CUDA_ARCH__ >= 800;  // cvt.rna.tf32.f32
        case kE4m3Sat:
        case kE5m2Sat: return __CUDA_ARCH__ >= 890;  // cvt.rn.satfinite.e4m3x2/e5m2x2.f32
        case kE4m3NoSat:
        case kE5m2NoSat: return 0;  // no non-saturating fp8 cvt exists: always emulated
        case kE2m3Rn:
        case kE3m2Rn:
        case kE2m1Rn:
        case kE8m0RzSat:
        case kE8m0RzNoSat:
        case kE8m0RpSat:
        case kE8m0RpNoSat:
#if defined(__CUDA_FP8_INTERNAL_CAN_RELY_ON_PTX_FOR_SHORTTYPESCVT__)
            return __CUDA_FP8_INTERNAL_CAN_RELY_ON_PTX_FOR_SHORTTYPESCVT__;  // sm_100/103/110/120 a/f targets
#else
            return 2;  // headers older than CUDA 13 decide differently: path unknown
#endif
        default: return 0;  // fp6/fp4 toward zero: emulated everywhere
    }
#else
    (void)c;
    return 0;
#endif
}

// Two codes that differ only as two NaN encodings of the same format (worth telling apart from a
// wrong rounding in the report).
__host__ __device__ inline bool both_nan(int c, uint32_t a, uint32_t b) {
    fp::Format f = check_info(c).format;
    return fp::classify(f, a) == fp::Class::nan && fp::classify(f, b) == fp::Class::nan;
}

// ----------------------------------------------------------------------------
// results shared by host and device

constexpr int kKeep = 8;  // mismatches kept per check

struct CheckCounts {
    unsigned long long checked;
    unsigned long long mismatches;  // all differences, NaN-only ones included
    unsigned long long nan_only;    // differences where both codes are NaNs
    unsigned int kept;
    uint32_t input[kKeep], nvidia[kKeep], engine[kKeep];
};

__host__ __device__ inline void record(CheckCounts* r, uint32_t bits, uint32_t nv, uint32_t en, bool nan_only) {
#if defined(__CUDA_ARCH__)
    atomicAdd(&r->mismatches, 1ull);
    if (nan_only) atomicAdd(&r->nan_only, 1ull);
    unsigned int slot = atomicAdd(&r->kept, 1u);
#else
    r->mismatches++;
    if (nan_only) r->nan_only++;
    unsigned int slot = r->kept++;
#endif
    if (slot < kKeep) r->input[slot] = bits, r->nvidia[slot] = nv, r->engine[slot] = en;
}

// ----------------------------------------------------------------------------
// CPU code reference (and self-test): the same comparison on the host, through the CUDA headers'
// host emulation of each intrinsic and the host build of the encoder.

static void compare_on_host(uint64_t start, uint64_t count, uint64_t stride, CheckCounts* out) {
    for (uint64_t s = 0; s < count; s++) {
        uint32_t bits = (uint32_t)(start + s * stride);
        float x = fp::bits_float(bits);
        for (int c = 0; c < kCheckCount; c++) {
            uint32_t nv;
            if (!nvidia_convert(c, x, &nv)) continue;
            uint32_t en = engine_convert(c, x);
            out[c].checked++;
            if (nv != en) record(&out[c], bits, nv, en, both_nan(c, nv, en));
        }
    }
}

// ----------------------------------------------------------------------------
// GPU kernels

// version 1: one thread per bit pattern of the chunk [start, start + count * stride), all checks per
// thread; counts of checked patterns are added per block to keep atomics off the hot path.
__global__ void convert_check_kernel1(CheckCounts* out, uint64_t start, uint64_t count, uint64_t stride) {
    uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    bool active = i < count;
    uint32_t bits = (uint32_t)(start + i * stride);
    float x = fp::bits_float(bits);
#pragma unroll
    for (int c = 0; c < kCheckCount; c++) {
        uint32_t nv = 0;
        if (active && nvidia_convert(c, x, &nv)) {
            uint32_t en = engine_convert(c, x);
            if (nv != en) record(&out[c], bits, nv, en, both_nan(c, nv, en));
        }
    }
    if (threadIdx.x == 0) {
        uint64_t first = blockIdx.x * (uint64_t)blockDim.x;
        uint64_t n = count > first ? (count - first < blockDim.x ? count - first : blockDim.x) : 0;
        for (int c = 0; c < kCheckCount; c++) atomicAdd(&out[c].checked, (unsigned long long)n);
    }
}

__global__ void path_kernel(int* out) {
    for (int c = 0; c < kCheckCount; c++) out[c] = device_path_is_hardware(c);
}

// ----------------------------------------------------------------------------
// kernel launcher

// Chunks of at most 2^28 patterns per launch keep each launch well under display-watchdog limits.
constexpr uint64_t kChunk = 1ull << 28;

// Number of launches needed to cover `count` patterns; the self-test checks that the chunks tile
// the range exactly.
inline uint64_t chunk_count(uint64_t count) { return (count + kChunk - 1) / kChunk; }
inline uint64_t chunk_size(uint64_t count, uint64_t chunk) {
    uint64_t first = chunk * kChunk;
    return count - first < kChunk ? count - first : kChunk;
}

static void run_device(CheckCounts* d_out, uint64_t count, uint64_t stride, bool progress) {
    for (uint64_t ch = 0; ch < chunk_count(count); ch++) {
        uint64_t n = chunk_size(count, ch);
        uint64_t start = ch * kChunk * stride;
        int block = 256;
        unsigned grid = (unsigned)((n + block - 1) / block);
        convert_check_kernel1<<<grid, block>>>(d_out, start, n, stride);
        cudaCheck(cudaGetLastError());
        if (progress) {
            cudaCheck(cudaDeviceSynchronize());
            std::printf("\r  %3d%% of %" PRIu64 " patterns", (int)((ch + 1) * 100 / chunk_count(count)), count);
            std::fflush(stdout);
        }
    }
    cudaCheck(cudaDeviceSynchronize());
    if (progress) std::printf("\n");
}

// ----------------------------------------------------------------------------
// the report (schema tally.gpu-conversions/1)

inline const char* path_name(int path) {
    return path == 1 ? "hardware" : path == 0 ? "emulated" : path < 0 ? "not_supported" : "unknown";
}

static std::string report_json(const std::string& gpu_name, const std::string& compute_capability, uint64_t count,
                               uint64_t stride, double seconds, bool all_ok, const CheckCounts* counts,
                               const int* path) {
    std::string j = "{\n  \"schema\": \"tally.gpu-conversions/1\",\n  \"program\": \"convert_check\",\n";
    j += "  \"gpu\": {\"name\": " + json_str(gpu_name) + ", \"compute_capability\": " + json_str(compute_capability) +
         "},\n";
    j += "  \"patterns\": " + json_int((long long)count) + ", \"stride\": " + json_int((long long)stride) +
         ", \"seconds\": " + json_num(seconds) + ",\n  \"all_match\": " + json_bool(all_ok) + ",\n  \"checks\": [\n";
    for (int c = 0; c < kCheckCount; c++) {
        const CheckCounts& r = counts[c];
        CheckInfo ci = check_info(c);
        j += "    {\"check\": " + json_str(ci.name) + ", \"intrinsic\": " + json_str(ci.intrinsic) +
             ", \"format\": " + json_str(fp::format_info(ci.format).name) +
             ", \"path\": " + json_str(path_name(path[c])) + ", \"checked\": " + json_int((long long)r.checked) +
             ", \"mismatches\": " + json_int((long long)r.mismatches) +
             ", \"nan_only\": " + json_int((long long)r.nan_only) + ", \"first\": [";
        for (unsigned k = 0; k < r.kept && k < (unsigned)kKeep; k++) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "%s{\"input\": \"0x%08x\", \"nvidia\": \"0x%x\", \"engine\": \"0x%x\"}",
                          k ? ", " : "", r.input[k], r.nvidia[k], r.engine[k]);
            j += buf;
        }
        j += std::string("]}") + (c + 1 < kCheckCount ? ",\n" : "\n");
    }
    j += "  ]\n}\n";
    return j;
}

// ----------------------------------------------------------------------------
// host self-test

static int self_test() {
    SelfTest t;
    std::printf("convert_check self-test (host only)\n");

    // known answers, each true of both NVIDIA's host emulation and the engine (specs cited in precision.h:
    // OCP OFP8 rev 1.0 E4M3 max 448, E5M2 max 57344; OCP MX v1.0 E2M3 max 7.5, E3M2 max 28, E2M1 max 6,
    // E8M0 bias 127; IEEE 754 binary16 max 65504)
    struct Known {
        int check;
        float x;
        uint32_t code;
        const char* claim;
    };
    const Known known[] = {
        {kBf16Rn, 1.0f, 0x3F80, "bf16(1.0) = 0x3F80"},
        {kBf16Rn, 1.00390625f, 0x3F80, "bf16(1+2^-8) ties to even = 0x3F80"},
        {kBf16Rn, -0.0f, 0x8000, "bf16(-0) = 0x8000"},
        {kBf16Rz, 1.0078124f, 0x3F80, "bf16 toward zero(1.0078124) = 0x3F80"},
        {kFp16Rn, 65504.f, 0x7BFF, "fp16(65504) = max 0x7BFF"},
        {kFp16Rn, 65520.f, 0x7C00, "fp16(65520) is the tie above max: rounds to +inf"},
        {kFp16Rz, 70000.f, 0x7BFF, "fp16 toward zero never overflows to inf: 0x7BFF"},
        {kE4m3Sat, 448.f, 0x7E, "e4m3(448) = max 0x7E"},
        {kE4m3Sat, 1e6f, 0x7E, "e4m3 satfinite(1e6) = max 0x7E"},
        {kE4m3NoSat, 1e6f, 0x7F, "e4m3 no-sat(1e6) = NaN 0x7F"},
        {kE4m3Sat, 1.0f, 0x38, "e4m3(1.0) = 0x38 (bias 7)"},
        {kE5m2Sat, 57344.f, 0x7B, "e5m2(57344) = max 0x7B"},
        {kE5m2NoSat, 1e6f, 0x7C, "e5m2 no-sat(1e6) = +inf 0x7C"},
        {kE2m3Rn, 7.5f, 0x1F, "e2m3(7.5) = max 0x1F"},
        {kE3m2Rn, 28.f, 0x1F, "e3m2(28) = max 0x1F"},
        {kE2m1Rn, 6.f, 0x7, "e2m1(6) = max 0x7"},
        {kE2m1Rn, 0.5f, 0x1, "e2m1(0.5) = subnormal 0x1"},
        {kE2m1Rn, 2.5f, 0x4, "e2m1(2.5) ties to even = 2.0 (0x4)"},
        {kE2m1Rz, 5.9f, 0x6, "e2m1 toward zero(5.9) = 4.0 (0x6)"},
        {kE8m0RzSat, 1.0f, 0x7F, "e8m0(1.0) = 0x7F (bias 127)"},
        {kE8m0RzSat, 3.0f, 0x80, "e8m0 toward zero(3) = 2^1 = 0x80"},
        {kE8m0RpSat, 3.0f, 0x81, "e8m0 toward +inf(3) = 2^2 = 0x81"},
    };
    for (const Known& k : known) {
        uint32_t nv = 0;
        bool ran = nvidia_convert(k.check, k.x, &nv);
        t.expect(ran && nv == k.code, (std::string("NVIDIA host emulation: ") + k.claim).c_str());
        t.expect(engine_convert(k.check, k.x) == k.code, (std::string("engine encoder: ") + k.claim).c_str());
    }

    // the NaN-only classification
    t.expect(both_nan(kBf16Rn, 0x7FC0, 0x7FFF), "bf16 0x7FC0 and 0x7FFF are both NaN (payload-only difference)");
    t.expect(!both_nan(kBf16Rn, 0x7F80, 0x7FFF), "bf16 +inf 0x7F80 vs NaN 0x7FFF is a real difference");
    t.expect(both_nan(kE4m3NoSat, 0x7F, 0xFF), "e4m3 0x7F and 0xFF are both NaN");

    // the recorder keeps the first kKeep mismatches and counts all of them
    {
        CheckCounts r{};
        for (uint32_t i = 0; i < 20; i++) record(&r, i, 1, 2, i % 2 == 0);
        t.expect(r.mismatches == 20 && r.nan_only == 10 && r.input[0] == 0 && r.input[kKeep - 1] == kKeep - 1,
                 "record counts 20 mismatches (10 NaN-only) and keeps the first 8 in order");
    }
    // the launcher's chunks tile all 2^32 patterns exactly
    {
        uint64_t total = 1ull << 32, sum = 0;
        for (uint64_t ch = 0; ch < chunk_count(total); ch++) sum += chunk_size(total, ch);
        t.expect(chunk_count(total) == 16 && sum == total, "2^32 patterns are 16 chunks of 2^28, summing to 2^32");
        uint64_t odd = (1ull << 28) + 5;
        t.expect(chunk_count(odd) == 2 && chunk_size(odd, 1) == 5, "2^28 + 5 patterns are two chunks, the last of 5");
    }
    // a 2^20-pattern sample (stride 4093, odd so every exponent and low-bit pattern is visited) plus all
    // patterns whose top 12 bits select +-{0, 1, inf/NaN} binades: NVIDIA's host emulation and the
    // host encoder agree on every check except tf32, which has no host emulation
    {
        CheckCounts counts[kCheckCount] = {};
        auto t0 = std::chrono::steady_clock::now();
        compare_on_host(12345, 1u << 20, 4093, counts);
        const uint32_t regions[] = {0x00000000u, 0x80000000u, 0x3F800000u, 0xBF800000u, 0x7F800000u, 0xFF800000u};
        for (uint32_t r : regions) compare_on_host(r, 1u << 16, 1, counts);
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        unsigned long long total_mismatch = 0, checked = 0;
        for (int c = 0; c < kCheckCount; c++) {
            total_mismatch += counts[c].mismatches;
            checked += counts[c].checked;
            if (counts[c].mismatches)
                std::printf("  host sample %s: %llu mismatches, first input 0x%08x: nvidia 0x%x engine 0x%x\n",
                            check_info(c).name, counts[c].mismatches, counts[c].input[0], counts[c].nvidia[0],
                            counts[c].engine[0]);
        }
        std::printf("  host sample: %llu conversions compared in %.2f s\n", checked, secs);
        t.expect(counts[kTf32Rna].checked == 0, "tf32 is skipped on the host (cvt.rna.tf32 has no host emulation)");
        t.expect(counts[kBf16Rn].checked == (1u << 20) + 6 * (1u << 16),
                 "every sampled pattern is checked once per check");
        t.expect(total_mismatch == 0, "host emulation and host encoder agree on the sample for every check");
    }
    // the report is valid JSON (synthetic counts: the writer is checked, not a measurement)
    {
        CheckCounts counts[kCheckCount] = {};
        int path[kCheckCount];
        for (int c = 0; c < kCheckCount; c++) path[c] = c == kTf32Rna ? -1 : c % 2;
        record(&counts[kE4m3NoSat], 0x7F800001u, 0x7F, 0xFF, true);
        std::string j = report_json("Test GPU", "9.0", 1ull << 32, 1, 1.5, false, counts, path), err;
        using tally_cuda::json_at;
        t.expect(json_at(j, "/schema", &err) == "\"tally.gpu-conversions/1\"",
                 ("report parses as JSON " + err).c_str());
        t.expect(json_at(j, "/patterns") == "4294967296", "patterns = 2^32 as an exact integer");
        t.expect(json_at(j, "/checks/" + std::to_string((int)kE4m3NoSat) + "/first/0/input") == "\"0x7f800001\"",
                 "the first mismatch's input is written in hex");
        t.expect(json_at(j, "/checks/" + std::to_string((int)kTf32Rna) + "/path") == "\"not_supported\"",
                 "a check the architecture lacks says not_supported");
        t.expect(json_at(j, "/checks/" + std::to_string(kCheckCount - 1) + "/check") == "\"e8m0_rp_nosat\"" &&
                     json_at(j, "/checks/" + std::to_string(kCheckCount)).empty(),
                 "one entry per check, in order");
    }
    return t.finish("convert_check");
}

// ----------------------------------------------------------------------------
// main: device run, report

int main(int argc, char** argv) {
    Args args{argc, argv};
    if (args.has("--help")) {
        std::printf("usage: convert_check [--self-test] [--quick] [--json PATH]\n");
        return 0;
    }
    if (args.has("--self-test")) return self_test();

    DeviceProbe dev = probe_device();
    if (!dev.available) return skip_no_device(dev);

    const bool quick = args.has("--quick");
    const uint64_t count = quick ? (1ull << 24) : (1ull << 32);
    const uint64_t stride = quick ? 257 : 1;  // 257 * 2^24 wraps 2^32 ~once: an even spread of patterns
    std::printf("device: %s (sm_%d%d)\n", dev.prop.name, dev.prop.major, dev.prop.minor);
    std::printf("converting %s float bit patterns with %d checks\n", quick ? "2^24 sampled" : "all 2^32",
                (int)kCheckCount);

    CheckCounts* d_counts;
    int* d_path;
    cudaCheck(cudaMalloc(&d_counts, sizeof(CheckCounts) * kCheckCount));
    cudaCheck(cudaMemset(d_counts, 0, sizeof(CheckCounts) * kCheckCount));
    cudaCheck(cudaMalloc(&d_path, sizeof(int) * kCheckCount));
    path_kernel<<<1, 1>>>(d_path);
    cudaCheck(cudaGetLastError());

    cudaEvent_t e0, e1;
    cudaCheck(cudaEventCreate(&e0));
    cudaCheck(cudaEventCreate(&e1));
    cudaCheck(cudaEventRecord(e0));
    run_device(d_counts, count, stride, !quick);
    cudaCheck(cudaEventRecord(e1));
    cudaCheck(cudaEventSynchronize(e1));
    float ms = 0;
    cudaCheck(cudaEventElapsedTime(&ms, e0, e1));

    CheckCounts counts[kCheckCount];
    int path[kCheckCount];
    cudaCheck(cudaMemcpy(counts, d_counts, sizeof counts, cudaMemcpyDeviceToHost));
    cudaCheck(cudaMemcpy(path, d_path, sizeof path, cudaMemcpyDeviceToHost));
    cudaCheck(cudaFree(d_counts));
    cudaCheck(cudaFree(d_path));

    const std::string arch = "sm_" + std::to_string(dev.prop.major) + std::to_string(dev.prop.minor);
    bool all_ok = true;
    std::printf("\n%-18s %-9s %14s %12s %10s  %s\n", "check", "path", "checked", "mismatches", "NaN-only", "verdict");
    for (int c = 0; c < kCheckCount; c++) {
        const CheckCounts& r = counts[c];
        if (path[c] < 0) {
            std::printf("%-18s %-9s  not supported on this architecture (%s): not run\n", check_info(c).name, "-",
                        arch.c_str());
            continue;
        }
        bool ok = r.mismatches == 0 && r.checked == count;
        all_ok = all_ok && ok;
        std::printf("%-18s %-9s %14llu %12llu %10llu  %s\n", check_info(c).name, path_name(path[c]), r.checked,
                    r.mismatches, r.nan_only, ok ? "ok" : "MISMATCH");
        for (unsigned k = 0; k < r.kept && k < (unsigned)kKeep && k < 5; k++)
            std::printf("    input 0x%08x (%.9g): nvidia 0x%x, engine 0x%x\n", r.input[k], fp::bits_float(r.input[k]),
                        r.nvidia[k], r.engine[k]);
        if (path[c] == 0)
            std::printf(
                "    hardware instruction not supported on this architecture (%s): compared with the CUDA "
                "header's software emulation running on the device\n",
                arch.c_str());
    }
    std::printf("\n%.2f s for %llu conversions on the device\n", ms / 1e3, (unsigned long long)count * kCheckCount * 2);
    std::printf("%s\n", all_ok ? "All results match" : "SOME CONVERSIONS DO NOT MATCH");

    if (const char* pathj = args.value("--json")) {
        std::string j =
            report_json(dev.prop.name, std::to_string(dev.prop.major) + "." + std::to_string(dev.prop.minor), count,
                        stride, ms / 1e3, all_ok, counts, path);
        if (!write_text_file(pathj, j)) return 1;
        std::printf("wrote %s\n", pathj);
    }
    return all_ok ? 0 : 1;
}
