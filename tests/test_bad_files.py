"""Every file a user hands replcheck: a bad one is one line on stderr and exit 2, never a traceback.

The named cases are the ones a new user met (issue 8); the property-based tests
(Hypothesis) then feed arbitrary bytes, arbitrary JSON and mutated real traces to
every command that reads a file.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replcheck.checker.suites import gate as gate_module
from replcheck.cli.main import main
from tests.stubs import ReachedSpark

ROOT = Path(__file__).resolve().parent.parent
SEED_TRACE = ROOT / "examples" / "bfs-data-loss.itf.json"
SMALL_SEARCH = ["--max-states", "30", "--quiet"]


def run_cli(*argv: str) -> tuple[int, str, str]:
    """Run replcheck in this process; an exception escaping main() fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def assert_one_line_error(code: int, err: str, *expected: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("replcheck: error: "), err
    assert "Traceback" not in err
    for text in expected:
        assert text in err, err


# ------------------------------------------------------------ named cases

LATIN1 = b'mode = "hw"\nreplicas = 2 # caf\xe9\n'
BINARY = bytes(range(256)) * 2


@pytest.mark.parametrize("content", [LATIN1, BINARY], ids=["latin-1", "binary"])
@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--config", "{f}", *SMALL_SEARCH],
        ["compare", "--modes", "hw", "--config", "{f}", *SMALL_SEARCH],
        ["graph", "--config", "{f}", "--out", "{d}/g.json"],
        ["walk", "--config", "{f}", "--walks", "1"],
        ["gate", "{f}"],
    ],
    ids=["check", "compare", "graph", "walk", "gate"],
)
def test_a_file_that_is_not_utf8(tmp_path, content, argv):
    bad = tmp_path / "bad.toml"
    bad.write_bytes(content)
    args = [a.format(f=bad, d=tmp_path) for a in argv]
    code, out, err = run_cli(*args)
    assert_one_line_error(code, err, str(bad), "not a UTF-8 text file")
    first_bad = "0xe9" if content is LATIN1 else "0x80"
    assert f"byte {first_bad} at line 2" in err


def test_a_gate_whose_config_file_is_not_utf8(tmp_path):
    (tmp_path / "bounds.toml").write_bytes(LATIN1)
    gate = tmp_path / "gate.toml"
    gate.write_text('[[check]]\nname = "x"\nconfig = "bounds.toml"\nexpect = "holds"\n')
    code, _, err = run_cli("gate", gate)
    assert_one_line_error(code, err, "check 'x': config:", "bounds.toml", "not a UTF-8")


@pytest.mark.parametrize(
    "text,expected",
    [
        ("check = [1, 2]\n", "check 1: expected a [[check]] table, got 1"),
        ('check = ["x"]\n', "check 1: expected a [[check]] table, got 'x'"),
        ('[[check]]\nname = "x"\nexpect = "holds"\ntimeout = nan\n', "timeout: expected a finite"),
        ('[[check]]\nname = "x"\nexpect = "holds"\ntimeout = inf\n', "timeout: expected a finite"),
        ('[[check]]\nname = "x"\nexpect = "holds"\ntimeout = 0\n', "timeout: expected a finite"),
    ],
)
def test_malformed_gate_files(tmp_path, text, expected):
    gate = tmp_path / "gate.toml"
    gate.write_text(text)
    code, _, err = run_cli("gate", gate)
    assert_one_line_error(code, err, expected)


