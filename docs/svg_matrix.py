"""A verdict matrix as an SVG picture: rows x columns of cells coloured by category.

Used by docs/make_bugs.py (releases x catalogue entries) and docs/make_report.py
(releases x invariants); a script beside them, not a module of the package.  The
SVG is built from strings with the standard library only, and is the same bytes
for the same input (the generated pages' freshness tests compare them).

Each category has a colour from a colour-blind-safe palette (Okabe and Ito) and a
mark drawn in its cells, so no cell is read by its colour alone; each cell has a
``<title>`` (hover text), and a row, column or cell may link somewhere.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import NamedTuple


class Category(NamedTuple):
    key: str
    label: str  # the legend's text
    mark: str  # drawn in each cell of the category
    fill: str
    ink: str = "#000000"  # the mark's colour: contrast of 4.5:1 or more on ``fill``


# The verdicts the generated pages distinguish; a generator picks the ones it has.
VIOLATED = Category("violated", "violated: the model finds the violation", "✗", "#D55E00")
HOLDS = Category("holds", "holds: exhaustive search finds no violation", "✓", "#56B4E9")
INCOMPLETE = Category(
    "incomplete", "not judged: the search stopped before exhausting the bounds", "?", "#F0E442"
)
NOT_RUN = Category("not-run", "not run", "–", "#EEEEEE", "#555555")


class Label(NamedTuple):
    """A row or column heading."""

    text: str
    title: str = ""  # hover text; the text itself when empty
    href: str = ""
    group: str = ""  # consecutive rows (columns) of one group are headed by its name


class Cell(NamedTuple):
    """One cell: one category, or several drawn side by side (each a slice)."""

    categories: tuple[str, ...]
    title: str
    href: str = ""


FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', Arial, sans-serif"
SIZE = 12  # px: every text but the title
CELL_W, CELL_H = 30, 22
PAD = 12


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped,
    spaces as hyphens (``Releases 2.7 to 4.1`` -> ``releases-27-to-41``)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _width(text: str, size: int = SIZE) -> float:
    """A generous estimate of ``text``'s width in a sans-serif font (no metrics here)."""
    return len(text) * size * 0.62


def _n(value: float) -> str:
    """A coordinate, rounded, the same text on every machine."""
    return f"{value:.1f}".removesuffix(".0")


def _text(
    x: float, y: float, text: str, *, size: int = SIZE, extra: str = "", title: str = ""
) -> str:
    """A ``<text>``; ``title`` is its hover text."""
    hover = f"<title>{escape(title)}</title>" if title else ""
    return f'<text x="{_n(x)}" y="{_n(y)}" font-size="{size}"{extra}>{escape(text)}{hover}</text>'


def _link(href: str, inner: str) -> str:
    return f'<a href="{escape(href)}">{inner}</a>' if href else inner


def _groups(labels: Sequence[Label]) -> list[tuple[str, int, int]]:
    """(group, first index, last index) for each run of labels with a group name."""
    runs: list[tuple[str, int, int]] = []
    for k, label in enumerate(labels):
        if runs and runs[-1][0] == label.group and runs[-1][2] == k - 1:
            runs[-1] = (label.group, runs[-1][1], k)
        else:
            runs.append((label.group, k, k))
    return [run for run in runs if run[0]]


