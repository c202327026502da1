/*
Activation memory of one transformer layer, measured: a GPT-2 block (LayerNorm, causal
self-attention, LayerNorm, GELU MLP, residuals; fp32, no dropout) runs forward and backward on the
device, keeping for the backward pass exactly the tensors it reads there, each in its own
cudaMalloc. The bytes alive between forward and backward (counted exactly, and as the drop in
cudaMemGetInfo) are compared with the engine's per-layer activation bytes (Korthikanti et al. 2022,
"Reducing Activation Recomputation in Large Transformer Models", sec. 4.1, generalised by the engine
to 4-byte activations and no dropout: 4 sbh (16 + a s / h)). The forward output and every gradient
are checked against a CPU reference, which the host self-test checks against finite differences,
so the stored set is shown to be sufficient for a correct backward pass.

Dimensions: B = micro-batch, T = sequence length, C = channels, NH = heads, hs = C / NH.
GPT-2 small's layer: C = 768, NH = 12 (Radford et al. 2019).

Build: part of the normal CMake build when nvcc is found, or scripts/bench/verify-gpu.sh.
Run:
  ./layer_activations                  check at B=2, T=256; measure at B=4, T=1024
  ./layer_activations --batch 8 --seq 2048 --json out.json
  ./layer_activations --quick          check at B=1, T=64; measure at B=2, T=256
  ./layer_activations --self-test      host only: gradient check, stash plan vs the engine
Without a CUDA device it prints "no CUDA device: skipped" and exits 0.
*/
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "common.cuh"
#include "engine_bridge.h"

#include "cublas_check.cuh"

struct Dims {
    int B, T, C, NH;
};

// parameters of one block; weights are row-major (in, out): out[n, o] = b[o] + sum_i inp[n, i] w[i, o]
enum ParamId { LN1W, LN1B, QKVW, QKVB, ATTW, ATTB, LN2W, LN2B, FCW, FCB, PRJW, PRJB, kParams };
static const char* kParamNames[kParams] = {"ln1w", "ln1b", "qkvw", "qkvb", "attw", "attb",
                                           "ln2w", "ln2b", "fcw",  "fcb",  "prjw", "prjb"};
static size_t param_size(Dims d, int i) {
    const size_t C = d.C;
    const size_t sizes[kParams] = {C, C, C * 3 * C, 3 * C, C * C, C, C, C, C * 4 * C, 4 * C, 4 * C * C, C};
    return sizes[i];
}

// the stash: what the forward pass keeps for the backward pass, one tensor per line, with the
// engine's activation term it corresponds to
enum StashId { X, LN1, QKV, ATT, Y, X2, LN2, H, G, LN1_MEAN, LN1_RSTD, LN2_MEAN, LN2_RSTD, kStash };
static const char* kStashNames[kStash] = {"x", "ln1", "qkv",      "att",      "y",        "x2",      "ln2",
                                          "h", "g",   "ln1_mean", "ln1_rstd", "ln2_mean", "ln2_rstd"};
static size_t stash_size(Dims d, int i) {
    const size_t BT = (size_t)d.B * d.T, C = d.C;
    switch (i) {
        case X: return BT * C;                            // (B, T, C)  attn_norm_input
        case LN1: return BT * C;                          // (B, T, C)  qkv_input
        case QKV: return BT * 3 * C;                      // (B, T, 3C) q, k, v
        case ATT: return (size_t)d.B * d.NH * d.T * d.T;  // (B, NH, T, T) softmax_output
        case Y: return BT * C;                            // (B, T, C)  attn_out_input
        case X2: return BT * C;                           // (B, T, C)  mlp_norm_input
        case LN2: return BT * C;                          // (B, T, C)  mlp_input
        case H: return BT * 4 * C;                        // (B, T, 4C) mlp_act_input
        case G: return BT * 4 * C;                        // (B, T, 4C) mlp_down_input
        default: return BT;                               // (B, T)     LayerNorm mean and 1/std: not in the formula
    }
}
// Stash bytes the engine's formula counts (everything but the LayerNorm statistics), fp32.
static uint64_t stash_formula_bytes(Dims d) {
    uint64_t s = 0;
    for (int i = X; i <= G; i++) s += stash_size(d, i) * sizeof(float);
    return s;
}
static uint64_t stash_stats_bytes(Dims d) {
    uint64_t s = 0;
    for (int i = LN1_MEAN; i < kStash; i++) s += stash_size(d, i) * sizeof(float);
    return s;
}

// ----------------------------------------------------------------------------
// CPU code reference (templated so the self-test can run it in double for a gradient check)

template <class R>
R gelu_ref(R x) {
    const R s = std::sqrt(R(2) / R(M_PI));
    return R(0.5) * x * (R(1) + std::tanh(s * (x + R(0.044715) * x * x * x)));
}
template <class R>
R gelu_grad_ref(R x) {
    const R s = std::sqrt(R(2) / R(M_PI));
    R arg = s * (x + R(0.044715) * x * x * x);
    R th = std::tanh(arg), ch = std::cosh(arg);
    return R(0.5) * (R(1) + th) + x * R(0.5) * (R(1) / (ch * ch)) * s * (R(1) + R(3) * R(0.044715) * x * x);
}

template <class R>
struct LayerCPU {
    Dims d;
    std::vector<R> p[kParams], dp[kParams], s[kStash];
    std::vector<R> out, dx;

    explicit LayerCPU(Dims dims) : d(dims) {
        for (int i = 0; i < kParams; i++) p[i].assign(param_size(d, i), 0), dp[i].assign(param_size(d, i), 0);
        for (int i = 0; i < kStash; i++) s[i].assign(stash_size(d, i), 0);
    }

