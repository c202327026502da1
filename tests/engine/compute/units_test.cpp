// Tests of engine/src/compute/units.cpp: petaFLOP/s-days, GPU-seconds at an MFU, GPUs for a deadline.
#include <catch2/catch.hpp>

#include "tally/compute/units.h"
#include "accounting_helpers.h"

using tally_test::error_field;

TEST_CASE("GPT-3's 3.14e23 FLOPs are about 3,640 petaFLOP/s-days (its paper's table D.1)", "[units]") {
    // Brown et al. 2020, table D.1: 3.14e23 FLOPs, 3,640 PF/s-days (the table rounds; 3.14e23 / 8.64e19 = 3,634).
    CHECK(tally::petaflop_s_days(3.14e23) == Approx(3634.26).epsilon(1e-4));
    CHECK(tally::petaflop_s_days(tally::kPetaflopSDayFlops) == 1.0);
}

TEST_CASE("GPU-seconds are FLOPs over one GPU's achieved rate", "[units]") {
    // 6 · 70e9 · 15e12 FLOPs on an H100 (989.5 TFLOP/s dense bf16, NVIDIA H100 datasheet) at 40 % MFU.
    const double flops = 6 * 70e9 * 15e12;
    CHECK(tally::gpu_seconds(flops, 989.5e12, 0.4) == Approx(flops / (989.5e12 * 0.4)));
    CHECK(tally::gpu_seconds(flops, 989.5e12, 0.2) == Approx(2 * tally::gpu_seconds(flops, 989.5e12, 0.4)));
}

TEST_CASE("GPUs for a deadline: one more day of GPU time than the deadline allows needs one more GPU", "[units]") {
    CHECK(tally::gpus_for_days(300 * 86400.0, 30) == 10);
    CHECK(tally::gpus_for_days(301 * 86400.0, 30) == 11);
    CHECK(tally::gpus_for_days(0.5 * 86400.0, 30) == 1);
}

TEST_CASE("units name the field at fault", "[units]") {
    CHECK(error_field([] { tally::petaflop_s_days(0); }) == "flops");
    CHECK(error_field([] { tally::gpu_seconds(1e20, 1e15, 1.5); }) == "mfu");
    CHECK(error_field([] { tally::gpu_seconds(1e20, 1e15, 0); }) == "mfu");
    CHECK(error_field([] { tally::gpus_for_days(10, 0); }) == "days");
}
