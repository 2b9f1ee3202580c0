#!/usr/bin/python3
"""Executes a notebook through the clang-repl Jupyter kernel with nbclient, as Jupyter would, and fails
on any error.

    execute_notebook.py NOTEBOOK --build BUILD_DIR [--out DIR] [--cell-timeout SECONDS]

docs/DESIGN.md, Notebooks: nbclient (Debian's python3-nbclient) starts tools/jupyter_kernel/sparseact_kernel.py
(ipykernel, Debian's python3-ipykernel) through a kernelspec written into BUILD/jupyter (the user's
Jupyter folders are not touched), with BUILD/include searched first so the build under test's
<sparseact/cling.hpp> loads its own libsparseact. Each cell has a timeout (nbclient interrupts the
kernel and the test fails). The test fails on an error output (a compiler error, an interrupt, a
crash), on "error:" in a cell's standard error, on a cell that calls xcpp::display without showing an
image/png, and on a notebook not committed clean (run_notebook.check_clean). The executed notebook is
written to OUT/<name>.ipynb and rendered to OUT/<name>.html by nbconvert (figures embedded), for
reading without a kernel.

Where nbclient or ipykernel is not importable, or under `sparseact.sh sanitize` (SPARSEACT_TEST_PRELOAD:
the kernel's Python must not run under the ASan runtime), it runs run_notebook.py instead: the cells as
clang-repl-16 inputs, no Jupyter. Exit status: 0 pass, 1 fail, 77 skipped (clang-repl-16 missing).
"""
import argparse
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KERNEL = os.path.join(ROOT, "tools", "jupyter_kernel", "sparseact_kernel.py")
sys.path.insert(0, HERE)
import run_notebook  # noqa: E402  (check_clean, find_clang_repl, SKIP)

DISPLAY_CALL = re.compile(r"\bxcpp\s*::\s*display\s*\(")
ERROR = re.compile(r"\berror:")


