"""The code of the README and of the guides in docs/ runs as written, and `python -m inert`
runs."""

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("page", ["README.md", "docs/activity.md"])
def test_python_blocks_run_and_print_what_is_shown(page, capsys):
    """Each python block runs; a `text` block right after one (a line of prose between
    them allowed) is exactly what it prints."""
    with open(os.path.join(ROOT, page)) as f:
        readme = f.read()
    blocks = re.findall(r"```python\n(.*?)```(?:\n\n(?!```)[^\n]*\n\n```text\n(.*?)```)?", readme,
                        re.S)
    assert blocks and any(shown for _, shown in blocks)
    namespace: dict = {}
    for code, shown in blocks:
        exec(compile(code, os.path.basename(page), "exec"), namespace)
        printed = capsys.readouterr().out
        if shown:
            assert printed == shown, f"{page} shows\n{shown}\nbut the code prints\n{printed}"


def test_python_dash_m_inert_prints_the_tour():
    out = subprocess.run([sys.executable, "-m", "inert"], capture_output=True, text=True,
                         check=True, cwd=os.path.dirname(ROOT)).stdout
    assert "its jaxpr:" in out and "with x Inactive" in out and "bytes in total" in out
