/*
 * am_sweep_impl.h -- internals shared by the checkpointed studies (am_phase.c, am_knee.c,
 * am_tradeoff.c, am_nnstale_preset.c): their sweep parameters from their own.
 */
#ifndef AM_SWEEP_IMPL_H
#define AM_SWEEP_IMPL_H

#include "am_sweep.h"

/* Sets the am_sweep_params sp of a study whose parameters *s have the fields checkpoint,
 * resume, cancel, progress and progress_ctx: the defaults with those, the fingerprint fps and
 * the cell check check. */
#define AM_SWEEP_STUDY_PARAMS(sp, s, fps, check)                                                   \
    do {                                                                                           \
        (sp) = am_sweep_params_default();                                                          \
        (sp).checkpoint = (s)->checkpoint;                                                         \
        (sp).resume = (s)->resume;                                                                 \
        (sp).fingerprint = (fps);                                                                  \
        (sp).stop = (s)->cancel;                                                                   \
        (sp).progress = (s)->progress;                                                             \
        (sp).progress_ctx = (s)->progress_ctx;                                                     \
        (sp).check_cell = (check);                                                                 \
    } while (0)

#endif
