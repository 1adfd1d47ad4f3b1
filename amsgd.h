/*
 * amsgd.h -- the public interface of the amsgd library in one include:
 * problems and closed forms (theory/), the ODE and SDE engines (solvers/), the Monte Carlo
 * engines and the parallel ensemble (montecarlo/), networks on real data (models/), the
 * statistics of the checks (validate/), and the experiments as library calls with the sweep
 * runner (studies/).
 * Installed as <amsgd/amsgd.h>; link with `pkg-config --libs amsgd`.
 */
#ifndef AMSGD_H
#define AMSGD_H

#include "core/am_common.h"
#include "core/am_grid.h"
#include "core/am_rng.h"
#include "theory/am_problem.h"
#include "theory/am_datamoments.h"
#include "theory/am_theory.h"
#include "theory/am_runtime.h"
#include "theory/am_delaycorr.h"
#include "solvers/am_ode.h"
#include "solvers/am_dde.h"
#include "solvers/am_sde.h"
#include "core/am_stats.h"
#include "core/am_ensemble.h"
#include "montecarlo/am_data.h"
#include "montecarlo/am_delay.h"
#include "montecarlo/am_msgd.h"
#include "montecarlo/am_datadist.h"
#include "models/am_idx.h"
#include "models/am_classset.h"
#include "models/am_nn.h"
#include "models/am_pcadata.h"
#include "studies/am_nnstale.h"
#include "validate/am_acf.h"
#include "validate/am_check.h"
#include "validate/am_fit.h"
#include "studies/am_sweep.h"
#include "studies/am_sweep_cell.h"
#include "studies/am_phase.h"
#include "studies/am_knee.h"
#include "studies/am_run.h"
#include "studies/am_compare.h"
#include "studies/am_wallclock.h"
#include "studies/am_staleness.h"
#include "studies/am_runtime_study.h"
#include "studies/am_theory_study.h"
#include "studies/am_tradeoff.h"

#endif
