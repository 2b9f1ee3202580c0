#!/usr/bin/python3
"""A Jupyter kernel for the C++17 notebooks (notebooks/*.ipynb) over Debian's clang-repl-16.

An ipykernel wrapper kernel (Debian's python3-ipykernel): one clang-repl-16 process holds the
session's state; each cell is written to a file and sent as one input line, `#include "<file>"`
(clang-repl 16 reads one input per line), followed by a marker that tells the kernel the cell is done.
It speaks the notebooks' xeus-cling dialect (docs/DESIGN.md, Notebooks):

- `#pragma cling add_include_path("P")` becomes -I P (relative to the notebook's folder);
  `add_library_path` and `load("libX")` load the library into the interpreter (LD_PRELOAD when the
  interpreter starts, dlopen later). The pragmas of a header the cell includes count too (the build's
  <sparseact/cling.hpp> names Eigen's headers and libsparseact's folder that way). clang-repl takes
  include paths only when it starts, so it starts at the first cell; a later cell that adds an
  include path is an error (restart the kernel).
- `xcpp::display(x)` (tools/jupyter_kernel/xcpp_display.hpp) sends mime_bundle_repr(x) as
  display_data: the figures' image/png and image/svg+xml.
- A cell that starts with a loop or another control statement runs inside a lambda (clang-repl 16
  crashes on a top-level compound statement).
- A compiler error is the cell's error (ename "CompilationError", the diagnostics as traceback); the
  interpreter keeps the earlier cells' state and the kernel stays usable.
- Interrupt (SIGINT from the frontend) and a crash stop the interpreter: its state is lost, the cell
  reports the error, and the next cell starts a fresh interpreter. Restart starts a fresh kernel.

Environment: SPARSEACT_CLANG_REPL (default clang-repl-16 on PATH), SPARSEACT_KERNEL_INCLUDE
(colon-separated include paths searched before the notebook's, e.g. another build's include/),
SPARSEACT_KERNEL_CXXFLAGS (more compiler flags), LD_PRELOAD (passed on to clang-repl).

    /usr/bin/python3 tools/jupyter_kernel/install.py     # installs the kernelspec (name xcpp17)
"""
import json
import os
import re
import selectors
import shlex
import shutil
import signal
import subprocess
import tempfile

from ipykernel.kernelbase import Kernel

HERE = os.path.dirname(os.path.abspath(__file__))
SHIM = os.path.join(HERE, "xcpp_display.hpp")

# As tests/notebook/run_notebook.py: Eigen without SIMD, cpuid or asm comments (clang-repl 16 cannot JIT
# Eigen's inline asm; the library is built without -march=native so the layouts agree), no spell
# checking (clang-repl 16's tentative parse "corrects" `Eigen::VectorXd x;` to VectorX), and no -O
# flag (clang-repl crashed on Eigen code with -O2).
CXX_FLAGS = ["-std=c++17", "-DEIGEN_DONT_VECTORIZE", "-DEIGEN_NO_CPUID", "-DEIGEN_ASM_COMMENT(X)=",
             "-fno-spell-checking"]

PRAGMA = re.compile(r'^\s*#\s*pragma\s+cling\s+(\w+)\s*\(\s*"([^"]*)"\s*\)')
PRAGMA_ANY = re.compile(r"^\s*#\s*pragma\s+cling\b")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
LOOP_CELL = re.compile(r"^(?:(?:for|while|do|if|switch)\b|\{)")
ERROR = re.compile(r"\berror:")
DONE = "@@SPARSEACT_DONE@@"
DISPLAY = "@@SPARSEACT_DISPLAY@@ "
XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>\s*")
NOISE = re.compile(r"^In file included from (?:<<< inputs >>>|input_line_\d+):\d+:$")


def find_clang_repl():
    explicit = os.environ.get("SPARSEACT_CLANG_REPL")
    if explicit:
        return explicit
    return shutil.which("clang-repl-16") or ("/usr/bin/clang-repl-16" if os.access("/usr/bin/clang-repl-16", os.X_OK) else None)


def leading_code(text):
    return re.sub(r"^(?:\s+|//[^\n]*|/\*.*?\*/|#[^\n]*)*", "", text, flags=re.S)


