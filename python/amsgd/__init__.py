"""amsgd from Python: the subcommands of the amsgd command as functions.

Each function runs the command in-process (ctypes over libamsgd-cli.so.0, which links
libamsgd.so.0) through the command's own parse -> run -> JSON writer, so

    amsgd.mc(delay="const:4", time=1, replicas=200)

returns what `amsgd mc --delay const:4 --time 1 --replicas 200 --format json` prints, as a
dict with the same keys: numeric JSON arrays become NumPy arrays (float64, null -> nan;
int64 when every entry is an integer), a JSON null becomes nan, the numbers are the same
bits. Keyword arguments are the command's flags with '_' for '-' (delay_scaling="none"),
True for a flag without value (sde=True), lists for comma lists (spectrum=[4, 3, 2, 1]).
A bad argument raises ValueError with the command's one-line message; a runtime failure
raises RuntimeError. `amsgd.help("mc")` is the text of `amsgd mc --help`. See
docs/python.md.
"""
from . import _cli

__all__ = ["theory", "mc", "sde", "ode", "dde", "compare", "converge", "phase", "knee", "staleness",
           "runtime", "call", "help", "version"]


def theory(**kwargs):
    """Closed-form predictions (`amsgd theory`): moments, OU, phase times, delay bounds."""
    return _cli.run("theory", kwargs)


def mc(**kwargs):
    """Discrete Async-MSGD as a Monte Carlo ensemble (`amsgd mc`)."""
    return _cli.run("mc", kwargs)


def sde(**kwargs):
    """SDE limits by Euler-Maruyama (`amsgd sde`)."""
    return _cli.run("sde", kwargs)


def ode(**kwargs):
    """The deterministic limit ODE solved with CVODE (`amsgd ode`)."""
    return _cli.run("ode", kwargs)


def dde(**kwargs):
    """The delay-differential limit at a fixed lag, by the method of steps (`amsgd dde`)."""
    return _cli.run("dde", kwargs)


def compare(**kwargs):
    """mc, sde and ode on one grid with their gaps (`amsgd compare`)."""
    return _cli.run("compare", kwargs)


def converge(**kwargs):
    """Weak error over an eta ladder with the fitted order (`amsgd converge`). A failed order
    check (exit status 1 of the command) is a result: the dict carries its verdict."""
    return _cli.run("converge", kwargs)


def phase(**kwargs):
    """A momentum x delay grid of one metric with the theory's boundaries (`amsgd phase`)."""
    return _cli.run("phase", kwargs)


def knee(**kwargs):
    """The critical delay per momentum and its scaling exponent (`amsgd knee`)."""
    return _cli.run("knee", kwargs)


def staleness(**kwargs):
    """Steps to a target under simulated staleness, per optimiser (`amsgd staleness`)."""
    return _cli.run("staleness", kwargs)


def runtime(**kwargs):
    """Parameter-server variants: time per iteration and staleness (`amsgd runtime`)."""
    return _cli.run("runtime", kwargs)


def call(command, **kwargs):
    """Any subcommand with --format json (e.g. call("validate", quick=True)), as a dict."""
    return _cli.run(command, kwargs)


def help(command):  # noqa: A001 (the name of the command)
    """The text of `amsgd COMMAND --help`."""
    return _cli.help_text(command)


def version():
    """The version of the loaded library (as `amsgd --version` prints it)."""
    return _cli.library().am_version().decode()
