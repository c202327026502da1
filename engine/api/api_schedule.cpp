// API of the pipeline schedules (schedule.h): the simulated blocks, the two bubble measures and the
// activations in flight, for the pipeline figure, the step widget and `tally call pipeline_schedule`.
#include <optional>
#include <string>

#include "api_args.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/step/schedule.h"

namespace tally::api {

namespace {

using namespace arg;
constexpr std::array kScheduleArgs{
    choice("schedule", "1f1b", "the pipeline schedule", "gpipe|1f1b|interleaved|zb-h1|dualpipe"),
    integer("stages", "stages", 1, 1024, "4", "pipeline stages"),
    integer("microbatches", "", 1, 65536, "8", "micro-batches per step"),
    integer("chunks", "chunks", 1, 64, "depends: 2 for interleaved, else 1", "model chunks per stage"),
    number("forward", "time units", "1", "one micro-batch's forward through a whole stage"),
    number("backward", "time units", "2", "one micro-batch's backward through a whole stage"),
    number("weight", "time units", "depends: backward / 2 (zb-h1 and dualpipe only)",
           "the weight-gradient part W of backward, split off by zb-h1 and dualpipe"),
};
constexpr std::array kScheduleResult = std::to_array<Field>({
    {"schedule", "", "the schedule simulated"},
    {"blocks", "", "{stage, micro, chunk, kind F|B|W, start, end, pair} per block"},
    {"makespan", "time units", "end of the last block"},
    {"busy_per_stage", "time units", "work per stage"},
    {"idle_fraction", "", "idle share of stage-time (the bubble)"},
    {"bubble_ratio", "", "idle time over compute time"},
    {"peak_in_flight", "micro-batches", "most micro-batches whose activations a stage holds at once"},
    {"parameter_copies", "", "copies of the weights a stage holds (2 for dualpipe)"},
    {"bubble_time", "time units", "makespan less one stage's work"},
    {"bubble_time_published", "time units", "the paper's closed-form bubble for this schedule"},
    {"stages", "", "pipeline stages"},
    {"microbatches", "", "micro-batches per step"},
    {"chunks", "", "model chunks per stage (interleaving)"},
    {"forward", "time units", "one forward block"},
    {"backward", "time units", "one backward block"},
    {"idle_fraction_formula", "", "the closed form of idle_fraction"},
    {"bubble_ratio_formula", "", "the closed form of bubble_ratio"},
});

json pipeline_schedule_method(const json& args) {
    ScheduleConfig c;
    c.kind = pipeline_schedule_from_string(arg_string(args, kScheduleArgs[0]));
    c.stages = arg_int(args, kScheduleArgs[1]);
    c.microbatches = arg_int(args, kScheduleArgs[2]);
    c.chunks = arg_int(args, kScheduleArgs[3], c.kind == PipelineScheduleKind::Interleaved ? 2 : 1);
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
        json block = TALLY_MEMBERS(b, stage, micro, chunk, start, end);
        block["kind"] = std::string(1, b.kind);
        if (b.pair >= 0) block["pair"] = b.pair;  // DualPipe's overlapped forward-backward pairs
        blocks.push_back(block);
    }
    json out{{"schedule", to_string(c.kind)},
             {"idle_fraction_formula", "(p − 1)/(v·m + p − 1): idle share of the step"},
             {"bubble_ratio_formula", "(p − 1)/(v·m): idle time over compute time"},
             {"bubble_time", r.makespan - r.busy_per_stage},
             {"bubble_time_published", pipeline_bubble_time(c)},
             {"blocks", blocks}};
    out.update(TALLY_MEMBERS(c, stages, microbatches, chunks, forward, backward));
    out.update(
        TALLY_MEMBERS(r, makespan, busy_per_stage, idle_fraction, bubble_ratio, peak_in_flight, parameter_copies));
    if (split) out["weight"] = c.weight;
    return out;
}

constexpr Method kMethods[] = {
    {"pipeline_schedule", pipeline_schedule_method,
     "a pipeline schedule (gpipe, 1f1b, interleaved, zb-h1, dualpipe) simulated op by op: blocks, bubble, micro-batches in flight",
     kScheduleArgs, kScheduleResult, true},
};

}  // namespace

std::span<const Method> schedule_methods() { return kMethods; }

}  // namespace tally::api
