// API of the pipeline schedules (schedule.h): the simulated blocks, the two bubble measures and the
// activations in flight, for the pipeline figure, the step widget and `tally call pipeline_schedule`.
#include <string>

#include "api_args.h"
#include "tally/api.h"
#include "tally/schedule.h"

namespace tally::api {

namespace {

using namespace arg;
constexpr std::array kScheduleArgs{
    Arg{.name = "schedule",
        .type = Enum,
        .fallback = "1f1b",
        .doc = "the pipeline schedule",
        .values = "gpipe|1f1b|interleaved"},
    Arg{"stages", Int, "stages", 1, 1024, "4", "pipeline stages"},
    Arg{"microbatches", Int, "", 1, 65536, "8", "micro-batches per step"},
    Arg{"chunks", Int, "chunks", 1, 64, "depends: 2 for interleaved, else 1", "model chunks per stage"},
    Arg{"forward", Num, "time units", -kNo, kNo, "1", "one micro-batch's forward through a whole stage"},
    Arg{"backward", Num, "time units", -kNo, kNo, "2", "one micro-batch's backward through a whole stage"},
};
constexpr std::array kScheduleResult = std::to_array<Field>({
    {"schedule", "", "the schedule simulated"},
    {"blocks", "", "{stage, micro, chunk, kind F|B, start, end} per block"},
    {"makespan", "time units", "end of the last block"},
    {"busy_per_stage", "time units", "work per stage"},
    {"idle_fraction", "", "idle share of stage-time (the bubble)"},
});

json pipeline_schedule_method(const json& args) {
    ScheduleConfig c;
    c.kind = pipeline_schedule_from_string(arg_string(args, kScheduleArgs[0]));
    c.stages = arg_int(args, kScheduleArgs[1]);
    c.microbatches = arg_int(args, kScheduleArgs[2]);
    c.chunks = arg_int(args, kScheduleArgs[3], c.kind == PipelineScheduleKind::Interleaved ? 2 : 1);
    c.forward = optional_number_arg(args, "forward").value_or(c.forward);
    c.backward = optional_number_arg(args, "backward").value_or(c.backward);
    const PipelineSchedule r = simulate_pipeline(c);
    json blocks = json::array();
    for (const ScheduleBlock& b : r.blocks)
        blocks.push_back({{"stage", b.stage},
                          {"micro", b.micro},
                          {"chunk", b.chunk},
                          {"kind", std::string(1, b.kind)},
                          {"start", b.start},
                          {"end", b.end}});
    return json{{"schedule", to_string(c.kind)},
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
                {"blocks", blocks}};
}

constexpr Method kMethods[] = {
    {"pipeline_schedule", pipeline_schedule_method,
     "a pipeline schedule (gpipe, 1f1b, interleaved) simulated op by op: blocks, bubble, micro-batches in flight",
     kScheduleArgs, kScheduleResult, true},
};

}  // namespace

std::span<const Method> schedule_methods() { return kMethods; }

}  // namespace tally::api
