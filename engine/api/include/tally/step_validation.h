// A validation file of published runs ({"runs": [{id, args, published: {metric, value}, ...}], "split"?}) scored
// by step_time: each expressible run predicted as given and as "generic", its signed error, the band the other
// sources' runs give it (leave one source out), and summaries per half, group and source. The CLI's
// `tally step --validate` and the API's step_validation print what this computes.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tally {

struct StepValidation {
    // {runs, skipped, halves, sources, band_coverage, median_abs_error, worst_abs_error}
    nlohmann::json report;
    std::vector<std::string> half_order;  // halves in the file's order of first appearance
    nlohmann::json bands;                 // the band table of every run (band_table_json), for --write-bands
};

// InputError naming `field` when the file or a run is malformed, or a run's step_time refuses its arguments.
StepValidation validate_step_runs(const nlohmann::json& file, const std::string& field);

}  // namespace tally
