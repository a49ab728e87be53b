"""Exit codes CI can trust: an unfinished search is 3 (never 0), Ctrl-C is 130 and reports.

And the small things a user meets at the command line: duplicate modes, clashing
output formats, output folders, quiet output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from replcheck.cli.args import memory_size
from replcheck.cli.exits import EXIT_INCOMPLETE, EXIT_INTERRUPTED
from replcheck.cli.main import main
from tests.conftest import interrupt_replcheck

SMALL = ["--records", "1", "--epochs", "3", "--quiet"]
# kip320 on 3 replicas: far more states than any of these tests lets it visit.
BIG = ["--mode", "kip320", "--replicas", "3", "--records", "3", "--crashes", "2", "--epochs", "4"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "limit,status,note",
    [
        (["--max-states", "300"], "max-states", "stopped at --max-states"),
        (["--timeout", "0.3"], "timeout", "stopped at --timeout"),
    ],
)
def test_check_that_stops_at_a_limit_is_incomplete_exit_3(capsys, limit, status, note):
    code, out, _ = run(capsys, "check", *BIG, *limit, "--quiet")
    assert code == EXIT_INCOMPLETE == 3
    assert f"note: {note}" in out and out.rstrip().endswith("result: incomplete")
    code, out, _ = run(capsys, "check", *BIG, *limit, "--quiet", "--json")
    doc = json.loads(out)
    assert code == 3 and doc["status"] == status and doc["result"] == "incomplete"
    assert doc["distinct_states"] > 0


def test_a_violation_found_before_the_limit_still_exits_1(capsys):
    code, out, _ = run(capsys, "check", "--mode", "hw", "--timeout", "60", "--json", "--quiet")
    assert code == 1 and json.loads(out)["result"] == "violated"


def test_compare_with_an_unfinished_mode_is_incomplete(capsys):
    code, out, _ = run(
        capsys, "compare", "--modes", "kip320", *BIG[2:], "--max-states", "200", "--quiet"
    )
    assert code == 3
    assert "note [kip320]: stopped at --max-states" in out


@pytest.mark.parametrize(
    "text,expected",
    [("512M", 512 * 2**20), ("4G", 4 * 2**30), ("1.5g", int(1.5 * 2**30)), ("100", 100 * 2**20)],
)
def test_memory_sizes(text, expected):
    assert memory_size(text) == expected


@pytest.mark.parametrize("text", ["lots", "1M", "-2G", "G"])
def test_bad_memory_sizes_are_one_line(capsys, text):
    code, out, err = run(capsys, "check", "--memory", text)
    assert code == 2 and out == "" and err.count("\n") == 1 and "--memory" in err


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "soon"])
def test_bad_timeouts_are_one_line(capsys, text):
    code, out, err = run(capsys, "check", "--timeout", text)
    assert code == 2 and out == "" and err.count("\n") == 1 and "--timeout" in err


def test_help_documents_exit_code_3(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "3 incomplete" in capsys.readouterr().out


# ---------------------------------------------------------------- Ctrl-C


def _gate_file(tmp_path) -> str:
    """A quick check, a check that runs for minutes, and one that must never start."""
    gate = tmp_path / "gate.toml"
    big = "\n".join(
        f"{k} = {v}"
        for k, v in {"mode": '"kip320"', "replicas": 3, "records": 3, "crashes": 2}.items()
    )
    gate.write_text(
        '[[check]]\nname = "quick"\nmode = "hw"\nrecords = 1\nepochs = 3\n'
        'invariants = ["no-committed-data-loss"]\nexpect = "violates:no-committed-data-loss"\n\n'
        f'[[check]]\nname = "long"\n{big}\nexpect = "holds"\n\n'
        '[[check]]\nname = "never"\nmode = "hw"\nexpect = "holds"\n'
    )
    return str(gate)


def test_ctrl_c_stops_the_gate_reports_what_ran_and_exits_130(tmp_path):
    junit = tmp_path / "gate.xml"
    code, out, err = interrupt_replcheck(
        ["gate", _gate_file(tmp_path), "--junit", str(junit)], 1.5, "ok"
    )
    assert code == 130, err
    assert "ok   quick" in out and "2 not run (long, never)" in out
    assert "1 passed, 0 failed" in out
    assert "FAIL" not in out  # the interrupted check is not judged
    assert err.strip() == "replcheck gate: interrupted after 1 of 3 checks"
    cases = ET.parse(junit).getroot().iter("testcase")
    assert [c.get("name") for c in cases] == ["quick"]


def test_ctrl_c_on_the_gate_in_json(tmp_path):
    # gate --json prints nothing until it ends: the wait covers start-up and the quick
    # check on a loaded machine (the long one runs for minutes).
    code, out, err = interrupt_replcheck(["gate", _gate_file(tmp_path), "--json"], 8.0)
    assert code == 130, err
    doc = json.loads(out)
    assert doc["interrupted"] is True and doc["passed"] is False
    assert [c["name"] for c in doc["checks"]] == ["quick"]
    assert doc["not_run"] == ["long", "never"]


def test_ctrl_c_stops_the_catalogue_mid_search_with_what_it_judged():
    """bfs stops cleanly on Ctrl-C; the catalogue must stop with it, not judge the
    interrupted search as unfinished and go on to the next entry."""
    code, out, err = interrupt_replcheck(["catalogue"], 1.0, "ok")
    assert code == 130, err
    judged = [line for line in out.splitlines() if line.startswith("ok ")]
    total = int(err.split(" of ")[1].split()[0])
    assert err.startswith(f"replcheck catalogue: interrupted after {len(judged)} of ")
    assert 1 <= len(judged) < total and "not judged" in out


def test_ctrl_c_on_compare_reports_the_modes_done(tmp_path):
    code, out, err = interrupt_replcheck(
        ["compare", "--modes", "hw,kip320", *BIG[2:]],
        0.5,
        ready_err=lambda ln: ln.startswith("[hw]") and not ln.rstrip().endswith(" 0 violated"),
    )
    assert code in (1, 130), err  # hw's violation, found before the stop, still counts
    assert "Traceback" not in err
    assert "hw" in out


def test_ctrl_c_on_compare_names_the_modes_not_run(tmp_path):
    code, out, err = interrupt_replcheck(
        ["compare", "--modes", "kip320,hw", *BIG[2:]], 0.5, ready_err=lambda ln: "[kip320]" in ln
    )
    assert code == 130, err
    assert "note [kip320]: interrupted" in out
    assert "note [hw]: not run (interrupted before it started)" in out


# ------------------------------------------------------- small things


def test_compare_runs_each_mode_once(capsys):
    code, out, _ = run(capsys, "compare", "--modes", "hw,kip320,hw", "--json", *SMALL)
    assert json.loads(out)["modes"] == ["hw", "kip320"]


def test_compare_refuses_markdown_with_json(capsys):
    code, out, err = run(capsys, "compare", "--markdown", "--json", *SMALL)
    assert code == 2 and out == "" and "choose one output format" in err


def test_compare_creates_its_trace_folder(capsys, tmp_path):
    folder = tmp_path / "new" / "traces"
    code, _, _ = run(capsys, "compare", "--modes", "hw", "--trace-dir", str(folder), *SMALL)
    assert code == 1
    assert (folder / "hw.no-committed-data-loss.itf.json").is_file()


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "--modes", "hw", "--trace-dir", "{f}", *SMALL],
        ["gate", "examples/gate.toml", "--out", "{f}"],
    ],
    ids=["compare --trace-dir", "gate --out"],
)
def test_an_output_folder_that_is_a_file(capsys, tmp_path, argv):
    existing = tmp_path / "taken"
    existing.write_text("")
    code, out, err = run(capsys, *[a.format(f=existing) for a in argv])
    assert code == 2 and out == ""
    assert err.strip().endswith(f"{existing}: exists and is not a folder")


def test_shrink_quiet_prints_only_the_summary_line(capsys, tmp_path):
    out_file = tmp_path / "short.itf.json"
    code, out, _ = run(
        capsys, "shrink", "examples/seed-data-loss.itf.json", "--out", str(out_file), "--quiet"
    )
    assert code == 0 and out_file.is_file()
    assert out.splitlines() == [
        f"no-committed-data-loss: 9 steps -> 9 steps, written to {out_file}"
    ]


def test_list_invariants_help_explains(capsys):
    with pytest.raises(SystemExit):
        main(["list-invariants", "--help"])
    assert "property it states" in capsys.readouterr().out


def test_state_counts_have_thousands_separators(capsys):
    code, out, _ = run(capsys, "check", "--mode", "kip320", "--records", "2", "--quiet")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("hw-le-leo"))
    count = row.split("holds (")[1].split()[0]
    assert "," in count and count in out.splitlines()[1]


def test_ctrl_c_while_the_command_imports_is_one_line(monkeypatch, capsys):
    """The console script imports the CLI inside its own try: Ctrl-C there is exit 130."""
    import builtins

    from replcheck.cli import launch

    real_import = builtins.__import__

    def interrupted(name, *args, **kwargs):
        if name == "replcheck.cli.main":
            raise KeyboardInterrupt
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", interrupted)
    assert launch.main() == launch.EXIT_INTERRUPTED == EXIT_INTERRUPTED
    assert capsys.readouterr().err == "replcheck: interrupted\n"


def test_a_caught_interrupt_in_an_import_keeps_exit_130_under_python_m(tmp_path):
    """CPython ends a ``python -m`` process with SIGINT (-2) once a KeyboardInterrupt left
    an exec of a string (a dataclass being built mid-import), even if it was caught;
    cli resets that before it exits.  Without the reset this module exits -2."""
    (tmp_path / "interrupted_import.py").write_text(
        "import sys\n"
        "from replcheck.cli.launch import _forget_caught_interrupts\n"
        "try:\n"
        "    exec('raise KeyboardInterrupt')\n"
        "except KeyboardInterrupt:\n"
        "    pass\n"
        "_forget_caught_interrupts()\n"
        "sys.exit(130)\n"
    )
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{root}")
    done = subprocess.run([sys.executable, "-m", "interrupted_import"], env=env, cwd=tmp_path)
    assert done.returncode == EXIT_INTERRUPTED
