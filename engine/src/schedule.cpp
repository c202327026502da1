#include "tally/schedule.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "tally/error.h"
#include "tally/input.h"

namespace tally {

namespace {

// Upper bounds far above real pipelines (Megatron runs use p <= 64, m <= a few thousand), so a simulation
// stays a few million blocks at most.
constexpr std::int64_t kMaxStages = 1024;
constexpr std::int64_t kMaxMicrobatches = 65536;
constexpr std::int64_t kMaxChunks = 64;
constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 15;  // every block goes back to the caller

struct Op {
    char kind;
    std::int64_t micro, chunk;
};

// Megatron-LM's interleaved order (megatron/core/pipeline_parallel/schedules.py,
// forward_backward_pipelining_with_interleaving): the k-th virtual micro-batch of a rank runs chunk
// (k mod p·v) div p (reversed for backward) on micro-batch (k div p·v)·p + k mod p.
Op virtual_op(char kind, std::int64_t k, std::int64_t p, std::int64_t v) {
    const std::int64_t group = k % (p * v);
    std::int64_t chunk = group / p;
    if (kind == 'B') chunk = v - 1 - chunk;
    return {kind, (k / (p * v)) * p + k % p, chunk};
}

std::vector<Op> rank_order(const ScheduleConfig& c, std::int64_t rank) {
    const std::int64_t p = c.stages, m = c.microbatches, v = c.chunks;
    std::vector<Op> ops;
    if (c.kind == PipelineScheduleKind::GPipe) {
        for (std::int64_t i = 0; i < m; ++i) ops.push_back({'F', i, 0});
        for (std::int64_t i = 0; i < m; ++i) ops.push_back({'B', i, 0});
        return ops;
    }
    const std::int64_t total = m * v;
    std::int64_t warmup = c.kind == PipelineScheduleKind::OneFOneB ? p - rank - 1 : (p - rank - 1) * 2 + (v - 1) * p;
    if (c.kind == PipelineScheduleKind::Interleaved && m == p) warmup = total;  // Megatron: all warm-up when m = p
    warmup = std::min(warmup, total);
    for (std::int64_t k = 0; k < warmup; ++k) ops.push_back(virtual_op('F', k, p, v));
    for (std::int64_t k = 0; k < total - warmup; ++k) {
        ops.push_back(virtual_op('F', k + warmup, p, v));
        ops.push_back(virtual_op('B', k, p, v));
    }
    for (std::int64_t k = total - warmup; k < total; ++k) ops.push_back(virtual_op('B', k, p, v));
    return ops;
}

void check(const ScheduleConfig& c) {
    require_integer("stages", c.stages, 1, kMaxStages);
    require_integer("microbatches", c.microbatches, 1, kMaxMicrobatches);
    require_integer("chunks", c.chunks, 1, kMaxChunks);
    require_positive("forward", c.forward);
    require_positive("backward", c.backward);
    if (c.kind != PipelineScheduleKind::Interleaved && c.chunks != 1)
        throw InputError("chunks", std::string("chunks (model chunks per rank) applies to the interleaved schedule; ") +
                                       to_string(c.kind) + " runs 1, got " + std::to_string(c.chunks));
    if (c.kind == PipelineScheduleKind::Interleaved) {
        if (c.chunks < 2)
            throw InputError("chunks", "the interleaved schedule needs chunks in [2, " + std::to_string(kMaxChunks) +
                                           "], got " + std::to_string(c.chunks));
        if (c.microbatches % c.stages != 0)
            throw InputError("microbatches", "the interleaved schedule needs microbatches a multiple of stages (" +
                                                 std::to_string(c.stages) + "), as Megatron-LM does; got " +
                                                 std::to_string(c.microbatches));
    }
    if (2 * c.stages * c.microbatches * c.chunks > kMaxBlocks)
        throw InputError("microbatches", "stages·microbatches·chunks must be at most " +
                                             std::to_string(kMaxBlocks / 2) + " to simulate");
}

}  // namespace

PipelineScheduleKind pipeline_schedule_from_string(const std::string& name) {
    if (name == "gpipe") return PipelineScheduleKind::GPipe;
    if (name == "1f1b") return PipelineScheduleKind::OneFOneB;
    if (name == "interleaved") return PipelineScheduleKind::Interleaved;
    throw InputError("schedule", "schedule must be gpipe, 1f1b or interleaved, got \"" + printable(name, 40) + "\"");
}

const char* to_string(PipelineScheduleKind kind) {
    switch (kind) {
        case PipelineScheduleKind::GPipe: return "gpipe";
        case PipelineScheduleKind::OneFOneB: return "1f1b";
        case PipelineScheduleKind::Interleaved: return "interleaved";
    }
    return "?";
}

PipelineSchedule simulate_pipeline(const ScheduleConfig& c) {
    check(c);
    const std::int64_t p = c.stages, v = c.chunks;
    const double f = c.forward / static_cast<double>(v), b = c.backward / static_cast<double>(v);
    std::vector<std::vector<Op>> order;
    for (std::int64_t s = 0; s < p; ++s) order.push_back(rank_order(c, s));

    // End time of each (kind, virtual stage, micro-batch) once it has run; virtual stage = chunk·p + rank.
    std::map<std::tuple<char, std::int64_t, std::int64_t>, double> done;
    const std::int64_t last_virtual = p * v - 1;
    std::vector<double> free(p, 0.0);
    std::vector<std::size_t> next(p, 0);
    std::vector<double> in_flight(p, 0.0);
    PipelineSchedule r;
    bool progress = true;
    while (progress) {
        progress = false;
        for (std::int64_t s = 0; s < p; ++s) {
            // At most one op per rank per sweep, so blocks come out in time order across ranks.
            for (bool ran = false; !ran && next[s] < order[s].size(); ran = true) {
                const Op op = order[s][next[s]];
                const std::int64_t vs = op.chunk * p + s;
                double ready = 0;
                if (op.kind == 'F') {
                    if (vs > 0) {
                        auto it = done.find({'F', vs - 1, op.micro});
                        if (it == done.end()) break;
                        ready = it->second;
                    }
                } else {
                    auto it = vs == last_virtual ? done.find({'F', vs, op.micro}) : done.find({'B', vs + 1, op.micro});
                    if (it == done.end()) break;
                    ready = it->second;
                }
                const double start = std::max(ready, free[s]);
                const double end = start + (op.kind == 'F' ? f : b);
                done[{op.kind, vs, op.micro}] = end;
                free[s] = end;
                in_flight[s] += (op.kind == 'F' ? 1.0 : -1.0) / static_cast<double>(v);
                r.peak_in_flight = std::max(r.peak_in_flight, in_flight[s]);
                r.blocks.push_back({s, op.micro, op.chunk, op.kind, start, end});
                ++next[s];
                progress = true;
            }
        }
    }
    for (std::int64_t s = 0; s < p; ++s)
        if (next[s] != order[s].size()) throw std::logic_error("pipeline schedule deadlocked");
    r.makespan = *std::max_element(free.begin(), free.end());
    r.busy_per_stage = static_cast<double>(c.microbatches) * (c.forward + c.backward);
    const double idle = r.makespan - r.busy_per_stage;
    r.idle_fraction = idle / r.makespan;
    r.bubble_ratio = idle / r.busy_per_stage;
    return r;
}

double pipeline_bubble_fraction(std::int64_t pp, std::int64_t interleave, std::int64_t microbatches) {
    return static_cast<double>(pp - 1) / (static_cast<double>(interleave) * static_cast<double>(microbatches));
}

double pipeline_idle_fraction(std::int64_t pp, std::int64_t interleave, std::int64_t microbatches) {
    const double vm = static_cast<double>(interleave) * static_cast<double>(microbatches);
    return static_cast<double>(pp - 1) / (vm + static_cast<double>(pp - 1));
}

}  // namespace tally
