// Tests of engine/src/schedule.cpp: the simulated pipeline schedules reproduce the closed forms of
// Narayanan et al. 2021 (Megatron-LM, sec. 2.2) and the activation counts that follow from their warm-up.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <tuple>

#include "tally/error.h"
#include "tally/schedule.h"

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
    CHECK_THROWS_AS(pipeline_schedule_from_string("zb-h1"), InputError);
}
