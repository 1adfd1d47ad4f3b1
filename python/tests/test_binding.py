"""Tests of the Python binding (python/amsgd) against the amsgd command.

Each function of the binding is run with keyword arguments and the command with the same
flags written out by hand; the binding's dict must have the same keys in the same order,
and every number must be the same bits as the command's JSON (null <-> nan). The command
is build/amsgd, or $AMSGD. Standard library unittest only; small sizes (a few seconds).
"""
import json
import math
import os
import shlex
import signal
import struct
import subprocess
import threading
import unittest

import numpy as np

import amsgd

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AMSGD = os.environ.get("AMSGD") or os.path.join(ROOT, "build", "amsgd")


def run_cli(flags):
    """(exit status, stdout, stderr) of `amsgd FLAGS`."""
    p = subprocess.run([AMSGD] + shlex.split(flags), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def cli_json(flags):
    """(exit status, parsed JSON) of `amsgd FLAGS --format json`."""
    rc, out, err = run_cli(flags + " --format json")
    if rc not in (0, 1):
        raise AssertionError(f"amsgd {flags} exited {rc}: {err}")
    return rc, json.loads(out)


def bits(x):
    return struct.pack("<d", x)


def _shape(v):
    """Shape of a nested JSON list of equal-length lists."""
    if isinstance(v, list):
        return (len(v),) + (_shape(v[0]) if v and isinstance(v[0], list) else ())
    return ()


def _flat(v):
    if isinstance(v, list):
        for x in v:
            yield from _flat(x)
    else:
        yield v


def same(got, ref, path="$"):
    """Raises AssertionError unless the binding's value `got` carries exactly the JSON value
    `ref`: dicts with the same keys in order, arrays with the same shape and bits (a JSON
    null is nan, an array of integers is int64), scalars of the same type and bits."""
    if isinstance(ref, dict):
        if not isinstance(got, dict):
            raise AssertionError(f"{path}: expected an object, got {type(got).__name__}")
        if list(got) != list(ref):
            raise AssertionError(f"{path}: keys {list(got)} != {list(ref)}")
        for k in ref:
            same(got[k], ref[k], f"{path}.{k}")
    elif isinstance(ref, list):
        if isinstance(got, np.ndarray):
            if got.shape != _shape(ref):
                raise AssertionError(f"{path}: shape {got.shape} != {_shape(ref)}")
            flat = list(_flat(ref))
            ints = all(isinstance(x, int) and not isinstance(x, bool) for x in flat)
            if got.dtype != (np.int64 if ints else np.float64):
                raise AssertionError(f"{path}: dtype {got.dtype} for {'integers' if ints else 'reals'}")
            g = got.ravel().tolist()
            if ints:
                if g != flat:
                    raise AssertionError(f"{path}: {g} != {flat}")
                return
            ref_arr = np.array([math.nan if x is None else float(x) for x in flat])
            if not np.array_equal(got.ravel(), ref_arr, equal_nan=True):
                raise AssertionError(f"{path}: values differ: {g} != {flat}")
            for i, (a, b) in enumerate(zip(g, flat)):
                if b is None:
                    if not math.isnan(a):
                        raise AssertionError(f"{path}[{i}]: {a} for null")
                elif bits(a) != bits(float(b)):
                    raise AssertionError(f"{path}[{i}]: {a!r} != {b!r} (bits)")
        else:
            if not isinstance(got, list) or len(got) != len(ref):
                raise AssertionError(f"{path}: expected a list of {len(ref)}, got {got!r}")
            for i, (a, b) in enumerate(zip(got, ref)):
                same(a, b, f"{path}[{i}]")
    elif ref is None:
        if not (isinstance(got, float) and math.isnan(got)):
            raise AssertionError(f"{path}: {got!r} for null")
    elif isinstance(ref, float):
        if not isinstance(got, float) or bits(got) != bits(ref):
            raise AssertionError(f"{path}: {got!r} != {ref!r}")
    elif type(got) is not type(ref) or got != ref:
        raise AssertionError(f"{path}: {got!r} != {ref!r}")


# (function, keyword arguments, the same call as command-line flags)
CASES = [
    ("theory", dict(mu=0.5, dist="student:6", eta=1e-3), "theory --mu 0.5 --dist student:6 --eta 1e-3"),
    ("theory", dict(dim=6, spectrum="linear:5:1", mu=0.2, delta=0.2),
     "theory --dim 6 --spectrum linear:5:1 --mu 0.2 --delta 0.2"),
    ("mc", dict(delay="const:4", time=1, replicas=200, grid=11, mu=0.3, threads=2),
     "mc --delay const:4 --time 1 --replicas 200 --grid 11 --mu 0.3 --threads 2"),
    ("mc", dict(spectrum=[4, 3, 2, 1], eta=2e-3, delay="geometric:3", time=1, replicas=100,
                grid=6, coords=True),
     "mc --spectrum 4,3,2,1 --eta 2e-3 --delay geometric:3 --time 1 --replicas 100 --grid 6 --coords"),
    ("sde", dict(time=0.5, replicas=100, grid=6, mu=0.3), "sde --time 0.5 --replicas 100 --grid 6 --mu 0.3"),
    ("ode", dict(time=2, grid=11, mu=0.5, coords=True), "ode --time 2 --grid 11 --mu 0.5 --coords"),
    ("dde", dict(lag=0.5, mu=0.5, time=3, grid=7, coords=True), "dde --lag 0.5 --mu 0.5 --time 3 --grid 7 --coords"),
    ("compare", dict(time=0.5, replicas=100, grid=6), "compare --time 0.5 --replicas 100 --grid 6"),
    ("converge", dict(etas="4e-3,2e-3", time=0.5, replicas=200, grid=6, sde=True),
     "converge --etas 4e-3,2e-3 --time 0.5 --replicas 200 --grid 6 --sde"),
    ("converge", dict(etas=[4e-3, 2e-3], mu=0.5, delay_scaling="inverse:2", time=0.5, replicas=200, grid=6),
     "converge --etas 4e-3,2e-3 --mu 0.5 --delay-scaling inverse:2 --time 0.5 --replicas 200 --grid 6"),
    ("phase", dict(mu_grid="0:0.5:2", tau_grid="0:4:2", replicas=20, time=1, quiet=True),
     "phase --mu-grid 0:0.5:2 --tau-grid 0:4:2 --replicas 20 --time 1 --quiet"),
    ("knee", dict(mus="0.5,0.8", tau_max=64, replicas=20, bootstrap=20, time=1, quiet=True),
     "knee --mus 0.5,0.8 --tau-max 64 --replicas 20 --bootstrap 20 --time 1 --quiet"),
    ("staleness", dict(objective="lsq", s=[0, 2], replicas=4),
     "staleness --objective lsq --s 0,2 --replicas 4"),
    ("runtime", dict(workers=4, K=[1, 2], updates=200, replicas=20),
     "runtime --workers 4 --K 1,2 --updates 200 --replicas 20"),
]

# (function, keyword arguments, the same call as flags) that the command refuses (exit 2)
BAD = [
    ("theory", dict(mu=1.5), "theory --mu 1.5"),
    ("mc", dict(delay="const:-1"), "mc --delay const:-1"),
    ("mc", dict(nosuchflag=1), "mc --nosuchflag 1"),
    ("sde", dict(dt=-1), "sde --dt -1"),
    ("ode", dict(rtol=0), "ode --rtol 0"),
    ("dde", dict(lag=0), "dde --lag 0"),
    ("dde", dict(), "dde"),
    ("compare", dict(replicas=0), "compare --replicas 0"),
    ("converge", dict(etas=1e-3), "converge --etas 0.001"),
    ("phase", dict(mu_grid="0:2:3"), "phase --mu-grid 0:2:3"),
    ("knee", dict(mus=[1.2]), "knee --mus 1.2"),
    ("staleness", dict(objective="nope"), "staleness --objective nope"),
    ("runtime", dict(K=0), "runtime --K 0"),
]


class Comparator(unittest.TestCase):
    """The comparison itself can fail: one ULP, a null, a key or a dtype is enough."""

    def setUp(self):
        self.ref = {"a": [1.0, None, 0.1], "n": 3, "m": [[1, 2], [3, 4]], "x": 0.5, "s": "y"}

    def good(self):
        return {"a": np.array([1.0, np.nan, 0.1]), "n": 3, "m": np.array([[1, 2], [3, 4]]),
                "x": 0.5, "s": "y"}

    def test_equal_passes(self):
        same(self.good(), self.ref)

    def test_one_ulp_fails(self):
        g = self.good()
        g["a"][2] = np.nextafter(0.1, 1.0)
        self.assertRaises(AssertionError, same, g, self.ref)

    def test_null_against_number_fails(self):
        g = self.good()
        g["a"][1] = 0.0
        self.assertRaises(AssertionError, same, g, self.ref)

    def test_key_order_and_dtype_fail(self):
        g = self.good()
        self.assertRaises(AssertionError, same, dict(reversed(list(g.items()))), self.ref)
        g["m"] = g["m"].astype(np.float64)
        self.assertRaises(AssertionError, same, g, self.ref)

    def test_scalar_bits_fail(self):
        g = self.good()
        g["x"] = np.nextafter(0.5, 0.0)
        self.assertRaises(AssertionError, same, g, self.ref)


class AgainstCommand(unittest.TestCase):
    """Every function of the binding against the command's JSON for the same arguments."""

    def check(self, func, kwargs, flags):
        _, ref = cli_json(flags)  # exit status 0 or 1 (a failed check is a result)
        got = getattr(amsgd, func)(**kwargs)
        try:
            same(got, ref)
        except AssertionError as e:
            raise AssertionError(f"amsgd.{func}(**{kwargs}) vs amsgd {flags}: {e}") from None
        return got

    def test_cases(self):
        funcs = set()
        for func, kwargs, flags in CASES:
            with self.subTest(flags=flags):
                self.check(func, kwargs, flags)
                funcs.add(func)
        self.assertEqual(funcs, {"theory", "mc", "sde", "ode", "dde", "compare", "converge", "phase",
                                 "knee", "staleness", "runtime"})

    def test_arrays_are_numpy(self):
        r = amsgd.mc(time=0.5, replicas=50, grid=6)
        self.assertIsInstance(r["err_mean"], np.ndarray)
        self.assertEqual(r["err_mean"].dtype, np.float64)
        self.assertEqual(r["step"].dtype, np.int64)
        self.assertEqual(r["err_mean"].shape, (6,))
        t = amsgd.theory()
        self.assertEqual(t["alpha2"].shape, (4, 4))
        self.assertTrue(math.isnan(t["C_d"]))  # null in the JSON (infinite for gaussian data)
        self.assertIsInstance(t["modes"], list)

    def test_failed_check_is_a_result(self):
        # converge exits 1 when the order check fails; the binding returns the dict
        flags = "converge --etas 4e-3,2e-3,1e-3 --time 1 --replicas 500 --grid 6 --order 3"
        rc, ref = cli_json(flags)
        self.assertEqual(rc, 1, "the command should fail this check (wrong predicted order)")
        got = amsgd.converge(etas="4e-3,2e-3,1e-3", time=1, replicas=500, grid=6, order=3)
        same(got, ref)
        self.assertEqual(got["verdict"], "FAIL")

    def test_repeated_calls_identical(self):
        a = amsgd.knee(mus="0.5,0.8", tau_max=64, replicas=20, bootstrap=20, time=1, quiet=True)
        b = amsgd.knee(mus="0.5,0.8", tau_max=64, replicas=20, bootstrap=20, time=1, quiet=True)
        same(a, json.loads(json.dumps(_plain(b))))

    def test_threads_serialised(self):
        flags = "mc --time 1 --replicas 100 --grid 6 --mu 0.5 --delay const:2"
        _, ref = cli_json(flags)
        out, errs = [None] * 4, []

        def work(i):
            try:
                out[i] = amsgd.mc(time=1, replicas=100, grid=6, mu=0.5, delay="const:2")
            except Exception as e:  # noqa: BLE001 (reported below)
                errs.append(e)
        th = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in th:
            t.start()
        for t in th:
            t.join()
        self.assertEqual(errs, [])
        for r in out:
            same(r, ref)

    def test_help(self):
        rc, text, _ = run_cli("mc --help")
        self.assertEqual(rc, 0)
        self.assertEqual(amsgd.help("mc"), text)

    def test_version(self):
        rc, text, _ = run_cli("--version")
        self.assertEqual(text.strip(), "amsgd " + amsgd.version())


def _plain(v):
    """The binding's value back as JSON-like Python (arrays -> lists, nan -> None)."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, np.ndarray):
        return _plain(v.tolist())
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


class Errors(unittest.TestCase):
    """A bad argument raises ValueError with the command's message; the process lives on."""

    def test_value_errors(self):
        for func, kwargs, flags in BAD:
            with self.subTest(flags=flags):
                rc, out, err = run_cli(flags)
                self.assertEqual(rc, 2, flags)
                self.assertEqual(out, "", flags)
                prefix = "amsgd: error: "
                self.assertTrue(err.startswith(prefix) and err.count("\n") == 1, err)
                with self.assertRaises(ValueError) as cm:
                    getattr(amsgd, func)(**kwargs)
                self.assertEqual(str(cm.exception), err[len(prefix):].rstrip("\n"))

    def test_runtime_error(self):
        rc, _, err = run_cli("ode --max-steps 1 --time 5")
        self.assertEqual(rc, 3)
        with self.assertRaises(RuntimeError) as cm:
            amsgd.ode(max_steps=1, time=5)
        self.assertEqual(str(cm.exception), err[len("amsgd: error: "):].rstrip("\n"))

    def test_bad_call_then_good_call(self):
        flags = "sde --time 0.5 --replicas 50 --grid 6"
        _, ref = cli_json(flags)
        for _ in range(3):
            with self.assertRaises(ValueError):
                amsgd.sde(time=0.5, replicas=50, grid=6, mu=2)
            with self.assertRaises(ValueError):
                amsgd.sde(time=0.5, replicas=50, grid=-6)
            same(amsgd.sde(time=0.5, replicas=50, grid=6), ref)

    def test_interrupted_sweep_then_sweep(self):
        # SIGINT stops a sweep (KeyboardInterrupt); the next sweep in the process runs whole
        big = dict(mu_grid="0:0.9:10", tau_grid="0:40:9", replicas=500, time=10, quiet=True)
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        try:
            with self.assertRaises(KeyboardInterrupt):
                amsgd.phase(**big)
        finally:
            timer.cancel()
        flags = "phase --mu-grid 0:0.5:2 --tau-grid 0:4:2 --replicas 20 --time 1 --quiet"
        _, ref = cli_json(flags)
        same(amsgd.phase(mu_grid="0:0.5:2", tau_grid="0:4:2", replicas=20, time=1, quiet=True), ref)

    def test_binding_arguments(self):
        self.assertRaises(TypeError, amsgd.mc, format="csv")
        self.assertRaises(TypeError, amsgd.mc, output="x.csv")
        self.assertRaises(TypeError, amsgd.mc, replicas=object())
        with self.assertRaises(ValueError) as cm:
            amsgd.call("nosuchcommand")
        self.assertEqual(str(cm.exception), "unknown command 'nosuchcommand' (see amsgd --help)")
        with self.assertRaises(ValueError):
            amsgd.call("figures", list=True)

    def test_nul_and_help_arguments(self):
        with self.assertRaises(ValueError) as cm:
            amsgd.mc(delay="const:4\0junk")
        self.assertIn("NUL", str(cm.exception))
        for name in ("help", "version"):
            with self.assertRaises(TypeError) as cm:
                amsgd.mc(**{name: True})
            self.assertIn("amsgd.help('mc')", str(cm.exception))

    def test_false_flag_is_omitted(self):
        flags = "ode --time 1 --grid 6"
        _, ref = cli_json(flags)
        same(amsgd.ode(time=1, grid=6, coords=False), ref)


class Interpreter(unittest.TestCase):
    """An interpreter without NumPy gets one clear ImportError naming it and the remedy."""

    def test_without_numpy(self):
        import sys
        code = "import sys; sys.modules['numpy'] = None; import amsgd"
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(amsgd.__file__)))
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        last = p.stderr.strip().splitlines()[-1]
        self.assertTrue(last.startswith("ImportError: amsgd needs NumPy, which ") and
                        "python3-numpy" in last, last)


if __name__ == "__main__":
    unittest.main()
