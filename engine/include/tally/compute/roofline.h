// Arithmetic intensity: FLOPs per byte moved to and from main memory, for the GEMM ladder (under
// each kernel's blocking) and for the named operations of a transformer, and the roofline bound
// min(peak, intensity x bandwidth) (Williams, Waterman, Patterson, "Roofline", CACM 52(4), 2009).
#pragma once

#include <string>
#include <vector>

#include "tally/compute/gemm_tiling.h"

namespace tally::roofline {

struct Traffic {
    double flops = 0;
    double bytes = 0;      // modelled main-memory traffic
    double intensity = 0;  // flops / bytes
};

// Traffic model of one kernel of the ladder for C(m,n) = A(m,k) B(k,n) in fp32, with a cache of
// cache_bytes between the core and main memory (elements, not cache lines, are counted):
//  - Unblocked (naive, ikj): A is read once (a row of A is reused from cache for a whole row of C),
//    C written once; B is read once if it fits in the cache (4kn <= cache_bytes), else once per row
//    of C: 4mkn bytes.
//  - Blocked (blocked, packed, simd; loop nest jc/pc/ic with blocks mc x kc of A, kc x nc of B):
//    the kc x nc block of B is read once in total (it stays in cache while all ic blocks use it),
//    A is read once per nc-wide column panel (ceil(n/nc) times), and C is read and written once per
//    kc-deep pass (ceil(k/kc) times, 8 bytes per element).
Traffic kernel_traffic(gemm::Traffic walk, const gemm::Tiling& tiling, int m, int n, int k, double cache_bytes);

// The compulsory minimum: read A and B once, write C once, element_bytes each.
Traffic matmul_min_traffic(double m, double n, double k, double element_bytes);

struct Op {
    std::string id;     // "matmul-4096"
    std::string name;   // "square matmul, n = 4096"
    std::string group;  // "matmul", "matvec", "elementwise", "normalization", "attention"
    double flops = 0, bytes = 0, intensity = 0;
    std::string model;  // how flops and bytes were counted
};

struct OpsConfig {
    double element_bytes = 2;  // 2 for bf16/fp16, 4 for fp32/tf32, 1 for fp8
    int seq = 2048;            // sequence length s
    int d_model = 4096;        // hidden size d
    int heads = 32;            // attention heads h (head_dim = d / h)
    int flash_block = 128;     // FlashAttention query block: K and V are re-read once per block
};

// Square matmuls (n = 256, 1024, 4096, 16384), a batch-1 matvec d x d (decoding), elementwise
// add and GELU over s x d, LayerNorm and softmax over s x d, attention at sequence s unfused
// (scores materialized) and fused (FlashAttention).
std::vector<Op> named_ops(const OpsConfig& config);

// min(peak, intensity x bandwidth).
double attainable(double intensity, double peak_flops_per_s, double bandwidth_bytes_per_s);

// Ridge point: the intensity at which the two roofs meet, peak / bandwidth (FLOP/byte).
double ridge(double peak_flops_per_s, double bandwidth_bytes_per_s);

// Which roof bounds an operation of this intensity: memory when intensity x bandwidth < peak
// (left of the ridge), else compute.
enum class Bound { Memory, Compute };
Bound bound(double intensity, double peak_flops_per_s, double bandwidth_bytes_per_s);
const char* to_string(Bound bound);  // "memory", "compute"

// The compulsory traffic of a GEMM whose inputs A and B have in_bytes per element and whose output C
// has out_bytes (a bf16 GEMM accumulating into fp32 C: 2 and 4): read A and B once, write C once.
Traffic matmul_min_traffic(double m, double n, double k, double in_bytes, double out_bytes);

// Longest sequence the named operations accept (their s x s score matrices stay countable in a double).
inline constexpr int kMaxOpsSeq = 1 << 22;

}  // namespace tally::roofline
