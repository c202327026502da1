// Pipeline-parallel schedules, simulated op by op: GPipe (Huang et al. 2019), 1F1B (PipeDream-Flush,
// Narayanan et al. 2021 "Efficient Large-Scale Language Model Training on GPU Clusters Using
// Megatron-LM", sec. 2.2.1) and the interleaved 1F1B of the same paper (sec. 2.2.2), with the two
// bubble measures the literature uses, so the figure, the step model and the widget share one source.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tally {

enum class PipelineScheduleKind { GPipe, OneFOneB, Interleaved };

// "gpipe", "1f1b", "interleaved"; InputError naming "schedule" for another name.
PipelineScheduleKind pipeline_schedule_from_string(const std::string& name);
const char* to_string(PipelineScheduleKind kind);

struct ScheduleConfig {
    PipelineScheduleKind kind = PipelineScheduleKind::OneFOneB;
    std::int64_t stages = 4;        // p: pipeline ranks
    std::int64_t microbatches = 8;  // m per step
    std::int64_t chunks = 1;        // v: model chunks per rank (interleaved only; 1 otherwise)
    // Time of one micro-batch's forward and backward through a whole stage (all its chunks); a chunk takes
    // 1/v of each. Backward = 2 forwards is the usual count (two matmuls per forward matmul).
    double forward = 1;
    double backward = 2;
};

struct ScheduleBlock {
    std::int64_t stage = 0;  // pipeline rank, 0 = first
    std::int64_t micro = 0;  // micro-batch, 0-based
    std::int64_t chunk = 0;  // model chunk on this rank (0 unless interleaved)
    char kind = 'F';         // 'F' forward, 'B' backward
    double start = 0, end = 0;
};

struct PipelineSchedule {
    std::vector<ScheduleBlock> blocks;  // in the order the simulation ran them
    double makespan = 0;                // first forward starts at 0; last backward ends here
    double busy_per_stage = 0;          // m·(forward + backward): the same on every rank
    // Two names for the same idle time, and the cause of the 2.344 % vs 2.278 % a reader may meet:
    double idle_fraction = 0;  // idle / makespan: the share of the step a rank waits, (p-1)/(v·m+p-1)
    double bubble_ratio = 0;   // idle / busy: the step's slow-down over no pipeline, (p-1)/(v·m)
    // Most micro-batches whose forward ran and backward has not, on any rank (chunks count 1/v each):
    // the activations a rank holds at once, in micro-batches of a whole stage.
    double peak_in_flight = 0;
};

// Runs the schedule: every rank executes its ops in the schedule's order, each as soon as its input is
// ready (a forward waits for the previous virtual stage, a backward for the next), transfers free.
// InputError naming stages, microbatches, chunks, forward or backward for values out of range;
// interleaved needs chunks >= 2 and microbatches a multiple of stages (as Megatron-LM requires).
PipelineSchedule simulate_pipeline(const ScheduleConfig& config);

// The closed forms (Narayanan et al. 2021 eqs. (1)-(2)), which simulate_pipeline reproduces exactly:
// idle over busy, (p-1)/(v·m), and idle over the whole step, (p-1)/(v·m + p-1).
double pipeline_bubble_fraction(std::int64_t pp, std::int64_t interleave, std::int64_t microbatches);
double pipeline_idle_fraction(std::int64_t pp, std::int64_t interleave, std::int64_t microbatches);

}  // namespace tally
