"""Numba peer of the Monte Carlo kernel: the same Async-MSGD step (constant delay 8,
mu = 0.9, eta = 1e-4) written as a compiled loop over replicas and steps, one replica at a
time (what a per-replica simulation in Numba looks like), one thread. Prints ns per
coordinate-step for each (dim, dist); the compilation is done before the timing.
"""
import os
import sys
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
import numpy as np  # noqa: E402
from numba import njit  # noqa: E402


@njit(cache=False)
def run(d, gaussian, R, N, tau, mu, eta, seed):
    np.random.seed(seed)
    sl = np.sqrt(np.linspace(4.0, 1.0, d))
    L = tau + 2
    ring = np.empty((L, d))
    x = np.empty(d)
    acc = 0.0
    for r in range(R):
        v0 = np.random.standard_normal(d)
        v0 /= np.sqrt(np.sum(v0 * v0))
        for s in range(L):
            ring[s] = v0
        for k in range(N):
            cur = k % L
            prev = (k - 1) % L
            old = (k - tau) % L
            nxt = (k + 1) % L
            if gaussian:
                for i in range(d):
                    x[i] = np.random.standard_normal() * sl[i]
            else:
                for i in range(d):
                    x[i] = sl[i] if np.random.random() < 0.5 else -sl[i]
            a = 0.0
            for i in range(d):
                a += x[i] * ring[old, i]
            ea = eta * a
            for i in range(d):
                vi = ring[cur, i]
                ring[nxt, i] = vi + mu * (vi - ring[prev, i]) + ea * (x[i] - a * ring[old, i])
        acc += ring[N % L, 0]
    return acc


def main():
    budget = float(sys.argv[1]) if len(sys.argv) > 1 else 4e7
    run(4, True, 2, 100, 8, 0.9, 1e-4, 1)  # compile
    run(4, False, 2, 100, 8, 0.9, 1e-4, 1)
    print("# dim dist numba_ns replicas steps")
    for d in (4, 100, 1000):
        for dist in ("gaussian", "rademacher"):
            R = 64
            N = max(10, int(budget / (R * d)))
            t0 = time.process_time()
            run(d, dist == "gaussian", R, N, 8, 0.9, 1e-4, 1)
            t = time.process_time() - t0
            print(f"{d} {dist} {1e9 * t / (R * N * d):.3f} {R} {N}", flush=True)


if __name__ == "__main__":
    main()
