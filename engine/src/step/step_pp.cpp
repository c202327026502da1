#include "tally/step/step_pp.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tally/base/error.h"

namespace tally {

namespace {

struct GridAction {
    bool forward;
    std::int64_t stage;
};

// One rank's row of the grid (schedules.py: ScheduleInterleaved1F1B._calculate_single_rank_operations and
// _get_1f1b_rank_ops): rank r waits r steps, runs (v-1)·m_round + 2(p-1-r) warm-up forwards
// (at most v·m), idles until the earliest first backward, v·p + 2(p-1-r), then alternates forward and backward,
// and in the cool-down runs each backward after an empty step.
std::vector<std::optional<GridAction>> grid_row(std::int64_t p, std::int64_t v, std::int64_t m, std::int64_t r) {
    const std::int64_t rounds = std::max<std::int64_t>(1, m / p), per_round = m / rounds;
    const std::int64_t warmup = std::min((v - 1) * per_round + 2 * (p - 1 - r), m * v);
    const std::int64_t ops = v * m, steady = ops - warmup;
    const auto forward_stage = [&](std::int64_t k) { return ((k / per_round) % v) * p + r; };
    const auto backward_stage = [&](std::int64_t k) { return (v - 1 - ((k - warmup) / per_round) % v) * p + r; };
    std::vector<std::optional<GridAction>> row(static_cast<std::size_t>(r));
    const std::int64_t post_warmup = (v * p + 2 * (p - 1 - r)) - (warmup + r);
    for (std::int64_t k = 0; k < warmup + steady + warmup; ++k) {
        if (k < warmup) {
            row.push_back(GridAction{true, forward_stage(k)});
            if (k == warmup - 1)
                row.insert(row.end(), static_cast<std::size_t>(std::max<std::int64_t>(post_warmup, 0)), std::nullopt);
        } else if (k < warmup + steady) {
            row.push_back(GridAction{true, forward_stage(k)});
            row.push_back(GridAction{false, backward_stage(k)});
        } else {
            row.push_back(std::nullopt);
            row.push_back(GridAction{false, backward_stage(k)});
        }
    }
    return row;
}

}  // namespace

LockstepExtra lockstep_grid_extra(std::int64_t pp, std::int64_t interleave, std::int64_t microbatches) {
    LockstepExtra out;
    if (pp < 2 || interleave < 2) return out;  // the single-stage schedules (Schedule1F1B) run their own loop
    if (microbatches > pp && microbatches % pp != 0) return out;
    out.chunk_forwards = microbatches > 1 ? 1 : 0;
    out.transfers = 2 * static_cast<double>(pp - 2);
    return out;
}

double lockstep_grid_makespan(std::int64_t pp, std::int64_t interleave, std::int64_t microbatches, double forward,
                              double backward, double transfer) {
    require_range("pp", pp, 2, 64);
    require_range("interleave", interleave, 2, 16);
    require_range("microbatches", microbatches, 1, 1024);
    const std::int64_t rounds = std::max<std::int64_t>(1, microbatches / pp);
    if (microbatches % rounds != 0)
        throw InputError("microbatches", "microbatches (" + std::to_string(microbatches) +
                                             ") must be a multiple of the number of rounds " + std::to_string(rounds));
    const std::int64_t p = pp, stages = pp * interleave;
    std::vector<std::vector<std::optional<GridAction>>> rows;
    std::size_t steps = 0;
    for (std::int64_t r = 0; r < p; ++r) {
        rows.push_back(grid_row(p, interleave, microbatches, r));
        steps = std::max(steps, rows.back().size());
    }
    const auto action = [&](std::int64_t r, std::size_t t) -> std::optional<GridAction> {
        const auto& row = rows[static_cast<std::size_t>(r)];
        return t < row.size() ? row[t] : std::nullopt;
    };
    // The rank an action's send goes to (or -1): a forward to the next stage's rank, a backward to the previous.
    const auto peer = [&](const GridAction& a) -> std::int64_t {
        if (a.forward) return a.stage + 1 < stages ? (a.stage + 1) % p : -1;
        return a.stage > 0 ? (a.stage - 1) % p : -1;
    };
    std::vector<double> ready(static_cast<std::size_t>(p), 0), end(static_cast<std::size_t>(p), 0);
    for (std::size_t t = 0; t < steps; ++t) {
        for (std::int64_t r = 0; r < p; ++r) {
            const auto a = action(r, t);
            end[static_cast<std::size_t>(r)] =
                ready[static_cast<std::size_t>(r)] + (a ? (a->forward ? forward : backward) : 0);
        }
        std::vector<double> next(end);
        for (std::int64_t r = 0; r < p; ++r) {
            // The rank's own send and the receives matching its neighbours' sends this step, batched and waited.
            bool exchanges = false;
            double until = end[static_cast<std::size_t>(r)];
            const auto a = action(r, t);
            if (a && peer(*a) >= 0) exchanges = true, until = std::max(until, end[static_cast<std::size_t>(peer(*a))]);
            for (std::int64_t q = 0; q < p; ++q) {
                const auto b = action(q, t);
                if (q != r && b && peer(*b) == r)
                    exchanges = true, until = std::max(until, end[static_cast<std::size_t>(q)]);
            }
            if (exchanges) next[static_cast<std::size_t>(r)] = until + transfer;
        }
        ready = next;
    }
    return *std::max_element(ready.begin(), ready.end());
}

}  // namespace tally
