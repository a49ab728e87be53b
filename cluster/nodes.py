"""The cluster's processes: one KRaft controller and one JVM per broker on 127.0.0.1.

Each broker listens for clients on its own port and, for each follower, on a
replication listener of that follower's name (``REPL_<id>``); it advertises those at
relay ports, and reaches the controller through a relay port too, so that the relay
sees every fetch, metadata fetch and AlterPartition by who sends it (relay.py).
Kafka's own settings are its defaults except the ones listed in ``BROKER_SETTINGS``,
each with its reason.  Every process starts in its own session and is killed, and the
data folders removed, on every way out (``Cluster.close``).
"""

from __future__ import annotations

import base64
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from replcheck.cluster.relay import Relay
from replcheck.model.errors import InputError

CONTROLLER_ID = 3000

JVM_OPTIONS = [
    "-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
    "-XX:ActiveProcessorCount=2", "-Djava.awt.headless=true",
    "-XX:-UsePerfData",  # no /tmp/hsperfdata_* file left by a killed JVM
]  # fmt: skip

# Broker settings a reproduction changes from Kafka's defaults, and why.
BROKER_SETTINGS: dict[str, tuple[str, str]] = {
    "replica.lag.time.max.ms": (
        "5000",
        "a follower leaves the ISR after 5 s without catching up (default 30 s): the steps "
        "that wait for it (shrink_isr, the HW's wait for a lagging follower) wait less",
    ),
    "replica.socket.timeout.ms": ("600000", "a fetch the relay holds is not timed out"),
    "controller.quorum.fetch.timeout.ms": (
        "600000",
        "a metadata fetch the relay holds does not make the broker look for the controller "
        "again (which would stop its heartbeats)",
    ),
    "controller.quorum.request.timeout.ms": ("600000", "the same, for its request"),
    "controller.socket.timeout.ms": ("600000", "a held AlterPartition is not sent twice"),
    "request.timeout.ms": ("600000", "the same, for the broker's other requests"),
    "auto.leader.rebalance.enable": ("false", "only the trace moves leadership"),
    "unclean.leader.election.enable": ("false", "the default, said once more"),
    "num.network.threads": ("2", "a small machine"),
    "num.io.threads": ("2", "a small machine"),
    "background.threads": ("2", "a small machine"),
    "log.cleaner.enable": ("false", "no compacted topic"),
    "group.initial.rebalance.delay.ms": ("0", "no consumer group waits"),
    "offsets.topic.replication.factor": ("1", "no internal topic is used"),
    "transaction.state.log.replication.factor": ("1", "no internal topic is used"),
    "transaction.state.log.min.isr": ("1", "no internal topic is used"),
}

LOG4J2 = """status = warn
appender.f.type = File
appender.f.name = F
appender.f.fileName = {log}
appender.f.layout.type = PatternLayout
appender.f.layout.pattern = [%d{{HH:mm:ss,SSS}}] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.f.ref = F
logger.rcm.name = org.apache.kafka.controller.ReplicationControlManager
logger.rcm.level = DEBUG
logger.partition.name = kafka.cluster.Partition
logger.partition.level = DEBUG
logger.log.name = org.apache.kafka.storage.internals.log.UnifiedLog
logger.log.level = TRACE
logger.log3.name = kafka.log.UnifiedLog
logger.log3.level = TRACE
"""

LOG4J1 = """log4j.rootLogger=INFO, F
log4j.appender.F=org.apache.log4j.FileAppender
log4j.appender.F.File={log}
log4j.appender.F.layout=org.apache.log4j.PatternLayout
log4j.appender.F.layout.ConversionPattern=[%d{{HH:mm:ss,SSS}}] %p %m (%c)%n
log4j.logger.org.apache.kafka.controller.ReplicationControlManager=DEBUG
log4j.logger.kafka.cluster.Partition=DEBUG
log4j.logger.kafka.log.UnifiedLog=TRACE
log4j.logger.org.apache.kafka.storage.internals.log.UnifiedLog=TRACE
"""


class StepTimeout(Exception):
    """Kafka did not show, in time, that it took a step (exit 3)."""


class StepRefused(Exception):
    """Kafka refused a step outright (an Admin call's error): what a fixed release does."""


