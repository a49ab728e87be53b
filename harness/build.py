"""Building the harness for one Kafka release: Maven, on first use, into a cache.

Nothing of Kafka is committed: Maven fetches the release's jars into ``~/.m2`` and
compiles ``jvm/`` against them.  The build of each release is cached under
``$REPLCHECK_HARNESS_CACHE`` (default ``~/.cache/replcheck/harness``), keyed by the
release and a hash of the harness's sources, so a second run starts at once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from replcheck.model.errors import InputError

JVM_SOURCE = Path(__file__).resolve().parent / "jvm"


class HarnessUnavailable(InputError):
    """The harness cannot run here: no Java, no Maven, a release Maven cannot fetch, or
    one the harness does not cover.  One line, exit 2."""


# The API families: the source folder (jvm/src/<family>/) with the code that differs
# between releases, and the first and last release of each.  A release outside them is
# not covered (yet): conform says so in one line.
FAMILIES: tuple[tuple[str, str, str], ...] = (
    ("k33", "3.3.0", "3.3.2"),
    ("k34", "3.4.0", "3.4.1"),
    ("k35", "3.5.0", "3.5.2"),
    ("k36", "3.6.0", "3.6.2"),
    ("k37", "3.7.0", "3.7.2"),
    ("k38", "3.8.0", "3.8.1"),
    ("k39", "3.9.0", "3.9.1"),
    ("k400", "4.0.0", "4.0.2"),
    ("k40", "4.1.0", "4.1.2"),
    ("k42", "4.2.0", "4.2.2"),
    ("k43", "4.3.0", "4.3.2"),
    ("k44", "4.4.0", "4.4.0"),
)


# Sources two families share (harness/jvm/src/<folder>), compiled with either.
SHARED: dict[str, str] = {"k400": "k40-shared", "k40": "k40-shared"}


def _version(release: str) -> tuple[int, ...]:
    return tuple(int(p) for p in release.split("."))


def family_of(release: str) -> str:
    """The source family of a release; HarnessUnavailable for one no family covers."""
    for family, first, last in FAMILIES:
        if _version(first) <= _version(release) <= _version(last):
            return family
    covered = ", ".join(f"{first} to {last}" for _f, first, last in FAMILIES)
    raise HarnessUnavailable(
        f"Kafka {release}: the harness covers KRaft releases {covered} (docs/conformance.md)"
    )


@dataclass(frozen=True)
class Harness:
    """A built harness: the command that runs it."""

    release: str
    classpath: str

    def command(self) -> list[str]:
        return [
            java(),
            "-Xss4m",
            "-XX:+UseSerialGC",
            "-cp",
            self.classpath,
            "replcheck.harness.Main",
        ]


def java() -> str:
    found = shutil.which("java")
    if not found:
        raise HarnessUnavailable("conform needs a Java runtime (java 17 or newer) on PATH")
    return found


def maven() -> str:
    found = shutil.which("mvn")
    if not found:
        raise HarnessUnavailable("conform needs Maven (mvn) on PATH to fetch Kafka's jars")
    return found


def cache_root() -> Path:
    configured = os.environ.get("REPLCHECK_HARNESS_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "replcheck" / "harness"


def source_hash(family: str) -> str:
    """The sources a build of ``family`` compiles (the common ones, the family's own
    folder and the one it shares): a change to another family's leaves this build cached."""
    digest = hashlib.sha256()
    for path in sorted(p for p in JVM_SOURCE.rglob("*") if p.is_file()):
        rel = path.relative_to(JVM_SOURCE)
        own = ("main", family, SHARED.get(family, family))
        other_family = rel.parts[0] == "src" and rel.parts[1] not in own
        if len(rel.parts) > 2 and other_family:
            continue
        digest.update(str(rel).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def build(release: str, log: Path | None = None) -> Harness:
    """The harness for ``release``, built now if the cache lacks it."""
    family = family_of(release)
    java()
    place = cache_root() / f"{release}-{source_hash(family)}"
    classpath_file = place / "target" / "classpath.txt"
    classes = place / "target" / "classes"
    if not classpath_file.exists():
        mvn = maven()
        if place.exists():
            shutil.rmtree(place)
        shutil.copytree(JVM_SOURCE, place)
        out = subprocess.run(
            [mvn, "-q", "-B", f"-Dkafka.version={release}", f"-Dkafka.family={family}",
             f"-Dkafka.shared={SHARED.get(family, family)}", "-DskipTests", "package"],
            cwd=place, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if log is not None:
            log.write_text(out.stdout + out.stderr, encoding="utf-8")
        if out.returncode != 0:
            raise HarnessUnavailable(_maven_failure(release, out.stdout + out.stderr))
    return Harness(release, f"{classes}{os.pathsep}{classpath_file.read_text().strip()}")


def _maven_failure(release: str, text: str) -> str:
    """Maven's failure, in one line."""
    lowered = text.lower()
    if "could not resolve dependencies" in lowered or "could not find artifact" in lowered:
        return (
            f"Kafka {release}: Maven could not fetch org.apache.kafka:kafka_2.13:{release} "
            "(not served by the repository, or no network)"
        )
    errors = [line.strip() for line in text.splitlines() if "ERROR" in line and "/" in line]
    first = (errors or text.strip().splitlines()[-1:] or ["no output"])[0]
    return f"Kafka {release}: the harness did not build: {first}"
