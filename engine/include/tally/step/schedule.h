// Pipeline-parallel schedules, simulated op by op: GPipe (Huang et al. 2019), 1F1B (PipeDream-Flush,
// Narayanan et al. 2021 "Efficient Large-Scale Language Model Training on GPU Clusters Using
// Megatron-LM", sec. 2.2.1), the interleaved 1F1B of the same paper (sec. 2.2.2), zero-bubble ZB-H1
// (Qi et al. 2024 "Zero Bubble Pipeline Parallelism", sec. 2.1) and DualPipe (DeepSeek-AI 2024,
// DeepSeek-V3 technical report sec. 3.2.1; github.com/deepseek-ai/DualPipe dualpipe.py), with the two
// bubble measures the literature uses, so the figure, the step model and the widget share one source.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tally {

enum class PipelineScheduleKind { GPipe, OneFOneB, Interleaved, ZeroBubbleH1, DualPipe };

// "gpipe", "1f1b", "interleaved", "zb-h1", "dualpipe"; InputError naming "schedule" for another name.
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
    // The weight-gradient part of backward (W; the input-gradient part B is backward - weight), which
    // zero-bubble and DualPipe run apart from B to fill idle time. Half of backward: B and W are one matmul
    // each per forward matmul (Qi et al. 2024 sec. 2 take T_F = T_B = T_W). Ignored by the other schedules.
    double weight = 1;
};

struct ScheduleBlock {
    std::int64_t stage = 0;  // pipeline rank, 0 = first
    std::int64_t micro = 0;  // micro-batch, 0-based
    std::int64_t chunk = 0;  // model chunk on this rank (0 unless interleaved)
    // 'F' forward, 'B' backward (the whole backward, or only its input gradient when a 'W' block follows),
    // 'W' the weight gradient split off a backward (zb-h1, dualpipe)
    char kind = 'F';
    double start = 0, end = 0;
    // DualPipe runs one micro-batch's forward and another's backward as one overlapped pair (their
    // communication hides behind each other's compute); both blocks of a pair carry the same pair number.
    std::int64_t pair = -1;
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
    // DualPipe counts its two directions' micro-batches alike, each a whole stage.
    double peak_in_flight = 0;
    int parameter_copies = 1;  // DualPipe keeps two pipeline stages, so two stages' weights, on each rank
};

// Runs the schedule: every rank executes its ops in the schedule's order, each as soon as its input is
// ready (a forward waits for the previous virtual stage, a backward for the next), transfers free.
// InputError naming stages, microbatches, chunks, forward, backward or weight for values out of range;
// interleaved needs chunks >= 2 and microbatches a multiple of stages (as Megatron-LM requires);
// dualpipe needs an even number of stages and an even microbatches >= 2·stages (as dualpipe.py asserts).
PipelineSchedule simulate_pipeline(const ScheduleConfig& config);

// The closed forms (Narayanan et al. 2021 eqs. (1)-(2)), which simulate_pipeline reproduces exactly:
// idle over busy, (p-1)/(v·m), and idle over the whole step, (p-1)/(v·m + p-1).
double pipeline_bubble_fraction(std::int64_t pp, std::int64_t interleave, std::int64_t microbatches);
double pipeline_idle_fraction(std::int64_t pp, std::int64_t interleave, std::int64_t microbatches);

// The idle time per rank the papers give, in the config's time units (F = forward, B = backward,
// W = weight; the DualPipe README's table): 1F1B and GPipe (p-1)(F+B); ZB-H1 (p-1)(F+B-2W) (Qi et al. 2024
// write (p-1)(T_F+T_B-T_W) with their T_B the input-gradient part alone); DualPipe (p/2-1)(F&B+B-3W), its
// overlapped pair F&B taken as F+B (the pair hides communication, not compute). Interleaved: (p-1)(F+B)/v.
// simulate_pipeline reproduces ZB-H1's while W <= F and W <= B - W, and DualPipe's when B - W = F (the
// figures' equal cells); outside those the simulated idle time differs, and the simulation is the answer.
double pipeline_bubble_time(const ScheduleConfig& config);

}  // namespace tally
