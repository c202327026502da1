// Accelerators: memory capacity, memory bandwidth and dense peak FLOP/s per dtype, from the
// presets in content/presets/hardware (each citing its spec sheet).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tally/numerics/dtype.h"

namespace tally {

struct Fabric;  // fabric.h

// The largest node network a run may state (Gb/s, step_time's node_network_gbps): 100x eight 800 Gb/s cards.
inline constexpr double kMaxNodeNetworkGbps = 640'000;

// How GPUs talk to each other: the NVLink/PCIe domain inside a node and the network between nodes
// (content/presets/hardware/*.json "interconnect"; every figure cited there). Bandwidths are per GPU
// and per direction, as a ring collective uses them.
struct Interconnect {
    bool present = false;               // false when the preset has no "interconnect" object
    std::int64_t gpus_per_node = 0;     // GPUs sharing the intra-node link (NVLink/NVSwitch or PCIe)
    double intra_node_bytes_per_s = 0;  // per GPU, one direction
    double network_bytes_per_s = 0;     // per GPU, one direction (NICs per node / GPUs per node)
    double intra_node_latency_s = 0;    // per collective inside a node (stated; collectives take NCCL's, nccl_cost.h)
    double network_latency_s = 0;       // per collective across nodes (stated; collectives take NCCL's)
    std::string source;
    // A measured cluster fabric (fabric.h) that prices collectives across nodes; null: the nominal cards above.
    // Never set by a preset: step_time attaches the one StepLayout::fabric names.
    const Fabric* fabric = nullptr;
};

struct Hardware {
    std::string id, name, source;
    // GPU generation (ampere, ada, hopper, blackwell, cdna3, cdna4; "" unknown): sets the fraction of peak its
    // GEMMs and attention kernels reach in the step-time model (step.cpp).
    std::string architecture;
    std::uint64_t memory_bytes = 0;           // spec-sheet capacity, decimal (80 GB = 80e9 bytes)
    std::uint64_t memory_reported_bytes = 0;  // what the device reports (cudaMemGetInfo total, nvidia-smi MiB)
    std::string memory_reported_by;           // "device" (a device report) or "datasheet" (none found)
    std::string memory_reported_source;       // where the reported figure comes from
    double memory_bandwidth_bytes_per_s = 0;  // HBM / GDDR bandwidth
    // Dense peak FLOP/s (no 2:4 sparsity); 0 where the chip has no such mode.
    double peak_fp32 = 0, peak_tf32 = 0, peak_bf16 = 0, peak_fp16 = 0, peak_fp8 = 0, peak_fp4 = 0;
    Interconnect interconnect;
    // Fraction of the dense peak large GEMMs reach on this very device, when measured (a calibration file from
    // scripts/bench/calibrate-gpu.sh, or the page's WebGPU probe); 0: the architecture's default (step.cpp).
    double matmul_peak_fraction = 0;
    std::string measured_by;  // who measured it and how ("" for a datasheet preset)

    // Dense peak FLOP/s of a dtype with the peak role (dtype.h); InputError(field "dtype") when the dtype
    // has no peak role or this chip has no such mode.
    double peak(DType dtype) const;
    double peak(const std::string& dtype) const;  // parses the id first (InputError naming "dtype")
    // Ridge point of the roofline for this dtype (roofline::ridge: peak FLOP/s / bytes/s).
    double ridge(const std::string& dtype) const;
};

// The allowance a training process cannot use: the CUDA context (cuBLAS/NCCL workspaces, kernels) and
// memory the caching allocator loses to fragmentation.
// 512 MiB: order of PyTorch issue #34323 (a process that only initialises CUDA shows 781 MB in nvidia-smi
// with eager module loading; CUDA 11.7+ lazy loading lowers it), rounded to a power of two.
inline constexpr std::uint64_t kDefaultCudaContextBytes = std::uint64_t{512} << 20;
// 5 % of capacity: a stated assumption, not a measurement; ZeRO (Rajbhandari et al. 2020, sec. 3.2) reports
// OOM with over 30 % of memory free in extreme cases, well-behaved runs lose a few percent.
inline constexpr double kDefaultFragmentationFraction = 0.05;

struct UsableCapacity {
    std::uint64_t capacity = 0;       // reported (or given) capacity
    std::uint64_t context_bytes = 0;  // CUDA context allowance
    double fragmentation_fraction = 0;
    std::uint64_t fragmentation_bytes = 0;  // ceil(fraction × capacity)
    std::uint64_t allowance_bytes = 0;      // context + fragmentation
    std::uint64_t usable_bytes = 0;         // capacity − allowance
};
// Checks the allowance (context < capacity, fraction in [0, 0.5]) and subtracts it; InputError naming
// "cuda_context_bytes" or "fragmentation_fraction".
UsableCapacity usable_capacity(std::uint64_t capacity, std::uint64_t context_bytes, double fragmentation_fraction);
// A preset's usable capacity: what the device reports, less the default allowances (kDefaultCudaContextBytes,
// kDefaultFragmentationFraction) unless given. A stated capacity ("80 GB") is instead taken as given, with no
// allowance unless one is asked for, so that a quoted figure stays reproducible: call usable_capacity.
UsableCapacity preset_usable_capacity(const Hardware& hw, std::optional<std::uint64_t> context_bytes = std::nullopt,
                                      std::optional<double> fragmentation_fraction = std::nullopt);

// From a preset object (see content/presets/hardware/*.json); throws InputError naming the field.
Hardware hardware_from_json(const nlohmann::json& object);
// By preset id; InputError(field "hardware") listing the ids when unknown.
Hardware find_hardware(const std::string& id);
nlohmann::json hardware_to_json(const Hardware& hw);

}  // namespace tally
