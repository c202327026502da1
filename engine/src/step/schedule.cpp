#include "tally/step/schedule.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "tally/base/error.h"
#include "tally/base/names.h"
#include "tally/base/input.h"

namespace tally {

namespace {

// Upper bounds far above real pipelines (Megatron runs use p <= 64, m <= a few thousand), so a simulation
// stays a few million blocks at most.
constexpr std::int64_t kMaxStages = 1024;
constexpr std::int64_t kMaxMicrobatches = 65536;
constexpr std::int64_t kMaxChunks = 64;
constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 15;  // every block goes back to the caller

// One op of a rank's order. 'F', 'B' (whole backward), 'I' (input gradient only; its 'W' comes later),
// 'W', or 'X': DualPipe's overlapped pair, the forward of (micro, chunk) with the whole backward of
// (micro2, chunk2). chunk is the model chunk on the rank; in DualPipe it is the direction (0: enters at
// rank 0, 1: enters at the last rank).
struct Op {
    char kind;
    std::int64_t micro, chunk;
    std::int64_t micro2 = 0, chunk2 = 0;
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

// ZB-H1 (Qi et al. 2024 sec. 2.1, fig. 3 top): 1F1B's order with each backward split into B then W, and
// rank r's W passes started r micro-batches late, so every rank holds p - 1 + 1 = p micro-batches, as 1F1B's
// first rank does; the late W passes fill the idle time at the end of 1F1B.
std::vector<Op> zero_bubble_order(std::int64_t p, std::int64_t m, std::int64_t rank) {
    const std::int64_t warmup = std::min(p - rank - 1, m), delay = rank;
    std::vector<Op> ops;
    std::int64_t next_w = 0;
    const auto backward = [&](std::int64_t k) {
        ops.push_back({'I', k, 0});
        if (k - delay >= 0) ops.push_back({'W', next_w++, 0});
    };
    for (std::int64_t k = 0; k < warmup; ++k) ops.push_back({'F', k, 0});
    for (std::int64_t k = 0; k < m - warmup; ++k) {
        ops.push_back({'F', k + warmup, 0});
        backward(k);
    }
    for (std::int64_t k = m - warmup; k < m; ++k) backward(k);
    while (next_w < m) ops.push_back({'W', next_w++, 0});
    return ops;
}

// DualPipe's order, step by step as dualpipe.py's DualPipe.step runs it (steps 1-8). Phase 0 on the first
// half of the ranks is the forward direction, on the second half the reverse one (phase ^ second_half is
// the direction); backward passes marked zero-bubble queue their W, which _weight_chunk pops in order.
std::vector<Op> dualpipe_order(std::int64_t p, std::int64_t m, std::int64_t rank) {
    const std::int64_t half_ranks = p / 2, half_rank = std::min(rank, p - 1 - rank), half_chunks = m / 2;
    const std::int64_t second_half = rank >= half_ranks ? 1 : 0;
    const bool middle = rank == half_ranks - 1 || rank == half_ranks;
    std::int64_t f_next[2] = {0, 0}, b_next[2] = {0, 0};
    std::vector<Op> ops;
    std::vector<std::pair<std::int64_t, std::int64_t>> w_queue;  // (micro, direction) of split backwards
    std::size_t w_next = 0;
    const auto fwd = [&](std::int64_t phase) {
        const std::int64_t d = phase ^ second_half;
        ops.push_back({'F', f_next[d]++, d});
    };
    const auto bwd = [&](std::int64_t phase, bool zb) {
        const std::int64_t d = phase ^ second_half;
        const std::int64_t k = b_next[d]++;
        ops.push_back({zb ? 'I' : 'B', k, d});
        if (zb) w_queue.push_back({k, d});
    };
    const auto pair = [&](std::int64_t phase0, std::int64_t phase1) {
        const std::int64_t d0 = phase0 ^ second_half, d1 = phase1 ^ second_half;
        ops.push_back({'X', f_next[d0]++, d0, b_next[d1]++, d1});
    };
    const auto weight = [&]() {
        const auto [k, d] = w_queue.at(w_next++);
        ops.push_back({'W', k, d});
    };
    for (std::int64_t i = 0; i < (half_ranks - half_rank - 1) * 2; ++i) fwd(0);  // step 1: nF0
    for (std::int64_t i = 0; i < half_rank + 1; ++i) fwd(0), fwd(1);             // step 2: nF0F1
    for (std::int64_t i = 0; i < half_ranks - half_rank - 1; ++i) {              // step 3: nB1W1F1
        bwd(1, true);
        weight();
        fwd(1);
    }
    for (std::int64_t i = 0; i < half_chunks - p + half_rank + 1; ++i) {  // step 4: nF0B1F1B0
        if (i == 0 && middle) {
            fwd(0);  // dualpipe.py: the middle ranks do not overlap this first pair, to shorten the bubble
            bwd(1, false);
        } else {
            pair(0, 1);
        }
        pair(1, 0);
    }
    for (std::int64_t i = 0; i < half_ranks - half_rank - 1; ++i) {  // step 5: nB1F1B0
        bwd(1, false);
        pair(1, 0);
    }
    bool zb = false;  // step 6: nB1B0, the second half of them split
    const std::int64_t step6 = half_rank + 1;
    for (std::int64_t i = 0; i < step6; ++i) {
        if (i == step6 / 2 && half_rank % 2 == 1) zb = true;
        bwd(1, zb);
        if (i == step6 / 2 && half_rank % 2 == 0) zb = true;
        bwd(0, zb);
    }
    for (std::int64_t i = 0; i < half_ranks - half_rank - 1; ++i) {  // step 7: nWB0
        weight();
        bwd(0, true);
    }
    while (w_next < w_queue.size()) weight();  // step 8: nW
    return ops;
}

std::vector<Op> rank_order(const ScheduleConfig& c, std::int64_t rank) {
    const std::int64_t p = c.stages, m = c.microbatches, v = c.chunks;
    if (c.kind == PipelineScheduleKind::ZeroBubbleH1) return zero_bubble_order(p, m, rank);
    if (c.kind == PipelineScheduleKind::DualPipe) return dualpipe_order(p, m, rank);
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
    const bool split = c.kind == PipelineScheduleKind::ZeroBubbleH1 || c.kind == PipelineScheduleKind::DualPipe;
    if (split && !(c.weight > 0 && c.weight < c.backward))
        throw InputError("weight", "weight (the weight-gradient part of backward) must be in (0, backward = " +
                                       format_number(c.backward) + "), got " + format_number(c.weight));
    if (c.kind == PipelineScheduleKind::DualPipe) {
        if (c.stages < 2 || c.stages % 2 != 0)
            throw InputError("stages",
                             "DualPipe needs an even number of stages (at least 2), got " + std::to_string(c.stages));
        if (c.microbatches % 2 != 0 || c.microbatches < 2 * c.stages)
            throw InputError("microbatches", "DualPipe needs an even number of microbatches, at least 2·stages (" +
                                                 std::to_string(2 * c.stages) + "), as dualpipe.py does; got " +
                                                 std::to_string(c.microbatches));
    }
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
    if (3 * c.stages * c.microbatches * c.chunks > kMaxBlocks)
        throw InputError("microbatches", "stages·microbatches·chunks must be at most " +
                                             std::to_string(kMaxBlocks / 3) + " to simulate");
}

constexpr Named<PipelineScheduleKind> kScheduleNames[] = {{PipelineScheduleKind::GPipe, "gpipe"},
                                                          {PipelineScheduleKind::OneFOneB, "1f1b"},
                                                          {PipelineScheduleKind::Interleaved, "interleaved"},
                                                          {PipelineScheduleKind::ZeroBubbleH1, "zb-h1"},
                                                          {PipelineScheduleKind::DualPipe, "dualpipe"}};

}  // namespace

PipelineScheduleKind pipeline_schedule_from_string(const std::string& name) {
    if (const auto kind = value_named(kScheduleNames, name)) return *kind;
    throw InputError("schedule", "schedule must be gpipe, 1f1b, interleaved, zb-h1 or dualpipe, got \"" +
                                     printable(name, 40) + "\"");
}

const char* to_string(PipelineScheduleKind kind) { return name_of(kScheduleNames, kind, "?"); }

PipelineSchedule simulate_pipeline(const ScheduleConfig& c) {
    check(c);
    const std::int64_t p = c.stages, v = c.chunks;
    const bool dual = c.kind == PipelineScheduleKind::DualPipe;
    const double f = c.forward / static_cast<double>(v), b = c.backward / static_cast<double>(v);
    const double w = c.weight, input_grad = c.backward - c.weight;
    std::vector<std::vector<Op>> order;
    for (std::int64_t s = 0; s < p; ++s) order.push_back(rank_order(c, s));

    // Position of a rank along a micro-batch's path: virtual stage chunk·p + rank, or in DualPipe the rank
    // counted from the end the direction enters at. A forward waits for position - 1, a backward for + 1.
    const auto position = [&](std::int64_t rank, std::int64_t chunk) {
        return dual ? (chunk == 0 ? rank : p - 1 - rank) : chunk * p + rank;
    };
    const std::int64_t last = dual ? p - 1 : p * v - 1;
    // End time of each (F or B, direction, position, micro-batch) once it has run ('I' counts as B: the
    // previous stage waits only for the input gradient).
    std::map<std::tuple<char, std::int64_t, std::int64_t, std::int64_t>, double> done;
    const auto input_ready = [&](char kind, std::int64_t rank, std::int64_t micro, std::int64_t chunk) -> double {
        const std::int64_t pos = position(rank, chunk), dir = dual ? chunk : 0;
        std::tuple<char, std::int64_t, std::int64_t, std::int64_t> key;
        if (kind == 'F') {
            if (pos == 0) return 0;
            key = {'F', dir, pos - 1, micro};
        } else {
            key = pos == last ? std::tuple{'F', dir, pos, micro} : std::tuple{'B', dir, pos + 1, micro};
        }
        auto it = done.find(key);
        return it == done.end() ? -1 : it->second;
    };
    std::vector<double> free(p, 0.0);
    std::vector<std::size_t> next(p, 0);
    std::vector<double> in_flight(p, 0.0);
    std::int64_t pairs = 0;
    PipelineSchedule r;
    r.parameter_copies = dual ? 2 : 1;
    const auto emit = [&](std::int64_t s, char kind, std::int64_t micro, std::int64_t chunk, double start, double end,
                          std::int64_t pair) {
        const std::int64_t dir = dual ? chunk : 0;
        if (kind == 'F' || kind == 'B') done[{kind, dir, position(s, chunk), micro}] = end;
        if (kind == 'F') in_flight[s] += 1.0 / static_cast<double>(v);
        if (kind == 'B' || kind == 'W') in_flight[s] -= 1.0 / static_cast<double>(v);
        r.peak_in_flight = std::max(r.peak_in_flight, in_flight[s]);
        r.blocks.push_back({s, micro, chunk, kind, start, end, pair});
    };
    bool progress = true;
    while (progress) {
        progress = false;
        for (std::int64_t s = 0; s < p; ++s) {
            // At most one op per rank per sweep, so blocks come out in time order across ranks.
            if (next[s] == order[s].size()) continue;
            const Op op = order[s][next[s]];
            double ready = 0;
            if (op.kind == 'W') {
                ready = 0;  // its own B ran earlier on this rank
            } else if (op.kind == 'X') {
                const double a = input_ready('F', s, op.micro, op.chunk), z = input_ready('B', s, op.micro2, op.chunk2);
                if (a < 0 || z < 0) continue;
                ready = std::max(a, z);
            } else {
                ready = input_ready(op.kind == 'F' ? 'F' : 'B', s, op.micro, op.chunk);
                if (ready < 0) continue;
            }
            const double start = std::max(ready, free[s]);
            double end = start;
            if (op.kind == 'X') {
                // One overlapped pair: the two computations run back to back, their sends leave at the end.
                const std::int64_t id = pairs++;
                emit(s, 'F', op.micro, op.chunk, start, start + f, id);
                emit(s, 'B', op.micro2, op.chunk2, start + f, start + f + b, id);
                end = start + f + b;
                done[{'F', op.chunk, position(s, op.chunk), op.micro}] = end;
                done[{'B', op.chunk2, position(s, op.chunk2), op.micro2}] = end;
            } else {
                const double length = op.kind == 'F' ? f : op.kind == 'B' ? b : op.kind == 'I' ? input_grad : w;
                end = start + length;
                if (op.kind == 'I') {
                    r.blocks.push_back({s, op.micro, op.chunk, 'B', start, end, -1});
                    done[{'B', dual ? op.chunk : 0, position(s, op.chunk), op.micro}] = end;
                } else {
                    emit(s, op.kind, op.micro, op.chunk, start, end, -1);
                }
            }
            free[s] = end;
            ++next[s];
            progress = true;
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

namespace tally {

double pipeline_bubble_time(const ScheduleConfig& c) {
    const double p = static_cast<double>(c.stages), F = c.forward, B = c.backward, W = c.weight;
    switch (c.kind) {
        case PipelineScheduleKind::GPipe:
        case PipelineScheduleKind::OneFOneB: return (p - 1) * (F + B);
        case PipelineScheduleKind::Interleaved: return (p - 1) * (F + B) / static_cast<double>(c.chunks);
        case PipelineScheduleKind::ZeroBubbleH1: return (p - 1) * (F + B - 2 * W);
        case PipelineScheduleKind::DualPipe: return (p / 2 - 1) * ((F + B) + B - 3 * W);
    }
    return 0;
}

}  // namespace tally
