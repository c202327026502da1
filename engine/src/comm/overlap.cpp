#include "tally/comm/overlap.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <utility>

#include "tally/base/error.h"
#include "tally/base/names.h"
#include "tally/base/input.h"

namespace tally::overlap {

namespace {

namespace co = collectives;

constexpr int kCompute = 0;
constexpr int kComm = 1;

// An op's dependencies: at most two in every scheme (the previous op on its lane is implied), kept inline so that
// laying out a timeline allocates nothing per op (step time lays one out per ZeRO-3 layout the planner tries).
struct Deps {
    std::size_t ids[2] = {0, 0};
    std::size_t count = 0;
    Deps() = default;
    Deps(std::initializer_list<std::size_t> list) {
        for (const std::size_t id : list) push_back(id);
    }
    void push_back(std::size_t id) {
        if (count == 2) throw std::logic_error("overlap: an op depends on at most two others");
        ids[count++] = id;
    }
    const std::size_t* begin() const { return ids; }
    const std::size_t* end() const { return ids + count; }
};

struct Pending {
    int lane = kCompute;
    std::string kind;
    std::int64_t layer = 0;
    double seconds = 0;
    Deps deps;  // ops that must end first (any lane)
};

// Each lane runs its ops in the order they were added (a CUDA stream); an op starts when its lane is free and
// every op it depends on has ended (an event wait across streams).
class Builder {
public:
    void reserve(std::size_t ops) {
        ops_.reserve(ops);
        order_[0].reserve(ops);
        order_[1].reserve(ops);
    }

    std::size_t add(int lane, std::string kind, std::int64_t layer, double seconds, Deps deps) {
        ops_.push_back({lane, std::move(kind), layer, seconds, std::move(deps)});
        order_[lane].push_back(ops_.size() - 1);
        return ops_.size() - 1;
    }