def fall_back(reason):
    print(f"# {reason}: running the cells with run_notebook.py instead of a Jupyter kernel", flush=True)
    script = os.path.join(HERE, "run_notebook.py")
    os.execv(sys.executable, [sys.executable, script] + FALLBACK_ARGS)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebook")
    ap.add_argument("--build", required=True)
    ap.add_argument("--src", required=True, help="passed to run_notebook.py when falling back")
    ap.add_argument("--out", help="where the executed notebook and its HTML go (default BUILD/notebooks)")
    ap.add_argument("--cell-timeout", type=int, default=600)
    args = ap.parse_args()
    global FALLBACK_ARGS
    FALLBACK_ARGS = [args.notebook, "--build", args.build, "--src", args.src]
    name = os.path.basename(args.notebook)

    def verdict(ok, message):
        print(f"NOTEBOOK {'PASS' if ok else 'FAIL'} {name}: {message}", flush=True)
        return 0 if ok else 1

    if run_notebook.find_clang_repl(os.environ.get("SPARSEACT_CLANG_REPL")) is None:
        print(f"NOTEBOOK SKIP {name}: clang-repl-16 is not installed (Debian package clang-tools-16)", flush=True)
        return run_notebook.SKIP
    if os.environ.get("SPARSEACT_TEST_PRELOAD"):
        fall_back("SPARSEACT_TEST_PRELOAD is set (sanitize)")
    try:
        import ipykernel  # noqa: F401
        import nbformat
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError
    except ImportError as e:
        fall_back(f"{sys.executable} cannot import {e.name} (Debian's python3-nbclient, python3-ipykernel)")

    build = os.path.abspath(args.build)
    out_dir = os.path.abspath(args.out or os.path.join(build, "notebooks"))
    os.makedirs(out_dir, exist_ok=True)
    notebook = os.path.abspath(args.notebook)
    nb = nbformat.read(notebook, as_version=4)
    problems = run_notebook.check_clean(nb)

    # The kernelspec, in the build: JUPYTER_PATH puts it before any xcpp17 the user has.
    spec_dir = os.path.join(build, "jupyter", "kernels", "xcpp17")
    os.makedirs(spec_dir, exist_ok=True)
    tmp = os.path.join(spec_dir, f".kernel.json.{os.getpid()}")  # tests run in parallel: replaced whole
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"argv": [sys.executable, "-Xfrozen_modules=off", KERNEL, "-f", "{connection_file}"], "display_name": "C++17 (clang-repl)",
                   "language": "C++17", "interrupt_mode": "signal"}, f, indent=1)
    os.replace(tmp, os.path.join(spec_dir, "kernel.json"))
    os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (os.path.join(build, "jupyter"), os.environ.get("JUPYTER_PATH")) if p)
    os.environ["SPARSEACT_KERNEL_INCLUDE"] = os.path.join(build, "include")
    os.environ.setdefault("OMP_NUM_THREADS", "2")

    client = NotebookClient(nb, timeout=args.cell_timeout, kernel_name="xcpp17", startup_timeout=120,
                            resources={"metadata": {"path": os.path.dirname(notebook)}})
    start = time.monotonic()
    failure = None
    try:
        client.execute()
    except CellExecutionError as e:
        failure = str(e).strip().splitlines()[-1] if str(e).strip() else "a cell failed"
    except Exception as e:  # a timeout (nbclient's CellTimeoutError), a kernel that died or did not start
        failure = f"{type(e).__name__}: {e}"
    elapsed = time.monotonic() - start

    failures = list(problems)
    if failure:
        failures.append(failure)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    figures = 0
    for i, cell in enumerate(code_cells):
        print(f"--- cell {i} [{cell.get('execution_count')}] ---\n# {cell.source.strip().splitlines()[0][:100] if cell.source.strip() else ''}")
        pngs = 0
        for o in cell.get("outputs", []):
            if o.output_type == "stream":
                text = o.text if len(o.text) < 4000 else o.text[:2000] + "\n[...]\n" + o.text[-1500:]
                print(text.rstrip("\n") if o.name == "stdout" else "[stderr] " + text.rstrip("\n"))
                if o.name == "stderr" and ERROR.search(o.text):
                    failures.append(f"cell {i}: error on standard error")
            elif o.output_type in ("display_data", "execute_result"):
                kinds = {k: len(v) for k, v in o.data.items()}
                print(f"[{o.output_type}] " + " ".join(f"{k} {n}" for k, n in kinds.items()))
                if kinds.get("image/png", 0) > 0:
                    pngs += 1
            elif o.output_type == "error":
                print(f"[error] {o.ename}: {o.evalue}\n" + "\n".join(o.traceback))
                failures.append(f"cell {i}: {o.ename}")
        figures += pngs
        if DISPLAY_CALL.search(cell.source) and cell.get("execution_count") is not None and pngs == 0:
            failures.append(f"cell {i} calls xcpp::display but shows no image/png")
    sys.stdout.flush()

    stem = os.path.splitext(name)[0]
    nbformat.write(nb, os.path.join(out_dir, name))
    try:
        from nbconvert import HTMLExporter
        html, _ = HTMLExporter().from_notebook_node(nb)
        with open(os.path.join(out_dir, stem + ".html"), "w", encoding="utf-8") as f:
            f.write(html)
        rendered = f", {out_dir}/{stem}.html"
    except Exception as e:  # nbconvert missing or its templates: the notebook is still written
        rendered = f" (no HTML: {type(e).__name__}: {e})"

    failures = list(dict.fromkeys(failures))
    if failures:
        return verdict(False, "; ".join(failures) + f" ({elapsed:.1f} s; {out_dir}/{name}{rendered})")
    return verdict(True, f"{len(code_cells)} code cells through the kernel, {figures} figure(s), {elapsed:.1f} s; "
                         f"{out_dir}/{name}{rendered}")


FALLBACK_ARGS = []

if __name__ == "__main__":
    sys.exit(main())
