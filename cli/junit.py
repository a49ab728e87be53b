"""Gate outcomes as JUnit XML, which CI systems (GitHub, GitLab, Jenkins) show natively."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from replcheck.checker.suites.gate import GateOutcome


def junit_xml(outcomes: Sequence[GateOutcome], suite: str) -> str:
    failures = sum(not o.passed for o in outcomes)
    root = ET.Element(
        "testsuites", name="replcheck gate", tests=str(len(outcomes)), failures=str(failures)
    )
    ts = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(outcomes)),
        failures=str(failures),
        errors="0",
        time=f"{sum(o.seconds for o in outcomes):.3f}",
    )
    for o in outcomes:
        case = ET.SubElement(
            ts, "testcase", classname=suite, name=o.check.name, time=f"{o.seconds:.3f}"
        )
        lines = [f"{o.check.config.describe()} engine={o.check.engine}", o.detail]
        if not o.passed:
            failure = ET.SubElement(
                case, "failure", message=f"expected {o.check.expect}, got {o.got}", type="gate"
            )
            failure.text = o.detail
        # Jenkins' attachments convention; other CI systems show it as plain output.
        lines += [f"[[ATTACHMENT|{path}]]" for path in o.saved.values()]
        ET.SubElement(case, "system-out").text = "\n".join(lines)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(path: str | Path, outcomes: Sequence[GateOutcome], suite: str) -> None:
    Path(path).write_text(junit_xml(outcomes, suite), encoding="utf-8")
