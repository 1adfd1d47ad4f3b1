#!/usr/bin/python3
"""ode_scipy.py -- SciPy solve_ivp on the limit ODE, against the CVODE run of bench_ode.

    dV/dt = (1/(1-mu)) [ Sigma V - (V^T Sigma V) V ],   V(0) = v_0,   Sigma = Q diag(lambda) Q^T

Reads the case files that bench_ode wrote (same spectrum, eigenbasis, initial point, grid,
rtol and atol), solves the same right-hand side with solve_ivp (methods LSODA, the Adams/BDF
switching code closest to CVODE-Adams; DOP853 and RK45, explicit Runge-Kutta pairs), and
scores both trajectories against one closed form (theory.md section 2):

    H_i(t) = H_i(0) exp(lambda_i s) / sqrt(sum_j H_j(0)^2 exp(2 lambda_j s)),  s = t/(1-mu),
    H = Q^T V.

Error = max over the grid of |V - V_closed| (|V_closed| = 1: a relative error). SciPy runs at
the first tolerance pair bench_ode was given (the defaults of `amsgd ode`, rtol 1e-9 and
atol 1e-13); bench_ode may also have run CVODE at other pairs. Prints two tables:

1. same tolerances: one row per case and method, CVODE at SciPy's rtol/atol: d, rotated,
   cvode_ms, method, scipy_ms, ratio = scipy_ms / cvode_ms, both errors, both RHS counts;
2. equal or better accuracy: per case, SciPy's fastest method (the "best") and each other
   method against the fastest CVODE run, over all its tolerance pairs, whose error is at most
   that method's error; ratio above 1: CVODE faster.

Run with /usr/bin/python3 (Debian's numpy and scipy).

usage: ode_scipy.py DIR
"""
import glob
import os
import sys
import time

import numpy as np
import scipy
from scipy.integrate import solve_ivp


# LSODA: Adams (switching to BDF when stiff), the algorithm closest to CVODE-Adams;
# DOP853 and RK45 (SciPy's default): explicit Runge-Kutta pairs of order 8 and 5.
METHODS = ("LSODA", "DOP853", "RK45")


def read_case(path):
    x = np.fromfile(path, dtype="<f8")
    d, n = int(x[0]), int(x[1])
    mu, rtol, atol, secs, steps, nfe = x[2:8]
    k = 8
    lam = x[k:k + d]; k += d
    v0 = x[k:k + d]; k += d
    t = x[k:k + n]; k += n
    rest = x.size - k
    if rest == d * d + n * d:
        q = x[k:k + d * d].reshape(d, d); k += d * d
    elif rest == n * d:
        q = None
    else:
        raise SystemExit(f"{path}: unexpected size")
    v = x[k:k + n * d].reshape(n, d)
    return dict(d=d, n=n, mu=mu, rtol=rtol, atol=atol, secs=secs, steps=int(steps),
                nfe=int(nfe), lam=lam, v0=v0, t=t, q=q, v=v)


def closed_form(c):
    lam, q, t = c["lam"], c["q"], c["t"]
    h0 = c["v0"] if q is None else q.T @ c["v0"]
    s = t[:, None] / (1.0 - c["mu"])
    h = h0[None, :] * np.exp((lam[None, :] - lam[0]) * s)
    h /= np.linalg.norm(h, axis=1)[:, None]
    return h if q is None else h @ q.T


def make_rhs(c):
    lam, q, k = c["lam"], c["q"], 1.0 / (1.0 - c["mu"])
    if q is None:
        def f(t, v):
            s = lam * v
            return k * (s - (v @ s) * v)
    else:
        sigma = (q * lam) @ q.T  # dense Sigma, as the C solver keeps it

        def f(t, v):
            s = sigma @ v
            return k * (s - (v @ s) * v)
    return f


def timed(fun, min_secs=0.5, max_reps=20):
    """Best CPU time of the process over repeated runs (as bench_ode: on a shared machine the
    wall time would count other jobs' time): at least three, more while under min_secs."""
    best, spent, reps, out = np.inf, 0.0, 0, None
    while reps < 3 or (spent < min_secs and reps < max_reps):
        t0 = time.process_time()
        out = fun()
        el = time.process_time() - t0
        best, spent, reps = min(best, el), spent + el, reps + 1
    return best, out


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    runs = {}  # (rotated, d) -> CVODE runs at every tolerance, the first = SciPy's tolerance
    for path in glob.glob(os.path.join(sys.argv[1], "case_*.bin")):
        k = int(os.path.basename(path)[:-4].split("_")[3])
        c = read_case(path)
        c["k"] = k
        runs.setdefault((c["q"] is not None, c["d"]), []).append(c)
    print(f"# scipy {scipy.__version__}, numpy {np.__version__}; error = max_g |V - V_closed|")
    print("# 1. same tolerances")
    print(f"{'d':>5} {'rotated':>7} {'rtol':>6} {'atol':>6} {'cvode_ms':>9} {'method':>6} "
          f"{'scipy_ms':>9} {'ratio':>7} {'cvode_err':>10} {'scipy_err':>10} {'nfe_cv':>7} {'nfe_sp':>7}")
    matched = []
    for key in sorted(runs):
        cv = sorted(runs[key], key=lambda r: r["k"])
        c = cv[0]
        exact = closed_form(c)
        for r in cv:
            r["err"] = np.linalg.norm(r["v"] - exact, axis=1).max()
        cv_err = c["err"]
        f = make_rhs(c)
        results = []
        for method in METHODS:
            def run():
                return solve_ivp(f, (0.0, c["t"][-1]), c["v0"], method=method, t_eval=c["t"],
                                 rtol=c["rtol"], atol=c["atol"])
            secs, sol = timed(run)
            if not sol.success:
                print(f"{c['d']:>5} {method}: {sol.message}")
                continue
            sp_err = np.linalg.norm(sol.y.T - exact, axis=1).max()
            print(f"{c['d']:>5} {'yes' if c['q'] is not None else 'no':>7} {c['rtol']:>6.0e} "
                  f"{c['atol']:>6.0e} {1e3 * c['secs']:>9.3f} {method:>6} {1e3 * secs:>9.2f} "
                  f"{secs / c['secs']:>7.1f} {cv_err:>10.2e} {sp_err:>10.2e} {c['nfe']:>7} "
                  f"{sol.nfev:>7}")
            results.append((secs, method, sp_err))
        matched.append((key, cv, sorted(results)))
    print("# 2. equal or better accuracy: the fastest CVODE run with cvode_err <= scipy_err;")
    print("#    best = SciPy's fastest method for the case")
    print(f"{'d':>5} {'rotated':>7} {'method':>13} {'scipy_ms':>9} {'scipy_err':>10} "
          f"{'cv_rtol':>7} {'cv_atol':>7} {'cvode_ms':>9} {'cvode_err':>10} {'ratio':>7}")
    for (rot, d), cv, results in matched:
        for i, (secs, method, sp_err) in enumerate(results):
            ok = [r for r in cv if r["err"] <= sp_err]
            name = f"{method}{' (best)' if i == 0 else ''}"
            head = f"{d:>5} {'yes' if rot else 'no':>7} {name:>13} {1e3 * secs:>9.2f} {sp_err:>10.2e}"
            if not ok:
                print(f"{head} {'none':>10}")
                continue
            r = min(ok, key=lambda r: r["secs"])
            print(f"{head} {r['rtol']:>7.0e} {r['atol']:>7.0e} {1e3 * r['secs']:>9.3f} {r['err']:>10.2e} "
                  f"{secs / r['secs']:>7.1f}")


if __name__ == "__main__":
    main()
