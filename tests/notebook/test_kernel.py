#!/usr/bin/python3
"""The clang-repl Jupyter kernel (tools/jupyter_kernel/sparseact_kernel.py) driven as a frontend drives
it (jupyter_client): a compiler error is the cell's error and the kernel keeps its state; xcpp::display
sends display_data; interrupt stops a running cell and the next cell runs; a crash of the interpreter is
the cell's error and the next cell runs; restart gives a fresh kernel.
No library needed. Exit status: 0 pass, 1 fail, 77 skipped (clang-repl-16, ipykernel or jupyter_client
missing)."""
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools", "jupyter_kernel", "sparseact_kernel.py")


def main():
    if not (shutil.which("clang-repl-16") or os.access("/usr/bin/clang-repl-16", os.X_OK)):
        print("skipped: clang-repl-16 is not installed (clang-tools-16)")
        return 77
    try:
        import ipykernel  # noqa: F401
        from jupyter_client.manager import start_new_kernel
    except ImportError as e:
        print(f"skipped: {sys.executable} cannot import {e.name} (python3-ipykernel)")
        return 77

    work = tempfile.mkdtemp(prefix="sparseact-kernel-test-")
    spec = os.path.join(work, "jupyter", "kernels", "cpp_test")
    os.makedirs(spec)
    with open(os.path.join(spec, "kernel.json"), "w") as f:
        json.dump({"argv": [sys.executable, "-Xfrozen_modules=off", KERNEL, "-f", "{connection_file}"], "display_name": "test",
                   "language": "C++17", "interrupt_mode": "signal"}, f)
    os.environ["JUPYTER_PATH"] = os.path.join(work, "jupyter")
    failures = []

    last = {}  # the last cell's reply and outputs, printed when a check fails

    def check(ok, what):
        print(f"{'ok  ' if ok else 'FAIL'} {what}", flush=True)
        if not ok:
            failures.append(what)
            print(f"     reply: {json.dumps(last.get('reply'), default=str)[:2000]}\n"
                  f"     outputs: {json.dumps(last.get('outputs'), default=str)[:2000]}", flush=True)

    km, kc = start_new_kernel(kernel_name="cpp_test", cwd=work, startup_timeout=60)

    def run(code, timeout=120, interrupt_on=None):
        """Runs a cell; with interrupt_on, interrupts it once its output shows that text (ipykernel ignores
        SIGINT outside a handler, so a timed interrupt on a loaded machine can come too early and be lost),
        and again every 5 s until it stops, as a user presses the button again."""
        msg_id = kc.execute(code)
        outputs, deadline, interrupted = [], time.monotonic() + timeout, None
        while True:
            if interrupt_on is not None and interrupt_on in text(outputs) and (
                    interrupted is None or time.monotonic() > interrupted + 5):
                km.interrupt_kernel()
                interrupted = time.monotonic()
            try:
                msg = kc.get_iopub_msg(timeout=0.5)
            except Exception:  # queue.Empty
                if time.monotonic() > deadline:
                    raise TimeoutError(code)
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
            if msg["msg_type"] in ("stream", "display_data", "error"):
                outputs.append((msg["msg_type"], msg["content"]))
        reply = kc.get_shell_msg(timeout=30)
        last.update(reply=reply["content"], outputs=outputs)
        return reply["content"], outputs

    def text(outputs):
        return "".join(c.get("text", "") for t, c in outputs if t == "stream")

    try:
        reply, out = run("#include <iostream>\nint a = 41;\nstd::cout << \"a = \" << a << std::endl;")
        check(reply["status"] == "ok" and "a = 41" in text(out), "a cell runs and prints")
        reply, out = run("int b = a +\n  undeclared_name;")
        errors = [c for t, c in out if t == "error"]
        check(reply["status"] == "error" and reply.get("ename") == "CompilationError"
              and errors and "undeclared_name" in "\n".join(errors[0]["traceback"]), "a compiler error is the cell's error")
        reply, out = run("std::cout << a + 1 << std::endl;")
        check(reply["status"] == "ok" and "42" in text(out), "the kernel keeps its state after a failed cell")
        reply, out = run("for (int i = 0; i < 3; ++i) {\n  std::cout << i;\n}\nstd::cout << std::endl;")
        check(reply["status"] == "ok" and "012" in text(out), "a top-level loop cell runs (inside a lambda)")
        reply, out = run('#include <nlohmann/json.hpp>\nstruct Dot {};\n'
                         'nlohmann::json mime_bundle_repr(const Dot&) { return {{"image/png", "iVBORw0KGgo="}, '
                         '{"image/svg+xml", "<?xml version=\\"1.0\\" encoding=\\"utf-8\\"?>\\n<svg/>"}}; }')
        reply, out = run("xcpp::display(Dot{});")
        shown = [c for t, c in out if t == "display_data"]
        check(reply["status"] == "ok" and shown and shown[0]["data"].get("image/png") == "iVBORw0KGgo="
              and shown[0]["data"].get("image/svg+xml") == "<svg/>", "xcpp::display sends display_data (image/png)")
        reply, out = run("#include <chrono>\n#include <thread>\n"
                         "for (int i = 0;; ++i) {\n"
                         "  if (i == 0) std::cout << \"running\" << std::endl;\n"
                         "  std::this_thread::sleep_for(std::chrono::milliseconds(10));\n}",
                         timeout=90, interrupt_on="running")
        check(reply["status"] == "error" and reply.get("ename") == "KeyboardInterrupt", "interrupt stops a running cell")
        reply, out = run("#include <iostream>\nstd::cout << \"fresh\" << std::endl;")
        check(reply["status"] == "ok" and "fresh" in text(out), "the next cell runs after an interrupt")
        reply, out = run("#include <cstdlib>\nstd::abort();")
        check(reply["status"] == "error" and reply.get("ename") == "InterpreterDied", "a crash is the cell's error")
        reply, out = run("#include <iostream>\nstd::cout << \"after the crash\" << std::endl;")
        check(reply["status"] == "ok" and "after the crash" in text(out), "the next cell runs after a crash")
        km.restart_kernel(now=True)
        kc.wait_for_ready(timeout=60)
        reply, out = run("#include <iostream>\nint a = 7;\nstd::cout << \"after restart \" << a << std::endl;")
        check(reply["status"] == "ok" and "after restart 7" in text(out), "restart gives a fresh kernel")
    except Exception as e:
        check(False, f"{type(e).__name__}: {e}")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        shutil.rmtree(work, ignore_errors=True)
    print("KERNEL " + ("PASS" if not failures else "FAIL: " + "; ".join(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
