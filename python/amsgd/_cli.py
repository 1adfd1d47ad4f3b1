"""The ctypes layer of the amsgd binding: loads libamsgd-cli.so.0, turns keyword arguments
into the command's flags, runs the command in-process through am_cli_call (cli/embed.h) and
turns its JSON output into a dict with NumPy arrays."""
import ctypes
import json
import math
import os
import sys
import threading

try:
    import numpy as np
except ImportError as e:  # a python3 without NumPy (another interpreter first on PATH)
    raise ImportError(
        f"amsgd needs NumPy, which {sys.executable} does not have; run it with a python3 that "
        "has NumPy (Debian's /usr/bin/python3 with the package python3-numpy)") from e

LIBNAME = "libamsgd-cli.so.0"
ERRLEN = 1024

_lib = None
_lib_lock = threading.Lock()


def _candidates():
    """Where libamsgd-cli.so.0 is looked for, in order."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("AMSGD_LIBDIR")
    if env:
        yield os.path.join(env, LIBNAME)
    # installed: PREFIX/lib/python3/dist-packages/amsgd -> PREFIX/lib
    yield os.path.normpath(os.path.join(here, "..", "..", "..", LIBNAME))
    # source tree: python/amsgd -> build/
    yield os.path.normpath(os.path.join(here, "..", "..", "build", LIBNAME))
    yield LIBNAME  # the dynamic loader's search path (LD_LIBRARY_PATH, ld.so.conf)


def library():
    """The loaded libamsgd-cli.so.0 (loaded on first use)."""
    global _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if os.sep in path and not os.path.exists(path):
                tried.append(path)
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append(f"{path} ({e})")
                continue
            lib.am_cli_call.restype = ctypes.c_int
            lib.am_cli_call.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                        ctypes.POINTER(ctypes.c_void_p),
                                        ctypes.POINTER(ctypes.c_size_t), ctypes.c_char_p,
                                        ctypes.c_size_t]
            lib.am_cli_free.restype = None
            lib.am_cli_free.argtypes = [ctypes.c_void_p]
            lib.am_version.restype = ctypes.c_char_p
            lib.am_version.argtypes = []
            _lib = lib
            return lib
        raise ImportError(f"amsgd: cannot load {LIBNAME}; tried " + ", ".join(tried) +
                          " (set AMSGD_LIBDIR to the folder that holds it)")


def call(argv):
    """Runs `amsgd argv...` in-process; returns (status, stdout text, error message)."""
    lib = library()
    for a in argv:
        if "\0" in a:  # C strings end at the first NUL: the rest would be dropped silently
            raise ValueError(f"an argument holds a NUL character: {a!r}")
    args = [a.encode() for a in argv]
    arr = (ctypes.c_char_p * (len(args) + 1))(*args, None)
    out = ctypes.c_void_p()
    outlen = ctypes.c_size_t()
    err = ctypes.create_string_buffer(ERRLEN)
    status = lib.am_cli_call(len(args), arr, ctypes.byref(out), ctypes.byref(outlen), err,
                             ERRLEN)
    text = ""
    if out.value:
        text = ctypes.string_at(out.value, outlen.value).decode()
        lib.am_cli_free(out)
    return status, text, err.value.decode(errors="replace")


def _value(v):
    """The text of one flag value: shortest round-trip repr for floats, commas for lists."""
    if isinstance(v, (bool, np.bool_)):
        raise TypeError("boolean values are flags: pass True to give the flag, False to omit it")
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple, np.ndarray)):
        return ",".join(_value(x) for x in (v.tolist() if isinstance(v, np.ndarray) else v))
    raise TypeError(f"cannot pass a {type(v).__name__} as a flag value")


def argv_of(command, kwargs):
    """The command line of a binding call: flag = '--' + name with '_' -> '-'."""
    argv = [command]
    for name, v in kwargs.items():
        if name in ("format", "output", "o"):
            raise TypeError(f"amsgd.{command}() returns the JSON output as a dict: "
                            f"'{name}' is not an argument of the binding")
        if name in ("help", "h", "version", "V"):
            raise TypeError(f"'{name}' is not an argument of amsgd.{command}(): "
                            f"amsgd.help('{command}') is its help text, amsgd.version() the "
                            "version")
        flag = "--" + name.replace("_", "-")
        if v is None or v is False or (isinstance(v, np.bool_) and not v):
            continue
        if v is True or isinstance(v, np.bool_):
            argv.append(flag)
        else:
            argv += [flag, _value(v)]
    return argv + ["--format", "json"]


def _is_number(x):
    return x is None or (isinstance(x, (int, float)) and not isinstance(x, bool))


def _array(lst):
    """A NumPy array for a JSON array of numbers (or of equal-length arrays of numbers),
    None when lst is not numeric. Integers only -> int64; otherwise float64, null -> nan."""
    if not lst:
        return None
    if all(_is_number(x) for x in lst):
        if all(isinstance(x, int) for x in lst):
            return np.array(lst, dtype=np.int64)
        return np.array([math.nan if x is None else float(x) for x in lst], dtype=np.float64)
    if all(isinstance(x, list) for x in lst):
        rows = [_array(x) for x in lst]
        if all(r is not None for r in rows) and len({r.shape for r in rows}) == 1:
            dtype = np.int64 if all(r.dtype == np.int64 for r in rows) else np.float64
            return np.array([r.astype(dtype) for r in rows], dtype=dtype)
    return None


def convert(v):
    """JSON value -> Python: objects -> dicts, numeric arrays -> NumPy, null -> nan."""
    if isinstance(v, dict):
        return {k: convert(x) for k, x in v.items()}
    if isinstance(v, list):
        a = _array(v)
        return a if a is not None else [convert(x) for x in v]
    if v is None:
        return math.nan
    return v


def run(command, kwargs):
    """Runs one subcommand with --format json and returns its output as a dict."""
    status, text, err = call(argv_of(command, kwargs))
    if status == 2:
        raise ValueError(err)
    if status == 130:  # a sweep (phase, knee) stopped by SIGINT: nothing was written
        raise KeyboardInterrupt(f"amsgd {command} interrupted")
    if status not in (0, 1):
        raise RuntimeError(err or f"amsgd {command} failed with exit status {status}")
    return convert(json.loads(text))


def help_text(command):
    """The text of `amsgd COMMAND --help`."""
    status, text, err = call([command, "--help"])
    if status != 0:
        raise ValueError(err)
    return text
