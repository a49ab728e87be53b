"""Kafka's own test scenarios, replayed through the model under the release each ran on.

A case passes when every step is enabled in order and every expectation (the
Kafka test's assertions) holds in the state after its step.  A case taken from a
test that came with a fix is also replayed under the release before the fix,
where it must reach the violation the fix prevents.
"""

from __future__ import annotations

import pytest

from replcheck.traces.replay import execute
from tests.conformance.cases import Case, first_violation, load_cases, mismatches
from tests.conformance.table import README, render_table

CASES = load_cases()
REPLAYABLE = [c for c in CASES if c.replayable]


@pytest.mark.parametrize("case", REPLAYABLE, ids=lambda c: c.name)
def test_case_replays_to_the_kafka_tests_assertions(case: Case) -> None:
    model = case.model()
    steps = execute(model, case.actions())
    assert case.expect, f"{case.name}: a case must assert something"
    problems = []
    for expect in case.expect:
        after = expect.get("after", len(steps) - 1)
        assert 0 <= after < len(steps), f"{case.name}: after = {after} is past the last step"
        problems += [f"after step {after}: {p}" for p in mismatches(model, steps[after][1], expect)]
    if case.differs:  # a known difference: Kafka's assertion must still fail in the model
        assert problems, f"{case.name}: the model now agrees with Kafka; drop 'differs'"
    else:
        assert not problems, f"{case.name}: " + "; ".join(problems)


BEFORE_FIX = [c for c in REPLAYABLE if c.before_fix]


@pytest.mark.parametrize("case", BEFORE_FIX, ids=lambda c: c.name)
def test_before_the_fix_the_same_steps_break_the_invariant(case: Case) -> None:
    fix = case.before_fix
    assert fix is not None
    model = case.model(fix["release"])
    actions = case.actions()
    at = first_violation(model, actions, fix["violates"])
    assert at is not None, f"{case.name}: under {fix['release']} {fix['violates']} holds"
    fixed_at = first_violation(case.model(), actions, fix["violates"])
    assert fixed_at is None, f"{case.name}: under {case.release} it is violated at {fixed_at}"


def test_at_least_twenty_cases_replay() -> None:
    assert len(REPLAYABLE) >= 20


def test_the_readme_table_is_current() -> None:
    text = README.read_text()
    assert render_table(CASES) in text, "run: python -m tests.conformance.table"
