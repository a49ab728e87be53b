"""``replcheck reproduce`` on real Kafka clusters (127.0.0.1, one JVM per broker).

F3 loses its acknowledged record on Kafka 4.1.0; KAFKA-14139's steps (B4) from 3.4.1,
taken by 3.5.0, are refused by the controller (KIP-903) and the record is kept (a
negative control); an interrupted run leaves no process, port or data folder.  Each
starts a fresh cluster from the release's jars (Maven fetches them on first use).
Marked ``kafka_cluster``: CI runs them as a step of their own (-m kafka_cluster); they
skip, saying why, where Java or Maven is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import sigint_default

pytestmark = [
    pytest.mark.kafka_cluster,
    pytest.mark.skipif(shutil.which("java") is None, reason="no java on PATH"),
    pytest.mark.skipif(shutil.which("mvn") is None, reason="no mvn on PATH (Kafka's jars)"),
]

REPLCHECK = [sys.executable, "-m", "replcheck"]


def _env(tmp_path: Path) -> dict[str, str]:
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(scratch), "PYTHONUNBUFFERED": "1"}


def _reproduce(tmp_path: Path, *argv: str) -> tuple[int, dict]:
    out = tmp_path / "run"
    done = subprocess.run(
        [*REPLCHECK, "reproduce", *argv, "--json", "--out", str(out)],
        capture_output=True, text=True, timeout=600, env=_env(tmp_path),
    )  # fmt: skip
    assert done.stdout, done.stderr[-2000:]
    return done.returncode, json.loads(done.stdout)


def _nothing_left(tmp_path: Path) -> None:
    """No process of the run, no port of it listening, no data folder, nothing in TMPDIR."""
    run = tmp_path / "run"
    mine = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if str(run) in cmdline:
            mine.append(proc.name)
    assert mine == [], f"processes left: {mine}"
    ports = []
    for conf in (run / "conf").glob("*.properties"):
        ports += [int(p) for p in _ports(conf.read_text())]
    assert ports
    for port in ports:
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0, f"port {port} still listening"
    assert not (run / "data").exists()
    assert (run / "logs" / "controller.log").exists()  # the evidence stays
    assert list((tmp_path / "tmp").iterdir()) == []


def _ports(text: str) -> list[str]:
    import re

    return re.findall(r"127\.0\.0\.1:(\d+)", text)


def test_f3_loses_the_acknowledged_record_on_kafka_4_1_0(tmp_path: Path) -> None:
    code, doc = _reproduce(tmp_path, "--id", "F3", "--kafka", "4.1.0")
    assert code == 1, doc
    run = doc["runs"][0]
    assert run["verdict"] == "lost"
    assert run["writes"]["m1"].startswith("acked:")
    assert run["lost"] == ["m1"]
    assert run["final"]["leader"] == 2
    assert doc["lagging"] == [0]
    # Kafka's own account of the decisive steps
    kafka = [line for step in run["steps"] for line in step["kafka"]]
    assert any("Skipped the become-leader" in line and "partitionEpoch=1" in line for line in kafka)
    assert any("Ignoring failed ISR update to PendingExpandIsr" in line for line in kafka)
    _nothing_left(tmp_path)


def test_kafka_14139_steps_are_refused_by_3_5_0_and_the_record_kept(tmp_path: Path) -> None:
    code, doc = _reproduce(tmp_path, "--id", "B4", "--kafka", "3.5.0", "--steps-of", "3.4.1")
    assert code == 0, doc
    run = doc["runs"][0]
    assert run["verdict"] == "refused"
    assert "broker epoch mismatch" in run["refused"]
    assert run["writes"]["m1"].startswith("acked:")
    assert run["lost"] == []
    assert "m1" in {r["value"] for r in run["final"]["records"]}
    _nothing_left(tmp_path)


def test_an_interrupted_run_leaves_no_process_port_or_folder(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [*REPLCHECK, "reproduce", "--id", "F3", "--kafka", "4.1.0", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env(tmp_path),
        preexec_fn=sigint_default,  # Ctrl-C reaches it even where the suite runs in the background
    )  # fmt: skip
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:  # the first step: the cluster is up and held by the relay
        seen.append(line)
        if line.startswith("   1  "):
            break
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, "".join(seen) + rest
    assert "run 1: interrupted" in rest
    assert "Traceback" not in rest
    _nothing_left(tmp_path)


def test_the_models_default_counterexample_loses_the_record_on_kafka_4_1_0(tmp_path: Path) -> None:
    """What a user types: the model's shortest loss as a trace file, then that file on a
    cluster, with the text report."""
    trace = tmp_path / "loss.itf.json"
    env = _env(tmp_path)
    found = subprocess.run(
        [*REPLCHECK, "check", "--kafka", "4.1.0", "--trace-out", str(trace), "--quiet"],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert found.returncode == 1 and trace.is_file(), found.stderr
    done = subprocess.run(
        [*REPLCHECK, "reproduce", str(trace), "--out", str(tmp_path / "run")],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "m1: acknowledged; MISSING in the final leader's log (broker 1" in done.stdout
    assert "LOST: 1 of 1 runs lost an acknowledged record" in done.stdout
    _nothing_left(tmp_path)