class Pragmas:
    """What a cell's `#pragma cling` lines (and those of the headers it includes) ask for."""

    def __init__(self):
        self.include_paths, self.library_paths, self.loads = [], [], []

    def scan(self, text, base, search, seen):
        for line in text.splitlines():
            m = PRAGMA.match(line)
            if m:
                what, arg = m.group(1), m.group(2)
                path = os.path.normpath(arg if os.path.isabs(arg) else os.path.join(base, arg))
                if what == "add_include_path":
                    self.include_paths.append(path)
                elif what == "add_library_path":
                    self.library_paths.append(path)
                elif what == "load":
                    self.loads.append(arg)
                continue
            m = INCLUDE.match(line)
            if m:  # a header that holds cling pragmas (one level deep): its pragmas count too
                for d in search + self.include_paths:
                    f = os.path.join(d, m.group(1))
                    if os.path.isfile(f) and f not in seen:
                        seen.add(f)
                        try:
                            with open(f, encoding="utf-8", errors="replace") as h:
                                header = h.read()
                        except OSError:
                            break
                        if "#pragma cling" in header:
                            inner = Pragmas()
                            inner.scan(header, os.path.dirname(f), [], seen)
                            self.include_paths += inner.include_paths
                            self.library_paths += inner.library_paths
                            self.loads += inner.loads
                        break

    def libraries(self):
        """The files the load pragmas name, found in the library paths (as cling does)."""
        found, missing = [], []
        for name in self.loads:
            candidates = [name] if os.path.isabs(name) else [
                os.path.join(d, n) for d in self.library_paths for n in (name, name + ".so")]
            hit = next((c for c in candidates if os.path.isfile(c)), None)
            (found if hit else missing).append(hit or name)
        return found, missing


class Interpreter:
    """One clang-repl-16 process and the files it reads its cells from."""

    def __init__(self, repl, includes, preload, cwd):
        self.dir = tempfile.mkdtemp(prefix="sparseact-kernel-")
        self.includes = list(includes)
        self.count = 0
        cmd = [repl]
        flags = [f"-I{p}" for p in includes] + CXX_FLAGS + shlex.split(os.environ.get("SPARSEACT_KERNEL_CXXFLAGS", ""))
        for flag in flags:
            cmd += ["-Xcc", flag]
        env = dict(os.environ)
        env["LD_PRELOAD"] = " ".join(p for p in preload + [env.get("LD_PRELOAD", "")] if p)
        env["SPARSEACT_KERNEL_DISPLAY_DIR"] = self.dir
        env.setdefault("OMP_NUM_THREADS", "2")
        # A session of its own: the frontend's SIGINT goes to the kernel's process group, and the kernel,
        # not the signal, decides what happens to the interpreter.
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     cwd=cwd, env=env, start_new_session=True)
        os.set_blocking(self.proc.stdout.fileno(), False)
        os.set_blocking(self.proc.stderr.fileno(), False)

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)

    def run(self, code, on_out, on_display, name=None):
        """Runs one input; returns (stderr text, None) when done, or (stderr text, reason) when the
        interpreter died. Standard output is passed on as it comes; standard error (the compiler's
        diagnostics, the cell's std::cerr) is returned."""
        self.count += 1
        # Diagnostics name the file: In[N] for the cell with execution count N (the folder is left out).
        path = os.path.join(self.dir, name or f"input_{self.count}.cpp")
        with open(path, "w", encoding="utf-8") as f:
            f.write(code if code.endswith("\n") else code + "\n")
        done = f'std::cout << std::flush; std::cerr << "\\n{DONE}" << std::endl; std::cout << "\\n{DONE}" << std::endl;\n'
        try:
            self.proc.stdin.write(f'#include "{path}"\n'.encode() + done.encode())
            self.proc.stdin.flush()
        except OSError:
            return "", "the interpreter has exited"
        buffers = {"out": b"", "err": b""}
        finished = {"out": False, "err": False}
        held = {"out": False, "err": False}
        errors = []
        closed = False  # a pipe reached its end: the interpreter is exiting
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ, "out")
        sel.register(self.proc.stderr, selectors.EVENT_READ, "err")

        def emit(which, line):
            if which == "out":
                if line.startswith(DISPLAY):
                    on_display(line[len(DISPLAY):].strip())
                else:
                    on_out(line + "\n")
            elif not NOISE.match(line):
                errors.append(line.replace(self.dir + "/", ""))

        try:
            while not (finished["out"] and finished["err"]):
                events = sel.select(timeout=0.25)
                eof = False
                for key, _ in events:
                    which = key.data
                    chunk = os.read(key.fileobj.fileno(), 65536)
                    if not chunk:
                        eof = closed = True
                        sel.unregister(key.fileobj)
                        finished[which] = True
                        continue
                    buffers[which] += chunk
                    *lines, buffers[which] = buffers[which].split(b"\n")
                    for raw in lines:
                        line = raw.decode("utf-8", "replace")
                        if line == DONE:
                            finished[which] = True
                            held[which] = False  # the marker's own leading newline
                        elif not finished[which]:
                            if held[which]:
                                emit(which, "")
                            held[which] = line == ""  # an empty line shows once a line follows it
                            if not held[which]:
                                emit(which, line)
                # A partial line (a progress report without a newline) shows while the cell runs.
                if not events and buffers["out"] and not buffers["out"].startswith(b"@@"):
                    if held["out"]:
                        on_out("\n")
                        held["out"] = False
                    on_out(buffers["out"].decode("utf-8", "replace"))
                    buffers["out"] = b""
                if eof and self.proc.poll() is not None or (not events and self.proc.poll() is not None):
                    for which in ("out", "err"):
                        if buffers[which]:
                            emit(which, buffers[which].decode("utf-8", "replace"))
                    rc = self.proc.returncode
                    why = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
                    return "\n".join(errors), f"the interpreter stopped ({why})"
        finally:
            sel.close()
        if closed:  # both pipes ended before the markers came back
            try:
                rc = self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                return "\n".join(errors), "the interpreter closed its output"
            why = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
            return "\n".join(errors), f"the interpreter stopped ({why})"
        return "\n".join(errors), None


