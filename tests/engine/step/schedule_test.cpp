// Tests of engine/src/step/schedule.cpp: the simulated pipeline schedules reproduce the closed forms of
// Narayanan et al. 2021 (Megatron-LM, sec. 2.2) and the activation counts that follow from their warm-up.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <tuple>

#include "tally/base/error.h"
#include "tally/step/schedule.h"

using namespace tally;

namespace {

PipelineSchedule run(PipelineScheduleKind kind, std::int64_t p, std::int64_t m, std::int64_t v = 1) {
    ScheduleConfig c;
    c.kind = kind;
    c.stages = p;
    c.microbatches = m;
    c.chunks = v;
    return simulate_pipeline(c);
}

std::string field_of(const ScheduleConfig& c) {
    try {
        simulate_pipeline(c);
    } catch (const InputError& e) {
        return e.field();
    }
    return "";
}

}  // namespace

TEST_CASE("1F1B idles (p-1)/(m+p-1) of the step, a bubble of (p-1)/m over compute (Narayanan et al. 2021 eq. 1)") {
    for (auto [p, m] : {std::pair{2, 4}, {4, 8}, {8, 32}, {4, 1}, {8, 64}}) {
        INFO("p=" << p << " m=" << m);
        const auto r = run(PipelineScheduleKind::OneFOneB, p, m);
        CHECK(r.blocks.size() == static_cast<std::size_t>(2 * p * m));
        CHECK(r.idle_fraction == Approx(pipeline_idle_fraction(p, 1, m)).epsilon(1e-12));
        CHECK(r.bubble_ratio == Approx(pipeline_bubble_fraction(p, 1, m)).epsilon(1e-12));
        CHECK(r.idle_fraction == Approx(double(p - 1) / (m + p - 1)).epsilon(1e-12));
    }
}

TEST_CASE("interleaving v chunks per rank divides the bubble by v: (p-1)/(v·m) (Narayanan et al. 2021 eq. 2)") {
    for (auto [p, m, v] : {std::tuple{4, 8, 2}, {4, 16, 4}, {8, 32, 3}, {2, 2, 2}}) {
        INFO("p=" << p << " m=" << m << " v=" << v);
        const auto r = run(PipelineScheduleKind::Interleaved, p, m, v);
        CHECK(r.blocks.size() == static_cast<std::size_t>(2 * p * m * v));
        CHECK(r.bubble_ratio == Approx(double(p - 1) / (v * m)).epsilon(1e-12));
        CHECK(r.idle_fraction == Approx(pipeline_idle_fraction(p, v, m)).epsilon(1e-12));
    }
}

TEST_CASE("GPipe has 1F1B's bubble but holds all m micro-batches; 1F1B holds p, interleaved p + (p-1)/v") {
    const std::int64_t p = 4, m = 16;
    const auto gpipe = run(PipelineScheduleKind::GPipe, p, m);
    const auto one = run(PipelineScheduleKind::OneFOneB, p, m);
    CHECK(gpipe.bubble_ratio == Approx(one.bubble_ratio).epsilon(1e-12));
    CHECK(gpipe.peak_in_flight == m);
    CHECK(one.peak_in_flight == p);
    // Megatron's interleaved warm-up on the first rank is 2(p-1) + (v-1)p chunk forwards, then one more before
    // the first backward: (vp + p - 1) chunks of 1/v each.
    for (std::int64_t v : {2, 4}) {
        const auto inter = run(PipelineScheduleKind::Interleaved, p, m, v);
        CHECK(inter.peak_in_flight == Approx(p + double(p - 1) / v).epsilon(1e-12));
    }
}

TEST_CASE("every simulated block waits for its input and no rank runs two blocks at once") {
    for (auto kind : {PipelineScheduleKind::GPipe, PipelineScheduleKind::OneFOneB, PipelineScheduleKind::Interleaved}) {
        const std::int64_t p = 4, m = 8, v = kind == PipelineScheduleKind::Interleaved ? 2 : 1;
        const auto r = run(kind, p, m, v);
        std::map<std::tuple<char, std::int64_t, std::int64_t>, double> end;
        for (const auto& b : r.blocks) end[{b.kind, b.chunk * p + b.stage, b.micro}] = b.end;
        const std::int64_t last = p * v - 1;
        for (const auto& b : r.blocks) {
            const std::int64_t vs = b.chunk * p + b.stage;
            if (b.kind == 'F' && vs > 0) CHECK(b.start >= end.at({'F', vs - 1, b.micro}));
            if (b.kind == 'B')
                CHECK(b.start >= end.at(vs == last ? std::tuple{'F', vs, b.micro} : std::tuple{'B', vs + 1, b.micro}));
        }
        for (std::int64_t s = 0; s < p; ++s) {
            std::vector<std::pair<double, double>> spans;
            for (const auto& b : r.blocks)
                if (b.stage == s) spans.push_back({b.start, b.end});
            std::sort(spans.begin(), spans.end());
            for (std::size_t i = 1; i < spans.size(); ++i) CHECK(spans[i].first >= spans[i - 1].second);
        }
    }
}