    static void layernorm_forward(R* out, R* mean, R* rstd, const R* inp, const R* w, const R* b, int N, int C) {
        for (int n = 0; n < N; n++) {
            const R* x = inp + (size_t)n * C;
            R m = 0, v = 0;
            for (int i = 0; i < C; i++) m += x[i];
            m /= C;
            for (int i = 0; i < C; i++) v += (x[i] - m) * (x[i] - m);
            v /= C;
            R rs = R(1) / std::sqrt(v + R(1e-5));
            for (int i = 0; i < C; i++) out[(size_t)n * C + i] = (x[i] - m) * rs * w[i] + b[i];
            mean[n] = m, rstd[n] = rs;
        }
    }
    // accumulates into dinp, dw, db
    static void layernorm_backward(R* dinp, R* dw, R* db, const R* dout, const R* inp, const R* w, const R* mean,
                                   const R* rstd, int N, int C) {
        for (int n = 0; n < N; n++) {
            const R* x = inp + (size_t)n * C;
            const R* g = dout + (size_t)n * C;
            R dnorm_mean = 0, dnorm_norm_mean = 0;
            for (int i = 0; i < C; i++) {
                R norm = (x[i] - mean[n]) * rstd[n];
                dnorm_mean += w[i] * g[i];
                dnorm_norm_mean += w[i] * g[i] * norm;
            }
            dnorm_mean /= C, dnorm_norm_mean /= C;
            for (int i = 0; i < C; i++) {
                R norm = (x[i] - mean[n]) * rstd[n];
                db[i] += g[i];
                dw[i] += norm * g[i];
                dinp[(size_t)n * C + i] += (w[i] * g[i] - dnorm_mean - norm * dnorm_norm_mean) * rstd[n];
            }
        }
    }
    static void matmul_forward(R* out, const R* inp, const R* w, const R* b, int N, int I, int O) {
        for (int n = 0; n < N; n++) {  // i outside o: rows of w are contiguous
            R* row = out + (size_t)n * O;
            for (int o = 0; o < O; o++) row[o] = b[o];
            for (int i = 0; i < I; i++) {
                R a = inp[(size_t)n * I + i];
                for (int o = 0; o < O; o++) row[o] += a * w[(size_t)i * O + o];
            }
        }
    }
    // sets dinp, accumulates dw and db
    static void matmul_backward(R* dinp, R* dw, R* db, const R* dout, const R* inp, const R* w, int N, int I, int O) {
        for (int n = 0; n < N; n++)
            for (int i = 0; i < I; i++) {
                R acc = 0;
                for (int o = 0; o < O; o++) acc += dout[(size_t)n * O + o] * w[(size_t)i * O + o];
                dinp[(size_t)n * I + i] = acc;
            }
        for (int i = 0; i < I; i++)
            for (int n = 0; n < N; n++) {
                R a = inp[(size_t)n * I + i];
                for (int o = 0; o < O; o++) dw[(size_t)i * O + o] += a * dout[(size_t)n * O + o];
            }
        for (int n = 0; n < N; n++)
            for (int o = 0; o < O; o++) db[o] += dout[(size_t)n * O + o];
    }
    void attention_forward(R* y, R* att, const R* qkv) const {
        const int B = d.B, T = d.T, C = d.C, NH = d.NH, hs = C / NH;
        const R scale = R(1) / std::sqrt(R(hs));
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T; t++)
                for (int h = 0; h < NH; h++) {
                    const R* q = qkv + ((size_t)b * T + t) * 3 * C + h * hs;
                    R* a = att + (((size_t)b * NH + h) * T + t) * T;
                    R maxv = -INFINITY;
                    for (int t2 = 0; t2 <= t; t2++) {
                        const R* k = qkv + ((size_t)b * T + t2) * 3 * C + C + h * hs;
                        R dot = 0;
                        for (int i = 0; i < hs; i++) dot += q[i] * k[i];
                        a[t2] = dot * scale;
                        maxv = std::max(maxv, a[t2]);
                    }
                    R sum = 0;
                    for (int t2 = 0; t2 <= t; t2++) sum += (a[t2] = std::exp(a[t2] - maxv));
                    for (int t2 = 0; t2 < T; t2++) a[t2] = t2 <= t ? a[t2] / sum : R(0);
                    R* yo = y + ((size_t)b * T + t) * C + h * hs;
                    for (int i = 0; i < hs; i++) {
                        R acc = 0;
                        for (int t2 = 0; t2 <= t; t2++)
                            acc += a[t2] * qkv[((size_t)b * T + t2) * 3 * C + 2 * C + h * hs + i];
                        yo[i] = acc;
                    }
                }
    }
    // sets dqkv
    void attention_backward(R* dqkv, const R* dy, const R* qkv, const R* att) const {
        const int B = d.B, T = d.T, C = d.C, NH = d.NH, hs = C / NH;
        const R scale = R(1) / std::sqrt(R(hs));
        std::fill(dqkv, dqkv + (size_t)B * T * 3 * C, R(0));
        std::vector<R> datt(T);
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T; t++)
                for (int h = 0; h < NH; h++) {
                    const R* a = att + (((size_t)b * NH + h) * T + t) * T;
                    const R* g = dy + ((size_t)b * T + t) * C + h * hs;
                    const R* q = qkv + ((size_t)b * T + t) * 3 * C + h * hs;
                    R* dq = dqkv + ((size_t)b * T + t) * 3 * C + h * hs;
                    R dot = 0;
                    for (int t2 = 0; t2 <= t; t2++) {
                        const R* v = qkv + ((size_t)b * T + t2) * 3 * C + 2 * C + h * hs;
                        R* dv = dqkv + ((size_t)b * T + t2) * 3 * C + 2 * C + h * hs;
                        R acc = 0;
                        for (int i = 0; i < hs; i++) acc += g[i] * v[i], dv[i] += a[t2] * g[i];
                        datt[t2] = acc;
                        dot += a[t2] * acc;
                    }
                    for (int t2 = 0; t2 <= t; t2++) {
                        R dpre = a[t2] * (datt[t2] - dot) * scale;
                        const R* k = qkv + ((size_t)b * T + t2) * 3 * C + C + h * hs;
                        R* dk = dqkv + ((size_t)b * T + t2) * 3 * C + C + h * hs;
                        for (int i = 0; i < hs; i++) dq[i] += dpre * k[i], dk[i] += dpre * q[i];
                    }
                }
    }

    void forward() {
        const int N = d.B * d.T, C = d.C;
        out.assign((size_t)N * C, 0);
        std::vector<R> tmp((size_t)N * C);
        layernorm_forward(s[LN1].data(), s[LN1_MEAN].data(), s[LN1_RSTD].data(), s[X].data(), p[LN1W].data(),
                          p[LN1B].data(), N, C);
        matmul_forward(s[QKV].data(), s[LN1].data(), p[QKVW].data(), p[QKVB].data(), N, C, 3 * C);
        attention_forward(s[Y].data(), s[ATT].data(), s[QKV].data());
        matmul_forward(tmp.data(), s[Y].data(), p[ATTW].data(), p[ATTB].data(), N, C, C);
        for (size_t i = 0; i < tmp.size(); i++) s[X2][i] = s[X][i] + tmp[i];
        layernorm_forward(s[LN2].data(), s[LN2_MEAN].data(), s[LN2_RSTD].data(), s[X2].data(), p[LN2W].data(),
                          p[LN2B].data(), N, C);
        matmul_forward(s[H].data(), s[LN2].data(), p[FCW].data(), p[FCB].data(), N, C, 4 * C);
        for (size_t i = 0; i < s[H].size(); i++) s[G][i] = gelu_ref(s[H][i]);
        matmul_forward(tmp.data(), s[G].data(), p[PRJW].data(), p[PRJB].data(), N, 4 * C, C);
        for (size_t i = 0; i < tmp.size(); i++) out[i] = s[X2][i] + tmp[i];
    }
    // gradients of sum(out * dout) into dx and dp (dp accumulates: zero it first)
    void backward(const std::vector<R>& dout) {
        const int N = d.B * d.T, C = d.C;
        std::vector<R> dx2(dout), dg((size_t)N * 4 * C), dln2((size_t)N * C), dy((size_t)N * C),
            dqkv((size_t)N * 3 * C), dln1((size_t)N * C);
        matmul_backward(dg.data(), dp[PRJW].data(), dp[PRJB].data(), dout.data(), s[G].data(), p[PRJW].data(), N, 4 * C,
                        C);
        for (size_t i = 0; i < dg.size(); i++) dg[i] *= gelu_grad_ref(s[H][i]);
        matmul_backward(dln2.data(), dp[FCW].data(), dp[FCB].data(), dg.data(), s[LN2].data(), p[FCW].data(), N, C,
                        4 * C);
        layernorm_backward(dx2.data(), dp[LN2W].data(), dp[LN2B].data(), dln2.data(), s[X2].data(), p[LN2W].data(),
                           s[LN2_MEAN].data(), s[LN2_RSTD].data(), N, C);
        matmul_backward(dy.data(), dp[ATTW].data(), dp[ATTB].data(), dx2.data(), s[Y].data(), p[ATTW].data(), N, C, C);
        attention_backward(dqkv.data(), dy.data(), s[QKV].data(), s[ATT].data());
        matmul_backward(dln1.data(), dp[QKVW].data(), dp[QKVB].data(), dqkv.data(), s[LN1].data(), p[QKVW].data(), N, C,
                        3 * C);
        dx = dx2;
        layernorm_backward(dx.data(), dp[LN1W].data(), dp[LN1B].data(), dln1.data(), s[X].data(), p[LN1W].data(),
                           s[LN1_MEAN].data(), s[LN1_RSTD].data(), N, C);
    }
};