class CppKernel(Kernel):
    implementation = "sparseact-clang-repl"
    implementation_version = "1.0"
    language = "c++"
    language_version = "17"
    language_info = {"name": "c++", "version": "17", "mimetype": "text/x-c++src", "file_extension": ".cpp",
                     "codemirror_mode": "text/x-c++src"}
    banner = "C++17 through clang-repl-16 (sparseact's kernel; xeus-cling's pragmas and xcpp::display understood)"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.interp = None
        self.cell_index = 0

    # -- output helpers
    def _stream(self, name, text):
        if text and not self.silent_:
            self.send_response(self.iopub_socket, "stream", {"name": name, "text": text})

    def _display(self, path):
        try:
            with open(path, encoding="utf-8") as f:
                bundle = json.load(f)
            os.unlink(path)
        except (OSError, ValueError) as e:
            self._stream("stderr", f"error: xcpp::display: cannot read the bundle: {e}\n")
            self.display_failed_ = True
            return
        svg = bundle.get("image/svg+xml")
        if isinstance(svg, str):  # as IPython's SVG does: no XML declaration (nbconvert's HTML export rejects one)
            bundle["image/svg+xml"] = XML_DECLARATION.sub("", svg, count=1)
        if not self.silent_:
            self.send_response(self.iopub_socket, "display_data", {"data": bundle, "metadata": {}})

    def _error(self, ename, evalue, traceback):
        content = {"status": "error", "ename": ename, "evalue": evalue, "traceback": traceback,
                   "execution_count": self.execution_count}
        if not self.silent_:
            self.send_response(self.iopub_socket, "error", content)
        return content

    def _start(self, pragmas, cwd):
        repl = find_clang_repl()
        if repl is None:
            raise RuntimeError("clang-repl-16 is not installed (Debian package clang-tools-16)")
        extra = [p for p in os.environ.get("SPARSEACT_KERNEL_INCLUDE", "").split(":") if p]
        includes = extra + pragmas.include_paths
        if os.path.isdir("/usr/include/eigen3"):
            includes.append("/usr/include/eigen3")
        includes = list(dict.fromkeys(os.path.abspath(p) for p in includes))
        found, missing = pragmas.libraries()
        if missing:
            raise RuntimeError(f"#pragma cling load: {', '.join(missing)} not found in "
                               f"{pragmas.library_paths or 'any add_library_path'} (build the library first)")
        self.interp = Interpreter(repl, includes, found, cwd)
        self.loaded = set(found)
        errors, died = self.interp.run(f'#include <iostream>\n#include "{SHIM}"\n', lambda t: None, lambda p: None)
        if died or ERROR.search(errors):
            self.interp.stop()
            self.interp = None
            raise RuntimeError(f"clang-repl-16 did not start: {died or errors}")

    def do_execute(self, code, silent, store_history=True, user_expressions=None, allow_stdin=False):
        self.silent_ = silent
        self.display_failed_ = False
        if not code.strip():
            return {"status": "ok", "execution_count": self.execution_count, "payload": [], "user_expressions": {}}
        cwd = os.getcwd()  # the notebook's folder: Jupyter starts the kernel there
        pragmas = Pragmas()
        search = [p for p in os.environ.get("SPARSEACT_KERNEL_INCLUDE", "").split(":") if p]
        pragmas.scan(code, cwd, search + (self.interp.includes if self.interp else []), set())
        try:
            if self.interp is None or not self.interp.alive():
                if self.interp is not None:
                    self.interp.stop()
                self._start(pragmas, cwd)
            else:
                new = [p for p in pragmas.include_paths if os.path.abspath(p) not in self.interp.includes]
                if new:
                    return self._error("IncludePathError", "clang-repl takes include paths when it starts",
                                       [f"error: #pragma cling add_include_path({', '.join(new)}) after the "
                                        "interpreter started: put it in the first cell and restart the kernel"])
                found, missing = pragmas.libraries()
                if missing:
                    return self._error("LoadError", "library not found", [f"error: #pragma cling load: {m} not found"
                                                                            for m in missing])
                loads = [f for f in found if f not in self.loaded]
                if loads:
                    body = "".join(f'if (!dlopen("{f}", RTLD_NOW | RTLD_GLOBAL)) std::cerr << "error: " << dlerror() << std::endl;\n'
                                   for f in loads)
                    errors, died = self.interp.run("#include <dlfcn.h>\nint sparseact_kernel_load_"
                                                   f"{self.interp.count}_ = [] {{\n{body}return 0;\n}}();\n",
                                                   lambda t: None, lambda p: None)
                    if died or ERROR.search(errors):
                        return self._error("LoadError", "dlopen failed", (died or errors).splitlines())
                    self.loaded.update(loads)
        except RuntimeError as e:
            return self._error("KernelError", str(e), [f"error: {e}"])

        # xeus-cling's pragmas are done above; blank them (line numbers stay). A statement cell runs in a lambda.
        body = "\n".join("" if PRAGMA_ANY.match(line) else line for line in code.split("\n"))
        self.cell_index += 1
        rest = leading_code(body)
        if LOOP_CELL.match(rest):  # the #includes and comments before the statement stay outside the lambda
            head = body[:len(body) - len(rest)]
            body = f"{head}int sparseact_kernel_cell_{self.cell_index}_ = [] {{ {rest}\n;\nreturn 0;\n}}();"
        try:
            errors, died = self.interp.run(body, lambda t: self._stream("stdout", t), self._display,
                                           name=f"In[{self.execution_count}]")
        except KeyboardInterrupt:
            self.interp.stop()
            self.interp = None
            return self._error("KeyboardInterrupt", "interrupted",
                               ["KeyboardInterrupt: the interpreter was stopped and its state is lost; "
                                "the next cell starts a new one (run the cells from the first)"])
        if died:
            self.interp.stop()
            self.interp = None
            return self._error("InterpreterDied", died, errors.splitlines() +
                               [f"error: {died}; its state is lost and the next cell starts a new one "
                                "(run the cells from the first)"])
        if not (ERROR.search(errors) or self.display_failed_):
            self._stream("stderr", errors + "\n" if errors else "")  # warnings, the cells' own std::cerr
        else:
            lines = [l for l in errors.splitlines() if ERROR.search(l)]
            return self._error("CompilationError" if "Parsing failed" in errors or ": error:" in errors else "Error",
                               lines[0] if lines else "xcpp::display failed", errors.splitlines())
        return {"status": "ok", "execution_count": self.execution_count, "payload": [], "user_expressions": {}}

    def do_shutdown(self, restart):
        if self.interp is not None:
            self.interp.stop()
            self.interp = None
        return {"status": "ok", "restart": restart}

    def do_is_complete(self, code):
        depth = code.count("{") + code.count("(") - code.count("}") - code.count(")")
        return {"status": "incomplete", "indent": "    "} if depth > 0 else {"status": "complete"}


if __name__ == "__main__":
    from ipykernel.kernelapp import IPKernelApp

    IPKernelApp.launch_instance(kernel_class=CppKernel)
