"""ctest's entry to the Python module's tests: runs pytest on the folder given, or exits 77 (ctest's
"skipped") naming what this interpreter cannot import.

Under `sparseact.sh sanitize` (SPARSEACT_TEST_PRELOAD names the ASan runtime) the module is instrumented
and python3 is not: the runtime must be loaded first, so the script re-runs itself with it in LD_PRELOAD,
leaks unchecked (the interpreter keeps its own allocations until exit)."""
import os
import sys

preload = os.environ.get("SPARSEACT_TEST_PRELOAD", "")
if preload and preload not in os.environ.get("LD_PRELOAD", ""):
    env = dict(os.environ)
    env["LD_PRELOAD"] = " ".join(p for p in (preload, env.get("LD_PRELOAD", "")) if p)
    env["ASAN_OPTIONS"] = ":".join(p for p in (env.get("ASAN_OPTIONS", ""), "detect_leaks=0") if p)
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

missing = []
for name in ("pytest", "numpy", "scipy", "sparseact"):
    try:
        __import__(name)
    except ImportError as e:
        missing.append(f"{name} ({e})")
if missing:
    print(f"skipped: {sys.executable} cannot import " + ", ".join(missing), flush=True)
    sys.exit(77)

import pytest  # noqa: E402

sys.exit(pytest.main([sys.argv[1], "-q", "-p", "no:cacheprovider", "-rs"]))
