"""The package's type stubs (python/sparseact/*.pyi) against the package they describe, wherever it was
imported from (the build tree or a pip-installed wheel): every name the module has is in the stub and
nothing more, every class lists the module class's methods and properties, and every function has the
module's parameters (names, order, keyword-only, defaults present). The compiled functions' parameters
come from pybind11's signature line (the first line of each docstring)."""
import ast
import inspect
import pathlib
import re

import pytest

import sparseact
from sparseact import _run, _sparseact

PKG = pathlib.Path(sparseact.__file__).resolve().parent
SOURCE = pathlib.Path(__file__).resolve().parents[2] / "python" / "sparseact"


def stub(name):
    for folder in (PKG, SOURCE):  # installed beside the module; in the build tree only the sources have them
        p = folder / name
        if p.exists():
            return ast.parse(p.read_text(encoding="utf-8"))
    pytest.fail(f"{name} is neither in {PKG} nor in {SOURCE}")


def stub_params(fn):
    """[(name, kind, has_default)] of a stub's def, self/cls dropped."""
    a = fn.args
    out = []
    positional = a.posonlyargs + a.args
    first_default = len(positional) - len(a.defaults)
    for i, arg in enumerate(positional):
        out.append((arg.arg, "positional", i >= first_default))
    if a.vararg:
        out.append((a.vararg.arg, "*", False))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, "keyword", d is not None))
    if a.kwarg:
        out.append((a.kwarg.arg, "**", False))
    return [p for p in out if p[0] not in ("self", "cls")]


def split_top(text):
    """Splits a pybind11 parameter list at top-level commas."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def pybind_params(obj):
    """[(name, kind, has_default)] from a pybind11 function's signature line, or None when overloaded."""
    doc = (obj.__doc__ or "").strip()
    if not doc or doc.startswith("Overloaded") or "\nOverloaded function." in doc:
        return None
    m = re.match(r"^[\w.]+\((.*)\) -> ", doc.splitlines()[0])
    assert m, f"no pybind11 signature line in {obj!r}: {doc.splitlines()[0]!r}"
    out, kind = [], "positional"
    for part in split_top(m.group(1)):
        if part == "*":
            kind = "keyword"
            continue
        name = part.split(":")[0].strip()
        if name.startswith("**"):
            out.append((name[2:], "**", False))
        elif name.startswith("*"):
            out.append((name[1:], "*", False))
            kind = "keyword"
        else:
            out.append((name, kind, "=" in part))
    return [p for p in out if p[0] not in ("self", "cls")]


def python_params(fn):
    kinds = {inspect.Parameter.POSITIONAL_ONLY: "positional", inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
             inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.KEYWORD_ONLY: "keyword",
             inspect.Parameter.VAR_KEYWORD: "**"}
    return [(p.name, kinds[p.kind], p.default is not inspect.Parameter.empty)
            for p in inspect.signature(fn).parameters.values() if p.name not in ("self", "cls")]


def top_level(tree):
    defs, classes, names = {}, {}, set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            defs[node.name] = node
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom) and node.level == 1:  # `from .x import a as a`: a re-export
            names.update(a.asname or a.name for a in node.names if a.asname == a.name or node.module is None)
    return defs, classes, names


def module_names(mod):
    return {k for k in vars(mod) if not k.startswith("__")
            and getattr(vars(mod)[k], "__module__", mod.__name__) not in ("typing", "builtins")
            and not inspect.ismodule(vars(mod)[k]) or k == "_sparseact"}


def test_compiled_module_stub_lists_the_module():
    defs, classes, names = top_level(stub("_sparseact.pyi"))
    have = {k for k in vars(_sparseact) if not k.startswith("__")}
    assert set(defs) | set(classes) | (names - {"__all__"}) == have
    for name, fn in defs.items():
        want = pybind_params(getattr(_sparseact, name))
        if want is not None:
            assert stub_params(fn) == want, name


def test_compiled_classes_stub_lists_their_members():
    _, classes, _ = top_level(stub("_sparseact.pyi"))
    for cname, node in classes.items():
        cls = getattr(_sparseact, cname)
        members = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
        have = {k for k in vars(cls) if not k.startswith("_") or k in ("__init__", "__repr__")}
        if not (getattr(cls.__init__, "__doc__", None) or "").startswith("__init__("):
            have.discard("__init__")  # no constructor bound: pybind11's stand-in raises TypeError
        assert set(members) == have, cname
        for mname, fn in members.items():
            attr = vars(cls)[mname]
            if isinstance(attr, property):
                assert any(isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list), f"{cname}.{mname}"
                continue
            want = pybind_params(attr)
            if want is not None:
                assert stub_params(fn) == want, f"{cname}.{mname}"


def test_package_stub_lists_the_package():
    defs, classes, names = top_level(stub("__init__.pyi"))
    have = {k for k, v in vars(sparseact).items() if not k.startswith("__") and not inspect.ismodule(v)}
    have |= {"__version__", "_sparseact"}
    assert set(defs) | set(classes) | names == have
    for name, fn in defs.items():
        assert stub_params(fn) == python_params(getattr(sparseact, name)), name
    init = next(n for n in classes["LayerTable"].body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    assert stub_params(init) == python_params(sparseact.LayerTable.__init__)


def test_run_stub_matches_run():
    defs, classes, _ = top_level(stub("_run.pyi"))
    assert stub_params(defs["run"]) == python_params(_run.run)
    fields = [n.target.id for n in classes["RunResult"].body if isinstance(n, ast.AnnAssign)]
    assert fields == list(_run.RunResult._fields)


def test_stubs_are_installed_with_the_package():
    """A pip-installed package carries its stubs and the PEP 561 marker beside the module."""
    if not (PKG / "_sparseact.pyi").exists() and PKG != SOURCE:
        if "site-packages" in str(PKG) or "dist-packages" in str(PKG):
            pytest.fail(f"{PKG} has no _sparseact.pyi")
        pytest.skip(f"{PKG} is a build tree")
    for name in ("__init__.pyi", "_run.pyi", "_sparseact.pyi", "py.typed"):
        assert (PKG / name).exists(), name
