# Type stubs of sparseact._run (sparseact.run); tests/python/test_stubs.py checks them against _run.py.
import os
import pathlib
from typing import Any, NamedTuple, Optional, Union

class RunResult(NamedTuple):
    result: dict[str, Any]
    out: pathlib.Path
    returncode: int
    stdout: str

def run(name: str, *args: object, out: Optional[Union[str, os.PathLike[str]]] = None, check: bool = False,
        **flags: object) -> RunResult: ...
