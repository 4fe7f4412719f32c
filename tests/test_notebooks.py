"""The notebooks in notebooks/ run top to bottom in a fresh kernel, and are committed clean.

Each notebook is executed with nbclient in a kernel of this interpreter (the venv's Python,
whatever kernels the machine has installed), with the notebook folder as working directory,
as a reader would run it. Any error or stderr output fails the test: the post-mortem notebook
asserts the numbers its conclusion quotes, so a change in the sample traces or in mcptrace
that makes the narrative wrong fails here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from ipykernel.kernelspec import write_kernel_spec
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))


def test_the_three_notebooks_are_there() -> None:
    assert [p.name for p in PATHS] == [
        "01-exploring-sessions.ipynb",
        "02-latency-and-errors.ipynb",
        "03-incident-post-mortem.ipynb",
    ]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_notebook_is_committed_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    dirty = [
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)
    ]
    assert not dirty, f"cells {dirty} have outputs or execution counts: clear them before saving"


@pytest.fixture(scope="module")
def python3_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A `python3` kernelspec that runs this interpreter, first on JUPYTER_PATH.

    The kernelspec installed with ipykernel says `python`, which would be whatever is first
    on PATH (or a user-level spec could shadow it); this one names sys.executable.
    """
    root = tmp_path_factory.mktemp("jupyter")
    write_kernel_spec(root / "kernels" / "python3")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(root))
        mp.setenv("IPYTHONDIR", str(root / "ipython"))  # no user profile or startup files
        mp.setenv("MPLBACKEND", "Agg")
        yield "python3"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_notebook_runs_without_errors(path: Path, python3_kernel: str) -> None:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=180,
        kernel_name=python3_kernel,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()  # raises CellExecutionError, with the traceback, on the first error

    problems = [
        (i, output.get("ename") or output.get("text", "")[:500])
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type == "error"
        or (output.output_type == "stream" and output.name == "stderr")
    ]
    assert not problems, f"{path.name}: error or stderr output in cells {problems}"