def test_a_stray_table_beside_model_is_an_error(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[model]\nmode = "kip320"\n[search]\nmax_states = 5\n')
    code, _, err = run_cli("check", "--config", cfg, "--quiet")
    assert_one_line_error(code, err, "'search' beside the [model] table")


def test_a_utf8_bom_is_accepted(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_bytes(b'\xef\xbb\xbfmode = "kip320"\nrecords = 1\nepochs = 2\n')
    code, out, err = run_cli("check", "--config", cfg, "--quiet")
    assert code == 0, err
    assert "mode=kip320" in out and "result: holds" in out


def _seed() -> dict[str, Any]:
    return json.loads(SEED_TRACE.read_text())


def _with(edit) -> dict[str, Any]:
    doc = _seed()
    edit(doc)
    return doc


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


BAD_TRACES = {
    "bigint-not-digits": (
        lambda d: d["states"][1].update(written={"#bigint": "abc"}),
        "states[1].written: expected an integer",
    ),
    "bigint-in-set": (
        lambda d: d["states"][2].update(acked={"#set": [{"#bigint": "abc"}]}),
        "states[2].acked.#set[0]: expected an integer",
    ),
    "map-not-pairs": (
        lambda d: d["states"][1]["replicas"][0].update(remote_leo={"#map": [1, 2]}),
        "remote_leo.#map[0]: expected a [key, value] pair",
    ),
    "huge-state-integer": (
        lambda d: d["states"][1].update(written={"#bigint": "9" * 5000}),
        "states[1].written: expected an integer",
    ),
    "huge-plain-integer": (
        lambda d: d["states"][1].update(written="<huge>"),  # a bare 5,000-digit number
        "invalid JSON (Exceeds the limit (4300 digits)",
    ),
    "huge-action-parameter": (
        lambda d: d["states"][1]["#meta"]["action"]["params"].update(
            leader={"#bigint": "9" * 5000}
        ),
        "states[1]: leader: expected an integer",
    ),
    "deep-state": (
        lambda d: d["states"][1].update(written=_nested(5000)),
        "nested too deeply",
    ),
    "moderately-deep-state": (
        lambda d: d["states"][1].update(written=_nested(500)),
        "nested more than 64 levels deep",
    ),
    "float-in-state": (
        lambda d: d["states"][1].update(written=1.5),
        "states[1].written: 1.5 is not an ITF value",
    ),
}


def _dump(doc: Any) -> str:
    with _deep_recursion():
        return json.dumps(doc).replace('"<huge>"', "9" * 5000)


@contextlib.contextmanager
def _deep_recursion():
    import sys

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


@pytest.mark.parametrize("command", ["replay", "shrink"])
@pytest.mark.parametrize("case", sorted(BAD_TRACES))
def test_malformed_traces(tmp_path, command, case):
    edit, expected = BAD_TRACES[case]
    trace = tmp_path / "t.itf.json"
    trace.write_text(_dump(_with(edit)))
    extra = ["--out", str(tmp_path / "o.json")] if command == "shrink" else []
    code, out, err = run_cli(command, trace, *extra)
    assert_one_line_error(code, err, "t.itf.json", expected)
    assert not (tmp_path / "o.json").exists()


@pytest.mark.parametrize(
    "text,expected",
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"config": {}, "actions": ["fetch 1 ' + "9" * 5000 + '"]}', "is not a replica"),
        ('{"config": {}, "actions": [{"action": "fetch", "follower": 1e999}]}', "expected a"),
    ],
    ids=["deep-json", "huge-action-text", "infinite-parameter"],
)
def test_malformed_action_lists(tmp_path, text, expected):
    trace = tmp_path / "t.json"
    trace.write_text(text)
    code, _, err = run_cli("replay", trace)
    assert_one_line_error(code, err, expected)
    assert len(err) < 300  # the huge value is quoted cut short


# ------------------------------------------------------ property-based tests

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**6), max_value=10**6)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _itf_tags(inner: st.SearchStrategy) -> st.SearchStrategy:
    """ITF's tagged values, holding anything (well-formed or not)."""
    return (
        st.fixed_dictionaries({"#bigint": st.text(max_size=6) | st.integers()})
        | st.fixed_dictionaries({"#set": inner})
        | st.fixed_dictionaries({"#map": inner})
        | st.fixed_dictionaries({"#tup": inner})
    )


itf_values = st.recursive(json_values, _itf_tags, max_leaves=6)

PROPERTY = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def no_gate_runs(monkeypatch):
    """Gate files are what is under test here, not the checks they run."""

    def judge(check: gate_module.GateCheck) -> gate_module.GateOutcome:
        return gate_module.GateOutcome(check, "holds", True, "stub", 0.0)

    monkeypatch.setattr("replcheck.cli.commands.gate.run_check", judge)


def file_commands(path: Path, folder: Path) -> list[list[str]]:
    """Every command that reads a user's file, with bounds that keep a valid file quick."""
    return [
        ["check", "--config", str(path), *SMALL_SEARCH],
        ["compare", "--modes", "hw", "--config", str(path), *SMALL_SEARCH],
        ["graph", "--config", str(path), "--out", str(folder / "g.json"), "--max-states", "30"],
        ["walk", "--config", str(path), "--walks", "1", "--quiet"],
        ["gate", str(path)],
        ["replay", str(path)],
        ["shrink", str(path), "--out", str(folder / "shrunk.json")],
    ]


def assert_clean_exit(argv: list[str]) -> None:
    """Whatever the file holds: no exception escapes, and exit 2 is exactly one line."""
    try:
        code, _, err = run_cli(*argv)
    except ReachedSpark:
        return
    assert code in (0, 1, 2, 3), (argv, code, err)
    assert "Traceback" not in err
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("replcheck: error: "), (argv, err)


