"""binding.py -- using amsgd from Python: the stationary error of Async-MSGD against the
delay, next to the OU prediction E[err] ~ eta/(2(1-mu)) sum_{i>=2} alpha_i1^2/(lambda_1-lambda_i)
(which ignores the delay), for mu = 0.5 and constant delays 0..40.
Run from the source tree:  PYTHONPATH=python python3 examples/binding.py
or against an install:     PYTHONPATH=$PREFIX/lib/python3/dist-packages python3 binding.py
"""
import amsgd

mu, eta = 0.5, 1e-3
predicted = amsgd.theory(mu=mu, eta=eta)["stationary_error"]
print(f"OU prediction (no delay): {predicted:.5f}")
print("delay  error (last saved time)    z vs prediction")
for tau in (0, 10, 20, 40):
    r = amsgd.mc(mu=mu, eta=eta, delay=f"const:{tau}", init="e:1", time=8, grid=9,
                 replicas=2000, seed=1)
    err, sem = r["err_mean"][-1], r["err_sem"][-1]
    print(f"{tau:5d}  {err:.5f} +- {sem:.5f}        {(err - predicted) / sem:+6.2f}")
