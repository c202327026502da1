// Tests of engine/src/compute/training.cpp: the 6ND rule and FLOPs -> time.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "tally/base/error.h"
#include "tally/compute/training.h"

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
    CHECK(t.seconds / 86400 == Approx(143.93).epsilon(1e-4));
    CHECK(t.gpu_seconds == Approx(t.seconds * 1024).epsilon(1e-15));
    CHECK(t.cluster_flops_per_s == Approx(1024 * 989.5e12 * 0.5).epsilon(1e-15));
}

TEST_CASE("doubling GPUs halves the time and keeps the GPU-seconds") {
    const auto one = tally::estimate_training_time({6e20, 8, 312e12, 0.4});
    const auto two = tally::estimate_training_time({6e20, 16, 312e12, 0.4});
    CHECK(two.seconds == Approx(one.seconds / 2).epsilon(1e-15));
    CHECK(two.gpu_seconds == Approx(one.gpu_seconds).epsilon(1e-15));
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

TEST_CASE("six_n is 6 FLOPs per parameter per token and 6ND is six_n times the tokens") {
    CHECK(tally::six_n(7e9) == 42e9);
    CHECK(tally::training_flops(7e9, 2e12) == tally::six_n(7e9) * 2e12);
}

TEST_CASE(
    "from params alone full recomputation executes 8N per token against 6N model FLOPs; selective needs a model") {
    const tally::ParamsOnlyFlops full = tally::flops_from_params(1e9, tally::Recompute::Full);
    CHECK(full.model_per_token == 6e9);
    CHECK(full.training_per_token == 8e9);
    CHECK(tally::flops_from_params(1e9, tally::Recompute::None).training_per_token == 6e9);
    CHECK_THROWS_AS(tally::flops_from_params(1e9, tally::Recompute::Selective), InputError);
    CHECK_THROWS_AS(tally::flops_from_params(0, tally::Recompute::None), InputError);
}

TEST_CASE("a run from params alone rejects the FLOP-count options that need a model shape, naming each field") {
    auto field_of = [](const tally::ParamsOnlyRun& run) {
        try {
            tally::training_flops_per_token(run);
        } catch (const InputError& error) {
            return error.field();
        }
        return std::string("(no error)");
    };
    tally::ParamsOnlyRun run;
    run.params = 7e9;
    run.recompute = tally::Recompute::Full;
    const tally::TrainingFlopsPerToken ok = tally::training_flops_per_token(run);
    CHECK(ok.model == 42e9);
    CHECK(ok.executed == 56e9);  // 8N with full recomputation
    CHECK(std::string(ok.chinchilla_basis) == "given");
    tally::ParamsOnlyRun ops = run, layers = run, flash = run, attention = run, selective = run;
    ops.recompute_ops = true;
    layers.recompute_layers = 2;
    flash.flash_attention = true;
    attention.attention_flops = true;
    selective.recompute = tally::Recompute::Selective;
    CHECK(field_of(ops) == "recompute_ops");
    CHECK(field_of(layers) == "recompute_layers");  // issue 21: used to name recompute_ops, which was not given
    CHECK(field_of(flash) == "flash_attention");
    CHECK(field_of(attention) == "attention_flops");
    CHECK(field_of(selective) == "recompute");
}

TEST_CASE("Chinchilla's rule asks 1.4T tokens of a 70B model; Llama 2's 2T tokens on 7B are about 286 per parameter") {
    // Hoffmann et al. 2022, Table 3: 70B parameters, 1.4T tokens. Touvron et al. 2023 (Llama 2): 2T tokens.
    CHECK(tally::chinchilla(70e9, 1.4e12).compute_optimal_tokens == 1.4e12);
    CHECK(tally::chinchilla(7e9, 2e12).tokens_per_param == Approx(285.714).epsilon(1e-5));
}

TEST_CASE("utilization divides model FLOPs per second by the cluster peak; HFU counts the recomputed FLOPs too") {
    // 2 GPUs at 10 TFLOP/s, 1000 tokens/s, 6 GFLOP model and 8 GFLOP executed per token.
    const tally::Utilization u = tally::utilization(6e9, 8e9, 6e9, 1000, 2, 1e13);
    CHECK(u.cluster_peak_flops_per_s == 2e13);
    CHECK(u.achieved_flops_per_s == 6e12);
    CHECK(u.mfu == Approx(0.3));
    CHECK(u.hfu == Approx(0.4));
    CHECK(u.six_n_mfu == Approx(0.3));
    // A predicted MFU of 0.5 with 8/6 executed FLOPs keeps the GPUs 2/3 busy; 0.9 would need more than all of them.
    CHECK(tally::executed_utilization(0.5, 8, 6) == Approx(2.0 / 3));
    CHECK(tally::executed_utilization(0.9, 8, 6) == 1.0);
}