// deterministic parameters and inputs, GPT-2-like scales (weights ~ 0.02, LayerNorm weight ~ 1)
template <class R>
static void init_layer(LayerCPU<R>* L, std::vector<R>* dout, uint64_t seed) {
    Rng rng(seed);
    for (int i = 0; i < kParams; i++) {
        bool ln_w = i == LN1W || i == LN2W;
        for (auto& v : L->p[i]) v = ln_w ? R(1) + R(0.1) * R(rng.next_signed()) : R(0.04) * R(rng.next_signed());
    }
    for (auto& v : L->s[X]) v = R(rng.next_signed());
    dout->resize(L->s[X].size());
    for (auto& v : *dout) v = R(rng.next_signed());
}

// ----------------------------------------------------------------------------
// GPU kernels

__device__ inline float gelu_dev(float x) {
    const float s = 0.7978845608028654f;  // sqrt(2/pi)
    return 0.5f * x * (1.f + tanhf(s * (x + 0.044715f * x * x * x)));
}
__device__ inline float gelu_grad_dev(float x) {
    const float s = 0.7978845608028654f;
    float arg = s * (x + 0.044715f * x * x * x);
    float th = tanhf(arg), ch = coshf(arg);
    return 0.5f * (1.f + th) + x * 0.5f * (1.f / (ch * ch)) * s * (1.f + 3.f * 0.044715f * x * x);
}

