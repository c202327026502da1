#include "tally/comm/fabric.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "tally/base/error.h"
#include "tally/base/input.h"
#include "tally/base/presets.h"

namespace tally {

namespace {

using json = nlohmann::json;

Fabric fabric_from_json(const json& o) {
    const std::string id = o.at("id").get<std::string>();
    const std::string where = "fabric preset " + id;
    Fabric f;
    f.id = id;
    f.name = o.value("name", id);
    f.source = o.value("source", std::string());
    f.gpus_per_node = o.at("gpus_per_node").get<std::int64_t>();
    f.message_bytes = o.at("message_bytes").get<double>();
    if (f.gpus_per_node < 1) throw InputError("fabric", where + ": gpus_per_node must be at least 1");
    double last_nodes = 0;
    for (const json& point : o.at("bus_gb_s_by_nodes")) {
        const double nodes = point.at(0).get<double>(), gb_s = point.at(1).get<double>();
        if (!(nodes >= 1 && nodes > last_nodes && gb_s > 0))
            throw InputError("fabric", where + ": bus_gb_s_by_nodes needs increasing node counts >= 1 and GB/s > 0");
        f.bus_by_nodes.emplace_back(nodes, gb_s * 1e9);
        last_nodes = nodes;
    }
    if (f.bus_by_nodes.empty()) throw InputError("fabric", where + ": bus_gb_s_by_nodes is empty");
    return f;
}

// Every fabric preset, parsed once (immutable afterwards).
const std::vector<std::unique_ptr<const Fabric>>& fabrics() {
    static const auto parsed = [] {
        std::vector<std::unique_ptr<const Fabric>> out;
        for (const json* o : presets_of("fabrics")) out.push_back(std::make_unique<const Fabric>(fabric_from_json(*o)));
        return out;
    }();
    return parsed;
}

}  // namespace

std::vector<std::string> fabric_ids() {
    std::vector<std::string> ids{kNominalFabric};
    for (const auto& f : fabrics()) ids.push_back(f->id);
    return ids;
}

const Fabric* find_fabric(const std::string& id) {
    if (id.empty() || id == kNominalFabric) return nullptr;
    for (const auto& f : fabrics())
        if (f->id == id) return f.get();
    std::string ids;
    for (const std::string& known : fabric_ids()) ids += (ids.empty() ? "" : ", ") + known;
    throw InputError("fabric", "fabric must be one of " + ids + ", got \"" + printable(id, 40) + "\"");
}

double fabric_bus_bytes_per_s(const Fabric& fabric, double nodes) {
    if (!(nodes >= 1)) throw InputError("nodes", "nodes must be at least 1, got " + format_number(nodes));
    const auto& p = fabric.bus_by_nodes;
    if (nodes <= p.front().first) return p.front().second;
    for (std::size_t i = 1; i < p.size(); ++i) {
        if (nodes > p[i].first) continue;
        const double t = std::log(nodes / p[i - 1].first) / std::log(p[i].first / p[i - 1].first);
        return p[i - 1].second + t * (p[i].second - p[i - 1].second);
    }
    return p.back().second;
}

double fabric_link_bytes_per_s(const Fabric& fabric, std::int64_t nodes, double collective_fraction) {
    return fabric_bus_bytes_per_s(fabric, static_cast<double>(nodes)) / collective_fraction;
}

const Interconnect& fabric_interconnect(const Hardware& hw, const std::string& id, Interconnect& out) {
    if (!hw.interconnect.present)
        throw InputError("hardware", "hardware " + hw.id + " has no interconnect figures for a fabric to replace");
    out = hw.interconnect;
    out.fabric = find_fabric(id);
    return out;
}

}  // namespace tally
