#include "tally/comm/overlap_contention.h"

#include <string>

#include "tally/base/error.h"

namespace tally {

double overlap_contention_seconds(double hidden_comm_seconds, double slowdown) {
    if (!(slowdown >= 0 && slowdown <= 1))
        throw InputError("slowdown", "slowdown must be from 0 to 1, got " + format_number(slowdown));
    if (!(hidden_comm_seconds > 0)) return 0;
    // Compute beside a collective runs 1+s times longer; the collective's own duration is taken as unchanged.
    return hidden_comm_seconds * slowdown / (1 + slowdown);
}

}  // namespace tally