// one thread per row: simple on purpose (this program measures memory, not speed)
__global__ void layernorm_forward_kernel(float* out, float* mean, float* rstd, const float* inp, const float* w,
                                         const float* b, int N, int C) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= N) return;
    const float* x = inp + (size_t)n * C;
    float m = 0.f, v = 0.f;
    for (int i = 0; i < C; i++) m += x[i];
    m /= C;
    for (int i = 0; i < C; i++) v += (x[i] - m) * (x[i] - m);
    v /= C;
    float rs = rsqrtf(v + 1e-5f);
    for (int i = 0; i < C; i++) out[(size_t)n * C + i] = (x[i] - m) * rs * w[i] + b[i];
    mean[n] = m, rstd[n] = rs;
}
__global__ void layernorm_backward_kernel(float* dinp, float* dw, float* db, const float* dout, const float* inp,
                                          const float* w, const float* mean, const float* rstd, int N, int C) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= N) return;
    const float* x = inp + (size_t)n * C;
    const float* g = dout + (size_t)n * C;
    float dnorm_mean = 0.f, dnorm_norm_mean = 0.f;
    for (int i = 0; i < C; i++) {
        float norm = (x[i] - mean[n]) * rstd[n];
        dnorm_mean += w[i] * g[i];
        dnorm_norm_mean += w[i] * g[i] * norm;
    }
    dnorm_mean /= C, dnorm_norm_mean /= C;
    for (int i = 0; i < C; i++) {
        float norm = (x[i] - mean[n]) * rstd[n];
        atomicAdd(&db[i], g[i]);
        atomicAdd(&dw[i], norm * g[i]);
        dinp[(size_t)n * C + i] += (w[i] * g[i] - dnorm_mean - norm * dnorm_norm_mean) * rstd[n];
    }
}
__global__ void add_bias_kernel(float* out, const float* b, int N, int O) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < (size_t)N * O) out[i] += b[i % O];
}
__global__ void bias_grad_kernel(float* db, const float* dout, int N, int O) {
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= O) return;
    float acc = 0.f;
    for (int n = 0; n < N; n++) acc += dout[(size_t)n * O + o];
    db[o] += acc;
}
__global__ void residual_kernel(float* out, const float* a, const float* b, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
__global__ void gelu_forward_kernel(float* out, const float* inp, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = gelu_dev(inp[i]);
}
__global__ void gelu_backward_kernel(float* dinout, const float* inp, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) dinout[i] *= gelu_grad_dev(inp[i]);
}
// one thread per (b, h, t) query row: causal softmax(q k^T / sqrt(hs)) and att @ v
__global__ void attention_forward_kernel(float* y, float* att, const float* qkv, int B, int T, int C, int NH) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= B * NH * T) return;
    const int t = idx % T, h = (idx / T) % NH, b = idx / (T * NH), hs = C / NH;
    const float scale = rsqrtf((float)hs);
    const float* q = qkv + ((size_t)b * T + t) * 3 * C + h * hs;
    float* a = att + (((size_t)b * NH + h) * T + t) * T;
    float maxv = -INFINITY;
    for (int t2 = 0; t2 <= t; t2++) {
        const float* k = qkv + ((size_t)b * T + t2) * 3 * C + C + h * hs;
        float dot = 0.f;
        for (int i = 0; i < hs; i++) dot += q[i] * k[i];
        a[t2] = dot * scale;
        maxv = fmaxf(maxv, a[t2]);
    }
    float sum = 0.f;
    for (int t2 = 0; t2 <= t; t2++) sum += (a[t2] = expf(a[t2] - maxv));
    for (int t2 = 0; t2 < T; t2++) a[t2] = t2 <= t ? a[t2] / sum : 0.f;
    float* yo = y + ((size_t)b * T + t) * C + h * hs;
    for (int i = 0; i < hs; i++) {
        float acc = 0.f;
        for (int t2 = 0; t2 <= t; t2++) acc += a[t2] * qkv[((size_t)b * T + t2) * 3 * C + 2 * C + h * hs + i];
        yo[i] = acc;
    }
}
// one thread per (b, h, t); dqkv must be zero; dk and dv rows are shared between queries: atomics
__global__ void attention_backward_kernel(float* dqkv, const float* dy, const float* qkv, const float* att, int B,
                                          int T, int C, int NH) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= B * NH * T) return;
    const int t = idx % T, h = (idx / T) % NH, b = idx / (T * NH), hs = C / NH;
    const float scale = rsqrtf((float)hs);
    const float* a = att + (((size_t)b * NH + h) * T + t) * T;
    const float* g = dy + ((size_t)b * T + t) * C + h * hs;
    const float* q = qkv + ((size_t)b * T + t) * 3 * C + h * hs;
    float* dq = dqkv + ((size_t)b * T + t) * 3 * C + h * hs;
    // pass 1: dv and sum_t2 att * datt; pass 2 recomputes datt[t2] (no per-thread array of T floats)
    float dot = 0.f;
    for (int t2 = 0; t2 <= t; t2++) {
        const float* v = qkv + ((size_t)b * T + t2) * 3 * C + 2 * C + h * hs;
        float* dv = dqkv + ((size_t)b * T + t2) * 3 * C + 2 * C + h * hs;
        float acc = 0.f;
        for (int i = 0; i < hs; i++) acc += g[i] * v[i], atomicAdd(&dv[i], a[t2] * g[i]);
        dot += a[t2] * acc;
    }
    for (int t2 = 0; t2 <= t; t2++) {
        const float* v = qkv + ((size_t)b * T + t2) * 3 * C + 2 * C + h * hs;
        float datt = 0.f;
        for (int i = 0; i < hs; i++) datt += g[i] * v[i];
        float dpre = a[t2] * (datt - dot) * scale;
        const float* k = qkv + ((size_t)b * T + t2) * 3 * C + C + h * hs;
        float* dk = dqkv + ((size_t)b * T + t2) * 3 * C + C + h * hs;
        for (int i = 0; i < hs; i++) dq[i] += dpre * k[i], atomicAdd(&dk[i], dpre * q[i]);
    }
}

// ----------------------------------------------------------------------------
// kernel launchers

static unsigned blocks_for(size_t n, int block) { return (unsigned)((n + block - 1) / block); }

