// Tests of engine/src/hardware.cpp and the hardware presets.
#include <catch2/catch.hpp>

#include "accounting_helpers.h"
#include "tally/hardware.h"

using tally_test::error_field;

TEST_CASE("the H100 SXM ridge point (dense bf16 / HBM bandwidth) is about 295 FLOP/byte") {
    // NVIDIA H100 datasheet: 1,979 TFLOP/s bf16 with sparsity = 989.5 dense; 3.35 TB/s HBM3.
    const auto hw = tally::find_hardware("h100-sxm");
    CHECK(hw.peak("bf16") == 989.5e12);
    CHECK(hw.ridge("bf16") == Approx(295.37).epsilon(1e-4));
    CHECK(hw.memory_bytes == 80'000'000'000u);
}

TEST_CASE("presets store dense peaks: H100 bf16 is half the 1,979 TFLOP/s sparse headline") {
    CHECK(tally::find_hardware("h100-sxm").peak("bf16") * 2 == 1979e12);
    CHECK(tally::find_hardware("h100-sxm").peak("fp8") == 2 * tally::find_hardware("h100-sxm").peak("bf16"));
    // A100: 312 TFLOP/s bf16 dense (624 with sparsity), NVIDIA A100 datasheet.
    CHECK(tally::find_hardware("a100-80gb").peak("bf16") == 312e12);
}

TEST_CASE("a dtype the chip lacks is an error naming dtype (A100 has no FP8 tensor cores)") {
    CHECK(error_field([] { tally::find_hardware("a100-40gb").peak("fp8"); }) == "dtype");
    CHECK(error_field([] { tally::find_hardware("h100-sxm").peak("fp4"); }) == "dtype");
    CHECK(error_field([] { tally::find_hardware("tpu-v9"); }) == "hardware");
}

TEST_CASE("every hardware preset cites its source and has capacity, bandwidth and a bf16 peak") {
    const auto& all = tally::presets_json().at("hardware");
    CHECK(all.size() >= 8);
    for (const auto& h : all) {
        INFO(h.at("id").get<std::string>());
        const auto hw = tally::hardware_from_json(h);
        CHECK(hw.source.size() > 20);
        CHECK(hw.memory_bytes >= 24'000'000'000u);
        CHECK(hw.memory_bandwidth_bytes_per_s > 1e12);
        CHECK(hw.peak("bf16") > hw.peak("fp32"));
    }
}

TEST_CASE("every hardware preset carries the capacity the device reports, above its decimal datasheet figure") {
    for (const auto& h : tally::presets_json().at("hardware")) {
        INFO(h.at("id").get<std::string>());
        const auto hw = tally::hardware_from_json(h);
        CHECK(hw.memory_reported_source.size() > 20);
        CHECK((hw.memory_reported_by == "device" || hw.memory_reported_by == "datasheet"));
        // Devices report binary units (MiB, KiB) that exceed the decimal marketing figure.
        if (hw.memory_reported_by == "device") CHECK(hw.memory_reported_bytes > hw.memory_bytes);
    }
    // nvidia-smi: 81,559 MiB on an H100 80GB HBM3.
    CHECK(tally::find_hardware("h100-sxm").memory_reported_bytes == 85'520'809'984u);
}

TEST_CASE("usable capacity subtracts the context and a rounded-up fragmentation share; bad allowances name the field") {
    const auto u = tally::usable_capacity(1000, 100, 0.05);
    CHECK(u.fragmentation_bytes == 50);
    CHECK(u.usable_bytes == 850);
    CHECK(tally::usable_capacity(1001, 0, 0.05).fragmentation_bytes == 51);  // 50.05 rounds up
    CHECK(error_field([] { tally::usable_capacity(1000, 1000, 0); }) == "cuda_context_bytes");
    CHECK(error_field([] { tally::usable_capacity(1000, 0, -0.1); }) == "fragmentation_fraction");
}
