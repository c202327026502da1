// How a GEMM kernel walks memory (its loop nest and block sizes): the data the traffic model in
// roofline.h reads. The kernels themselves live in engine/kernels (tally/gemm.h); this header is the
// part of their description that is a formula's input, so the pure core needs no kernel code.
#pragma once

namespace tally::gemm {

enum class Traffic {
    Unblocked,  // loops over whole rows/columns: B is re-read for every row of C unless it fits in cache
    Blocked,    // jc/pc/ic loop tiling with block sizes mc, kc, nc (A block reused across nc, C re-touched per kc)
};

// Block and register-tile sizes of a kernel (0 where the kernel has none).
struct Tiling {
    int mr = 0, nr = 0;          // register tile of the micro-kernel (rows of A x columns of B)
    int mc = 0, kc = 0, nc = 0;  // cache blocks: A block mc x kc, B panel kc x nc
};

}  // namespace tally::gemm