// out (N, O) = inp (N, I) @ w (I, O) + b; cuBLAS is column-major, so compute out^T = w^T inp^T
static void matmul_forward(cublasHandle_t hdl, float* out, const float* inp, const float* w, const float* b, int N,
                           int I, int O) {
    const float one = 1.f, zero = 0.f;
    cublasCheck(cublasSgemm(hdl, CUBLAS_OP_N, CUBLAS_OP_N, O, N, I, &one, w, O, inp, I, &zero, out, O));
    add_bias_kernel<<<blocks_for((size_t)N * O, 256), 256>>>(out, b, N, O);
}
// dinp = dout @ w^T (set); dw += inp^T @ dout; db += column sums of dout
static void matmul_backward(cublasHandle_t hdl, float* dinp, float* dw, float* db, const float* dout, const float* inp,
                            const float* w, int N, int I, int O) {
    const float one = 1.f, zero = 0.f;
    cublasCheck(cublasSgemm(hdl, CUBLAS_OP_T, CUBLAS_OP_N, I, N, O, &one, w, O, dout, O, &zero, dinp, I));
    cublasCheck(cublasSgemm(hdl, CUBLAS_OP_N, CUBLAS_OP_T, O, I, N, &one, dout, O, inp, I, &one, dw, O));
    bias_grad_kernel<<<blocks_for(O, 256), 256>>>(db, dout, N, O);
}

// cudaMalloc with exact bookkeeping of the bytes alive and their peak
struct Tracker {
    std::map<void*, size_t> live;
    uint64_t bytes = 0, peak = 0;
    float* alloc(size_t floats) {
        void* p = nullptr;
        cudaCheck(cudaMalloc(&p, floats * sizeof(float)));
        live[p] = floats * sizeof(float);
        bytes += floats * sizeof(float);
        peak = std::max(peak, bytes);
        return (float*)p;
    }
    void free(float* p) {
        bytes -= live.at(p);
        live.erase(p);
        cudaCheck(cudaFree(p));
    }
};

struct LayerGPU {
    Dims d;
    cublasHandle_t hdl;
    float *p[kParams], *dp[kParams], *s[kStash] = {};
    float *out = nullptr, *dx = nullptr;
    Tracker act;  // activations and their gradients; parameters and their gradients are not counted

    LayerGPU(Dims dims, cublasHandle_t h) : d(dims), hdl(h) {
        for (int i = 0; i < kParams; i++) {
            cudaCheck(cudaMalloc(&p[i], param_size(d, i) * sizeof(float)));
            cudaCheck(cudaMalloc(&dp[i], param_size(d, i) * sizeof(float)));
            cudaCheck(cudaMemset(dp[i], 0, param_size(d, i) * sizeof(float)));
        }
        cudaCheck(cudaMalloc(&out, stash_size(d, X) * sizeof(float)));
        cudaCheck(cudaMalloc(&dx, stash_size(d, X) * sizeof(float)));
    }
    ~LayerGPU() {
        for (int i = 0; i < kParams; i++) cudaFree(p[i]), cudaFree(dp[i]);
        for (int i = 0; i < kStash; i++)
            if (s[i]) act.free(s[i]);
        cudaFree(out), cudaFree(dx);
    }
    // allocates the stash (x included: the layer input must outlive the forward pass) and runs forward
    void forward(const float* x_host) {
        const int N = d.B * d.T, C = d.C;
        for (int i = 0; i < kStash; i++) s[i] = act.alloc(stash_size(d, i));
        cudaCheck(cudaMemcpy(s[X], x_host, stash_size(d, X) * sizeof(float), cudaMemcpyHostToDevice));
        const int rows = 128;
        layernorm_forward_kernel<<<blocks_for(N, rows), rows>>>(s[LN1], s[LN1_MEAN], s[LN1_RSTD], s[X], p[LN1W],
                                                                p[LN1B], N, C);
        matmul_forward(hdl, s[QKV], s[LN1], p[QKVW], p[QKVB], N, C, 3 * C);
        attention_forward_kernel<<<blocks_for((size_t)d.B * d.NH * d.T, 128), 128>>>(s[Y], s[ATT], s[QKV], d.B, d.T, C,
                                                                                     d.NH);
        float* tmp = act.alloc((size_t)N * C);  // transient: the attention projection output
        matmul_forward(hdl, tmp, s[Y], p[ATTW], p[ATTB], N, C, C);
        residual_kernel<<<blocks_for((size_t)N * C, 256), 256>>>(s[X2], s[X], tmp, (size_t)N * C);
        layernorm_forward_kernel<<<blocks_for(N, rows), rows>>>(s[LN2], s[LN2_MEAN], s[LN2_RSTD], s[X2], p[LN2W],
                                                                p[LN2B], N, C);
        matmul_forward(hdl, s[H], s[LN2], p[FCW], p[FCB], N, C, 4 * C);
        gelu_forward_kernel<<<blocks_for((size_t)N * 4 * C, 256), 256>>>(s[G], s[H], (size_t)N * 4 * C);
        matmul_forward(hdl, tmp, s[G], p[PRJW], p[PRJB], N, 4 * C, C);
        residual_kernel<<<blocks_for((size_t)N * C, 256), 256>>>(out, s[X2], tmp, (size_t)N * C);
        cudaCheck(cudaDeviceSynchronize());
        act.free(tmp);
        cudaCheck(cudaGetLastError());
    }
    // gradients of sum(out * dout) into dx and dp, then the stash is freed
    void backward(const float* dout_host) {
        const int N = d.B * d.T, C = d.C;
        const size_t NC = (size_t)N * C;
        float* dout = act.alloc(NC);
        cudaCheck(cudaMemcpy(dout, dout_host, NC * sizeof(float), cudaMemcpyHostToDevice));
        float* dx2 = act.alloc(NC);
        cudaCheck(cudaMemcpy(dx2, dout, NC * sizeof(float), cudaMemcpyDeviceToDevice));
        float* dg = act.alloc(NC * 4);
        matmul_backward(hdl, dg, dp[PRJW], dp[PRJB], dout, s[G], p[PRJW], N, 4 * C, C);
        gelu_backward_kernel<<<blocks_for(NC * 4, 256), 256>>>(dg, s[H], NC * 4);
        float* dln2 = act.alloc(NC);
        matmul_backward(hdl, dln2, dp[FCW], dp[FCB], dg, s[LN2], p[FCW], N, C, 4 * C);
        const int rows = 128;
        layernorm_backward_kernel<<<blocks_for(N, rows), rows>>>(dx2, dp[LN2W], dp[LN2B], dln2, s[X2], p[LN2W],
                                                                 s[LN2_MEAN], s[LN2_RSTD], N, C);
        float* dy = act.alloc(NC);
        matmul_backward(hdl, dy, dp[ATTW], dp[ATTB], dx2, s[Y], p[ATTW], N, C, C);
        float* dqkv = act.alloc(NC * 3);
        cudaCheck(cudaMemset(dqkv, 0, NC * 3 * sizeof(float)));
        attention_backward_kernel<<<blocks_for((size_t)d.B * d.NH * d.T, 128), 128>>>(dqkv, dy, s[QKV], s[ATT], d.B,
                                                                                      d.T, C, d.NH);
        float* dln1 = act.alloc(NC);
        matmul_backward(hdl, dln1, dp[QKVW], dp[QKVB], dqkv, s[LN1], p[QKVW], N, C, 3 * C);
        cudaCheck(cudaMemcpy(dx, dx2, NC * sizeof(float), cudaMemcpyDeviceToDevice));
        layernorm_backward_kernel<<<blocks_for(N, rows), rows>>>(dx, dp[LN1W], dp[LN1B], dln1, s[X], p[LN1W],
                                                                 s[LN1_MEAN], s[LN1_RSTD], N, C);
        cudaCheck(cudaDeviceSynchronize());
        cudaCheck(cudaGetLastError());
        for (float* t : {dout, dx2, dg, dln2, dy, dqkv, dln1}) act.free(t);
    }
};

