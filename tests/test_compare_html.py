"""``compare --html``: the verdicts, each counterexample explained, and links to its files."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

from replcheck.cli.main import main

# Fast bounds (well under a second for both modes): hw breaks several invariants, kip320 none.
SMALL = ["--modes", "hw,kip320", "--records", "1", "--epochs", "3", "--quiet"]
VOID = {"meta", "br", "hr", "img", "input", "link", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def find_all(self, tag: str, cls: str | None = None) -> list[Node]:
        out = []
        for c in self.children:
            if isinstance(c, Node):
                if c.tag == tag and (cls is None or cls in c.attrs.get("class", "").split()):
                    out.append(c)
                out.extend(c.find_all(tag, cls))
        return out

    def ids(self) -> set[str]:
        found = {self.attrs["id"]} if "id" in self.attrs else set()
        for c in self.children:
            if isinstance(c, Node):
                found |= c.ids()
        return found

    def hrefs(self) -> list[str]:
        return [a.attrs["href"] for a in self.find_all("a")]


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(path: Path) -> Node:
    builder = _TreeBuilder()
    builder.feed(path.read_text(encoding="utf-8"))
    builder.close()
    return builder.root


def resolve(page: Path, href: str) -> Path:
    """Where a relative link from ``page`` points on disk (it must be relative)."""
    url = urlparse(href)
    assert not url.scheme and not url.netloc and not href.startswith("/"), href
    return (page.parent / unquote(url.path)).resolve()


def markdown_explanations(capsys) -> dict[str, str]:
    """What ``compare --markdown`` says about each counterexample, by ``mode.invariant``."""
    capsys.readouterr()
    assert main(["compare", *SMALL, "--markdown"]) == 1
    out = capsys.readouterr().out
    found = re.findall(r"^- \*\*(\w+)\*\*, `([\w-]+)`: (.+)$", out, flags=re.M)
    assert found, out
    return {f"{mode}.{inv}": sentence for mode, inv, sentence in found}


def test_page_explains_each_counterexample_and_links_its_files(tmp_path, capsys):
    page, traces = tmp_path / "report" / "compare.html", tmp_path / "traces"
    page.parent.mkdir()
    assert main(["compare", *SMALL, "--html", str(page), "--trace-dir", str(traces)]) == 1
    doc = parse(page)
    text = doc.text()
    assert "Bounds: replicas=2 records=1 epochs=3 crashes=1" in text
    assert not doc.find_all("p", "note")  # both searches finished

    written = sorted(p.name.removesuffix(".itf.json") for p in traces.glob("*.itf.json"))
    assert "hw.no-committed-data-loss" in written  # the seeds' loss, at these bounds too
    assert not [w for w in written if w.startswith("kip320.")]

    # each counterexample is explained in the words of --markdown
    explained = {div.attrs["id"]: div for div in doc.find_all("div", "counterexample")}
    assert sorted(explained) == written
    for key, sentence in markdown_explanations(capsys).items():
        assert sentence in " ".join(explained[key].text().split()), key

    # every link resolves: in-page anchors to an element, files to files that exist
    ids = doc.ids()
    for href in doc.hrefs():
        if href.startswith("#"):
            assert href[1:] in ids, href
        else:
            assert resolve(page, href).is_file(), href
            assert href.startswith("../traces/"), href  # relative to the page's folder

    # each violated cell and each explanation links to its trace and its timeline
    cells = doc.find_all("td", "violated")
    assert len(cells) == len(written)
    for key in written:
        files = {(traces / f"{key}.itf.json").resolve(), (traces / f"{key}.html").resolve()}
        (cell,) = [c for c in cells if f"#{key}" in c.hrefs()]
        assert cell.text().startswith("VIOLATED")
        assert files <= {resolve(page, h) for h in cell.hrefs() if not h.startswith("#")}
        assert files <= {resolve(page, h) for h in explained[key].hrefs()}
    assert len(doc.find_all("td", "holds")) == 7 + 7 - len(written)


def test_timelines_are_the_replay_pages_of_the_traces(tmp_path):
    page, traces = tmp_path / "compare.html", tmp_path / "traces"
    assert main(["compare", *SMALL, "--html", str(page), "--trace-dir", str(traces)]) == 1
    timelines = sorted(traces.glob("*.html"))
    assert [p.name.removesuffix(".html") for p in timelines] == sorted(
        p.name.removesuffix(".itf.json") for p in traces.glob("*.itf.json")
    )
    for timeline in timelines:
        trace = timeline.with_name(timeline.name.removesuffix(".html") + ".itf.json")
        replayed = tmp_path / "replayed.html"
        assert main(["replay", str(trace), "--html", str(replayed)]) == 0
        assert timeline.read_text() == replayed.read_text(), timeline.name
        assert "is violated at step" in timeline.read_text()


def test_page_and_traces_move_together(tmp_path):
    here = tmp_path / "here"
    page = here / "compare.html"
    here.mkdir()
    assert main(["compare", *SMALL, "--html", str(page), "--trace-dir", str(here / "t")]) == 1
    moved = tmp_path / "elsewhere" / "nested"
    moved.parent.mkdir()
    shutil.move(here, moved)
    doc = parse(moved / "compare.html")
    files = [h for h in doc.hrefs() if not h.startswith("#")]
    assert files and all(h.startswith("t/") for h in files)
    assert all(resolve(moved / "compare.html", h).is_file() for h in files)


def test_page_is_self_contained(tmp_path):
    page = tmp_path / "compare.html"
    assert main(["compare", *SMALL, "--html", str(page), "--trace-dir", str(tmp_path)]) == 1
    for path in [page, *tmp_path.glob("*.html")]:
        text = path.read_text()
        assert "<style>" in text
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), path
        assert "<link" not in text and "@import" not in text and "url(" not in text, path


def test_without_trace_dir_the_page_still_explains(tmp_path):
    page = tmp_path / "compare.html"
    assert main(["compare", *SMALL, "--html", str(page)]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compare.html"]  # nothing else
    doc = parse(page)
    explained = doc.find_all("div", "counterexample")
    assert explained and all(d.text().count("After ") == 1 for d in explained)
    assert all(h.startswith("#") for h in doc.hrefs())  # only to the explanations
    assert {h[1:] for h in doc.hrefs()} == {d.attrs["id"] for d in explained}


def test_unfinished_searches_are_noted(tmp_path):
    page = tmp_path / "compare.html"
    # hw finds its counterexamples within 5,000 states, but neither mode is exhausted
    argv = [*SMALL, "--max-states", "5000", "--html", str(page), "--trace-dir", str(tmp_path)]
    assert main(["compare", *argv]) == 1
    doc = parse(page)
    notes = [" ".join(p.text().split()) for p in doc.find_all("p", "note")]
    assert notes == [
        "hw: stopped at --max-states: the state space was not exhausted",
        "kip320: stopped at --max-states: the state space was not exhausted",
    ]
    assert not doc.find_all("td", "holds")  # nothing is claimed to hold
    incomplete = doc.find_all("td", "incomplete")
    assert incomplete and all("incomplete" in td.text() for td in incomplete)
    assert doc.find_all("div", "counterexample")  # what it found is still explained
