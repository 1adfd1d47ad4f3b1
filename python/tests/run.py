"""Runs the binding's tests (unittest) and ends with one summary line of its own,
"python-test: N tests, F failures, E errors (S s)", instead of unittest's closing "OK".
Exit status 0 when every test passed. Usage: python3 python/tests/run.py"""
import os
import sys
import time
import unittest


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py", top_level_dir=here)
    stream = unittest.runner._WritelnDecorator(sys.stderr)
    result = unittest.TextTestResult(stream, descriptions=False, verbosity=2)
    t0 = time.monotonic()
    suite.run(result)
    elapsed = time.monotonic() - t0
    result.printErrors()
    print(f"python-test: {result.testsRun} tests, {len(result.failures)} failures, "
          f"{len(result.errors)} errors ({elapsed:.1f} s)", flush=True)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
