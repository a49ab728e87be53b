"""A Kafka release's jars and the client helper, built with Maven on first use.

The broker, controller and client classes come from Maven Central
(``org.apache.kafka:kafka_2.13:<release>``), with the logging Kafka's own distribution
uses (reload4j to 3.9, Log4j 2 from 4.0), so that Kafka's log lines, the run's
evidence, are written.  Cached under ``~/.cache/replcheck/cluster/<release>-<hash>``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from replcheck.harness.build import _maven_failure, _version, java, maven
from replcheck.model.errors import InputError

JVM_SOURCE = Path(__file__).resolve().parent / "jvm"

# The SLF4J binding and backend by release (the distribution's own, KIP-653 in 4.0).
LOGGING: tuple[tuple[str, dict[str, str]], ...] = (
    ("3.0.0", {
        "binding.group": "org.slf4j", "binding.artifact": "slf4j-reload4j",
        "binding.version": "1.7.36", "backend.group": "ch.qos.reload4j",
        "backend.artifact": "reload4j", "backend.version": "1.2.25",
    }),
    ("4.0.0", {
        "binding.group": "org.apache.logging.log4j", "binding.artifact": "log4j-slf4j-impl",
        "binding.version": "2.24.3", "backend.group": "org.apache.logging.log4j",
        "backend.artifact": "log4j-core", "backend.version": "2.24.3",
    }),
)  # fmt: skip


class ClusterUnavailable(InputError):
    """No cluster can start here: no Java, no Maven, a release Maven cannot fetch."""


def logging_of(release: str) -> dict[str, str]:
    chosen = LOGGING[0][1]
    for first, props in LOGGING:
        if _version(release) >= _version(first):
            chosen = props
    return chosen


def cache_root() -> Path:
    configured = os.environ.get("REPLCHECK_CLUSTER_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "replcheck" / "cluster"


def _source_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in JVM_SOURCE.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(JVM_SOURCE)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def classpath(release: str) -> str:
    """The classpath of ``release``'s broker, controller and client helper."""
    try:
        java()
    except InputError as exc:
        raise ClusterUnavailable(str(exc).replace("conform", "reproduce")) from None
    place = cache_root() / f"{release}-{_source_hash()}"
    listed = place / "target" / "classpath.txt"
    jar = place / "target" / "replcheck-cluster-1.jar"
    if not listed.exists() or not jar.exists():
        try:
            mvn = maven()
        except InputError as exc:
            raise ClusterUnavailable(str(exc).replace("conform", "reproduce")) from None
        if place.exists():
            shutil.rmtree(place)
        shutil.copytree(JVM_SOURCE, place)
        props = [f"-D{k}={v}" for k, v in logging_of(release).items()]
        out = subprocess.run(
            [mvn, "-q", "-B", f"-Dkafka.version={release}", *props, "package"],
            cwd=place, capture_output=True, text=True, check=False,
        )  # fmt: skip
        (place / "build.log").write_text(out.stdout + out.stderr, encoding="utf-8")
        if out.returncode != 0 or not listed.exists():
            shutil.rmtree(place / "target", ignore_errors=True)
            raise ClusterUnavailable(_maven_failure(release, out.stdout + out.stderr))
    return f"{jar}{os.pathsep}{listed.read_text().strip()}"