    Timeline run() const {
        std::vector<double> end(ops_.size(), -1);
        std::vector<Op> placed(ops_.size());
        std::size_t head[2] = {0, 0};
        double free_at[2] = {0, 0};
        std::size_t done = 0;
        while (done < ops_.size()) {
            bool progressed = false;
            for (int lane = 0; lane < 2; ++lane) {
                while (head[lane] < order_[lane].size()) {
                    const std::size_t id = order_[lane][head[lane]];
                    const Pending& p = ops_[id];
                    double ready = free_at[lane];
                    bool blocked = false;
                    for (const std::size_t dep : p.deps) {
                        if (end[dep] < 0) blocked = true;
                        ready = std::max(ready, end[dep]);
                    }
                    if (blocked) break;
                    end[id] = ready + p.seconds;
                    free_at[lane] = end[id];
                    placed[id] = {lane == kCompute ? "compute" : "comm", p.kind, p.layer, ready, end[id]};
                    ++head[lane];
                    ++done;
                    progressed = true;
                }
            }
            // Dependencies only point to ops added earlier, so one lane can always move.
            if (!progressed) throw std::logic_error("overlap: the two lanes wait on each other");
        }
        Timeline t;
        t.ops = std::move(placed);
        for (const Op& op : t.ops) {
            t.step_seconds = std::max(t.step_seconds, op.end);
            (op.lane == "compute" ? t.compute_seconds : t.comm_seconds) += op.end - op.start;
            if (op.lane == "comm") ++t.collectives;
        }
        t.exposed_comm_seconds = t.step_seconds - t.compute_seconds;
        t.hidden_comm_seconds = std::max(0.0, t.comm_seconds - t.exposed_comm_seconds);
        return t;
    }

private:
    std::vector<Pending> ops_;
    std::vector<std::size_t> order_[2];
};

double seconds_of(co::Kind kind, double bytes, const Input& in) {
    return co::cost(kind, co::Algorithm::Ring, bytes, in.placement, in.links).seconds;
}

void check(const Input& in) {
    require_range("layers", in.layers, 1, 1024);
    require_in_left_open("forward_seconds", in.forward_seconds, 0, 1e4);
    require_in_left_open("backward_seconds", in.backward_seconds, 0, 1e4);
    if (!(in.layer_bytes >= 1 && in.layer_bytes <= 1e15))
        throw InputError("layer_bytes",
                         "layer_bytes must be from 1 to 1e15 bytes, got " + format_number(in.layer_bytes));
    if (!(in.bucket_bytes >= 1 && in.bucket_bytes <= 1e15))
        throw InputError("bucket_bytes",
                         "bucket_bytes must be from 1 to 1e15 bytes, got " + format_number(in.bucket_bytes));
    require_range("chunks", in.chunks, 1, 64);
    // One op per bucket: keep the layout small enough to draw and to compute at once.
    if (in.scheme == Scheme::Ddp && static_cast<double>(in.layers) * in.layer_bytes / in.bucket_bytes > 100000)
        throw InputError("bucket_bytes",
                         "bucket_bytes must leave at most 100000 buckets (layers x layer_bytes / "
                         "bucket_bytes), got " +
                             format_number(in.bucket_bytes));
}

// Forward F_0..F_{L-1}, then backward B_{L-1}..B_0. A layer's backward produces its gradients evenly over its
// time, so the backward is cut where a bucket fills; the full bucket is all-reduced from that moment (without
// overlap, every bucket waits for the last backward, as Megatron-LM's reduction after backward does).
Timeline ddp(const Input& in) {
    Builder b;
    std::size_t last = 0;
    for (std::int64_t i = 0; i < in.layers; ++i)
        last = b.add(kCompute, "forward", i, in.forward_seconds, i > 0 ? Deps{last} : Deps{});
    std::vector<std::pair<double, std::size_t>> buckets;  // bytes, the backward piece that fills it
    double filled = 0;
    for (std::int64_t i = in.layers - 1; i >= 0; --i) {
        double remaining = in.layer_bytes;
        while (filled + remaining >= in.bucket_bytes) {
            const double need = in.bucket_bytes - filled;
            last = b.add(kCompute, "backward", i, in.backward_seconds * need / in.layer_bytes, {last});
            buckets.emplace_back(in.bucket_bytes, last);
            if (in.overlap)
                b.add(kComm, "all_reduce", static_cast<std::int64_t>(buckets.size() - 1),
                      seconds_of(co::Kind::AllReduce, in.bucket_bytes, in), {last});
            remaining -= need;
            filled = 0;
        }
        if (remaining > 0) {
            last = b.add(kCompute, "backward", i, in.backward_seconds * remaining / in.layer_bytes, {last});
            filled += remaining;
        }
    }
    if (filled >= 1) {
        buckets.emplace_back(filled, last);
        if (in.overlap)
            b.add(kComm, "all_reduce", static_cast<std::int64_t>(buckets.size() - 1),
                  seconds_of(co::Kind::AllReduce, filled, in), {last});
    }
    if (!in.overlap)
        for (std::size_t k = 0; k < buckets.size(); ++k)
            b.add(kComm, "all_reduce", static_cast<std::int64_t>(k),
                  seconds_of(co::Kind::AllReduce, buckets[k].first, in), {last});
    Timeline t = b.run();
    t.collective_seconds =
        seconds_of(co::Kind::AllReduce, std::min(in.bucket_bytes, static_cast<double>(in.layers) * in.layer_bytes), in);
    return t;
}

// ZeRO-3 / FSDP: all-gather a layer's weights before its forward and again before its backward, reduce-scatter
// its gradients after. With prefetch the next gather is issued as soon as the current one ends (forward) or
// before the current reduce-scatter (backward, FSDP's BACKWARD_PRE), at most one layer ahead; without it, each
// gather waits for the previous layer's compute.
Timeline fsdp(const Input& in) {
    Builder b;
    const double gather =
        in.gather_seconds > 0 ? in.gather_seconds : seconds_of(co::Kind::AllGather, in.layer_bytes, in);
    const double scatter =
        in.scatter_seconds > 0 ? in.scatter_seconds : seconds_of(co::Kind::ReduceScatter, in.layer_bytes, in);
    const auto L = static_cast<std::size_t>(in.layers);
    b.reserve(5 * L);  // a gather, a forward, a backward, a re-gather and a reduce-scatter per layer
    std::vector<std::size_t> fwd(L), gat(L), bwd(L), regat(L);
    // Forward. Gather i+1 may start once layer i-1's forward ended (two layers' weights in memory at most).
    for (std::size_t i = 0; i < L; ++i) {
        Deps deps;
        if (in.overlap) {
            if (i >= 2) deps.push_back(fwd[i - 2]);
        } else if (i >= 1) {
            deps.push_back(fwd[i - 1]);
        }
        gat[i] = b.add(kComm, "all_gather", static_cast<std::int64_t>(i), gather, deps);
        Deps fdeps{gat[i]};
        if (i >= 1) fdeps.push_back(fwd[i - 1]);
        fwd[i] = b.add(kCompute, "forward", static_cast<std::int64_t>(i), in.forward_seconds, fdeps);
    }
    // Backward, last layer first: gather, backward, reduce-scatter.
    for (std::size_t r = 0; r < L; ++r) {
        const std::size_t i = L - 1 - r;
        if (!in.overlap || r == 0) {
            // With prefetch the first backward gather overlaps the last forward (layer L-2's weights are freed).
            const std::size_t after = r > 0 ? bwd[i + 1] : (in.overlap && L >= 2 ? fwd[L - 2] : fwd[L - 1]);
            regat[i] = b.add(kComm, "all_gather", static_cast<std::int64_t>(i), gather, {after});
        }
        bwd[i] = b.add(kCompute, "backward", static_cast<std::int64_t>(i), in.backward_seconds,
                       r == 0 ? Deps{regat[i], fwd[L - 1]} : Deps{regat[i], bwd[i + 1]});
        if (in.overlap && i >= 1) {
            // Prefetch: layer i-1's gather is issued before layer i's reduce-scatter (needs layer i+1 freed).
            const std::size_t freed = r >= 1 ? bwd[i + 1] : fwd[L - 1];
            regat[i - 1] = b.add(kComm, "all_gather", static_cast<std::int64_t>(i - 1), gather, {freed});
        }
        b.add(kComm, "reduce_scatter", static_cast<std::int64_t>(i), scatter, {bwd[i]});
    }
    Timeline t = b.run();
    t.collective_seconds = gather;
    return t;
}

// Tensor parallelism: each layer's input must be gathered before its matmul, and the next layer needs this one's
// output. Without overlap: gather, then compute. Collective matmul: the gather and the matmul are cut into
// `chunks` pieces; piece j computes while piece j+1 moves, so only the first piece's transfer is exposed when
// the link keeps up.
Timeline tp(const Input& in) {
    Builder b;
    const std::int64_t pieces = in.overlap ? in.chunks : 1;
    const double piece_bytes = in.layer_bytes / static_cast<double>(pieces);
    const double piece_comm = seconds_of(co::Kind::AllGather, piece_bytes, in);
    bool any = false;
    std::size_t last = 0;
    const auto pass = [&](const char* kind, double seconds, std::int64_t layer) {
        std::vector<std::size_t> comm(static_cast<std::size_t>(pieces));
        for (std::int64_t j = 0; j < pieces; ++j)
            comm[static_cast<std::size_t>(j)] =
                b.add(kComm, "all_gather", layer, piece_comm, any ? Deps{last} : Deps{});
        for (std::int64_t j = 0; j < pieces; ++j) {
            Deps deps{comm[static_cast<std::size_t>(j)]};
            if (any) deps.push_back(last);
            last = b.add(kCompute, kind, layer, seconds / static_cast<double>(pieces), deps);
            any = true;
        }
    };
    for (std::int64_t i = 0; i < in.layers; ++i) pass("forward", in.forward_seconds, i);
    for (std::int64_t i = in.layers - 1; i >= 0; --i) pass("backward", in.backward_seconds, i);
    Timeline t = b.run();
    t.collective_seconds = seconds_of(co::Kind::AllGather, in.layer_bytes, in);
    return t;
}

constexpr Named<Scheme> kSchemeNames[] = {{Scheme::Ddp, "ddp"}, {Scheme::Fsdp, "fsdp"}, {Scheme::Tp, "tp"}};

}  // namespace

Scheme scheme_from_string(const std::string& text) {
    if (const auto scheme = value_named(kSchemeNames, text)) return *scheme;
    throw InputError("scheme", "scheme must be one of ddp, fsdp, tp, got \"" + printable(text, 40) + "\"");
}

const char* to_string(Scheme scheme) { return name_of(kSchemeNames, scheme, "ddp"); }

Timeline lay_out(const Input& in) {
    check(in);
    switch (in.scheme) {
        case Scheme::Ddp: return ddp(in);
        case Scheme::Fsdp: return fsdp(in);
        case Scheme::Tp: return tp(in);
    }
    return ddp(in);
}

}  // namespace tally::overlap
