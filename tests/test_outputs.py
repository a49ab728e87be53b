"""Every output a command writes is checked before the work: a path that cannot be
written is one line and exit 2 within moments, never a traceback after the search.

Hypothesis draws the command, the kind of bad path (unwritable, missing parent, a
directory, a device) and the names in it.  Each command would search, walk or judge
for seconds to minutes if the path were accepted; the test allows none of that (the
run must end before any search: nothing on stdout).
"""

from __future__ import annotations

import contextlib
import io
import string
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replcheck.cli.main import main
from replcheck.cli.outputs import prepare_out_dir

ROOT = Path(__file__).resolve().parent.parent
TRACE = str(ROOT / "examples" / "bfs-data-loss.itf.json")
GATE = str(ROOT / "examples" / "gate.toml")

# (command line with {out} where the output goes, whether it is a folder)
WRITERS = {
    "check --trace-out": (["check", "--trace-out", "{out}"], False),
    "prove --trace-out": (["prove", "--trace-out", "{out}"], False),
    "replay --html": (["replay", TRACE, "--html", "{out}"], False),
    "shrink --out": (["shrink", TRACE, "--out", "{out}"], False),
    "compare --html": (["compare", "--html", "{out}"], False),
    "compare --trace-dir": (["compare", "--trace-dir", "{out}"], True),
    "graph --out": (["graph", "--out", "{out}"], False),
    "gate --junit": (["gate", GATE, "--junit", "{out}"], False),
    "gate --out": (["gate", GATE, "--out", "{out}"], True),
    "catalogue --out": (["catalogue", "--out", "{out}"], True),
    "walk --out": (["walk", "--out", "{out}"], True),
}
NAMES = st.text(alphabet=string.ascii_letters + string.digits + "-_", min_size=1, max_size=12)


def bad_path(kind: str, name: str, folder: bool, scratch: Path) -> str:
    suffix = "" if folder else ".graphml"  # graph insists on a known suffix; others take any
    if kind == "unwritable":  # /proc takes no new files, whatever the permissions say
        return f"/proc/{name}{suffix}"
    if kind == "missing parent":
        return str(scratch / f"missing-{name}" / f"{name}{suffix}")
    if kind == "a directory":
        target = scratch / f"dir-{name}"
        target.mkdir(exist_ok=True)
        return str(target) if not folder else str(scratch / "file-not-folder")
    return "/dev/null"  # a device: neither a regular file nor a folder


def run_cli(argv: list[str]) -> tuple[int, str, str, float]:
    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue(), time.monotonic() - start


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc for an unwritable path")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    writer=st.sampled_from(sorted(WRITERS)),
    kind=st.sampled_from(["unwritable", "missing parent", "a directory", "a device"]),
    name=NAMES,
)
def test_a_bad_output_path_is_one_line_before_any_work(writer, kind, name):
    argv, folder = WRITERS[writer]
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "file-not-folder").write_text("x")
        path = bad_path(kind, name, folder, root)
        if kind == "missing parent" and folder:
            return  # a missing parent folder is created for an output folder: not an error
        code, out, err, seconds = run_cli([a.replace("{out}", path) for a in argv])
    assert code == 2, (writer, kind, path, out, err)
    assert err.count("\n") == 1 and err.startswith("replcheck: error: "), err
    assert path in err and "Traceback" not in err
    assert out == "", "the command worked before it checked its output"
    assert seconds < 30  # no search ran (each would take far longer on a loaded machine)


@pytest.mark.parametrize(
    "argv,expected",
    [
        (["check", "--trace-out", "/dev/null"], "not a regular file"),
        (["check", "--trace-out", "/proc/x.itf.json"], "cannot write"),
        (["graph", "--out", "/missing/dir/x.graphml"], "folder /missing/dir does not exist"),
        (["catalogue", "--out", "/dev/null"], "exists and is not a folder"),
        (["walk", "--out", "/proc/walks"], "cannot create the folder"),
    ],
)
def test_named_bad_outputs(argv, expected):
    code, out, err, _ = run_cli(argv)
    assert code == 2 and expected in err and out == "", err


def test_a_probed_output_leaves_nothing_behind(tmp_path):
    """The probe creates a missing file to see that it can, and removes it again."""
    target = tmp_path / "t.itf.json"
    code, _, _, _ = run_cli(["check", "--mode", "kip320", "--records", "1", "--quiet",
                             "--trace-out", str(target)])  # fmt: skip
    assert code == 0 and not target.exists()  # it holds: no counterexample to write
    folder = tmp_path / "new" / "out"
    assert prepare_out_dir(str(folder), "--out") == str(folder)
    assert folder.is_dir() and list(folder.iterdir()) == []
