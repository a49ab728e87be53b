"""Running the harness: one JVM for a batch of traces, JSON in, JSON lines out."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from replcheck.harness.build import Harness, HarnessUnavailable


def run(
    harness: Harness,
    settings: dict[str, Any],
    traces: list[dict[str, Any]],
    timeout: float | None = None,
) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
    """Runs ``traces`` (each {"assignment", "ops"}); returns the harness's header and,
    per trace, its lines: the state after each step (0: the initial state), the last
    one possibly a refusal."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"settings": settings, "traces": traces}, f)
        path = Path(f.name)
    try:
        out = subprocess.run(
            harness.command() + [str(path)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise HarnessUnavailable(
            f"the Kafka {harness.release} harness ran past {timeout:g} s"
        ) from exc
    finally:
        path.unlink(missing_ok=True)
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        raise HarnessUnavailable(
            f"the Kafka {harness.release} harness failed: {_failure(out.stderr)}"
        )
    header, body = lines[0], lines[1:]
    per_trace: list[list[dict[str, Any]]] = [[] for _ in traces]
    for line in body:
        per_trace[line["trace"]].append(line)
    return header, per_trace


def _failure(stderr: str) -> str:
    """The JVM's failure in one line: its exception, not the last line of the stack."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    thrown = [line for line in lines if "Exception" in line or "Error" in line]
    thrown = [line for line in thrown if not line.startswith(("at ", "..."))]
    return (thrown or lines or ["no output"])[0]
