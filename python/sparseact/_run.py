"""sparseact.run(): an analysis executable run from Python, its JSON read back (the analysis contract,
docs/DESIGN.md: exit 0 every claim holds, 3 a claim contradicted, 4 inconclusive, 2 bad input, 1 internal)."""
import collections
import json
import os
import pathlib
import shutil
import subprocess

from . import _paths

RunResult = collections.namedtuple("RunResult", ["result", "out", "returncode", "stdout"])
RunResult.__doc__ = ("An analysis run: `result` its parsed <name>.json, `out` the output folder (pathlib.Path), "
                     "`returncode` its exit status (0, 3 or 4), `stdout` what it printed.")


def _executable(name):
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"name: '{name}' is not an analysis name")
    dirs = [os.environ["SPARSEACT_BIN"]] if os.environ.get("SPARSEACT_BIN") else []
    for d in dirs + list(_paths.BIN_DIRS):
        p = pathlib.Path(d) / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    found = shutil.which(name)
    if found:
        return found
    raise ValueError(f"name: no analysis executable '{name}' in {dirs + list(_paths.BIN_DIRS)} or on PATH")


def _flag_args(flags):
    args = []
    for key, value in flags.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            args += [flag, ",".join(str(v) for v in value)]
        else:
            args += [flag, str(value)]
    return args


def run(name, *args, out=None, check=False, **flags):
    """Runs the analysis `name` (e.g. "mp_spectrum") as its executable, with `args` as positional
    arguments and each keyword as a flag (n=512 → --n 512, scale="quick" → --scale quick, a list →
    comma-separated, True → the bare flag, False/None → omitted), and returns a RunResult: the parsed
    JSON, the output folder, the exit status and the printed table.

    out: the output folder (default: the contract's results/<name> under the working directory).
    The executable comes from $SPARSEACT_BIN, this build's bin/ (or the installed one), or PATH.
    Bad flags (exit 2) raise ValueError with the analysis's one-line message; an internal error (exit
    1) raises RuntimeError. A contradicted or inconclusive claim (exit 3 or 4) is a finding, returned;
    with check=True it raises RuntimeError instead."""
    exe = _executable(name)
    out = pathlib.Path(out if out is not None else pathlib.Path("results") / name).resolve()
    cmd = [exe] + [str(a) for a in args] + _flag_args(flags) + ["--out", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode == 2:
        msg = p.stderr.strip().splitlines()
        raise ValueError(msg[-1] if msg else f"{name}: bad input (exit 2)")
    if p.returncode not in (0, 3, 4) or (check and p.returncode != 0):
        raise RuntimeError(f"{name} exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    with open(out / f"{name}.json") as f:
        result = json.load(f)
    return RunResult(result, out, p.returncode, p.stdout)
