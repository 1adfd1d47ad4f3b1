#!/usr/bin/python3
"""PyTorch on CPU doing the training step of bench/bench_nn.c, and the table of both.

The step: a 784-H-10 MLP (nn.Linear, ReLU, nn.Linear) in float64 on one thread
(torch.set_num_threads(1)), forward, F.cross_entropy, backward, torch.optim.SGD step, on a
fixed minibatch of B pixel-like inputs, for (H, B) = (256, 32) and (64, 16). Times are the
median of 7 blocks of about 0.2 s each, as in bench_nn.c.

Usage: /usr/bin/python3 bench/nn_torch.py [AMSGD_OUTPUT]
With the output of build/bench_nn as argument, prints both lines and the ratio
torch / amsgd (> 1: amsgd is faster) for each size.
"""
import re
import statistics
import sys
import time

import torch
import torch.nn.functional as F

SIZES = [(256, 32), (64, 16)]


def bench(h, b):
    torch.manual_seed(1)
    model = torch.nn.Sequential(
        torch.nn.Linear(784, h), torch.nn.ReLU(), torch.nn.Linear(h, 10)).double()
    x = torch.randint(0, 256, (b, 784), dtype=torch.float64) / 255.0
    y = torch.randint(0, 10, (b,))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def steps(n):
        for _ in range(n):
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()

    n = 10
    while True:
        t0 = time.perf_counter()
        steps(n)
        if time.perf_counter() - t0 > 0.2:
            break
        n *= 2
    per = []
    for _ in range(7):
        t0 = time.perf_counter()
        steps(n)
        per.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(per)


def main():
    torch.set_num_threads(1)
    ours = {}
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as f:
            for line in f:
                m = re.match(r"amsgd mlp (\d+) batch (\d+): ([0-9.]+) us per step", line)
                if m:
                    ours[(int(m.group(1)), int(m.group(2)))] = float(m.group(3))
    print(f"# torch {torch.__version__}, threads {torch.get_num_threads()}, float64")
    for h, b in SIZES:
        t = bench(h, b)
        if (h, b) in ours:
            print(f"amsgd mlp {h} batch {b}: {ours[(h, b)]:.2f} us per step")
        print(f"torch mlp {h} batch {b}: {t:.2f} us per step")
        if (h, b) in ours:
            print(f"ratio mlp {h} batch {b}: torch / amsgd = {t / ours[(h, b)]:.2f}")


if __name__ == "__main__":
    main()
