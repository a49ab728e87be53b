"""``replcheck reproduce`` on bad input: one line, exit 2, before any JVM or Maven."""

from __future__ import annotations

import pytest

from replcheck.cli.main import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "give one of TRACE or --id"),
        (["--id", "F3"], "say which release"),
        (["--id", "F9", "--kafka", "4.1.0"], "no catalogue entry 'F9'"),
        (["--id", "A1", "--kafka", "2.0.0"], "no pinned steps"),
        (["--id", "A3", "--kafka", "2.0.0"], "KRaft traces"),
        (["--id", "F4", "--kafka", "4.1.0"], "step 9 (replace_disk(replica=r0))"),
        (["--id", "F4", "--kafka", "4.0.0"], "the trace's elr=True"),
        (["--id", "F3", "--kafka", "9.9.9"], "9.9.9"),
        (["--id", "F3", "--kafka", "4.1.0", "--runs", "0"], "--runs"),
        (["--id", "B6", "--kafka", "4.1.0"], "does not take this trace"),
        (["--id", "B6", "--steps-of", "4.0.2"], "steps_of"),
        (["missing-trace.json", "--kafka", "4.1.0"], "missing-trace.json"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, monkeypatch, argv, message) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["reproduce", *argv])
    out, err = capsys.readouterr()
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # no run folder for a refused input


def test_a_run_folder_in_use_is_refused(capsys, tmp_path) -> None:
    (tmp_path / "old.log").write_text("x")
    code = main(["reproduce", "--id", "F3", "--kafka", "4.1.0", "--out", str(tmp_path)])
    assert code == 2
    assert "exists and is not empty" in capsys.readouterr().err
