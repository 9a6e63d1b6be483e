"""The pictures of activity and residuals: `draw_activity`'s SVG (parsed as XML, its nodes
counted against the jaxpr and its residual squares against `saved_residuals`) and the
residual bar chart (its bars against the report's bytes per line)."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import inert
import inert.numpy as jnp
from inert import lax

SVG = "{http://www.w3.org/2000/svg}"
rng = np.random.default_rng(0)


def mlp(W1, W2, x):
    h = jnp.tanh(x @ W1)
    return jnp.sum(jnp.tanh(h @ W2) ** 2)


W1, W2, X = rng.normal(size=(4, 8)), rng.normal(size=(8, 3)), rng.normal(size=(5, 4))


def parsed(drawing):
    root = ET.fromstring(drawing.svg)
    assert root.tag == f"{SVG}svg"
    nodes = [g for g in root.iter(f"{SVG}g") if g.get("class", "").split()[:1] == ["node"]]
    residuals = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "residual"]
    return root, nodes, residuals


def test_one_node_per_input_equation_and_output_the_active_ones_marked():
    closed, active = inert.activity_jaxpr(mlp, inert.Inactive(W1), W2, inert.Inactive(X))
    drawing = inert.draw_activity(mlp, inert.Inactive(W1), W2, inert.Inactive(X))
    _, nodes, _ = parsed(drawing)
    jaxpr = closed.jaxpr
    n_nodes = len(jaxpr.constvars) + len(jaxpr.invars) + len(jaxpr.eqns) + len(jaxpr.outvars)
    assert len(nodes) == drawing.n_nodes == n_nodes
    n_active = (sum(v in active for v in [*jaxpr.constvars, *jaxpr.invars]) +
                sum(any(v in active for v in e.outputs) for e in jaxpr.eqns) +
                sum(v in active for v in jaxpr.outvars))
    assert sum("active" in g.get("class").split() for g in nodes) == drawing.n_active == n_active
    labels = [g.find(f"{SVG}text").text for g in nodes]
    assert labels[:3] == ["in 0: f64[4,8]", "in 1: f64[8,3]", "in 2: f64[5,4]"]
    assert ["active" in g.get("class") for g in nodes[:3]] == [False, True, False]
    assert sum(label.startswith("tanh") for label in labels) == 2


def test_the_residuals_are_saved_residuals_each_square_by_its_bytes():
    report = inert.saved_residuals(mlp, W1, W2, X)
    drawing = inert.draw_activity(mlp, W1, W2, X)
    _, _, squares = parsed(drawing)
    assert len(squares) == drawing.n_residuals == len(report)
    assert drawing.residual_bytes == sum(r.nbytes for r in report)
    areas = sorted(float(s.get("width")) * float(s.get("height")) for s in squares)
    sizes = sorted(r.nbytes for r in report)
    np.testing.assert_allclose(np.array(areas) / areas[-1], np.array(sizes) / sizes[-1],
                               rtol=0.02)  # (coordinates are written to 0.1 pixel)


def test_a_residual_hangs_on_the_equation_that_made_it():
    """Only W2 active: the backward pass keeps the first tanh's output (the operand of
    `h @ W2`) and the second's derivative factors; each square sits in its equation's
    row, right of it, and nothing hangs on an input."""
    drawing = inert.draw_activity(mlp, W1, W2, X, argnums=1)
    _, nodes, squares = parsed(drawing)
    report = inert.saved_residuals(mlp, inert.Inactive(W1), W2, inert.Inactive(X))
    assert len(squares) == len(report)
    rows = {}
    for g in nodes:
        rect = g.find(f"{SVG}rect")
        centre = float(rect.get("y")) + float(rect.get("height")) / 2
        rows.setdefault(round(centre), []).append(g.find(f"{SVG}text").text)
    hung_on = [rows[round(float(s.get("y")) + float(s.get("height")) / 2)] for s in squares]
    first_tanh = [r for r in hung_on if r == ["tanh f64[5,8]"]]
    assert len(first_tanh) == 1 and not any(n.startswith("in ") for r in hung_on for n in r)


def test_argnums_and_without_residuals():
    drawing = inert.draw_activity(mlp, W1, W2, X, argnums=(0,), residuals=False)
    _, nodes, squares = parsed(drawing)
    assert squares == [] and drawing.n_residuals == 0
    assert ["active" in g.get("class") for g in nodes[:3]] == [True, False, False]


def test_a_python_number_argument_is_drawn_and_the_residuals_still_found():
    """vjp passes a Python number to `f` as it is (it is no input of its program), the
    drawing traces it: the residuals' inputs are matched by the leaves themselves."""
    def f(x, n, y):
        return jnp.sum(jnp.sin(x) * n * y)

    x, y = np.linspace(0.0, 1.0, 4), np.linspace(1.0, 2.0, 4)
    drawing = inert.draw_activity(f, x, 3, y)
    _, nodes, squares = parsed(drawing)
    report = inert.saved_residuals(f, x, 3, y)
    assert len(squares) == len(report)
    assert [g.find(f"{SVG}text").text for g in nodes[:3]] == [
        "in 0: f64[4]", "in 1: i64[]", "in 2: f64[4]"]


def test_a_loop_is_one_node_and_its_residuals_hang_on_it():
    def rnn(W, h0, xs):
        return jnp.sum(lax.scan(lambda h, x: (jnp.tanh(W @ h + x), None), h0, xs)[0])

    W, h0, xs = rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=(6, 3))
    drawing = inert.draw_activity(rnn, inert.Inactive(W), h0, inert.Inactive(xs))
    _, nodes, squares = parsed(drawing)
    labels = [g.find(f"{SVG}text").text for g in nodes]
    assert sum(label.startswith("scan") for label in labels) == 1
    report = inert.saved_residuals(rnn, inert.Inactive(W), h0, inert.Inactive(xs))
    assert len(squares) == len(report) and drawing.residual_bytes == sum(r.nbytes for r in report)


def test_a_ten_thousand_equation_program_draws_without_recursion():
    def chain(x):
        for i in range(10_000):
            x = jnp.sin(x) if i % 2 else x * 0.999
        return x

    drawing = inert.draw_activity(chain, 0.3, residuals=False)
    _, nodes, _ = parsed(drawing)
    assert len(nodes) == 10_002


def test_a_notebook_shows_it_and_save_writes_it(tmp_path):
    drawing = inert.draw_activity(mlp, W1, W2, X)
    assert drawing._repr_svg_() == drawing.svg
    drawing.save(tmp_path / "mlp.svg")
    assert (tmp_path / "mlp.svg").read_text(encoding="utf-8") == drawing.svg
    assert repr(drawing).startswith(f"<activity drawing: {drawing.n_nodes} nodes")


def test_the_bar_chart_has_a_bar_per_source_line_of_its_bytes():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    report = inert.saved_residuals(mlp, inert.Inactive(W1), W2, X)
    totals = report.by_source()
    lines = {str(r.source_info) if r.source_info else r.origin for r in report}
    assert set(totals) == lines and sum(totals.values()) == sum(r.nbytes for r in report)
    ax = report.plot()
    assert [p.get_width() for p in ax.patches] == list(totals.values())
    assert [t.get_text() for t in ax.get_yticklabels()] == list(totals)
    plt.close(ax.figure)
