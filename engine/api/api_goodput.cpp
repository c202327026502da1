// API of goodput under failures (goodput.h): Young's and Daly's checkpoint intervals and what failures cost in
// days and dollars, for the goodput section's figure and `tally call checkpoint_interval`.
#include <cmath>
#include <optional>
#include <string>

#include "api_args.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/plan/goodput.h"

namespace tally::api {

namespace {

constexpr double kHour = 3600;

struct Mtbf {
    double job_seconds;
    std::optional<double> gpu_hours;  // per GPU, when the input gives GPUs
    std::optional<std::int64_t> gpus;
};

// Every input is bounded (require_in) far outside real runs, which keeps every derived time finite and nonzero.

// The job's MTBF from one of three inputs: mtbf_hours; gpu_mtbf_hours and gpus (independent failures, so the
// job's MTBF is the GPU's over the count); or a published count (interruptions in days on observed_gpus),
// scaled to gpus (default: observed_gpus).
Mtbf mtbf_from_args(const json& args) {
    const bool direct = args.contains("mtbf_hours"), per_gpu = args.contains("gpu_mtbf_hours"),
               counted = args.contains("interruptions");
    if (direct + per_gpu + counted != 1)
        throw InputError("mtbf_hours",
                         "give one of mtbf_hours (the job's), gpu_mtbf_hours with gpus, or interruptions "
                         "with days and observed_gpus");
    const std::optional<std::int64_t> gpus = optional_integer_arg(args, "gpus", 1, 100'000'000);
    Mtbf m{0, std::nullopt, gpus};
    if (direct) {
        if (gpus) throw InputError("gpus", "gpus scales a per-GPU MTBF; with mtbf_hours (the job's) leave it out");
        m.job_seconds = require_in("mtbf_hours", number_arg(args, "mtbf_hours"), 1e-3, 1e7, "hours") * kHour;
        return m;
    }
    if (per_gpu) {
        if (!gpus) throw InputError("gpus", "gpu_mtbf_hours needs gpus, the job's GPU count");
        m.gpu_hours = require_in("gpu_mtbf_hours", number_arg(args, "gpu_mtbf_hours"), 1e-3, 1e12, "hours");
    } else {
        const double n = require_in("interruptions", number_arg(args, "interruptions"), 1, 1e9, "interruptions");
        const double days = require_in("days", number_arg(args, "days"), 1e-3, 1e5, "days");
        const std::int64_t observed = integer_arg(args, "observed_gpus", 1, 100'000'000);
        m.gpu_hours = days * 24 * static_cast<double>(observed) / n;
        if (!m.gpus) m.gpus = observed;
    }
    m.job_seconds = *m.gpu_hours * kHour / static_cast<double>(*m.gpus);
    if (m.job_seconds < 1)
        throw InputError(per_gpu ? "gpu_mtbf_hours" : "interruptions",
                         "the job's MTBF comes to " + format_number(m.job_seconds) +
                             " s; it must be at least 1 second (fewer GPUs or failures)");
    return m;
}

double checkpoint_seconds_from_args(const json& args) {
    if (args.contains("checkpoint_seconds")) {
        if (args.contains("checkpoint_bytes"))
            throw InputError("checkpoint_bytes",
                             "give checkpoint_seconds or checkpoint_bytes with write_bytes_per_s, "
                             "not both");
        return require_in("checkpoint_seconds", number_arg(args, "checkpoint_seconds"), 1e-3, 1e7, "seconds");
    }
    if (!args.contains("checkpoint_bytes"))
        throw InputError("checkpoint_seconds",
                         "checkpoint_seconds is required (or checkpoint_bytes with write_bytes_per_s)");
    const double bytes = require_in("checkpoint_bytes", number_arg(args, "checkpoint_bytes"), 1, 1e18, "bytes");
    const double rate = require_in("write_bytes_per_s", number_arg(args, "write_bytes_per_s"), 1, 1e16, "bytes/s");
    const double seconds = bytes / rate;
    if (seconds < 1e-3 || seconds > 1e7)
        throw InputError("checkpoint_bytes", "checkpoint_bytes / write_bytes_per_s comes to " + format_number(seconds) +
                                                 " s; it must be in [0.001, 1e7] seconds");
    return seconds;
}

json checkpoint_interval_method(const json& args) {
    const Mtbf mtbf = mtbf_from_args(args);
    const double delta = checkpoint_seconds_from_args(args);
    const double restart = require_in("restart_seconds", number_arg(args, "restart_seconds"), 0, 1e7, "seconds");
    const std::optional<double> work_hours = optional_number_arg(args, "work_hours");
    if (work_hours) require_in("work_hours", *work_hours, 1e-3, 1e7, "hours");
    const std::optional<double> price = optional_number_arg(args, "dollars_per_gpu_hour");
    if (price) {
        require_in("dollars_per_gpu_hour", *price, 1e-6, 1e4, "dollars");
        if (!work_hours || !mtbf.gpus)
            throw InputError("dollars_per_gpu_hour", "dollars_per_gpu_hour needs work_hours and the job's gpus");
    }
    const double m = mtbf.job_seconds;
    const auto at = [&](double tau) {
        const double eff = checkpoint_efficiency(tau, delta, restart, m);
        json out{{"interval_seconds", tau}, {"efficiency", eff}, {"lost_fraction", 1 - eff}};
        if (work_hours) {
            const double wall = expected_wall_seconds(*work_hours * kHour, tau, delta, restart, m) / kHour;
            out["wall_hours"] = wall;
            out["lost_hours"] = wall - *work_hours;
            if (mtbf.gpus) out["lost_gpu_hours"] = (wall - *work_hours) * static_cast<double>(*mtbf.gpus);
            if (price) out["lost_dollars"] = (wall - *work_hours) * static_cast<double>(*mtbf.gpus) * *price;
        }
        return out;
    };
    const double young = young_interval(delta, m), daly = daly_interval(delta, m);
    json out{{"job_mtbf_hours", m / kHour},
             {"checkpoint_seconds", delta},
             {"restart_seconds", restart},
             {"restart_share", restart / m},  // first-order share of the wall clock restarts cost, R/M
             {"young_interval_seconds", young},
             {"daly_interval_seconds", daly},
             {"optimum", at(daly)},
             {"young", at(young)}};
    if (mtbf.gpu_hours) out["gpu_mtbf_hours"] = *mtbf.gpu_hours;
    if (mtbf.gpus) out["gpus"] = *mtbf.gpus;
    if (work_hours) out["work_hours"] = *work_hours;
    if (const std::optional<double> tau = optional_number_arg(args, "interval_seconds"))
        out["at_interval"] = at(require_in("interval_seconds", *tau, 1e-3, 1e9, "seconds"));
    return out;
}

using namespace arg;
constexpr std::array kGoodputArgs{
    number("mtbf_hours", "h", "depends: one MTBF input is required", "the job's mean time between failures"),
    number("gpu_mtbf_hours", "h", "none", "one GPU's MTBF (with gpus)"),
    integer("gpus", "GPUs", 1, 100'000'000, "depends: observed_gpus", "GPUs in the job"),
    number("interruptions", "", "none", "a published failure count (with days and observed_gpus)"),
    number("days", "days", "none", "the period of the failure count"),
    integer("observed_gpus", "GPUs", 1, 100'000'000, "none", "GPUs the failure count was observed on"),
    number("checkpoint_seconds", "s", "depends: required unless checkpoint_bytes", "time to write one checkpoint"),
    number("checkpoint_bytes", "bytes", "none", "checkpoint size (with write_bytes_per_s)"),
    number("write_bytes_per_s", "bytes/s", "none", "checkpoint write bandwidth"),
    number("restart_seconds", "s", "required", "time to restart after a failure"),
    number("work_hours", "h", "none", "failure-free length of the run"),
    number("dollars_per_gpu_hour", "$", "none", "price, for lost_dollars"),
    number("interval_seconds", "s", "none", "an interval to evaluate besides the optimum"),
};
constexpr std::array kGoodputResult = std::to_array<Field>({
    {"job_mtbf_hours", "h", "the job's MTBF"},
    {"young_interval_seconds", "s", "sqrt(2 delta M) (Young 1974)"},
    {"daly_interval_seconds", "s", "Daly's (2006) higher-order optimum"},
    {"restart_share", "", "R/M"},
    {"optimum", "", "at Daly's interval: {interval_seconds, efficiency, lost_fraction, wall_hours, lost_hours, ...}"},
    {"young", "", "the same at Young's interval"},
    {"at_interval", "", "the same at interval_seconds"},
    {"checkpoint_seconds", "s", "time to write one checkpoint"},
    {"restart_seconds", "s", "time to restart after a failure"},
});

constexpr Method kMethods[] = {
    {"checkpoint_interval", checkpoint_interval_method,
     "optimum checkpoint interval (Young 1974, Daly 2006) and the goodput, days and dollars failures cost",
     kGoodputArgs, kGoodputResult, true},
};

}  // namespace

std::span<const Method> goodput_methods() { return kMethods; }

}  // namespace tally::api
