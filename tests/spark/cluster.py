"""A Spark standalone cluster on 127.0.0.1 for the tests: one master, one worker.

pyspark ships ``bin/spark-class``, which runs Spark's own daemons
(``org.apache.spark.deploy.master.Master`` and ``...worker.Worker``), so the suite can
test ``--master spark://...`` against a real cluster manager, with executors in their
own JVM and Python workers started by the worker, as on a cluster.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from contextlib import suppress
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_class() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-class"


class StandaloneCluster:
    """Start with :meth:`start`, end with :meth:`stop` (kills both daemons' process groups)."""

    def __init__(self, folder: Path, cores: int = 2, memory: str = "1g"):
        self.folder, self.cores, self.memory = folder, cores, memory
        self.port, self.ui_port = _free_port(), _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen] = []

    def _daemon(self, name: str, *args: str) -> None:
        env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", SPARK_LOG_DIR=str(self.folder))
        env["SPARK_WORKER_DIR"] = str(self.folder / "work")
        env.pop("PYSPARK_GATEWAY_PORT", None)
        log = open(self.folder / f"{name.rsplit('.', 1)[-1].lower()}.log", "wb")  # noqa: SIM115
        self.procs.append(
            subprocess.Popen(
                [str(spark_class()), name, *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # its own group: stop() ends the JVM and its children
            )
        )
        log.close()

    def start(self, timeout: float = 120) -> StandaloneCluster:
        self._daemon(
            "org.apache.spark.deploy.master.Master",
            "--host", "127.0.0.1", "--port", str(self.port), "--webui-port", str(self.ui_port),
        )  # fmt: skip
        self._daemon(
            "org.apache.spark.deploy.worker.Worker",
            self.url,
            "--host", "127.0.0.1", "--cores", str(self.cores), "--memory", self.memory,
            "--webui-port", str(_free_port()),
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while not self._worker_alive():
            if time.monotonic() > deadline or any(p.poll() is not None for p in self.procs):
                logs = "\n".join(p.read_text()[-2000:] for p in self.folder.glob("*.log"))
                self.stop()
                raise RuntimeError(f"the standalone cluster did not start:\n{logs}")
            time.sleep(0.5)
        return self

    def _worker_alive(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2) as r:
                state = json.load(r)
        except OSError:
            return False
        return any(w.get("state") == "ALIVE" for w in state.get("workers", []))

    def stop(self) -> None:
        for proc in reversed(self.procs):
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                with suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        self.procs.clear()
