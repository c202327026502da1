// API of the pipeline schedules (schedule.h): the simulated blocks, the two bubble measures and the
// activations in flight, for the pipeline figure, the step widget and `tally call pipeline_schedule`.
#include <optional>
#include <string>

#include "api_args.h"
#include "tally/api.h"
#include "tally/error.h"
#include "tally/schedule.h"

namespace tally::api {

namespace {

json pipeline_schedule_method(const json& args) {
    ScheduleConfig c;
    c.kind = pipeline_schedule_from_string(string_or(args, "schedule", "1f1b"));
    c.stages = int_or(args, "stages", 4, 1, 1024);
    c.microbatches = int_or(args, "microbatches", 8, 1, 65536);
    c.chunks = int_or(args, "chunks", c.kind == PipelineScheduleKind::Interleaved ? 2 : 1, 1, 64);
    c.forward = optional_number_arg(args, "forward").value_or(c.forward);
    c.backward = optional_number_arg(args, "backward").value_or(c.backward);
    const bool split = c.kind == PipelineScheduleKind::ZeroBubbleH1 || c.kind == PipelineScheduleKind::DualPipe;
    const std::optional<double> weight = optional_number_arg(args, "weight");
    if (weight && !split)
        throw InputError("weight", std::string("weight (the weight-gradient part of backward) applies to zb-h1 and "
                                               "dualpipe, which split it off; ") +
                                       to_string(c.kind) + " runs the backward whole");
    c.weight = weight.value_or(c.backward / 2);  // B and W: one matmul each per forward matmul
    const PipelineSchedule r = simulate_pipeline(c);
    json blocks = json::array();
    for (const ScheduleBlock& b : r.blocks) {
        json block{{"stage", b.stage}, {"micro", b.micro}, {"chunk", b.chunk}, {"kind", std::string(1, b.kind)},
                   {"start", b.start}, {"end", b.end}};
        if (b.pair >= 0) block["pair"] = b.pair;  // DualPipe's overlapped forward-backward pairs
        blocks.push_back(block);
    }
    json out{{"schedule", to_string(c.kind)},
             {"stages", c.stages},
             {"microbatches", c.microbatches},
             {"chunks", c.chunks},
             {"forward", c.forward},
             {"backward", c.backward},
             {"makespan", r.makespan},
             {"busy_per_stage", r.busy_per_stage},
             {"idle_fraction", r.idle_fraction},
             {"idle_fraction_formula", "(p − 1)/(v·m + p − 1): idle share of the step"},
             {"bubble_ratio", r.bubble_ratio},
             {"bubble_ratio_formula", "(p − 1)/(v·m): idle time over compute time"},
             {"peak_in_flight", r.peak_in_flight},
             {"parameter_copies", r.parameter_copies},
             {"bubble_time", r.makespan - r.busy_per_stage},
             {"bubble_time_published", pipeline_bubble_time(c)},
             {"blocks", blocks}};
    if (split) out["weight"] = c.weight;
    return out;
}

constexpr Method kMethods[] = {
    {"pipeline_schedule", pipeline_schedule_method,
     "a pipeline schedule (gpipe, 1f1b, interleaved, zb-h1, dualpipe) simulated op by op: blocks, bubble, "
     "micro-batches in flight"},
};

}  // namespace

std::span<const Method> schedule_methods() { return kMethods; }

}  // namespace tally::api
