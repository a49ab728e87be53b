"""The client helper process (jvm/.../ClusterClient.java): Kafka's Admin, an ``acks=all``
producer and a consumer, one command per line."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from typing import Any

from replcheck.cluster.nodes import JVM_OPTIONS, StepTimeout


class Client:
    def __init__(self, classpath: str, bootstrap: str, log4j: str, stderr_path: str) -> None:
        self._err = open(stderr_path, "a", encoding="utf-8")  # noqa: SIM115
        self.proc = subprocess.Popen(
            ["java", *JVM_OPTIONS, f"-Dlog4j2.configurationFile={log4j}",
             f"-Dlog4j.configuration=file:{log4j}", "-cp", classpath,
             "replcheck.cluster.ClusterClient", bootstrap],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, text=True,
            start_new_session=True, bufsize=1,
        )  # fmt: skip
        self._answers: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._answers.put(line)

    def ask(self, op: str, timeout: float = 60.0, **args: Any) -> dict[str, Any]:
        """One command's answer; StepTimeout if none comes in time."""
        words = [op] + [
            f"{k}={','.join(map(str, v)) if isinstance(v, list | tuple) else v}"
            for k, v in args.items()
        ]
        assert self.proc.stdin is not None
        self.proc.stdin.write(" ".join(words) + "\n")
        self.proc.stdin.flush()
        try:
            return json.loads(self._answers.get(timeout=timeout))
        except queue.Empty:
            raise StepTimeout(f"the client did not answer {op} in {timeout:.0f} s") from None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._err.close()
