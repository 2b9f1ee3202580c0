#!/usr/bin/python3
"""Installs the Jupyter kernelspec of the clang-repl C++17 kernel (sparseact_kernel.py beside this file).

    /usr/bin/python3 tools/jupyter_kernel/install.py                 # for this user: ~/.local/share/jupyter/kernels/xcpp17
    /usr/bin/python3 tools/jupyter_kernel/install.py --sys-prefix    # into sys.prefix/share/jupyter/kernels
    /usr/bin/python3 tools/jupyter_kernel/install.py --prefix DIR    # into DIR/share/jupyter/kernels (JUPYTER_PATH=DIR/share/jupyter)

The kernelspec is named xcpp17, like xeus-cling's C++17 kernel, so the notebooks (whose metadata names
xcpp17) open with it without asking; it replaces a xeus-cling kernelspec of the same name in the same
place. --name picks another name (then choose the kernel in Jupyter's menu). The kernel runs under the
interpreter that runs this script (it needs ipykernel: Debian's python3-ipykernel) and needs
clang-repl-16 (Debian's clang-tools-16); the kernelspec names this checkout's sparseact_kernel.py, so
re-run after moving the checkout.
"""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="this user's Jupyter folder (the default)")
    where.add_argument("--sys-prefix", action="store_true", help="sys.prefix/share/jupyter/kernels")
    where.add_argument("--prefix", help="PREFIX/share/jupyter/kernels")
    ap.add_argument("--name", default="xcpp17", help="kernelspec name (default xcpp17, as the notebooks name it)")
    ap.add_argument("--display-name", default="C++17 (clang-repl)")
    args = ap.parse_args()
    try:
        import ipykernel  # noqa: F401
        from jupyter_client.kernelspec import KernelSpecManager
    except ImportError as e:
        sys.exit(f"{sys.executable} cannot import ipykernel/jupyter_client ({e}): apt-get install python3-ipykernel")
    spec = {
        "argv": [sys.executable, "-Xfrozen_modules=off", os.path.join(HERE, "sparseact_kernel.py"), "-f", "{connection_file}"],
        "display_name": args.display_name,
        "language": "C++17",
        "interrupt_mode": "signal",
        "metadata": {"debugger": False},
    }
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "kernel.json"), "w", encoding="utf-8") as f:
            json.dump(spec, f, indent=1)
        prefix = args.prefix or (sys.prefix if args.sys_prefix else None)
        dest = KernelSpecManager().install_kernel_spec(d, args.name, user=prefix is None, prefix=prefix)
    print(f"installed kernelspec {args.name} in {dest}")


if __name__ == "__main__":
    main()