@pytest.mark.usefixtures("no_spark", "no_gate_runs")
@PROPERTY
@given(content=st.binary(max_size=200))
def test_arbitrary_bytes(tmp_path, content):
    for suffix in (".toml", ".json"):
        path = tmp_path / f"input{suffix}"
        path.write_bytes(content)
        for argv in file_commands(path, tmp_path):
            assert_clean_exit(argv)


@pytest.mark.usefixtures("no_spark", "no_gate_runs")
@PROPERTY
@given(doc=json_values)
def test_arbitrary_json(tmp_path, doc):
    path = tmp_path / "input.json"
    path.write_text(json.dumps(doc))
    for argv in file_commands(path, tmp_path):
        assert_clean_exit(argv)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in a JSON document, as a tuple of keys and indexes."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for k, v in enumerate(value):
            out += _paths(v, (*prefix, k))
    return out


SEED_PLACES = _paths(_seed())[1:]


@PROPERTY
@given(place=st.sampled_from(SEED_PLACES), value=itf_values)
def test_a_real_trace_with_one_value_replaced(tmp_path, place, value):
    """The seeds' counterexample with any one value swapped for arbitrary (ITF-like) JSON."""
    doc = _seed()
    target = doc
    for key in place[:-1]:
        target = target[key]
    target[place[-1]] = copy.deepcopy(value)
    path = tmp_path / "t.itf.json"
    path.write_text(json.dumps(doc))
    assert_clean_exit(["replay", str(path)])
    assert_clean_exit(["shrink", str(path), "--out", str(tmp_path / "o.json")])


toml_scalars = (
    st.booleans()
    | st.integers(min_value=-3, max_value=7)
    | st.sampled_from(["hw", "kip320", "all", "1", "holds", "violates:hw-le-leo", "walk", "x"])
    | st.sampled_from([1.5, float("nan"), float("inf")])
)
gate_keys = st.sampled_from(
    sorted(gate_module.GATE_KEYS | {"mode", "replicas", "records", "acks", "min_isr", "bogus"})
)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return {"nan": "nan", "inf": "inf"}.get(str(value), repr(value))
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return str(value)


@pytest.mark.usefixtures("no_gate_runs")
@PROPERTY
@given(
    checks=st.lists(
        st.fixed_dictionaries(
            {},
            optional={
                "name": st.sampled_from(["a", "b", ""]) | toml_scalars,
                "expect": toml_scalars,
            },
        ).flatmap(
            lambda base: st.dictionaries(
                gate_keys, toml_scalars | st.lists(toml_scalars, max_size=3), max_size=5
            ).map(lambda extra: {**base, **extra})
        ),
        max_size=3,
    )
)
def test_arbitrary_gate_files(tmp_path, checks):
    lines = []
    for table in checks:
        lines.append("[[check]]")
        lines += [f"{key} = {_toml_value(value)}" for key, value in table.items()]
    path = tmp_path / "gate.toml"
    path.write_text("\n".join(lines) + "\n")
    assert_clean_exit(["gate", str(path)])


# ------------------------------------------- inputs a new user tried (issue 21)


@pytest.mark.parametrize(
    "argv,expected",
    [
        (["check", "--config", "/dev/zero"], "/dev/zero: larger than 64 MB"),
        (["replay", "/dev/zero"], "/dev/zero: larger than 64 MB"),
        (["shrink", "/dev/zero", "--out", "{d}/s.itf.json"], "/dev/zero: larger than 64 MB"),
        (["check", "--workers", "100000"], "--workers: at most"),
        (["check", "--kafka", "2.1.0.1"], "only releases before 1.0 have four parts"),
        (["check", "--invariant", "all", "--invariant", "nope"], "unknown invariant 'nope'"),
        (["compare", "--kafka", "2.1.0,,3.0.0"], "item 2 is empty"),
        (["check", "--memory", "-1G"], "a size cannot be negative"),
        (["check", "--timeout", "-5"], "expected a positive number of seconds"),
        (["replay", str(SEED_TRACE), "--kafka", "9.9.9"], "newer than this model covers"),
        (["replay", str(SEED_TRACE), "--kafka", "2.1.0", "--mode", "hw"], "give one of them"),
    ],
)
def test_bad_arguments_are_one_line(argv, expected, tmp_path):
    code, out, err = run_cli(*[a.replace("{d}", str(tmp_path)) for a in argv])
    assert_one_line_error(code, err, expected)
    assert out == ""


def test_a_file_past_the_size_limit_is_refused(tmp_path, monkeypatch):
    from replcheck.model.kafka import config as config_module

    monkeypatch.setattr(config_module, "MAX_FILE_BYTES", 100)
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * 200 + '\nmode = "hw"\n')
    code, _, err = run_cli("check", "--config", big)
    assert_one_line_error(code, err, "larger than", "TOML expected")
