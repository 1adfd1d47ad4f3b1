/*
 * amsgd.h -- the public interface of the amsgd library in one include:
 * problems and closed forms (theory/), the ODE and SDE engines (solvers/), the Monte Carlo
 * engines and the parallel ensemble (montecarlo/), networks on real data (models/), the
 * statistics of the checks (validate/), and the experiments as library calls with the sweep
 * runner (studies/). It includes every public header (each header of those folders but
 * the private *_impl.h; scripts/check-layers.py checks it).
 * Installed as <amsgd/amsgd.h>; link with `pkg-config --libs amsgd`.
 */
#ifndef AMSGD_H
#define AMSGD_H

/* core/: infrastructure: status codes, grid, random streams, statistics, the ensemble */
#include "core/am_common.h"
#include "core/am_grid.h"
#include "core/am_rng.h"
#include "core/am_stats.h"
#include "core/am_ensemble.h"

/* theory/: problems and closed forms */
#include "theory/am_datamoments.h"
#include "theory/am_delaycorr.h"
#include "theory/am_lsqbound.h"
#include "theory/am_problem.h"
#include "theory/am_runtime.h"
#include "theory/am_theory.h"

/* solvers/: the ODE, DDE and SDE engines */
#include "solvers/am_dde.h"
#include "solvers/am_ode.h"
#include "solvers/am_sde.h"

/* montecarlo/: the discrete algorithms and the parameter-server simulator */
#include "montecarlo/am_asyncmom.h"
#include "montecarlo/am_data.h"
#include "montecarlo/am_datadist.h"
#include "montecarlo/am_dataset.h"
#include "montecarlo/am_delay.h"
#include "montecarlo/am_msgd.h"
#include "montecarlo/am_msgd_batch.h"
#include "montecarlo/am_msgd_ps.h"
#include "montecarlo/am_objective.h"
#include "montecarlo/am_optim.h"
#include "montecarlo/am_ps.h"
#include "montecarlo/am_pslsq.h"
#include "montecarlo/am_stale.h"
#include "montecarlo/am_wallclock.h"

/* models/: networks and data sets */
#include "models/am_classset.h"
#include "models/am_idx.h"
#include "models/am_nn.h"
#include "models/am_nntrain.h"
#include "models/am_pcadata.h"

/* validate/: the checks of theorems and their statistics */
#include "validate/am_acf.h"
#include "validate/am_check.h"
#include "validate/am_converge.h"
#include "validate/am_fit.h"
#include "validate/am_validate.h"

/* studies/: the experiments as library calls and the sweep runner */
#include "studies/am_compare.h"
#include "studies/am_knee.h"
#include "studies/am_nnstale.h"
#include "studies/am_nnstale_preset.h"
#include "studies/am_phase.h"
#include "studies/am_run.h"
#include "studies/am_runtime_study.h"
#include "studies/am_staleness.h"
#include "studies/am_sweep.h"
#include "studies/am_sweep_cell.h"
#include "studies/am_theory_study.h"
#include "studies/am_tradeoff.h"
#include "studies/am_wallclock_nn.h"
#include "studies/am_wallclock_sweep.h"
#endif
