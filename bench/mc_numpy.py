"""NumPy peer of the Monte Carlo kernel: the same Async-MSGD step (no delay, mu = 0.5),
batched over replicas, one thread. Prints ns per coordinate-step for each (dim, dist).

    v_{k+1} = v_k + mu (v_k - v_{k-1}) + eta a (x - a v_k),  a = x . v_k
"""
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402


def kernel(d, dist, R, N, seed=1):
    rng = np.random.default_rng(seed)
    lam = np.linspace(4.0, 1.0, d)
    sl = np.sqrt(lam)
    v = rng.standard_normal((R, d))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    vp = v.copy()
    eta, mu = 1e-4, 0.5
    t0 = time.perf_counter()
    for _ in range(N):
        if dist == "gaussian":
            x = rng.standard_normal((R, d)) * sl
        else:
            x = (rng.integers(0, 2, size=(R, d), dtype=np.int8) * 2 - 1) * sl
        a = np.einsum("ij,ij->i", x, v)[:, None]
        vn = v + mu * (v - vp) + (eta * a) * (x - a * v)
        vp, v = v, vn
    return time.perf_counter() - t0


def main():
    budget = float(sys.argv[1]) if len(sys.argv) > 1 else 4e7
    print("# dim dist numpy_ns replicas steps")
    for d in (4, 100, 1000):
        for dist in ("gaussian", "rademacher"):
            R = 4096 if d <= 100 else 1024
            N = max(10, int(budget / (R * d)))
            t = kernel(d, dist, R, N)
            print(f"{d} {dist} {1e9 * t / (R * N * d):.3f} {R} {N}", flush=True)


if __name__ == "__main__":
    main()