// ----------------------------------------------------------------------------
// checker helpers

// |got - ref| <= 1e-3 |ref| + 1e-4 max|ref|: fp32 on both sides, different summation orders and
// atomics on the device; a wrong formula or a missing term is off by O(|ref|).
static bool check_tensor(const char* name, const float* got, const std::vector<float>& ref, size_t* failed_out) {
    double maxref = 0;
    for (float v : ref) maxref = std::max(maxref, (double)std::fabs(v));
    Checker chk(name);
    for (size_t i = 0; i < ref.size(); i++) chk.check(i, got[i], ref[i], 1e-3 * std::fabs(ref[i]) + 1e-4 * maxref);
    if (failed_out) *failed_out += chk.failed;
    std::printf("  %-8s %10zu values  max rel err %.2e  %s\n", name, ref.size(), chk.max_rel_err,
                chk.ok() ? "ok" : "MISMATCH");
    return chk.ok();
}

// ----------------------------------------------------------------------------
// the report (schema tally.gpu-layer-activations/1)

struct Measure {
    Dims d{};
    bool checked = false, check_ok = false;
    Dims check_dims{};
    size_t check_failures = 0;
    uint64_t stash_bytes = 0, stash_formula_bytes = 0, stats_bytes = 0, engine_bytes = 0;
    uint64_t mem_info_delta = 0, peak_tracked = 0;
    bool exact_ok = false, mem_ok = false;
};

static std::string report_json(const std::string& gpu_name, const Measure& m, bool all_ok) {
    std::string j = "{\n  \"schema\": \"tally.gpu-layer-activations/1\",\n  \"program\": \"layer_activations\",\n";
    j += "  \"gpu\": {\"name\": " + json_str(gpu_name) + "},\n";
    j += "  \"layer\": {\"kind\": \"gpt2\", \"dtype\": \"fp32\", \"dropout\": false, \"batch\": " + json_int(m.d.B) +
         ", \"seq\": " + json_int(m.d.T) + ", \"channels\": " + json_int(m.d.C) + ", \"heads\": " + json_int(m.d.NH) +
         "},\n";
    j += "  \"correctness\": {\"batch\": " + json_int(m.check_dims.B) + ", \"seq\": " + json_int(m.check_dims.T) +
         ", \"ran\": " + json_bool(m.checked) + ", \"match\": " + json_bool(m.check_ok) +
         ", \"mismatches\": " + json_int((long long)m.check_failures) + "},\n";
    j += "  \"stash_bytes\": " + json_int((long long)m.stash_bytes) +
         ", \"stash_formula_bytes\": " + json_int((long long)m.stash_formula_bytes) +
         ", \"layernorm_stats_bytes\": " + json_int((long long)m.stats_bytes) +
         ", \"engine_per_layer_bytes\": " + json_int((long long)m.engine_bytes) + ",\n";
    j += "  \"mem_info_delta_bytes\": " + json_int((long long)m.mem_info_delta) +
         ", \"peak_activation_bytes\": " + json_int((long long)m.peak_tracked) + ",\n";
    j += "  \"formula_match\": " + json_bool(m.exact_ok) + ", \"mem_info_match\": " + json_bool(m.mem_ok) +
         ", \"all_match\": " + json_bool(all_ok) + "\n}\n";
    return j;
}

// ----------------------------------------------------------------------------
// host self-test