TEST_CASE("a schedule refuses layouts it cannot run, naming the field") {
    ScheduleConfig c;
    c.chunks = 2;  // 1F1B with chunks
    CHECK(field_of(c) == "chunks");
    c.kind = PipelineScheduleKind::Interleaved;
    c.stages = 4;
    c.microbatches = 6;  // not a multiple of p
    CHECK(field_of(c) == "microbatches");
    c.microbatches = 8;
    c.chunks = 1;
    CHECK(field_of(c) == "chunks");
    c.chunks = 2;
    c.stages = 0;
    CHECK(field_of(c) == "stages");
    c.stages = 4;
    c.backward = 0;
    CHECK(field_of(c) == "backward");
    CHECK_THROWS_AS(pipeline_schedule_from_string("zb-h2"), InputError);
}

namespace {

PipelineSchedule run_split(PipelineScheduleKind kind, std::int64_t p, std::int64_t m, double f, double b, double w) {
    ScheduleConfig c;
    c.kind = kind;
    c.stages = p;
    c.microbatches = m;
    c.forward = f;
    c.backward = b;
    c.weight = w;
    return simulate_pipeline(c);
}

}  // namespace

TEST_CASE("ZB-H1 idles (p-1)(F+B-2W) per rank with 1F1B's p micro-batches in flight (Qi et al. 2024 sec. 2.1)",
          "[schedule]") {
    // Qi et al. write (p-1)(T_F+T_B-T_W) with T_B the input-gradient part; with T_F = T_B = T_W the bubble
    // is a third of 1F1B's, (p-1)/(3m) of the compute (sail-sg's comparison table).
    for (auto [p, m] : {std::pair{4, 8}, {2, 4}, {8, 32}, {8, 8}, {16, 64}}) {
        INFO("p=" << p << " m=" << m);
        const auto zb = run_split(PipelineScheduleKind::ZeroBubbleH1, p, m, 1, 2, 1);
        CHECK(zb.blocks.size() == static_cast<std::size_t>(3 * p * m));
        CHECK(zb.makespan - zb.busy_per_stage == Approx(double(p - 1) * (1 + 2 - 2 * 1)).epsilon(1e-12));
        CHECK(zb.bubble_ratio == Approx(double(p - 1) / (3 * m)).epsilon(1e-12));
        CHECK(zb.peak_in_flight == p);
        CHECK(zb.parameter_copies == 1);
    }
    // Unequal passes: the formula holds while W fits the holes, W <= F and W <= B - W (the paper's regime).
    for (auto [f, b, w] : {std::tuple{1.0, 2.2, 0.9}, {1.2, 2.0, 1.0}, {1.0, 2.0, 0.8}}) {
        INFO("F=" << f << " B=" << b << " W=" << w);
        ScheduleConfig c;
        c.kind = PipelineScheduleKind::ZeroBubbleH1;
        c.forward = f, c.backward = b, c.weight = w;
        const auto zb = simulate_pipeline(c);
        CHECK(zb.makespan - zb.busy_per_stage == Approx(pipeline_bubble_time(c)).epsilon(1e-9));
        CHECK(pipeline_bubble_time(c) == Approx(3 * (f + b - 2 * w)).epsilon(1e-12));
    }
    // A W longer than the forward no longer fits: the simulation idles more than the formula says.
    ScheduleConfig c;
    c.kind = PipelineScheduleKind::ZeroBubbleH1;
    c.forward = 0.8, c.backward = 2, c.weight = 1;
    const auto zb = simulate_pipeline(c);
    CHECK(zb.makespan - zb.busy_per_stage > pipeline_bubble_time(c) + 0.5);
}

TEST_CASE("DualPipe idles (p/2-1)(F&B+B-3W) with p+1 micro-batches and 2x the weights (DeepSeek-V3, DualPipe README)",
          "[schedule]") {
    // The README's example: 8 ranks, 20 micro-batches in two directions. F&B = F + B: the pair overlaps
    // communication with computation; the two computations still take their own time.
    for (auto [p, m] : {std::pair{8, 20}, {4, 8}, {4, 16}, {8, 16}, {2, 4}, {16, 64}}) {
        INFO("p=" << p << " m=" << m);
        const auto dp = run_split(PipelineScheduleKind::DualPipe, p, m, 1, 2, 1);
        std::int64_t forwards = 0, backwards = 0, paired = 0;
        for (const auto& b : dp.blocks) forwards += b.kind == 'F', backwards += b.kind == 'B', paired += b.pair >= 0;
        CHECK(forwards == p * m);  // every rank runs every micro-batch once: half each way
        CHECK(backwards == p * m);
        CHECK(paired > 0);
        CHECK(dp.makespan - dp.busy_per_stage == Approx((double(p) / 2 - 1) * ((1 + 2) + 2 - 3 * 1)).epsilon(1e-12));
        CHECK(dp.peak_in_flight == p + 1);
        CHECK(dp.parameter_copies == 2);
    }
}
