// Tests of engine/src/numerics/blockscale.cpp: MX (OCP Microscaling v1.0), NVFP4 and per-tensor fp8 quantization.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "tally/numerics/blockscale.h"

using namespace tally::fp;

TEST_CASE("MXFP4 picks the scale 2^(floor(log2 amax) - 2): amax 6 gives 2^0 (E8M0 0x7F), amax 100 gives 2^4") {
    // OCP MX v1.0 section 6.3: shared_exp = floor(log2(amax)) - emax_elem, emax_elem = 2 for E2M1.
    std::vector<double> v(32, 1.0);
    v[3] = 6.0;
    BlockResult r = block_quantize(Scheme::mxfp4, v);
    REQUIRE(r.scale_codes.size() == 1);
    CHECK(r.scale_codes[0] == 127);
    CHECK(r.dequantized[3] == 6.0);
    CHECK(r.max_abs_error == 0);
    v[3] = 100.0;  // floor(log2 100) = 6
    r = block_quantize(Scheme::mxfp4, v);
    CHECK(r.scale_codes[0] == 127 + 4);
    CHECK(r.dequantized[3] == 96.0);  // 100 / 16 = 6.25 -> 6
    CHECK(r.dequantized[0] == 0.0);   // 1 / 16 = 0.0625 is below E2M1's half-step 0.25: flushed
    CHECK(r.zeroed == 31);
}

TEST_CASE("MX blocks hold 32 values: 33 values make two blocks, and 1000 clamps to 896 under the floor-based scale") {
    std::vector<double> v(33, 0.5);
    v[32] = 1000.0;
    const BlockResult r = block_quantize(Scheme::mxfp8_e4m3, v);
    REQUIRE(r.scale_codes.size() == 2);
    CHECK(r.scale_codes[0] == (uint64_t)(127 + (-1 - 8)));  // floor(log2 0.5) - emax(E4M3)=8
    CHECK(r.scale_codes[1] == (uint64_t)(127 + (9 - 8)));
    CHECK(r.dequantized[0] == 0.5);
    // 1000 / 2^1 = 500 exceeds E4M3's 448: the spec clamps it to max normal, so 1000 comes back as 896.
    CHECK(r.dequantized[32] == 896.0);
    CHECK(r.saturated == 1);
}

TEST_CASE("NVFP4 uses 16-value blocks with E4M3 scales under an fp32 tensor scale amax/(6*448)") {
    std::vector<double> v(32);
    for (int i = 0; i < 32; ++i) v[i] = (i % 7) - 3.0;
    v[20] = 40.0;
    const BlockResult r = block_quantize(Scheme::nvfp4, v);
    REQUIRE(r.scale_codes.size() == 2);
    CHECK(r.tensor_scale == Approx(40.0 / 2688.0).epsilon(1e-7));
    // Block 1 holds the tensor amax: its scale is 448 in units of the tensor scale, the E4M3 maximum.
    CHECK(r.scale_values[1] == 448.0);
    CHECK(r.dequantized[20] == Approx(40.0).epsilon(1e-6));
    CHECK(r.bits_per_value == Approx(4.0 + (2 * 8 + 32) / 32.0));
}

TEST_CASE("bits per value: MXFP4 4.25, MXFP8 8.25, NVFP4 4.5 plus the tensor scale") {
    const std::vector<double> v(1024, 1.0);
    CHECK(block_quantize(Scheme::mxfp4, v).bits_per_value == 4.25);
    CHECK(block_quantize(Scheme::mxfp8_e4m3, v).bits_per_value == 8.25);
    CHECK(block_quantize(Scheme::mxfp6_e3m2, v).bits_per_value == 6.25);
    CHECK(block_quantize(Scheme::nvfp4, v).bits_per_value == 4.5 + 32.0 / 1024);
}

TEST_CASE(
    "with one large outlier, NVFP4's finer blocks and scales lose less than MXFP4 and per-tensor fp8 scaling flushes small values less than MXFP4") {
    const std::vector<double> v = demo_vector(7, 256, 1.0, 80.0, 5);
    const BlockResult mx = block_quantize(Scheme::mxfp4, v);
    const BlockResult nv = block_quantize(Scheme::nvfp4, v);
    const BlockResult f8 = block_quantize(Scheme::fp8_tensor, v);
    CHECK(nv.relative_error < mx.relative_error);
    CHECK(f8.relative_error < nv.relative_error);  // 8 bits per value beat 4.5
    CHECK(mx.zeroed >= nv.zeroed);
}

TEST_CASE("an all-zero vector quantizes to zeros with zero error in every scheme") {
    const std::vector<double> v(40, 0.0);
    for (Scheme s : all_schemes()) {
        const BlockResult r = block_quantize(s, v);
        INFO(scheme_info(s).name);
        CHECK(r.max_abs_error == 0);
        CHECK(r.relative_error == 0);
        for (double d : r.dequantized) CHECK(d == 0);
    }
}

TEST_CASE("the demo vector is reproducible and has roughly unit variance") {
    const std::vector<double> a = demo_vector(3, 4096, 1.0, 0, 0), b = demo_vector(3, 4096, 1.0, 0, 0);
    CHECK(a == b);
    double s = 0, s2 = 0;
    for (double x : a) {
        s += x;
        s2 += x * x;
    }
    CHECK(std::fabs(s / 4096) < 0.1);
    CHECK(s2 / 4096 == Approx(1.0).epsilon(0.1));
}