static int self_test() {
    SelfTest t;
    std::printf("layer_activations self-test (host only)\n");

    // 1. the CPU reference's backward pass equals central differences of sum(out * dout), in double
    {
        Dims d{2, 3, 8, 2};
        LayerCPU<double> L(d);
        std::vector<double> dout;
        init_layer(&L, &dout, 11);
        L.forward();
        L.backward(dout);
        auto loss = [&]() {
            L.forward();
            double s = 0;
            for (size_t i = 0; i < L.out.size(); i++) s += L.out[i] * dout[i];
            return s;
        };
        const double eps = 1e-6;
        double worst = 0;
        size_t compared = 0;
        auto probe = [&](std::vector<double>& v, const std::vector<double>& grad) {
            for (size_t i = 0; i < v.size(); i++) {
                double keep = v[i];
                v[i] = keep + eps;
                double up = loss();
                v[i] = keep - eps;
                double down = loss();
                v[i] = keep;
                double num = (up - down) / (2 * eps);
                worst = std::max(worst, std::fabs(num - grad[i]) / (1.0 + std::fabs(grad[i])));
                compared++;
            }
        };
        std::vector<double> dx = L.dx;
        probe(L.s[X], dx);
        for (int i = 0; i < kParams; i++) {
            std::vector<double> g = L.dp[i];
            probe(L.p[i], g);
        }
        std::printf("  gradient check: %zu values, worst |numeric - analytic| / (1 + |analytic|) = %.2e\n", compared,
                    worst);
        t.expect(compared == 920 && worst < 1e-6,
                 "the CPU backward pass matches central differences to 1e-6 (x and all 12 parameters)");
    }
    // 2. causal softmax rows sum to one with zeros above the diagonal; float and double agree
    {
        Dims d{1, 5, 8, 2};
        LayerCPU<double> Ld(d);
        LayerCPU<float> Lf(d);
        std::vector<double> gd;
        std::vector<float> gf;
        init_layer(&Ld, &gd, 5);
        init_layer(&Lf, &gf, 5);
        Ld.forward();
        Lf.forward();
        bool rows_ok = true;
        for (int h = 0; h < d.NH; h++)
            for (int q = 0; q < d.T; q++) {
                double sum = 0;
                for (int k = 0; k < d.T; k++) {
                    double a = Ld.s[ATT][((size_t)h * d.T + q) * d.T + k];
                    sum += a;
                    if (k > q && a != 0.0) rows_ok = false;
                }
                rows_ok = rows_ok && std::fabs(sum - 1) < 1e-12;
            }
        t.expect(rows_ok, "attention rows sum to 1 and are 0 above the diagonal (causal)");
        double diff = 0;
        for (size_t i = 0; i < Ld.out.size(); i++) diff = std::max(diff, std::fabs(Ld.out[i] - (double)Lf.out[i]));
        t.expect(diff < 1e-5, "the float reference agrees with the double one to 1e-5");
    }
    // 3. the stash is exactly the engine's per-layer activation bytes (fp32, no dropout), plus the
    //    LayerNorm statistics the formula leaves out
    {
        const Dims dims[] = {{4, 1024, 768, 12}, {2, 256, 768, 12}, {1, 64, 768, 12}};
        for (Dims d : dims) {
            tally_cuda::LayerActivations e = tally_cuda::predict_layer_activations("gpt2-small", d.T, d.B, 4, false);
            std::string claim = "stash of a GPT-2 small layer at B=" + std::to_string(d.B) +
                                ", T=" + std::to_string(d.T) + " equals the engine's per-layer bytes (" +
                                std::to_string(stash_formula_bytes(d)) + " vs " + std::to_string(e.per_layer_bytes) +
                                (e.ok ? "" : ", " + e.error) + ")";
            t.expect(e.ok && e.per_layer_bytes == stash_formula_bytes(d), claim.c_str());
        }
        // 4 sbh (16 + a s / h) at s = 1024, b = 4, h = 768, a = 12 (Korthikanti et al. 2022 with 4-byte values, no dropout)
        const double s = 1024, b = 4, h = 768, a = 12;
        t.expect((double)stash_formula_bytes({4, 1024, 768, 12}) == 4 * s * b * h * (16 + a * s / h),
                 "stash = 4sbh(16 + as/h) bytes for fp32 without dropout");
        t.expect(stash_stats_bytes({4, 1024, 768, 12}) == 16ull * 4 * 1024,
                 "LayerNorm statistics are 16 bytes per token");
    }
    // 4. the report is valid JSON
    {
        Measure m;
        m.d = {4, 1024, 768, 12}, m.check_dims = {2, 256, 768, 12};
        m.stash_formula_bytes = stash_formula_bytes(m.d), m.engine_bytes = m.stash_formula_bytes;
        std::string j = report_json("Test GPU", m, true), err;
        t.expect(tally_cuda::json_at(j, "/schema", &err) == "\"tally.gpu-layer-activations/1\"",
                 ("report parses " + err).c_str());
        t.expect(tally_cuda::json_at(j, "/engine_per_layer_bytes") == std::to_string(m.engine_bytes),
                 "engine bytes are written as an exact integer");
    }
    return t.finish("layer_activations");
}

// ----------------------------------------------------------------------------
// device run

static int parse_int(const char* flag, const char* v, int lo, int hi) {
    char* end = nullptr;
    long x = v ? std::strtol(v, &end, 10) : 0;
    if (!v || *end != 0 || x < lo || x > hi) {
        std::fprintf(stderr, "%s must be an integer in [%d, %d], got '%s'\n", flag, lo, hi, v ? v : "");
        std::exit(2);
    }
    return (int)x;
}

