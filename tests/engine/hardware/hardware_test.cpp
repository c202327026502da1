// Tests of engine/src/hardware/hardware.cpp and the hardware presets.
#include <catch2/catch.hpp>

#include "accounting_helpers.h"
#include "tally/hardware/hardware.h"

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

TEST_CASE("H200 keeps the H100's dense compute: 989.5 TFLOP/s bf16 is half the 1,979 sparse headline, 4.8 TB/s") {
    // NVIDIA H200 datasheet (2024), SXM: BF16 1,979 TFLOPS and FP8 3,958 TFLOPS with sparsity; HBM3e 4.8 TB/s.
    const auto hw = tally::find_hardware("h200");
    CHECK(hw.peak("bf16") * 2 == 1979e12);
    CHECK(hw.peak("fp8") * 2 == 3958e12);
    CHECK(hw.memory_bandwidth_bytes_per_s == Approx(4.8e12));
    CHECK(hw.memory_bytes == 141'000'000'000u);
    CHECK(error_field([&] { hw.peak("fp4"); }) == "dtype");  // Hopper has no FP4 tensor cores
}

TEST_CASE("B200 dense peaks are the HGX B200 sparse totals over 8 GPUs, halved: FP8 4.5 and FP4 9 PFLOP/s") {
    // NVIDIA HGX B200 specifications: FP4 144 PFLOPS and FP8 72 PFLOPS for 8 GPUs, with sparsity.
    const auto hw = tally::find_hardware("b200");
    CHECK(hw.peak("fp8") == 72e15 / 8 / 2);
    CHECK(hw.peak("fp4") == 144e15 / 8 / 2);
}

TEST_CASE("the benchmark-only parts keep their family's datasheet peaks; H100 96GB has 2.4 TB/s, so a higher ridge") {
    // torchtitan benchmarks/llama3_h100_202412_torchtitan.md: H100 with 96GB HBM2e at 2.4 TB/s, 500 W limit, peak
    // "between SXM and NVL", unknown: the preset keeps the SXM dense peaks (989.5 bf16) and says so in its source.
    const auto h96 = tally::find_hardware("h100-96gb-500w");
    CHECK(h96.peak("bf16") == tally::find_hardware("h100-sxm").peak("bf16"));
    CHECK(h96.memory_bandwidth_bytes_per_s == Approx(2.4e12));
    CHECK(h96.memory_bytes == 96'000'000'000u);
    CHECK(h96.ridge("bf16") == Approx(989.5e12 / 2.4e12));
    CHECK(h96.interconnect.network_bytes_per_s == Approx(50e9));  // 400 Gb/s RDMA per GPU
    CHECK(h96.source.find("500 W") != std::string::npos);
    // torchao's "8x power limited B200 GPUs" were "8xB100 GPUs" in the pull request that added the table (pytorch/ao
    // #2777): NVIDIA's HGX B100 column (700 W): FP8 7 and BF16 3.5 PFLOPS with sparsity, 7/9 of HGX B200's 9 and 4.5.
    const auto b = tally::find_hardware("b200-power-limited");
    CHECK(b.peak("fp8") == 7e15 / 2);
    CHECK(b.peak("bf16") == 3.5e15 / 2);
    CHECK(b.peak("bf16") / tally::find_hardware("b200").peak("bf16") == Approx(3.5 / 4.5));
    CHECK(b.memory_bandwidth_bytes_per_s == tally::find_hardware("b200").memory_bandwidth_bytes_per_s);
    CHECK(b.source.find("700 W") != std::string::npos);
}

TEST_CASE("the export-control parts keep their family's compute and memory and lose NVLink: A800 and H800 at 400 GB/s") {
    // Reuters (November 2022, via Tweakers news 203182): the A800 is the A100 with NVLink cut from 600 to 400 GB/s.
    // Zhao et al., Insights into DeepSeek-V3 (ISCA 2025), sec. 2: the H800 is the H100 with NVLink cut from 900 to 400.
    const auto a800 = tally::find_hardware("a800-80gb");
    const auto a100 = tally::find_hardware("a100-80gb");
    CHECK(a800.peak("bf16") == a100.peak("bf16"));
    CHECK(a800.memory_bandwidth_bytes_per_s == a100.memory_bandwidth_bytes_per_s);
    CHECK(a800.memory_reported_bytes == a100.memory_reported_bytes);
    CHECK(a800.interconnect.intra_node_bytes_per_s == Approx(200e9));  // 400 GB/s bidirectional
    CHECK(a800.interconnect.intra_node_bytes_per_s / a100.interconnect.intra_node_bytes_per_s == Approx(400.0 / 600));
    const auto h800 = tally::find_hardware("h800");
    const auto h100 = tally::find_hardware("h100-sxm");
    CHECK(h800.peak("bf16") == h100.peak("bf16"));
    CHECK(h800.peak("fp8") == h100.peak("fp8"));
    CHECK(h800.memory_reported_bytes == h100.memory_reported_bytes);
    CHECK(h800.interconnect.intra_node_bytes_per_s / h100.interconnect.intra_node_bytes_per_s == Approx(400.0 / 900));
    CHECK(h800.interconnect.network_bytes_per_s == Approx(50e9));  // one 400 Gb/s ConnectX-7 per GPU
}

TEST_CASE("GB200 NVL72 per GPU is the rack over 72 and halved: FP8 720 PFLOPS sparse -> 5 PFLOP/s dense") {
    // NVIDIA GB200 NVL72 datasheet: FP4 1,440, FP8 720, FP16/BF16 360 PFLOPS per rack with sparsity;
    // 13.4 TB HBM3e at 576 TB/s; one NVLink domain of 72 GPUs at 130 TB/s.
    const auto hw = tally::find_hardware("gb200-nvl72");
    CHECK(hw.peak("fp8") == 720e15 / 72 / 2);
    CHECK(hw.peak("fp4") == 1440e15 / 72 / 2);
    CHECK(hw.peak("bf16") == 360e15 / 72 / 2);
    CHECK(hw.memory_bandwidth_bytes_per_s == 576e12 / 72);
    CHECK(hw.memory_bytes == Approx(13.4e12 / 72).epsilon(1e-3));
    CHECK(hw.interconnect.gpus_per_node == 72);
    CHECK(hw.interconnect.intra_node_bytes_per_s * 2 * 72 == Approx(130e12).epsilon(0.01));  // 1.8 TB/s a GPU
}

TEST_CASE("B300 and GB300: Blackwell Ultra's FP4 dense is 13.5 (HGX, 108 PFLOPS / 8) and 15 PFLOP/s (1,080 / 72)") {
    // NVIDIA HGX B300 specifications: FP4 144 | 108 PFLOPS (sparse | dense) for 8 GPUs, FP8 72 PFLOPS sparse;
    // NVIDIA GB300 NVL72 datasheet: FP4 1,440 | 1,080 PFLOPS for 72 GPUs, FP8 720 PFLOPS sparse; 288 GB HBM3e.
    const auto b300 = tally::find_hardware("b300");
    CHECK(b300.peak("fp4") == 108e15 / 8);
    CHECK(b300.peak("fp8") == 72e15 / 8 / 2);
    CHECK(b300.peak("bf16") == 36e15 / 8 / 2);
    CHECK(b300.interconnect.gpus_per_node == 8);
    const auto gb300 = tally::find_hardware("gb300-nvl72");
    CHECK(gb300.peak("fp4") == 1080e15 / 72);
    CHECK(gb300.peak("fp4") == 1440e15 / 72 * 0.75);  // dense FP4 is 3/4 of the sparse figure, not 1/2
    CHECK(gb300.peak("fp8") == 720e15 / 72 / 2);
    CHECK(gb300.interconnect.gpus_per_node == 72);
    for (const auto& hw : {b300, gb300}) {
        CHECK(hw.memory_bytes == 288'000'000'000u);
        CHECK(hw.memory_reported_by == "datasheet");
        CHECK(hw.memory_reported_bytes == hw.memory_bytes);
    }
}

TEST_CASE("AMD FP8 peaks follow from CUs x FLOP/clock x clock: MI300X/MI325X 2,614.9, MI355X 5,033.2 TFLOP/s") {
    // AMD CDNA 3 whitepaper: 304 CUs, 2,100 MHz peak engine clock, 4,096 dense FP8 FLOP per CU per clock.
    const double cdna3 = 304.0 * 4096 * 2.1e9;
    CHECK(tally::find_hardware("mi300x").peak("fp8") == Approx(cdna3).epsilon(1e-4));
    CHECK(tally::find_hardware("mi325x").peak("fp8") == Approx(cdna3).epsilon(1e-4));
    // AMD at ISSCC 2026 (CDNA 4): 8,192 FP8 FLOP per CU per clock; MI355X data sheet: 256 CUs at 2,400 MHz.
    const auto mi355x = tally::find_hardware("mi355x");
    CHECK(mi355x.peak("fp8") == Approx(256.0 * 8192 * 2.4e9).epsilon(1e-4));
    CHECK(mi355x.peak("fp4") == Approx(2 * mi355x.peak("fp8")).epsilon(1e-4));  // MXFP4 doubles FP8
    CHECK(mi355x.peak("bf16") == Approx(mi355x.peak("fp8") / 2).epsilon(1e-4));
    CHECK(error_field([&] { mi355x.peak("tf32"); }) == "dtype");  // CDNA 4 has no TF32 matrix mode
    CHECK(error_field([] { tally::find_hardware("mi325x").peak("fp4"); }) == "dtype");
    // Capacity and bandwidth: MI325X 256 GB at 6 TB/s, MI355X 288 GB at 8 TB/s (AMD data sheets).
    CHECK(tally::find_hardware("mi325x").memory_bytes == 256'000'000'000u);
    CHECK(tally::find_hardware("mi325x").memory_bandwidth_bytes_per_s == 6e12);
    CHECK(mi355x.memory_bytes == 288'000'000'000u);
    CHECK(mi355x.memory_bandwidth_bytes_per_s == 8e12);
}

TEST_CASE("every fp4 peak sits on a chip with an fp8 peak, at least as high (FP4 runs at 2-3x FP8)") {
    for (const auto& h : tally::presets_json().at("hardware")) {
        const auto hw = tally::hardware_from_json(h);
        INFO(hw.id);
        if (hw.peak_fp4 == 0) continue;
        CHECK(hw.peak_fp8 > 0);
        CHECK(hw.peak_fp4 >= 1.999 * hw.peak_fp8);  // the data sheets round each figure to 0.1 TFLOP/s
        CHECK(hw.peak_fp4 <= 3 * hw.peak_fp8);
    }
}

TEST_CASE("GB200's GPU is B200 silicon at 1,200 W: the datasheet's per-GPU columns, 10 vs 9 PFLOP/s dense FP4") {
    // NVIDIA Blackwell datasheet, individual GPU columns (with sparsity): GB200 FP4 20 PFLOPS, FP8 10, TF32 2.5,
    // FP32 80 TFLOPS, 186 GB at 8 TB/s; HGX B200 FP4 18, FP8 9, TF32 2.2, FP32 75 TFLOPS.
    const auto gb200 = tally::find_hardware("gb200-nvl72");
    const auto b200 = tally::find_hardware("b200");
    CHECK(gb200.peak("fp4") == 20e15 / 2);
    CHECK(b200.peak("fp4") == 18e15 / 2);
    CHECK(gb200.peak("tf32") == 2.5e15 / 2);
    CHECK(b200.peak("tf32") == 2.2e15 / 2);
    CHECK(gb200.peak("fp32") == 80e12);
    CHECK(b200.peak("fp32") == 75e12);
    CHECK(gb200.memory_bytes == 186'000'000'000u);
}
