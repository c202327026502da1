// A measured cluster fabric: the bus bandwidth NCCL's ring collectives (all-reduce, all-gather, reduce-scatter)
// reached on a named cluster, by the number of nodes a collective spans (content/presets/fabrics/*.json, each
// citing the benchmark). Step time prices collectives that cross nodes at these figures instead of the hardware
// preset's nominal network cards when a run names its fabric (StepLayout::fabric).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tally/hardware/hardware.h"

namespace tally {

struct Fabric {
    std::string id, name, source;
    std::int64_t gpus_per_node = 0;  // GPUs per node in the benchmark (all of them took part)
    double message_bytes = 0;        // the benchmark's message size
    // (nodes, bus bytes/s) in increasing node order, nodes >= 1.
    std::vector<std::pair<double, double>> bus_by_nodes;
};

// "nominal" (or ""): no fabric, the hardware preset's topology model.
inline constexpr const char* kNominalFabric = "nominal";

// The fabric preset of an id; nullptr for "nominal" or ""; InputError naming "fabric" (listing the ids) otherwise.
// The returned object lives for the program (parsed once).
const Fabric* find_fabric(const std::string& id);
// Every fabric preset id, "nominal" first.
std::vector<std::string> fabric_ids();

// Bus bandwidth (bytes/s) of a collective spanning `nodes` whole nodes: linear in log(nodes) between the measured
// points, held at the end points beyond them (no extrapolation). InputError naming "nodes" when nodes < 1.
double fabric_bus_bytes_per_s(const Fabric& fabric, double nodes);

// Per-rank ring bandwidth (bytes/s, before the collective efficiency `collective_fraction` step time applies) a
// collective spanning `nodes` nodes reaches on the fabric: the measured bus bandwidth divided by collective_fraction,
// the measurement already being what NCCL reached. Not split among groups sharing a node: the benchmark's traffic
// out of a node (bus bandwidth x 1 crossing per ring) stays far below the node's cards at the spans where it drops
// (32.9 of 400 GB/s on the Playbook's 64 nodes), so the cards are not what limits it. step.cpp takes the lower of
// this and the group's nominal share of the cards.
double fabric_link_bytes_per_s(const Fabric& fabric, std::int64_t nodes, double collective_fraction);
// hw's interconnect with the fabric `id` attached (into `out`, returned); InputError naming "fabric" when unknown
// or "hardware" when hw has no interconnect.
const Interconnect& fabric_interconnect(const Hardware& hw, const std::string& id, Interconnect& out);

}  // namespace tally
