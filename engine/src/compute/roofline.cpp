#include "tally/compute/roofline.h"

#include <algorithm>
#include <cmath>

#include "tally/base/error.h"

namespace tally::roofline {

namespace {

Traffic make(double flops, double bytes) { return {flops, bytes, flops / bytes}; }

std::string integer_text(double value) { return std::to_string(static_cast<long long>(value)); }

}  // namespace

Traffic kernel_traffic(gemm::Traffic walk, const gemm::Tiling& tiling, int m, int n, int k, double cache_bytes) {
    require_integer("m", m, 1, 1 << 20);
    require_integer("n", n, 1, 1 << 20);
    require_integer("k", k, 1, 1 << 20);
    require_positive("cache_bytes", cache_bytes);
    const double M = m, N = n, K = k;
    const double flops = 2 * M * N * K;
    if (walk == gemm::Traffic::Unblocked) {
        const double b_bytes = 4 * K * N <= cache_bytes ? 4 * K * N : 4 * M * K * N;
        return make(flops, 4 * M * K + b_bytes + 4 * M * N);
    }
    const gemm::Tiling& t = tiling;
    const double a_reads = std::ceil(N / std::min(N, double(t.nc)));
    const double c_passes = std::ceil(K / std::min(K, double(t.kc)));
    return make(flops, 4 * M * K * a_reads + 4 * K * N + 8 * M * N * c_passes);
}

Traffic matmul_min_traffic(double m, double n, double k, double element_bytes) {
    return make(2 * m * n * k, element_bytes * (m * k + k * n + m * n));
}

Traffic matmul_min_traffic(double m, double n, double k, double in_bytes, double out_bytes) {
    return make(2 * m * n * k, (m * k + k * n) * in_bytes + m * n * out_bytes);
}

std::vector<Op> named_ops(const OpsConfig& c) {
    require_positive("element_bytes", c.element_bytes);
    require_integer("seq", c.seq, 1, kMaxOpsSeq);
    require_integer("d_model", c.d_model, 1, 1 << 20);
    require_integer("heads", c.heads, 1, c.d_model);
    if (c.d_model % c.heads != 0)
        throw InputError("heads",
                         "heads must divide d_model (" + integer_text(c.d_model) + "), got " + integer_text(c.heads));
    const double e = c.element_bytes, s = c.seq, d = c.d_model, h = c.heads;
    const double elems = s * d;
    std::vector<Op> ops;
    auto add = [&](std::string id, std::string name, std::string group, double flops, double bytes, std::string model) {
        ops.push_back(
            {std::move(id), std::move(name), std::move(group), flops, bytes, flops / bytes, std::move(model)});
    };
    for (double n : {256.0, 1024.0, 4096.0, 16384.0}) {
        const Traffic t = matmul_min_traffic(n, n, n, e);
        add("matmul-" + integer_text(n), "square matmul, n = " + integer_text(n), "matmul", t.flops, t.bytes,
            "2n^3 FLOPs; A, B and C each moved once: 3 n^2 elements (I = 2n / (3 x bytes per element))");
    }
    add("matvec", "matrix-vector (batch-1 decoding), " + integer_text(d) + " x " + integer_text(d), "matvec", 2 * d * d,
        e * (d * d + 2 * d), "2d^2 FLOPs; the d x d weights, the input and the output vector moved once");
    add("add", "elementwise add (residual)", "elementwise", elems, 3 * e * elems,
        "1 FLOP per element; two inputs read and one output written");
    add("gelu", "GELU (tanh approximation)", "elementwise", 9 * elems, 2 * e * elems,
        "9 FLOPs per element (x^3: 2, x 0.044715: 1, + x: 1, x sqrt(2/pi): 1, tanh counted as 1, + 1: 1, "
        "x x: 1, x 0.5: 1); one read, one write");
    add("layernorm", "LayerNorm over rows of d", "normalization", 7 * elems, 2 * e * elems,
        "7 FLOPs per element (mean: 1, centre: 1, square and sum: 2, scale by 1/std: 1, gamma: 1, beta: 1); "
        "one read, one write, each row kept in cache between passes");
    add("softmax", "softmax over rows of d", "normalization", 5 * elems, 2 * e * elems,
        "5 FLOPs per element (max: 1, subtract: 1, exp counted as 1, sum: 1, divide: 1); one read, one write");
    // Attention of one layer at sequence s: QK^T and PV are 2 s^2 d FLOPs each, softmax 5 s^2 h.
    const double attn_flops = 4 * s * s * d + 5 * s * s * h;
    add("attention-unfused", "attention, s = " + integer_text(s) + ", scores materialized", "attention", attn_flops,
        e * (4 * s * d + 4 * h * s * s),
        "QK^T, softmax, PV as three kernels: Q, K, V read and O written (4 s d elements) plus the h s^2 "
        "scores written, read, written as probabilities and read again (4 h s^2)");
    const double blocks = std::ceil(s / c.flash_block);
    add("attention-fused", "attention, s = " + integer_text(s) + ", fused (FlashAttention)", "attention", attn_flops,
        e * (2 * s * d + 2 * s * d * blocks),
        "one fused kernel: Q read and O written once, K and V re-read once per block of " +
            integer_text(c.flash_block) +
            " queries (Dao et al. 2022, FlashAttention, Algorithm 1); the scores never leave on-chip memory");
    return ops;
}

double attainable(double intensity, double peak_flops_per_s, double bandwidth_bytes_per_s) {
    return std::min(peak_flops_per_s, intensity * bandwidth_bytes_per_s);
}

double ridge(double peak_flops_per_s, double bandwidth_bytes_per_s) { return peak_flops_per_s / bandwidth_bytes_per_s; }

Bound bound(double intensity, double peak_flops_per_s, double bandwidth_bytes_per_s) {
    return intensity * bandwidth_bytes_per_s < peak_flops_per_s ? Bound::Memory : Bound::Compute;
}

const char* to_string(Bound b) { return b == Bound::Memory ? "memory" : "compute"; }

}  // namespace tally::roofline
