// The stored error bands of step_time (tally/step/bands.h) as JSON: written by
// `tally step --validate --runs FILE --write-bands OUT` into content/presets/step-bands/heldout.json, compiled in,
// and read by step_time's result ("band").
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "tally/step/bands.h"

namespace tally {

nlohmann::json band_table_json(const std::vector<BandEntry>& table);
// InputError naming "bands" when an entry is malformed.
std::vector<BandEntry> band_table_from_json(const nlohmann::json& bands);
// The compiled-in table (content/presets/step-bands/heldout.json), empty when absent.
const std::vector<BandEntry>& stored_step_bands();

}  // namespace tally
