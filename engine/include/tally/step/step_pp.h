#pragma once
// Pipeline schedules as torch.distributed.pipelining runs them (torchtitan): the looped schedules
// (PipelineScheduleMulti, e.g. ScheduleInterleaved1F1B) execute a precomputed grid of time steps, one action per
// rank per step, and wait for each step's batched sends and receives before the rank's next action
// (torch/distributed/pipelining/schedules.py, PipelineScheduleMulti._step_microbatches: "for time_step, action in
// enumerate(self.pipeline_order[self.rank])" ... "_batch_p2p(ops).wait()"; _get_1f1b_rank_ops lays out the grid).
// Read in stored copies of schedules.py from mid-2024 and 2025 (the torchtitan runs' torch 1963fc8, 2024-12-23, was
// not among them); the grid, its warm-up counts and the per-step wait are the same in both.

#include <cstdint>

namespace tally {

// What the lock-step grid costs beyond the interleaved 1F1B that runs each op as soon as its input is ready
// (Narayanan et al. 2021: (p-1)(F+B)/v of idle time): chunk forwards and point-to-point transfers on the critical
// path. Closed form of lockstep_grid_makespan (tests/engine/step/step_pp_test.cpp checks it against the grid), valid
// when microbatches is at most pp or a multiple of it; other counts take the schedule's uneven rounds, whose grid
// waits far longer (p = 8, v = 2, m = 12: 8 chunk forwards), and are left at zero here, not modelled.
struct LockstepExtra {
    double chunk_forwards = 0;  // one (none for a single micro-batch): a chunk forward more on the critical path
    double transfers = 0;       // exposed sends beyond one per chunk pass: 2(p - 2), the warm-up and cool-down waits
};
LockstepExtra lockstep_grid_extra(std::int64_t pp, std::int64_t interleave, std::int64_t microbatches);

// The grid's makespan: torch's ScheduleInterleaved1F1B order for pp ranks, interleave local stages and
// microbatches micro-batches, each step ending when the rank and every neighbour it exchanges with that step have
// finished their action, plus `transfer`. forward and backward are one chunk's times. InputError naming pp,
// interleave or microbatches out of range (microbatches a multiple of pp, as the schedule requires once m >= p).
double lockstep_grid_makespan(std::int64_t pp, std::int64_t interleave, std::int64_t microbatches, double forward,
                              double backward, double transfer);

}  // namespace tally