_TAKEN_PORTS: set[int] = set()


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port() -> int:
    """A free port on 127.0.0.1 outside the kernel's ephemeral range: a port the kernel
    hands out to outgoing connections could be taken between this check and Kafka's bind
    (a cluster's brokers open dozens of connections while the next one starts)."""
    low, high = _ephemeral_range()
    candidates = [p for p in range(10000, 65536) if not low <= p <= high]
    for _ in range(200):
        port = random.choice(candidates)
        if port in _TAKEN_PORTS:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _TAKEN_PORTS.add(port)
        return port
    with socket.socket() as s:  # a machine with no room outside the range
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cluster_id() -> str:
    while True:
        text = base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


class Cluster:
    """The processes, ports and relays of one reproduction, under ``folder``."""

    def __init__(self, classpath: str, brokers: int, folder: Path, release: str) -> None:
        self.classpath = classpath
        self.brokers = list(range(brokers))
        self.folder = folder
        self.release = release
        self.procs: dict[str, subprocess.Popen] = {}
        self._logs: dict[str, bytes] = {}  # each node's log as read so far
        self.relay = Relay()
        self.client: subprocess.Popen | None = None
        self.controller_port = free_port()
        self.client_port = {b: free_port() for b in self.brokers}
        # (leader, follower) -> (the leader's listener for that follower, its relay port)
        self.repl_port = {
            (ld, f): (free_port(), free_port()) for ld in self.brokers for f in self.brokers
        }
        self.meta_port = {b: free_port() for b in self.brokers}  # broker -> its controller relay
        for sub in ("logs", "conf", "data"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        self._write_configs()

    # -- names -----------------------------------------------------------------

    @staticmethod
    def fetch_link(follower: int, leader: int) -> str:
        return f"fetch-{follower}-from-{leader}"

    @staticmethod
    def meta_link(broker: int) -> str:
        return f"controller-{broker}"

    def log_path(self, node: str) -> Path:
        return self.folder / "logs" / f"{node}.log"

    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{self.client_port[b]}" for b in self.brokers)

    # -- configuration -------------------------------------------------------------

    def _write_configs(self) -> None:
        cid = _cluster_id()
        self.cluster_id = cid
        controller = {
            "process.roles": "controller",
            "node.id": str(CONTROLLER_ID),
            "controller.quorum.voters": f"{CONTROLLER_ID}@127.0.0.1:{self.controller_port}",
            "controller.listener.names": "CONTROLLER",
            "listeners": f"CONTROLLER://127.0.0.1:{self.controller_port}",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.folder / "data" / "controller"),
        }
        self._write("controller", controller)
        for b in self.brokers:
            repl = [f"REPL_{f}" for f in self.brokers]
            listeners = [f"CLIENT://127.0.0.1:{self.client_port[b]}"] + [
                f"REPL_{f}://127.0.0.1:{self.repl_port[(b, f)][0]}" for f in self.brokers
            ]
            advertised = [f"CLIENT://127.0.0.1:{self.client_port[b]}"] + [
                f"REPL_{f}://127.0.0.1:{self.repl_port[(b, f)][1]}" for f in self.brokers
            ]
            props = {
                "process.roles": "broker",
                "node.id": str(b),
                "controller.quorum.voters": f"{CONTROLLER_ID}@127.0.0.1:{self.meta_port[b]}",
                "controller.listener.names": "CONTROLLER",
                "listeners": ",".join(listeners),
                "advertised.listeners": ",".join(advertised),
                "listener.security.protocol.map": ",".join(
                    f"{name}:PLAINTEXT" for name in ["CONTROLLER", "CLIENT", *repl]
                ),
                "inter.broker.listener.name": f"REPL_{b}",
                "log.dirs": str(self.folder / "data" / f"broker-{b}"),
                **{k: v for k, (v, _why) in BROKER_SETTINGS.items()},
            }
            self._write(f"broker-{b}", props)

    def _write(self, node: str, props: dict[str, str]) -> None:
        conf = self.folder / "conf"
        (conf / f"{node}.properties").write_text(
            "".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8"
        )
        log = self.log_path(node)
        (conf / f"{node}-log4j2.properties").write_text(LOG4J2.format(log=log), encoding="utf-8")
        (conf / f"{node}-log4j.properties").write_text(LOG4J1.format(log=log), encoding="utf-8")

    def _java(self, node: str, main: str, *args: str) -> list[str]:
        conf = self.folder / "conf"
        return [
            "java", *JVM_OPTIONS,
            f"-Dlog4j2.configurationFile={conf / f'{node}-log4j2.properties'}",
            f"-Dlog4j.configuration=file:{conf / f'{node}-log4j.properties'}",
            f"-Dkafka.logs.dir={self.folder / 'logs'}",
            "-cp", self.classpath, main, *args,
        ]  # fmt: skip

    # -- lifecycle -------------------------------------------------------------------

    def format(self) -> None:
        nodes = ["controller"] + [f"broker-{b}" for b in self.brokers]
        running = []
        for node in nodes:
            conf = str(self.folder / "conf" / f"{node}.properties")
            cmd = self._java(f"format-{node}", "kafka.tools.StorageTool", "format", "-t",
                             self.cluster_id, "-c", conf)  # fmt: skip
            running.append((node, subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                start_new_session=True,
            )))  # fmt: skip
        for node, proc in running:
            out, _ = proc.communicate(timeout=180)
            if proc.returncode != 0:
                last = (out.strip().splitlines() or ["no output"])[-1]
                raise InputError(f"Kafka {self.release}: formatting {node} failed: {last}")

    def start(self, node: str) -> None:
        conf = str(self.folder / "conf" / f"{node}.properties")
        out = open(self.folder / "logs" / f"{node}.stdout", "a", encoding="utf-8")  # noqa: SIM115
        proc = subprocess.Popen(
            self._java(node, "kafka.Kafka", conf), stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        out.close()
        self.procs[node] = proc

    def start_relays(self) -> None:
        for (leader, follower), (port, relay_port) in self.repl_port.items():
            self.relay.add(self.fetch_link(follower, leader), relay_port, port)
        for b in self.brokers:
            self.relay.add(self.meta_link(b), self.meta_port[b], self.controller_port)

    def check_alive(self, what: str) -> None:
        """Every started process still runs (a broker can die after it logged STARTED,
        e.g. a listener's port taken): StepTimeout with its last ERROR line otherwise."""
        for node, proc in self.procs.items():
            if proc.poll() is not None:
                errors = [ln for ln in self.read_log(node).splitlines() if " ERROR " in ln]
                last = errors[-1] if errors else f"exit code {proc.returncode}"
                raise StepTimeout(f"{what}: {node} exited: {last}")

    def alive(self, node: str) -> bool:
        proc = self.procs.get(node)
        return proc is not None and proc.poll() is None

    def signal(self, node: str, sig: int, wait: float = 60.0) -> None:
        proc = self.procs.get(node)
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def wait_log(self, node: str, text: str, timeout: float, since: int = 0, what: str = "") -> str:
        """The first line of ``node``'s log, from byte ``since``, that holds ``text``."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.find_line(node, text, since)
            if line is not None:
                return line
            if node in self.procs and not self.alive(node):
                raise StepTimeout(f"{what or text}: {node} exited (see {self.log_path(node)})")
            if time.monotonic() > deadline:
                raise StepTimeout(f"{what or text}: not in {node}'s log after {timeout:.0f} s")
            time.sleep(0.1)

    def find_line(self, node: str, text: str, since: int = 0) -> str | None:
        data = self.read_log(node, since)
        k = data.find(text)
        if k < 0:
            return None
        return data[data.rfind("\n", 0, k) + 1 : (data.find("\n", k) + 1 or len(data) + 1) - 1]

    def read_log(self, node: str, since: int = 0) -> str:
        """``node``'s log from byte ``since``.  The steps poll the logs many times a
        second; Kafka only appends, so each read takes only the bytes new since the last."""
        path = self.log_path(node)
        if not path.exists():
            return ""
        seen = self._logs.get(node, b"")
        with open(path, "rb") as f:
            f.seek(len(seen))
            seen += f.read()
        self._logs[node] = seen
        return seen[since:].decode("utf-8", errors="replace")

    def log_size(self, node: str) -> int:
        path = self.log_path(node)
        return path.stat().st_size if path.exists() else 0

    def close(self, keep_data: bool = False) -> None:
        """Every process killed, every relay port closed, the data folders removed."""
        if self.client is not None and self.client.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.client.pid, signal.SIGKILL)
            self.client.wait()
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
        for proc in self.procs.values():
            proc.wait()
        self.relay.close()
        if not keep_data:
            shutil.rmtree(self.folder / "data", ignore_errors=True)
