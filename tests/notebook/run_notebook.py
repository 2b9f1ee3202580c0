#!/usr/bin/python3
"""Runs a xeus-cling notebook's code cells under clang-repl-16 and fails on any error.

    run_notebook.py NOTEBOOK --build BUILD_DIR --src SRC_DIR

docs/DESIGN.md, Notebooks: the code cells run in order, each as ONE positional argument of
clang-repl-16 (v16 reads one input per argument, not multi-line stdin), with libsparseact
preloaded (LD_PRELOAD), the include paths the `#pragma cling add_include_path` lines name (in the
notebook and in the generated <sparseact/cling.hpp>), and Eigen told not to emit inline asm that
clang-repl 16 cannot JIT. No optimisation flag: clang-repl crashed on Eigen code with -O2.

clang-repl prints "error:" but exits 0 when a cell fails, so the runner fails on any "error:" in
the output, on a non-zero exit status and on a crash. Warnings do not count. A shim for
`xcpp::display` (xcpp_shim.hpp, injected as the first input) prints a line
"DISPLAY image/png <bytes> image/svg+xml <bytes>" per figure; a notebook that calls
xcpp::display must produce at least one image/png per cell that calls it.

The notebook must also be committed clean (no outputs, no execution counts) with the xcpp17
kernelspec. Cells are numbered from 0 among the code cells.

clang-repl 16 is not cling; what a notebook must avoid for both (found while writing notebook 001):
- a `const` (or `static`) variable at the top level of a cell has internal linkage, and clang-repl
  compiles each cell as its own module: a later cell that uses it fails with "Symbols not found:
  [ _ZL... ]". Declare top-level variables without const.
- a bare expression as the last line (cling's value printing) does not parse: print with std::cout.
- a top-level loop with a braced body crashes clang-repl 16 and a top-level range-for reads wrong
  values: the runner runs a cell that starts with for/while/do/if/switch/{ inside a lambda (see
  wrap_statement_cell). Loops inside functions are fine.

Exit status: 0 pass, 1 fail, 2 bad usage, 77 skipped (clang-repl-16 not installed; CTest's
SKIP_RETURN_CODE).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import sys
import time

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
SHIM = os.path.join(HERE, "xcpp_shim.hpp")
KERNELSPEC = {"display_name": "C++17", "language": "C++17", "name": "xcpp17"}
MARKER = "__SPARSEACT_NOTEBOOK_CELL__"

# Compiler flags for every run (passed through clang-repl as -Xcc pairs).
CXX_FLAGS = [
    "-std=c++17",
    # Eigen: no SIMD intrinsics, no cpuid inline asm, no asm comments: clang-repl 16 cannot JIT
    # Eigen's inline asm. The library is built without -march=native, so the layout agrees.
    "-DEIGEN_DONT_VECTORIZE",
    "-DEIGEN_NO_CPUID",
    "-DEIGEN_ASM_COMMENT(X)=",
    # clang-repl 16 parses every top-level declaration tentatively as a statement first, with typo
    # correction on; a declaration such as `Eigen::VectorXd f();` or `Eigen::VectorXd x;` is then
    # "corrected" to Eigen's alias template VectorX ("no template named 'VectorXd'"). Valid C++
    # that cling and every compiler accept; turning spell checking off avoids the bogus fix-it.
    "-fno-spell-checking",
]

PRAGMA_INCLUDE = re.compile(r'^\s*#\s*pragma\s+cling\s+add_include_path\s*\(\s*"([^"]*)"\s*\)')
PRAGMA_CLING = re.compile(r"^\s*#\s*pragma\s+cling\b")
ERROR = re.compile(r"\berror:")
DISPLAY_CALL = re.compile(r"\bxcpp\s*::\s*display\s*\(")
LOOP_CELL = re.compile(r"^(?:(?:for|while|do|if|switch)\b|\{)")


def cell_source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def find_clang_repl(explicit):
    if explicit:
        return explicit if os.path.isfile(explicit) and os.access(explicit, os.X_OK) else None
    found = shutil.which("clang-repl-16")
    if found:
        return found
    return "/usr/bin/clang-repl-16" if os.access("/usr/bin/clang-repl-16", os.X_OK) else None


def pragma_include_paths(text, base):
    """Include paths named by `#pragma cling add_include_path(...)`, relative ones resolved against base."""
    paths = []
    for line in text.splitlines():
        m = PRAGMA_INCLUDE.match(line)
        if m:
            p = m.group(1)
            paths.append(os.path.normpath(p if os.path.isabs(p) else os.path.join(base, p)))
    return paths


def leading_code(text):
    """The cell without its leading blank lines, comments and preprocessor lines."""
    text = re.sub(r"^(?:\s+|//[^\n]*|/\*.*?\*/|#[^\n]*)*", "", text, flags=re.S)
    return text


def wrap_statement_cell(text, index):
    """A cell that starts with a control statement (a loop, xeus-cling style, in a cell of its own)
    runs inside an immediately called lambda: clang-repl 16 crashes on a top-level statement that
    holds a compound statement `{...}` and miscompiles a top-level range-for (every element read
    as the first). Globals need no capture; names the cell declares stay local to it. Returns None
    when the cell starts with anything else."""
    if not LOOP_CELL.match(leading_code(text)):
        return None
    return f"int sparseact_notebook_cell_{index}_ = [] {{\n{text}\n;\nreturn 0;\n}}();"


def strip_cling_pragmas(text):
    """Blank out `#pragma cling ...` lines (line numbers stay); the runner does their work itself."""
    return "\n".join("" if PRAGMA_CLING.match(line) else line for line in text.split("\n"))


def check_clean(nb):
    """Problems with how the notebook is stored: kernelspec, outputs, execution counts."""
    problems = []
    spec = nb.get("metadata", {}).get("kernelspec")
    if spec != KERNELSPEC:
        problems.append(f"kernelspec is {spec!r}, expected {KERNELSPEC!r}")
    if nb.get("nbformat") != 4:
        problems.append(f"nbformat is {nb.get('nbformat')!r}, expected 4")
    code_cells = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    for i, cell in enumerate(code_cells):  # numbered like the cells of the run: code cells only
        if cell.get("outputs"):
            problems.append(f"cell {i} has stored outputs (commit the notebook clean)")
        if cell.get("execution_count") is not None:
            problems.append(f"cell {i} has an execution_count (commit the notebook clean)")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebook")
    ap.add_argument("--build", required=True, help="build folder holding lib/libsparseact.so")
    ap.add_argument("--src", required=True, help="the source folder holding sparseact/ (the headers)")
    ap.add_argument("--library", help="libsparseact.so to preload (default BUILD/lib/libsparseact.so)")
    ap.add_argument("--clang-repl", help="clang-repl executable (default clang-repl-16)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds for the whole notebook")
    args = ap.parse_args()

    name = os.path.basename(args.notebook)

    def verdict(ok, message):
        print(f"NOTEBOOK {'PASS' if ok else 'FAIL'} {name}: {message}", flush=True)
        return 0 if ok else 1

    repl = find_clang_repl(args.clang_repl)
    if repl is None:
        print(f"NOTEBOOK SKIP {name}: clang-repl-16 is not installed (Debian package clang-tools-16)", flush=True)
        return SKIP

    notebook = os.path.abspath(args.notebook)
    nb_dir = os.path.dirname(notebook)
    try:
        with open(notebook, encoding="utf-8") as f:
            nb = json.load(f)
    except (OSError, ValueError) as e:
        return verdict(False, f"cannot read the notebook: {e}")

    library = os.path.abspath(args.library or os.path.join(args.build, "lib", "libsparseact.so"))
    if not os.path.isfile(library):
        return verdict(False, f"{library} does not exist: build the sparseact target first")
    src = os.path.abspath(args.src)

    problems = check_clean(nb)

    cells = [cell_source(c) for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    cells = [(i, c) for i, c in enumerate(cells) if c.strip()]
    if not cells:
        return verdict(False, "no code cells")

    # Include paths: src, the ones the notebook's pragmas name (relative to the notebook, as in
    # Jupyter), the ones the generated cling.hpp names (Eigen), then Eigen's default place.
    # The build under test configures <sparseact/cling.hpp> into BUILD/include: it goes before the
    # notebook's own "../build/include", which may name another build.
    build_include = os.path.abspath(os.path.join(args.build, "include"))
    includes = [src, build_include]
    for _, c in cells:
        includes += pragma_include_paths(c, nb_dir)
    cling_hpp = os.path.join(build_include, "sparseact", "cling.hpp")
    if os.path.isfile(cling_hpp):
        with open(cling_hpp, encoding="utf-8") as f:
            includes += pragma_include_paths(f.read(), os.path.dirname(cling_hpp))
    if os.path.isdir("/usr/include/eigen3"):
        includes.append("/usr/include/eigen3")
    includes = list(dict.fromkeys(includes))

    cmd = [repl]
    # SPARSEACT_TEST_CONSUMER_FLAGS (`sparseact.sh sanitize`): flags that make the JIT-compiled cells
    # agree with how the library was built, e.g. Eigen's allocator under ASan.
    jit_flags = os.environ.get("SPARSEACT_TEST_CONSUMER_FLAGS", "").split()
    for flag in [f"-I{p}" for p in includes] + CXX_FLAGS + jit_flags:
        cmd += ["-Xcc", flag]
    inputs = [f'#include "{SHIM}"']
    wrapped_cells = []
    for i, c in cells:
        # A marker before each cell attributes the output; std::endl flushes the previous cell's.
        inputs.append(f'std::cout << "\\n{MARKER} {i}" << std::endl;')
        body = strip_cling_pragmas(c)
        wrapped = wrap_statement_cell(body, i)
        if wrapped is not None:
            wrapped_cells.append(i)
            body = wrapped
        inputs.append(body)
    inputs.append(f'std::cout << "\\n{MARKER} end" << std::endl;')
    cmd += inputs

    env = dict(os.environ)
    # SPARSEACT_TEST_PRELOAD (`sparseact.sh sanitize`: the ASan runtime) must come before the
    # instrumented library, which ASan checks when clang-repl starts.
    first = env.get("SPARSEACT_TEST_PRELOAD", "")
    env["LD_PRELOAD"] = " ".join(p for p in (first, library, env.get("LD_PRELOAD", "")) if p)
    env.setdefault("OMP_NUM_THREADS", "2")
    gnuplot_dir = None
    if first:
        # Children inherit LD_PRELOAD: gnuplot, which the cells' figures start, would run under the
        # ASan runtime too and fail on its own leaks. It gets a wrapper that drops the preload.
        gnuplot = shutil.which("gnuplot")
        if gnuplot:
            gnuplot_dir = tempfile.mkdtemp(prefix="sparseact_gnuplot_")
            wrapper = os.path.join(gnuplot_dir, "gnuplot")
            with open(wrapper, "w", encoding="utf-8") as f:
                f.write(f'#!/bin/sh\nunset LD_PRELOAD\nexec "{gnuplot}" "$@"\n')
            os.chmod(wrapper, 0o755)
            env["SPARSEACT_GNUPLOT"] = wrapper

    print(f"# {name}: {len(cells)} code cells under {repl}", flush=True)
    print(f"# LD_PRELOAD={env['LD_PRELOAD']}", flush=True)
    print(f"# includes: {' '.join(includes)}", flush=True)
    if jit_flags:
        print(f"# extra JIT flags: {' '.join(jit_flags)}", flush=True)
    if wrapped_cells:
        print(f"# statement cells run inside a lambda: {', '.join(map(str, wrapped_cells))}", flush=True)
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=nb_dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=args.timeout)
        out, rc = proc.stdout.decode("utf-8", "replace"), proc.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        rc = None
    elapsed = time.monotonic() - start
    if gnuplot_dir:
        shutil.rmtree(gnuplot_dir, ignore_errors=True)

    # Split the output at the markers and print it cell by cell.
    segments, current, reached = {"prelude": []}, "prelude", []
    for line in out.splitlines():
        m = re.match(rf"^{MARKER} (\S+)$", line)
        if m:
            current = m.group(1)
            reached.append(current)
            segments[current] = []
        else:
            segments[current].append(line)
    code = dict(cells)
    for key, lines in segments.items():
        while lines and not lines[-1].strip():
            lines.pop()
        if key == "prelude":
            if lines:
                print("--- shim ---")
                print("\n".join(lines))
            continue
        if key == "end":
            if lines:
                print("--- after the last cell ---")
                print("\n".join(lines))
            continue
        print(f"--- cell {key} ---")
        first = code[int(key)].strip().splitlines()[0]
        print(f"# {first[:100]}")
        if lines:
            print("\n".join(lines))
    sys.stdout.flush()

    failures = list(problems)
    error_cells = [k for k, lines in segments.items() if any(ERROR.search(l) for l in lines)]
    if error_cells:
        failures.append("error in " + ", ".join("shim" if k == "prelude" else f"cell {k}" for k in error_cells))
    if rc is None:
        failures.append(f"timed out after {args.timeout:.0f} s")
    elif rc != 0:
        how = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
        where = "in the shim" if not reached else f"in cell {reached[-1]}"
        failures.append(f"clang-repl {how} (crash) {where}" if rc < 0 or rc > 128 else f"clang-repl {how} {where}")
    elif "end" not in reached:
        failures.append("clang-repl stopped before the last cell")

    display_cells = [i for i, c in cells if DISPLAY_CALL.search(c)]
    figures = [l for l in out.splitlines() if l.startswith("DISPLAY ")]
    png = [l for l in figures if re.search(r"\bimage/png [1-9]\d*\b", l)]
    if len(png) < len(display_cells):
        failures.append(f"{len(display_cells)} cell(s) call xcpp::display but {len(png)} image/png bundle(s) were shown")

    if failures:
        return verdict(False, "; ".join(failures) + f" ({elapsed:.1f} s)")
    return verdict(True, f"{len(cells)} code cells, {len(png)} figure(s), {elapsed:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
