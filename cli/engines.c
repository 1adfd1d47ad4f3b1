/*
 * engines.c -- running the SDE ensemble and the ODE with the discrete engine's parameters.
 */
#include "engines.h"

#include <stdlib.h>

/* The initial point of the Monte Carlo engine, so that every engine starts alike. */
static void msgd_initial(uint64_t replica, double *v0, const void *ctx)
{
    am_msgd_initial(ctx, replica, v0);
}

am_status cli_run_sde(const am_problem *p, const am_msgd_params *mp, const cli_sde_opts *so,
                      const am_grid *grid, const am_ensemble_params *ep, mc_run *run)
{
    am_status st;
    am_msgd_params ip = *mp;
    am_delay_make(AM_DELAY_NONE, 0, &ip.delay);
    am_msgd *init = am_msgd_alloc(p, &ip, &st);
    if (!init) return st;
    am_sde_pca_params pp = am_sde_pca_params_default();
    pp.eta = mp->eta;
    pp.mu = mp->mu;
    pp.sampler = so->sampler;
    pp.coords = mp->coords;
    pp.blowup = mp->blowup;
    pp.initial = msgd_initial;
    pp.initial_ctx = init;
    am_sde_pca *m = so->ou ? am_sde_ou_alloc(p, &pp, &st) : am_sde_global_alloc(p, &pp, &st);
    am_sde_model *sm = NULL;
    if (m) {
        am_sde_params sp = am_sde_params_default();
        sp.dt = so->dt;
        sp.noise = so->noise;
        sp.seed = mp->seed;
        sp.blowup = am_sde_pca_state_blowup(m);
        sm = am_sde_model_alloc(am_sde_pca_system(m), &sp, am_sde_pca_observer(m), &st);
        if (sm) st = mc_run_model(am_sde_model_get(sm), so->dt, grid, ep, mp->coords, run);
    }
    am_sde_model_free(sm);
    am_sde_pca_free(m);
    am_msgd_free(init);
    return st;
}

am_status cli_run_ode(const am_problem *p, const am_msgd_params *mp, const am_ode_params *op,
                      const double *t, size_t n, double *err, double *norm, am_ode_stats *stats)
{
    am_status st;
    am_msgd_params ip = *mp;
    am_delay_make(AM_DELAY_NONE, 0, &ip.delay);
    am_msgd *init = am_msgd_alloc(p, &ip, &st);
    if (!init) return st;
    double *v0 = malloc(p->dim * sizeof *v0);
    am_ode *ode = v0 ? am_ode_alloc(p, op, &st) : NULL;
    if (!v0) st = AM_ENOMEM;
    if (ode) {
        am_msgd_initial(init, 0, v0);
        am_ode_output out = {err, norm, NULL, NULL};
        st = am_ode_solve(ode, mp->mu, v0, t, n, &out, stats);
    }
    am_ode_free(ode);
    free(v0);
    am_msgd_free(init);
    return st;
}
