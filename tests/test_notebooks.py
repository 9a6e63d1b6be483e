"""The notebooks are documentation that runs: each is executed from a clean kernel, with
the jaxpr checker on as in the rest of the suite, so an API change that breaks one fails
here rather than in a reader's hands. The committed copies must carry their outputs (they
are read on GitHub without being run)."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
CELL_TIMEOUT = 120  # seconds
CHECKS_ON = "import inert\ninert.enable_checks(True)"


def test_the_notebooks_are_there():
    names = {p.name for p in NOTEBOOKS}
    assert {"01_tour_of_the_ir.ipynb", "02_nested_differentiation.ipynb",
            "03_activity_and_memory.ipynb", "04_refs_and_activity.ipynb"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path):
    """nbclient raises CellExecutionError, naming the cell, if any cell raises."""
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(CHECKS_ON))
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_committed_with_outputs(path):
    """Every code cell was run, in order, and none of the saved outputs is an error."""
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{path.name} has no code cells"
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), (
        f"{path.name} was not executed top to bottom before it was saved")
    for c in code:
        for o in c.outputs:
            assert o.output_type != "error", f"{path.name} was saved with an error:\n{c.source}"