def render(
    title: str,
    rows: Sequence[Label],
    columns: Sequence[Label],
    cells: Sequence[Sequence[Cell]],
    categories: Sequence[Category],
    *,
    corner: str = "",
    notes: Sequence[str] = (),
    group_hrefs: Mapping[str, str] | None = None,
) -> str:
    """The matrix as an SVG document: ``cells[i][j]`` is row ``i``'s cell in column ``j``.

    Column headings are written at 45 degrees above their column; a group of columns
    is named in a band under them, a group of rows in a line above its first row.
    ``corner`` names the rows (above their headings); the legend lists
    ``categories`` in the order given, then each of ``notes`` as a line.
    ``group_hrefs[name]`` links the name of a row or column group.
    """
    group_hrefs = group_hrefs or {}
    by_key = {c.key: c for c in categories}
    if len(cells) != len(rows) or any(len(line) != len(columns) for line in cells):
        raise ValueError("cells must be one line per row, one cell per column")
    for line in cells:
        for cell in line:
            unknown = [k for k in cell.categories if k not in by_key]
            if not cell.categories or unknown:
                raise ValueError(f"cell {cell.title!r}: categories {list(cell.categories)}")

    row_groups = {first: name for name, first, _last in _groups(rows)}
    col_groups = _groups(columns)
    label_w = max([_width(r.text) for r in rows] + [_width(corner)]) + 2 * 6
    slant = max(_width(c.text) for c in columns) * 0.7071 + SIZE
    band = CELL_H if col_groups else 0

    left = PAD + label_w
    top = PAD + 24 + slant + band  # the title, the slanted headings, the group band
    # Each row's top, with a line before each row that starts a group.
    ys: list[float] = []
    y = top
    for i in range(len(rows)):
        if i in row_groups:
            y += CELL_H
        ys.append(y)
        y += CELL_H
    grid_bottom = y
    grid_right = left + len(columns) * CELL_W
    overhang = max(
        left + (j + 0.5) * CELL_W + _width(c.text) * 0.7071 + SIZE for j, c in enumerate(columns)
    )
    legend_top = grid_bottom + PAD + 6
    legend_lines = len(categories) + len(notes)
    legend_w = max([_width(c.label) + CELL_W + 8 for c in categories] + [_width(n) for n in notes])
    row_group_w = max([left + _width(name) for name in row_groups.values()], default=0)
    width = max(grid_right, overhang, PAD + legend_w, row_group_w, PAD + _width(title, 15)) + PAD
    height = legend_top + legend_lines * (CELL_H + 4) + PAD

    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}" height="{_n(height)}" '
        f'viewBox="0 0 {_n(width)} {_n(height)}" font-family="{escape(FONT)}" '
        f'role="img" aria-labelledby="matrix-title">',
        f'<title id="matrix-title">{escape(title)}</title>',
        f'<rect width="{_n(width)}" height="{_n(height)}" fill="#FFFFFF"/>',
        _text(PAD, PAD + 15, title, size=15, extra=' font-weight="bold"'),
    ]

    # Column headings, slanted, and the bands naming their groups.
    out.append('<g class="columns" fill="#000000">')
    for j, column in enumerate(columns):
        x, y0 = left + (j + 0.5) * CELL_W, top - band - 4
        turn = f' transform="rotate(-45 {_n(x)} {_n(y0)})"'
        text = _text(x, y0, column.text, extra=turn, title=column.title or column.text)
        out.append(_link(column.href, text))
    for name, first, last in col_groups:
        x0, x1 = left + first * CELL_W, left + (last + 1) * CELL_W
        out.append(
            f'<path d="M{_n(x0 + 2)} {_n(top - 3)}V{_n(top - band + 4)}H{_n(x1 - 2)}'
            f'V{_n(top - 3)}" fill="none" stroke="#555555"/>'
        )
        middle = ' text-anchor="middle" font-style="italic"'
        text = _text((x0 + x1) / 2, top - 7, name, extra=middle)
        out.append(_link(group_hrefs.get(name, ""), text))
    out.append("</g>")

    # Row headings and the lines naming their groups.
    out.append('<g class="rows" fill="#000000">')
    if corner:
        out.append(_text(left - 6, top - band - 4, corner, extra=' text-anchor="end"'))
    for i, row in enumerate(rows):
        if i in row_groups:
            name = row_groups[i]
            text = _text(left, ys[i] - 7, name, extra=' font-style="italic"')
            out.append(_link(group_hrefs.get(name, ""), text))
        y = ys[i] + CELL_H / 2 + 4
        text = _text(left - 6, y, row.text, extra=' text-anchor="end"', title=row.title or row.text)
        out.append(_link(row.href, text))
    out.append("</g>")

    # The cells.
    out.append('<g class="grid" stroke="#FFFFFF" stroke-width="1">')
    for i, line in enumerate(cells):
        for j, cell in enumerate(line):
            x, y = left + j * CELL_W, ys[i]
            parts = [f"<title>{escape(cell.title)}</title>"]
            slice_w = CELL_W / len(cell.categories)
            for k, key in enumerate(cell.categories):
                cat = by_key[key]
                sx = x + k * slice_w
                parts.append(
                    f'<rect x="{_n(sx)}" y="{_n(y)}" width="{_n(slice_w)}" '
                    f'height="{CELL_H}" fill="{cat.fill}"/>'
                )
                parts.append(
                    _text(
                        sx + slice_w / 2,
                        y + CELL_H / 2 + 5,
                        cat.mark,
                        size=13,
                        extra=f' text-anchor="middle" fill="{cat.ink}" stroke="none"',
                    )
                )
            group = f'<g class="cell" data-category="{" ".join(cell.categories)}">'
            out.append(_link(cell.href, group + "".join(parts) + "</g>"))
    out.append("</g>")

    # The legend.
    out.append('<g class="legend" fill="#000000">')
    y = legend_top
    for cat in categories:
        out.append(
            f'<g class="legend-entry"><rect x="{PAD}" y="{_n(y)}" width="{CELL_W}" '
            f'height="{CELL_H}" fill="{cat.fill}" stroke="#555555"/>'
            + _text(
                PAD + CELL_W / 2,
                y + CELL_H / 2 + 5,
                cat.mark,
                size=13,
                extra=f' text-anchor="middle" fill="{cat.ink}"',
            )
            + _text(PAD + CELL_W + 8, y + CELL_H / 2 + 4, cat.label)
            + "</g>"
        )
        y += CELL_H + 4
    for note in notes:
        out.append(_text(PAD, y + CELL_H / 2 + 4, note, extra=' fill="#333333"'))
        y += CELL_H + 4
    out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"
