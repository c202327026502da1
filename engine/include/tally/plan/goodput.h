// Goodput under failures: how often to checkpoint a long run and what failures cost. Young (1974) "A first
// order approximation to the optimum checkpoint interval" (CACM 17(9)); Daly (2006) "A higher order
// estimate of the optimum checkpoint interval for restart dumps" (FGCS 22(3)), failures as a Poisson process.
#pragma once

namespace tally {

// Young's interval: sqrt(2·δ·M), compute time between checkpoints for a checkpoint costing δ seconds and a
// mean time between failures M (seconds). InputError naming checkpoint_seconds or mtbf_seconds if not > 0.
double young_interval(double checkpoint_seconds, double mtbf_seconds);

// Daly's higher-order interval: sqrt(2δM)·[1 + (1/3)·sqrt(δ/2M) + (1/9)·(δ/2M)] − δ while δ < 2M, else M.
double daly_interval(double checkpoint_seconds, double mtbf_seconds);

// Daly's complete model of the expected wall-clock time of work_seconds of computation, checkpointed every
// interval_seconds of it, each checkpoint taking δ and each restart R, failures exponential with mean M
// (failures during checkpoints and restarts included): M·e^(R/M)·(e^((τ+δ)/M) − 1)·T_s/τ.
double expected_wall_seconds(double work_seconds, double interval_seconds, double checkpoint_seconds,
                             double restart_seconds, double mtbf_seconds);

// Goodput: the share of wall-clock time that is useful computation, T_s / T_w (independent of T_s).
double checkpoint_efficiency(double interval_seconds, double checkpoint_seconds, double restart_seconds,
                             double mtbf_seconds);

}  // namespace tally
