#include "tally/plan/goodput.h"

#include <cmath>

#include "tally/base/error.h"

namespace tally {

namespace {

void check(double checkpoint_seconds, double mtbf_seconds) {
    require_positive("checkpoint_seconds", checkpoint_seconds);
    require_positive("mtbf_seconds", mtbf_seconds);
}

}  // namespace

double young_interval(double checkpoint_seconds, double mtbf_seconds) {
    check(checkpoint_seconds, mtbf_seconds);
    return std::sqrt(2 * checkpoint_seconds * mtbf_seconds);
}

double daly_interval(double checkpoint_seconds, double mtbf_seconds) {
    check(checkpoint_seconds, mtbf_seconds);
    const double d = checkpoint_seconds, m = mtbf_seconds;
    if (d >= 2 * m) return m;  // Daly 2006: a checkpoint this dear is taken once per MTBF
    const double x = d / (2 * m);
    return std::sqrt(2 * d * m) * (1 + std::sqrt(x) / 3 + x / 9) - d;
}

double checkpoint_efficiency(double interval_seconds, double checkpoint_seconds, double restart_seconds,
                             double mtbf_seconds) {
    check(checkpoint_seconds, mtbf_seconds);
    require_positive("interval_seconds", interval_seconds);
    if (!(restart_seconds >= 0) || !std::isfinite(restart_seconds))
        throw InputError("restart_seconds", "restart_seconds must be >= 0, got " + format_number(restart_seconds));
    const double m = mtbf_seconds;
    // T_s / T_w with T_w = M e^(R/M) (e^((τ+δ)/M) − 1) T_s / τ; expm1 keeps it exact when τ+δ << M.
    const double wall_per_work =
        m * std::exp(restart_seconds / m) * std::expm1((interval_seconds + checkpoint_seconds) / m) / interval_seconds;
    return 1 / wall_per_work;
}

double expected_wall_seconds(double work_seconds, double interval_seconds, double checkpoint_seconds,
                             double restart_seconds, double mtbf_seconds) {
    require_positive("work_seconds", work_seconds);
    return work_seconds / checkpoint_efficiency(interval_seconds, checkpoint_seconds, restart_seconds, mtbf_seconds);
}

}  // namespace tally
