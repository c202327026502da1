// Tests of engine/src/training.cpp: the 6ND rule and FLOPs -> time.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "tally/error.h"
#include "tally/training.h"

using tally::InputError;

TEST_CASE("1B parameters on 100B tokens is 6e20 training FLOPs (6ND)") {
    // The CS336 lecture 2 worked example.
    CHECK(tally::training_flops(1e9, 1e11) == Approx(6e20).epsilon(1e-15));
}

TEST_CASE("70B on 15T tokens on 1024 H100 at 50% MFU takes ~144 days") {
    // CS336 lecture 2's motivating question; 989.5 TFLOP/s is the H100 SXM dense bf16 peak
    // (NVIDIA H100 datasheet: 1,979 TFLOP/s is quoted with 2:4 sparsity).
    const double flops = tally::training_flops(70e9, 15e12);
    CHECK(flops == Approx(6.3e24).epsilon(1e-15));
    const auto t = tally::estimate_training_time({flops, 1024, 989.5e12, 0.5});
    CHECK(t.days == Approx(143.93).epsilon(1e-4));
    CHECK(t.seconds == Approx(t.days * 86400).epsilon(1e-15));
    CHECK(t.gpu_hours == Approx(t.seconds / 3600 * 1024).epsilon(1e-15));
    CHECK(t.cluster_flops_per_s == Approx(1024 * 989.5e12 * 0.5).epsilon(1e-15));
}

TEST_CASE("doubling GPUs halves the days and keeps the GPU-hours") {
    const auto one = tally::estimate_training_time({6e20, 8, 312e12, 0.4});
    const auto two = tally::estimate_training_time({6e20, 16, 312e12, 0.4});
    CHECK(two.days == Approx(one.days / 2).epsilon(1e-15));
    CHECK(two.gpu_hours == Approx(one.gpu_hours).epsilon(1e-15));
}

TEST_CASE("bad training inputs name the field and never give NaN") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    auto field_of = [](auto&& fn) {
        try {
            fn();
        } catch (const InputError& error) {
            return error.field();
        }
        return std::string("(no error)");
    };
    CHECK(field_of([&] { tally::training_flops(-1, 1e9); }) == "params");
    CHECK(field_of([&] { tally::training_flops(1e9, 0); }) == "tokens");
    CHECK(field_of([&] { tally::training_flops(nan, 1e9); }) == "params");
    CHECK(field_of([&] { tally::training_flops(1e300, 1e300); }) == "params");
    CHECK(field_of([&] { tally::estimate_training_time({1e20, 0, 1e15, 0.5}); }) == "gpus");
    CHECK(field_of([&] { tally::estimate_training_time({1e20, 8, inf, 0.5}); }) == "peak_flops_per_s");
    CHECK(field_of([&] { tally::estimate_training_time({1e20, 8, 1e15, 0.0}); }) == "mfu");
    CHECK(field_of([&] { tally::estimate_training_time({1e20, 8, 1e15, 1.01}); }) == "mfu");
    CHECK(field_of([&] { tally::estimate_training_time({1e20, 8, 1e15, 1.0}); }) == "(no error)");
}

TEST_CASE("a run too long to represent names the peak (an input), not total_flops") {
    tally::TrainingTimeInput in;
    in.total_flops = 1e30;
    in.gpus = 1;
    in.peak_flops_per_s = 1e-300;
    in.mfu = 0.5;
    try {
        tally::estimate_training_time(in);
        FAIL("expected an InputError");
    } catch (const InputError& error) {
        CHECK(error.field() == "peak_flops_per_s");
    }
}
