"""NumPy peer of the Monte Carlo kernel: the same Async-MSGD step (constant delay 8,
mu = 0.9, eta = 1e-4), batched over replicas, one thread. Prints ns per coordinate-step for
each (dim, dist), then ns per replica-step at the size of `amsgd phase --preset liu2018
--replicas 40` (d = 4, 40 replicas, 40,000 steps per cell, delay 80 as a middle cell).

    v_{k+1} = v_k + mu (v_k - v_{k-1}) + eta a (x - a w),  a = x . w,  w = v_{k-tau}
"""
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402


def kernel(d, dist, R, N, tau=8, mu=0.9, eta=1e-4, seed=1):
    rng = np.random.default_rng(seed)
    lam = np.linspace(4.0, 1.0, d)
    sl = np.sqrt(lam)
    v = rng.standard_normal((R, d))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    L = tau + 2
    ring = np.repeat(v[None, :, :], L, axis=0)  # ring[k % L] = v_k
    t0 = time.process_time()
    for k in range(N):
        cur = k % L
        v, vp, w = ring[cur], ring[(k - 1) % L], ring[(k - tau) % L]
        if dist == "gaussian":
            x = rng.standard_normal((R, d)) * sl
        else:
            x = (rng.integers(0, 2, size=(R, d), dtype=np.int8) * 2 - 1) * sl
        a = np.einsum("ij,ij->i", x, w)[:, None]
        ring[(k + 1) % L] = v + mu * (v - vp) + (eta * a) * (x - a * w)
    return time.process_time() - t0


def main():
    budget = float(sys.argv[1]) if len(sys.argv) > 1 else 4e7
    print("# dim dist numpy_ns replicas steps")
    for d in (4, 100, 1000):
        for dist in ("gaussian", "rademacher"):
            R = 4096 if d <= 100 else 1024
            N = max(10, int(budget / (R * d)))
            t = kernel(d, dist, R, N)
            print(f"{d} {dist} {1e9 * t / (R * N * d):.3f} {R} {N}", flush=True)
    # liu2018 size: ns per replica-step of one cell
    N = int(os.environ.get("BENCH_NUMPY_LIU_STEPS", "40000"))
    t = kernel(4, "gaussian", 40, N, tau=80)
    print(f"liu2018 gaussian {1e9 * t / (40 * N):.1f} 40 {N}", flush=True)


if __name__ == "__main__":
    main()
