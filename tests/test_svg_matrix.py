"""docs/svg_matrix.py, the generated pages' pictures: valid SVG, every cell, the legend, links."""

from __future__ import annotations

import importlib
import re
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import DOCS

NS = {"svg": "http://www.w3.org/2000/svg"}


@pytest.fixture
def svg(monkeypatch):
    monkeypatch.syspath_prepend(str(DOCS))  # a script beside the generators, as they import it
    return importlib.import_module("svg_matrix")


def _small(svg):
    rows = [svg.Label("0.10.2", group="old <releases>"), svg.Label("4.1.0 & later")]
    columns = [
        svg.Label("A1 <KAFKA-1>", href="kafka-bugs.md#a1", group="bugs"),
        svg.Label("B2", title='"quoted" & <tagged>', href="kafka-bugs.md#b2", group="bugs"),
        svg.Label("R1", group="rules"),
    ]
    cells = [
        [
            svg.Cell(("violated",), "A1 in 0.10.2: violated", "kafka-bugs.md#a1"),
            svg.Cell(("not-run",), "B2 in 0.10.2 < 2.8.0: not run"),
            svg.Cell(("violated", "holds"), "R1: broken & kept"),
        ],
        [
            svg.Cell(("holds",), "A1 in 4.1.0: holds"),
            svg.Cell(("incomplete",), "B2: stopped"),
            svg.Cell(("holds",), "R1"),
        ],
    ]
    categories = [svg.VIOLATED, svg.HOLDS, svg.INCOMPLETE, svg.NOT_RUN]
    return svg.render(
        "A <small> & simple matrix",
        rows,
        columns,
        cells,
        categories,
        corner="releases",
        notes=["a note & more"],
        group_hrefs={"old <releases>": "page.md#old"},
    )


def test_a_small_matrix_is_valid_svg_with_every_cell_and_the_legend(svg):
    text = _small(svg)
    root = ET.fromstring(text)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.find("svg:title", NS).text == "A <small> & simple matrix"
    cells = root.findall(".//svg:g[@class='cell']", NS)
    assert len(cells) == 6
    assert [c.get("data-category") for c in cells] == [
        "violated",
        "not-run",
        "violated holds",
        "holds",
        "incomplete",
        "holds",
    ]
    # each cell: its hover text, a rect and a mark per category
    assert all(c.find("svg:title", NS) is not None for c in cells)
    assert [len(c.findall("svg:rect", NS)) for c in cells] == [1, 1, 2, 1, 1, 1]
    assert [t.text for t in cells[2].findall("svg:text", NS)] == ["✗", "✓"]
    assert cells[2].find("svg:title", NS).text == "R1: broken & kept"
    legend = root.findall(".//svg:g[@class='legend-entry']", NS)
    assert [e.findall("svg:text", NS)[1].text for e in legend] == [
        svg.VIOLATED.label,
        svg.HOLDS.label,
        svg.INCOMPLETE.label,
        svg.NOT_RUN.label,
    ]
    texts = {t.text for t in root.iter("{http://www.w3.org/2000/svg}text")}
    assert {"A1 <KAFKA-1>", "4.1.0 & later", "old <releases>", "a note & more"} <= texts
    assert {"bugs", "rules", "releases"} <= texts


def test_links_and_escaping(svg):
    text = _small(svg)
    assert "A1 &lt;KAFKA-1&gt;" in text and "<KAFKA" not in text
    root = ET.fromstring(text)
    hrefs = [a.get("href") for a in root.iter("{http://www.w3.org/2000/svg}a")]
    # the two linked columns, the linked cell, the linked row group
    assert sorted(hrefs) == sorted(
        ["kafka-bugs.md#a1", "kafka-bugs.md#b2", "kafka-bugs.md#a1", "page.md#old"]
    )
    titles = {t.text for t in root.iter("{http://www.w3.org/2000/svg}title")}
    assert '"quoted" & <tagged>' in titles  # a column's hover text


def test_same_input_same_bytes_and_readable_sizes(svg):
    text = _small(svg)
    assert text == _small(svg)
    sizes = {int(s) for s in re.findall(r'font-size="(\d+)"', text)}
    assert min(sizes) >= 11


def test_cells_must_fit_the_rows_and_columns_and_name_a_category(svg):
    rows, columns = [svg.Label("r")], [svg.Label("c")]
    with pytest.raises(ValueError):
        svg.render("t", rows, columns, [], [svg.HOLDS])
    with pytest.raises(ValueError):
        svg.render("t", rows, columns, [[svg.Cell(("nope",), "x")]], [svg.HOLDS])


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [("A3b", "a3b"), ("B4z", "b4z"), ("Releases 2.7 to 4.1", "releases-27-to-41")],
)
def test_github_anchor(svg, heading, anchor):
    assert svg.github_anchor(heading) == anchor


@pytest.mark.parametrize(
    ("page", "picture"),
    [("kafka-bugs.md", "kafka-bugs.svg"), ("hw-vs-leader-epoch.md", "hw-vs-leader-epoch.svg")],
)
def test_the_committed_pictures_are_shown_and_link_to_headings_that_exist(svg, page, picture):
    """Each generated page opens with its picture, the README shows it, and every link
    in the picture goes to a heading of the page, by the anchor GitHub gives it."""
    text = (DOCS / page).read_text(encoding="utf-8")
    assert f"]({picture})" in text.split("\n## ", 1)[0]
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    assert f"](docs/{picture})" in readme
    root = ET.fromstring((DOCS / picture).read_text(encoding="utf-8"))
    anchors = {svg.github_anchor(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}
    hrefs = {a.get("href") for a in root.iter("{http://www.w3.org/2000/svg}a")}
    assert hrefs
    for href in hrefs:
        target, _, anchor = href.partition("#")
        assert target == page and anchor in anchors, href
