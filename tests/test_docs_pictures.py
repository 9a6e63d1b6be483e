"""The documentation's pictures are what inert draws now (`docs/pictures.py` draws them;
run it to update them after a change to the drawing)."""

import importlib.util
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "docs" / "pictures.py"
_spec = importlib.util.spec_from_file_location("inert_docs_pictures", SCRIPT)
pictures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pictures)


@pytest.mark.parametrize("name", sorted(pictures.PICTURES))
def test_the_committed_picture_is_what_inert_draws(name):
    committed = (pictures.STATIC / name).read_text(encoding="utf-8")
    ET.fromstring(committed)
    assert committed == pictures.PICTURES[name](), (
        f"docs/_static/{name} is stale: run `python docs/pictures.py`")


def test_the_activity_picture_shows_residuals_and_both_kinds_of_value():
    root = ET.fromstring(pictures.activity_svg())
    classes = [e.get("class", "") for e in root.iter()]
    assert "residual" in classes and "node active" in classes and "node" in classes