int main(int argc, char** argv) {
    Args args{argc, argv};
    if (args.has("--help")) {
        std::printf("usage: layer_activations [--self-test] [--quick] [--batch B] [--seq T] [--json PATH]\n");
        return 0;
    }
    if (args.has("--self-test")) return self_test();

    const bool quick = args.has("--quick");
    Dims check = quick ? Dims{1, 64, 768, 12} : Dims{2, 256, 768, 12};
    Dims meas = quick ? Dims{2, 256, 768, 12} : Dims{4, 1024, 768, 12};
    if (args.value("--batch")) meas.B = parse_int("--batch", args.value("--batch"), 1, 1024);
    if (args.value("--seq")) meas.T = parse_int("--seq", args.value("--seq"), 1, 65536);

    DeviceProbe dev = probe_device();
    if (!dev.available) return skip_no_device(dev);
    std::printf("device: %s\n", dev.prop.name);
    cublasHandle_t hdl;
    cublasCheck(cublasCreate(&hdl));
    cublasCheck(cublasSetMathMode(hdl, CUBLAS_DEFAULT_MATH));  // true fp32 (no TF32) to compare with the CPU

    Measure m;
    m.d = meas, m.check_dims = check;

    // 1. correctness: forward output and every gradient against the CPU reference
    {
        std::printf("\ncorrectness at B=%d, T=%d, C=%d, NH=%d (CPU reference, may take a minute)\n", check.B, check.T,
                    check.C, check.NH);
        LayerCPU<float> ref(check);
        std::vector<float> dout;
        init_layer(&ref, &dout, 2024);
        ref.forward();
        ref.backward(dout);
        LayerGPU L(check, hdl);
        for (int i = 0; i < kParams; i++)
            cudaCheck(cudaMemcpy(L.p[i], ref.p[i].data(), ref.p[i].size() * sizeof(float), cudaMemcpyHostToDevice));
        L.forward(ref.s[X].data());
        std::vector<float> got(ref.out.size());
        cudaCheck(cudaMemcpy(got.data(), L.out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
        bool ok = check_tensor("out", got.data(), ref.out, &m.check_failures);
        L.backward(dout.data());
        cudaCheck(cudaMemcpy(got.data(), L.dx, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
        ok = check_tensor("dx", got.data(), ref.dx, &m.check_failures) && ok;
        for (int i = 0; i < kParams; i++) {
            std::vector<float> g(ref.dp[i].size());
            cudaCheck(cudaMemcpy(g.data(), L.dp[i], g.size() * sizeof(float), cudaMemcpyDeviceToHost));
            ok =
                check_tensor((std::string("d") + kParamNames[i]).c_str(), g.data(), ref.dp[i], &m.check_failures) && ok;
        }
        m.checked = true;
        m.check_ok = ok;
    }

    // 2. memory: the stash alive between forward and backward, against the engine
    {
        tally_cuda::LayerActivations e = tally_cuda::predict_layer_activations("gpt2-small", meas.T, meas.B, 4, false);
        if (!e.ok) {
            std::fprintf(stderr, "engine: %s\n", e.error.c_str());
            return 1;
        }
        std::printf("\nmemory at B=%d, T=%d: forward, then measure what stays for the backward pass\n", meas.B, meas.T);
        std::vector<float> x((size_t)meas.B * meas.T * meas.C), dout(x.size());
        Rng rng(7);
        for (auto& v : x) v = rng.next_signed();
        for (auto& v : dout) v = rng.next_signed();
        LayerGPU L(meas, hdl);
        for (int i = 0; i < kParams; i++) {
            std::vector<float> w(param_size(meas, i));
            for (auto& v : w) v = (i == LN1W || i == LN2W) ? 1.f : 0.02f * rng.next_signed();
            cudaCheck(cudaMemcpy(L.p[i], w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));
        }
        // cuBLAS's workspace was allocated by the correctness pass on the same handle, so it is not in
        // this difference
        cudaCheck(cudaDeviceSynchronize());
        size_t before = 0, after = 0, total = 0;
        cudaCheck(cudaMemGetInfo(&before, &total));
        L.forward(x.data());
        cudaCheck(cudaMemGetInfo(&after, &total));
        m.stash_bytes = L.act.bytes;
        m.stash_formula_bytes = stash_formula_bytes(meas);
        m.stats_bytes = stash_stats_bytes(meas);
        m.engine_bytes = e.per_layer_bytes;
        m.mem_info_delta = before > after ? before - after : 0;
        L.backward(dout.data());
        m.peak_tracked = L.act.peak;
        m.exact_ok = m.stash_bytes == m.engine_bytes + m.stats_bytes;
        // each of the 13 stash buffers rounds up to the allocator's 2 MiB pages (the small LayerNorm
        // statistics may each take a page of their own)
        uint64_t slack = (uint64_t)kStash * (2ull << 20);
        m.mem_ok = m.mem_info_delta >= m.stash_bytes && m.mem_info_delta <= m.stash_bytes + slack;
        std::printf("  engine per-layer activations   %14" PRIu64 " bytes  (%s)\n", e.per_layer_bytes,
                    "4sbh(16 + as/h): fp32, no dropout");
        for (const auto& term : e.terms) std::printf("    %-24s %14" PRIu64 "\n", term.name.c_str(), term.bytes);
        for (int i = 0; i < kStash; i++)
            std::printf("    stash %-18s %14zu bytes\n", kStashNames[i], stash_size(meas, i) * sizeof(float));
        std::printf("  stash, counted                 %14" PRIu64 " bytes  = formula %" PRIu64
                    " + LayerNorm stats %" PRIu64 "  %s\n",
                    m.stash_bytes, m.stash_formula_bytes, m.stats_bytes, m.exact_ok ? "ok" : "MISMATCH");
        std::printf("  stash, cudaMemGetInfo drop     %14" PRIu64 " bytes  (allowed: counted + up to %" PRIu64
                    " of page rounding)  %s\n",
                    m.mem_info_delta, slack, m.mem_ok ? "ok" : "MISMATCH");
        std::printf("  peak activations incl. backward temporaries %" PRIu64 " bytes (not in the formula)\n",
                    m.peak_tracked);
    }
    cublasCheck(cublasDestroy(hdl));

    bool all_ok = m.check_ok && m.exact_ok && m.mem_ok;
    std::printf("\n%s\n", all_ok ? "All results match" : "SOME RESULTS DO NOT MATCH");
    if (const char* path = args.value("--json")) {
        if (!write_text_file(path, report_json(dev.prop.name, m, all_ok))) return 1;
        std::printf("wrote %s\n", path);
    }
    return all_ok ? 0 : 1;
}
