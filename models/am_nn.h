/*
 * am_nn.h -- multinomial logistic regression and multilayer perceptrons with ReLU, trained
 * with softmax cross-entropy on minibatches (the models of Dai et al.'s staleness study).
 *
 * Layer sizes n_0 = d (inputs), n_1..n_{L-1} (hidden widths), n_L = K (classes). For a
 * minibatch X (m x d, row-major) with labels y:
 *   A_0 = X,  Z_l = A_{l-1} W_l^T + 1 b_l^T,  A_l = max(Z_l, 0) (l < L),  Z_L = logits,
 *   loss = (1/m) sum_i [ lse(Z_L[i,:]) - Z_L[i, y_i] ],  lse(z) = max z + log sum_k e^{z_k - max
 * z}, and the analytic gradient by back-propagation: D_L = (softmax(Z_L) - onehot(y)) / m,  dW_l =
 * D_l^T A_{l-1},  db_l = 1^T D_l, D_{l-1} = (D_l W_l) .* [A_{l-1} > 0]. Parameters live in one flat
 * vector theta of am_nn_dim() doubles, layer after layer: W_l (n_l x n_{l-1}, row-major) then b_l
 * (n_l); gradients have the same layout, so staleness snapshots and optimisers (am_optim.h) work on
 * flat vectors. Specs: "mlr" (L = 1, no hidden layer) and "mlp:W1,W2,..." (hidden widths, any
 * depth). The GEMMs go to OpenBLAS through its Fortran entry dgemm_ (GSL keeps its own CBLAS for
 * the cblas_* names, so the other engines' results do not change); a run uses one BLAS
 * thread (am_nn_blas_single_thread), which also makes it bit-reproducible on one machine.
 * Start (am_nn_init): W_l ~ N(0, 2 / n_{l-1}) for the ReLU layers (He), W_L ~ N(0, 1 / n_{L-1}),
 * biases 0, normals from the Philox stream AM_STREAM_INIT of (seed, replica), step 0.
 */
#ifndef AM_NN_H
#define AM_NN_H

#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"
#include "am_classset.h"

/* Most hidden layers and widest layer a spec may ask for. */
#define AM_NN_MAX_DEPTH 32
#define AM_NN_MAX_WIDTH 65536

typedef struct am_nn am_nn;

/* Builds the model of a spec for d inputs and K classes; NULL with *status (AM_EINVAL with a
 * reason in err for a bad spec, AM_ENOMEM) on failure. */
am_nn *am_nn_alloc(const char *spec, size_t d, size_t classes, am_status *status, char *err,
                   size_t errlen);

/* The same for images of rows x cols pixels (d = rows cols); the only way to build a "cnn". */
am_nn *am_nn_alloc_image(const char *spec, size_t rows, size_t cols, size_t classes,
                         am_status *status, char *err, size_t errlen);

/* Frees a model; NULL is safe. */
void am_nn_free(am_nn *net);

/* Number of parameters (length of theta). */
size_t am_nn_dim(const am_nn *net);

/* Number of inputs d (pixels for an image model). */
size_t am_nn_inputs(const am_nn *net);

/* Number of fully connected weight layers L (1 for mlr). */
size_t am_nn_layers(const am_nn *net);

/* Size n_l of fully connected layer l in 0..L (n_0 = d, or a cnn's flattened feature map). */
size_t am_nn_width(const am_nn *net, size_t l);

/* The canonical spec ("mlr", "mlp:256,128"). */
const char *am_nn_spec(const am_nn *net);

/* Offset in theta of the fully connected W_l (l in 1..L); b_l follows at offset + n_l n_{l-1}. */
size_t am_nn_offset(const am_nn *net, size_t l);

/* Bytes of the workspace for minibatches of up to batch rows. */
size_t am_nn_work_bytes(const am_nn *net, size_t batch);

typedef struct am_nn_work am_nn_work;

/* A workspace for minibatches of up to batch rows; NULL with *status (AM_EINVAL for batch 0,
 * AM_ENOMEM when am_nn_work_bytes exceeds AM_MEMORY_LIMIT or allocation fails). */
am_nn_work *am_nn_work_alloc(const am_nn *net, size_t batch, am_status *status);

/* Frees a workspace; NULL is safe. */
void am_nn_work_free(am_nn_work *w);

/* Writes the start theta of (seed, replica). */
void am_nn_init(const am_nn *net, uint64_t seed, uint64_t replica, double *theta);

/* Mean cross-entropy of m <= batch rows x (m x d) with labels y at theta; writes its gradient
 * into grad[am_nn_dim] unless grad is NULL. */
double am_nn_loss_grad(const am_nn *net, am_nn_work *w, const double *theta, const double *x,
                       const int *y, size_t m, double *grad);

/* Rows among the m <= batch whose largest logit (first on ties) is at the label; the mean
 * cross-entropy is written to *loss unless loss is NULL. */
size_t am_nn_correct(const am_nn *net, am_nn_work *w, const double *theta, const double *x,
                     const int *y, size_t m, double *loss);

/* Accuracy (fraction correct) of theta over rows first..first+n-1 of a set, read in chunks
 * of the workspace's batch size; the mean cross-entropy goes to *loss unless it is NULL. */
double am_nn_accuracy(const am_nn *net, am_nn_work *w, const double *theta, const am_classset *set,
                      size_t first, size_t n, double *loss);

/* Mean loss over rows first..first+n-1 of a set and its gradient into grad (full-batch
 * gradient when n is the whole set), in chunks of the batch size, summed in row order. */
double am_nn_set_grad(const am_nn *net, am_nn_work *w, const double *theta, const am_classset *set,
                      size_t first, size_t n, double *grad);

/* The input scratch of a workspace: batch d doubles and batch labels, for minibatch gathers
 * (am_classset_gather) that feed am_nn_loss_grad. */
double *am_nn_work_x(am_nn_work *w);
int *am_nn_work_y(am_nn_work *w);

/* Makes OpenBLAS use one thread in this process (OPENBLAS_NUM_THREADS=1 does the same). */
void am_nn_blas_single_thread(void);

/* The BLAS library, its version and the kernel it chose for this CPU when it was loaded, as
 * "OpenBLAS 0.3.21 Haswell" (written into buf[len]). The GEMM kernels of different CPUs round
 * differently, and a network trained long enough turns that into other results: the studies
 * record this string in their checkpoints and JSON, and a checkpoint of another kernel is
 * refused (OPENBLAS_CORETYPE=NAME selects a kernel the CPU supports). */
void am_nn_blas(char *buf, size_t len);

/* 1 if OPENBLAS_CORETYPE=core can run on this CPU: the kernel loaded now, or one of SkylakeX
 * (AVX-512), Haswell, Zen, Sandybridge (on a CPU with AVX2) and Prescott (any x86-64); else 0. */
int am_nn_blas_core_runs(const char *core);

#endif
