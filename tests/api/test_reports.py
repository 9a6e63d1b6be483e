"""The REPL: a residual report and an activity report show their pretty text as their
repr, and render as HTML in a notebook."""

import numpy as np

import inert
import inert.numpy as inp


def loss(w, x):
    return inp.sum(inp.tanh(w * x))


def test_saved_residuals_repr_is_what_print_saved_residuals_prints(capsys):
    w, x = np.ones(3), np.arange(3.0)
    report = inert.saved_residuals(loss, w, inert.Inactive(x))
    inert.print_saved_residuals(loss, w, inert.Inactive(x))
    assert repr(report) + "\n" == capsys.readouterr().out
    assert "2 residuals, 48 bytes in total" in repr(report).splitlines()
    assert [r.origin for r in report] == ["input 1", "tanh"]  # still a list of entries


def test_saved_residuals_renders_as_an_html_table():
    page = inert.saved_residuals(loss, np.ones(3), inert.Inactive(np.ones(3)))._repr_html_()
    assert page.startswith("<table>") and page.count("<tr>") == 3  # header + 2 rows
    assert "&lt;" not in page.split("tanh")[0] and "48 bytes in total" in page


def test_activity_report_unpacks_and_shows_the_marked_jaxpr(capsys):
    w, x = np.ones(3), np.ones(3)
    report = inert.activity_jaxpr(loss, w, inert.Inactive(x))
    closed, active = report
    assert len(active) == 4 and closed.jaxpr.invars[0] in active
    inert.print_activity(loss, w, inert.Inactive(x))
    assert repr(report) + "\n" == capsys.readouterr().out
    assert "a*:f64[3] b:f64[3]" in repr(report)
    assert report._repr_html_().count("<b>a*</b>") == 2
