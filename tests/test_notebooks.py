"""The notebooks are documentation that runs: each is executed from a clean kernel, with
the jaxpr checker on as in the rest of the suite, so an API change that breaks one fails
here rather than in a reader's hands. The committed copies carry their outputs (they are
read on GitHub without being run), and those outputs must be what the code prints now.

To re-save every notebook with fresh outputs after a change:

    python -m pytest tests/test_notebooks.py --resave-notebooks
"""

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
CELL_TIMEOUT = 120  # seconds
CHECKS_ON = "import inert\ninert.enable_checks(True)"

# Text that legitimately differs between runs, each replaced by a placeholder (narrowly:
# anything else that changes is a notebook that no longer tells the truth).
VARYING = [
    (re.compile(r"0x[0-9a-f]{6,}"), "0x<address>"),
    (re.compile(r"\b\d+(\.\d+)? ?(ns|µs|us|ms|s)\b"), "<time>"),  # timings
    (re.compile(r"\b\d\.\d+e-1\d\b"), "<round-off>"),  # an error at round-off level
]


def test_the_notebooks_are_there():
    names = {p.name for p in NOTEBOOKS}
    assert {"01_tour_of_the_ir.ipynb", "02_nested_differentiation.ipynb",
            "03_activity_and_memory.ipynb", "04_refs_and_activity.ipynb",
            "05_complex_and_fft.ipynb", "06_memory_budget.ipynb"} <= names


def text_outputs(cell) -> str:
    """A code cell's printed and displayed text (images are left out), normalised."""
    parts = [o.get("text", "") if o.output_type == "stream" else
             o.get("data", {}).get("text/plain", "") for o in cell.outputs]
    text = "".join(parts)
    for pattern, placeholder in VARYING:
        text = pattern.sub(placeholder, text)
    return text


def executed(path: Path):
    """The notebook run from a clean kernel with the checker on (nbclient raises
    CellExecutionError, naming the cell, if any cell raises)."""
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(CHECKS_ON))
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute()
    del nb.cells[0]
    for cell in nb.cells:  # numbered as if the inserted cell had not run
        cell.metadata.pop("execution", None)  # timestamps: churn in every re-save
        if cell.cell_type == "code":
            cell.execution_count -= 1
            for o in cell.outputs:
                if "execution_count" in o:
                    o.execution_count -= 1
    return nb


def check_pictures(nb) -> int:
    """Every activity drawing a notebook shows is SVG that parses, with as many nodes as
    its text form says; returns how many there are."""
    count = 0
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            svg = o.get("data", {}).get("image/svg+xml")
            if svg is None:
                continue
            root = ET.fromstring(svg)
            nodes = [g for g in root.iter("{http://www.w3.org/2000/svg}g")
                     if g.get("class", "").split()[:1] == ["node"]]
            said = re.match(r"<activity drawing: (\d+) nodes", o["data"]["text/plain"])
            assert said and len(nodes) == int(said.group(1)), cell.source
            count += 1
    return count


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_and_prints_what_was_saved(path, request):
    fresh = executed(path)
    check_pictures(fresh)
    if request.config.getoption("--resave-notebooks"):
        nbformat.write(fresh, path)
        return
    saved = nbformat.read(path, as_version=4)
    for i, (old, new) in enumerate(zip(saved.cells, fresh.cells)):
        if new.cell_type == "code":
            assert text_outputs(old) == text_outputs(new), (
                f"{path.name}, code cell {i}: the saved output is not what the code prints "
                "now; re-save with `python -m pytest tests/test_notebooks.py "
                "--resave-notebooks`")


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
    check_pictures(nb)


def test_the_activity_notebook_draws_both_pictures():
    """03 shows activity drawings and the residual bar chart (drawn as a PNG)."""
    nb = nbformat.read(NOTEBOOK_DIR / "03_activity_and_memory.ipynb", as_version=4)
    assert check_pictures(nb) >= 2
    bars = [c for c in nb.cells if c.cell_type == "code" and ").plot()" in c.source]
    assert bars and all(any("image/png" in o.get("data", {}) for o in c.outputs) for c in bars)
