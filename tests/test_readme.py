"""The README's code runs as written, and `python -m inert` runs."""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_readme_python_blocks_run(capsys):
    with open(os.path.join(ROOT, "README.md")) as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    assert blocks
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
    assert "residuals" in capsys.readouterr().out


def test_python_dash_m_inert_prints_the_tour():
    out = subprocess.run([sys.executable, "-m", "inert"], capture_output=True, text=True,
                         check=True, cwd=os.path.dirname(ROOT)).stdout
    assert "its jaxpr:" in out and "with x Inactive" in out and "bytes in total" in out
