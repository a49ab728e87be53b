"""``replcheck explore``: its JSON API in-process, and the command as a process.

The API tests start the server on a free port in a thread and fetch with urllib;
the seeds' HW-truncation loss (Kafka 0.10.2, 2 replicas) is the path they take,
as ``replcheck.check`` finds it.  A find is polled until it ends, never waited for
a fixed time; the 409 of a second find is tested with a search that blocks until
the test lets it end.  The command tests run ``python -m replcheck
explore`` and wait for its URL line, never for a fixed time.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import urlencode
from urllib.request import ProxyHandler, Request, build_opener

import pytest

import replcheck
from replcheck.checker.explicit.explore_find import find_violation
from replcheck.cli.main import main
from replcheck.invariants import registry
from replcheck.model.kafka.replication import ACTION_DOCS
from replcheck.model.registry import config_from_dict
from replcheck.traces.explore import MAX_BODY_BYTES, Explorer, FindFunction, FindOutcome
from replcheck.traces.explore_server import ExploreServer, make_server
from tests.conftest import sigint_default

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
LOSS = "no-committed-data-loss"
_OPENER = build_opener(ProxyHandler({}))  # localhost never goes through a proxy


@pytest.fixture(scope="module")
def loss():
    """The seeds' loss on 0.10.2: (configuration, actions, the invariant's message)."""
    result = replcheck.check(kafka="0.10.2", invariants=[LOSS], workers=1)
    violation = result.violations[LOSS]
    return result.config, [step.action for step in violation.trace[1:]], violation.message


@contextmanager
def running(
    explorer: Explorer, find: FindFunction | None = find_violation
) -> Iterator[ExploreServer]:
    server = make_server(explorer, port=0, find=find)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def server(loss):
    with running(Explorer(loss[0])) as srv:
        yield srv


def get(server_or_url, route: str, steps: str | None = None, query: str | None = None):
    """(status, headers, body text) of a GET; 4xx answers are returned, not raised."""
    base = server_or_url if isinstance(server_or_url, str) else server_or_url.url
    url = base.rstrip("/") + route
    if steps is not None:
        url += "?" + urlencode({"steps": steps})
    elif query is not None:
        url += "?" + query
    try:
        with _OPENER.open(url, timeout=60) as answer:
            return answer.status, answer.headers, answer.read().decode()
    except HTTPError as exc:
        return exc.code, exc.headers, exc.read().decode()


def post(server_or_url, route: str, body: bytes, headers: dict | None = None):
    """(status, headers, body text) of a POST; 4xx answers are returned, not raised."""
    base = server_or_url if isinstance(server_or_url, str) else server_or_url.url
    request = Request(base.rstrip("/") + route, data=body, method="POST", headers=headers or {})
    try:
        with _OPENER.open(request, timeout=60) as answer:
            return answer.status, answer.headers, answer.read().decode()
    except HTTPError as exc:
        return exc.code, exc.headers, exc.read().decode()


def start_find(server, **body) -> dict:
    status, _h, text = post(server, "/api/find", json.dumps(body).encode())
    assert status == 202, text
    return json.loads(text)


def finished(server, job: dict, limit: float = 120) -> dict:
    """Poll the job until it has ended (a bound on the wait, not a pause)."""
    deadline = time.monotonic() + limit
    while True:
        status, _h, text = get(server, "/api/find", query=f"job={job['job']}")
        assert status == 200, text
        answer = json.loads(text)
        if not answer["running"]:
            return answer
        assert time.monotonic() < deadline, f"the search did not end in {limit} s: {answer}"
        time.sleep(0.05)


def find(server, **body) -> dict:
    return finished(server, start_find(server, **body))


def state(server, steps: str) -> dict:
    status, headers, body = get(server, "/api/state", steps)
    assert status == 200, body
    assert headers["Content-Type"] == "application/json"
    return json.loads(body)


def path_of(explorer: Explorer, actions) -> str:
    return explorer.path_text(actions)


# ---------------------------------------------------------------- the API


def test_initial_state(server, loss):
    data = state(server, "")
    assert data["path"] == "" and data["steps"] == [] and data["changes"] == []
    assert data["config"] == loss[0].describe()
    view = data["view"]
    assert view.count('<tr class="lane" data-replica=') == 2
    assert '<tr class="lane controller">' in view
    assert "leader e1" in view and "follows r0 e1" in view and "HW ckpt 0" in view
    assert "cell changed" not in view  # nothing changed: no step was taken
    enabled = {a["step"]: a for a in data["enabled"]}
    assert enabled["write(leader=r0)"]["description"] == ACTION_DOCS["write"]
    assert enabled["write(leader=r0)"]["label"] == "write(leader=r0)"
    assert "elect(leader=r1)" in enabled and "write(leader=r1)" not in enabled
    assert all(a["description"] for a in data["enabled"])
    ids = [inv["id"] for inv in data["invariants"]]
    assert ids == [inv.id for inv in registry(loss[0])]
    assert not any(inv["violated"] for inv in data["invariants"]) and data["violations"] == []


def test_taking_actions_shows_what_changed_and_what_is_in_flight(server):
    data = state(server, "write(leader=r0)")
    assert [s["step"] for s in data["steps"]] == ["write(leader=r0)"]
    assert "r0 appended m1@e1 at offset 0" in data["changes"]
    view = data["view"]
    r0 = view.split('data-replica="0"')[2]  # the row's cell, after the row's own attribute
    r1 = view.split('data-replica="1"')[2]
    assert r0.startswith(">") and 'class="cell changed"' in view.split('data-replica="0"')[1]
    assert 'class="cell changed"' not in view.split('data-replica="1"')[1]
    assert "m1" in r0 and "m1" not in r1.split("</td>")[0]
    # the fetch is a request and a response: the response is in flight in between
    data = state(server, "write(leader=r0)/fetch_request(follower=r1,leader=r0)")
    assert "gets a fetch response in flight: m1@e1 from offset 0, HW 0" in data["view"]
    assert [a["step"] for a in data["enabled"]].count("fetch_response(follower=r1)") == 1
    # positional steps, as an action list may write them, are the same steps
    same = state(server, "write 0/fetch_request 1 0")
    assert same["path"] == data["path"] and same["view"] == data["view"]


def test_the_loss_path_is_reported_with_its_message(server, loss):
    config, actions, message = loss
    explorer = server.explorer
    data = state(server, path_of(explorer, actions))
    assert len(data["steps"]) == len(actions) == 10
    banner = {v["id"]: v["message"] for v in data["violations"]}
    assert banner[LOSS] == message
    assert "committed record m1@e1 at offset 0 is missing" in message
    status = {inv["id"]: inv for inv in data["invariants"]}
    assert status[LOSS]["violated"] and status[LOSS]["first_violated_step"] == len(actions)
    assert status["hw-le-leo"]["violated"] is False
    # two steps back, nothing is violated yet
    before = state(server, path_of(explorer, actions[:-2]))
    assert before["violations"] == []
    assert all(inv["first_violated_step"] is None for inv in before["invariants"])


def test_exported_itf_replays_to_the_same_violation(server, loss, tmp_path, capsys):
    _config, actions, message = loss
    status, headers, body = get(server, "/api/export.itf.json", path_of(server.explorer, actions))
    assert status == 200 and "explore.itf.json" in headers["Content-Disposition"]
    doc = json.loads(body)
    assert doc["#meta"]["invariant"] == LOSS and doc["#meta"]["violation"] == message
    assert len(doc["states"]) == len(actions) + 1
    out = tmp_path / "explore.itf.json"
    out.write_text(body)
    replayed = replcheck.replay(out)
    assert replayed.replays and replayed.invariant == LOSS
    assert replayed.violations[LOSS].message == message
    assert [s.action for s in replayed.steps[1:]] == actions
    # the command line: it replays exactly and ends in the recorded violation (exit 0)
    assert main(["replay", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"=> {LOSS} violated (first at step 10): {message}" in text
    assert "ends in the recorded violation" in text


def test_exported_action_list_replays_to_the_same_violation(server, loss, tmp_path):
    _config, actions, message = loss
    path = path_of(server.explorer, actions)
    status, headers, body = get(server, "/api/export.actions.json", path)
    assert status == 200 and "explore.actions.json" in headers["Content-Disposition"]
    doc = json.loads(body)
    assert doc["actions"][0] == "write(leader=r0)" and len(doc["actions"]) == len(actions)
    assert doc["invariant"] == LOSS
    out = tmp_path / "explore.actions.json"
    out.write_text(body)
    replayed = replcheck.replay(out)
    assert replayed.replays and replayed.violations[LOSS].message == message
    # a path without a violation exports without an invariant, and replays
    status, _h, body = get(server, "/api/export.actions.json", "write(leader=r0)")
    assert status == 200 and "invariant" not in json.loads(body)


@pytest.mark.parametrize(
    "steps,status,fragment",
    [
        ("write(leader=r0)/frobnicate(1)", 400, "path: step 2: unknown action 'frobnicate'"),
        (
            "write(leader=r0)/crash(replica=r0,keep=1)/write(leader=r0)",
            400,
            "path: step 3: write(leader=r0) is not enabled (enabled: ",
        ),
        ("write(leader=r7)", 400, "path: step 1: write(leader=r7) is not enabled"),
        ("write(leader=", 400, "path: step 1: cannot read action"),
        ("write(leader=r0)//elect(leader=r1)", 400, "path: step 2 is empty"),
        ("write(leader=r0, follower=r1)", 400, "path: step 1: write: unknown parameter"),
        ("x" * 10_001, 400, "path: longer than 10,000 characters"),
    ],
)
def test_bad_paths_are_one_line_400s(server, capfd, steps, status, fragment):
    for route in ("/api/state", "/api/export.itf.json", "/api/export.actions.json"):
        code, headers, body = get(server, route, steps)
        assert code == status and headers["Content-Type"] == "application/json"
        error = json.loads(body)["error"]
        assert error.startswith(fragment) and "\n" not in error
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err and err == ""


def test_other_requests_are_refused(server, capfd):
    code, _h, body = get(server, "/etc/passwd")
    assert code == 404 and json.loads(body)["error"].startswith("not found: /etc/passwd")
    code, _h, body = get(server, "/../../README.md")
    assert code == 404 and "not found" in json.loads(body)["error"]
    code, _h, body = get(server, "/api/state", query="steps=a&steps=b")
    assert code == 400 and json.loads(body)["error"] == "steps: give it once"
    code, _h, body = get(server, "/api/state", "x" * 70_000)  # past http.server's line limit
    assert code == 414 and json.loads(body)["error"] == "Request-URI Too Long"
    code, headers, body = post(server, "/api/state", b"steps=")
    assert code == 405 and headers["Allow"] == "GET"
    assert json.loads(body)["error"] == "/api/state: GET only (see docs/explore.md)"
    code, headers, body = get(server, "/api/load")
    assert code == 405 and headers["Allow"] == "POST"
    request = Request(server.url + "api/state", data=b"steps=", method="PUT")
    with pytest.raises(HTTPError) as refused:
        _OPENER.open(request, timeout=60)
    assert refused.value.code == 501 and "PUT" in json.loads(refused.value.read())["error"]
    out, err = capfd.readouterr()
    assert err == ""


def test_the_page_is_self_contained(server):
    code, headers, page = get(server, "/")
    assert code == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert page.startswith("<!DOCTYPE html>") and 'data-start=""' in page
    for needle in ("http://", "https://", "<link", "@import", "url(", "src="):
        assert needle not in page, needle
    for element in ('id="back"', 'id="forward"', 'id="export-itf"', 'id="export-actions"'):
        assert element in page


def test_the_spec_has_a_plain_view(tmp_path):
    config = config_from_dict({"model": "tla-kip320"})
    with running(Explorer(config)) as srv:
        first = state(srv, "")
        assert first["model"] == "tla-kip320"
        assert '<tr class="field" data-field="replica_log">' in first["view"]
        assert {inv["id"] for inv in first["invariants"]} == {i.id for i in registry(config)}
        step = first["enabled"][0]
        assert "=" in step["step"] and " " not in step["step"]
        after = state(srv, step["step"])
        assert after["steps"][0]["step"] == step["step"] and after["changes"]
        assert 'class="cell changed"' in after["view"]
        code, _h, body = get(srv, "/api/export.itf.json", step["step"])
        assert code == 200
        out = tmp_path / "spec.itf.json"
        out.write_text(body)
        replayed = replcheck.replay(out)
        assert replayed.replays and replayed.depth == 1


# ------------------------------------------------------------ hover preview


def test_each_enabled_action_previews_where_it_leads(server, loss):
    """An action's preview is what taking it shows: the step's changes, and the
    invariants violated after it that hold before."""
    _config, actions, _message = loss
    explorer = server.explorer
    first = {a["step"]: a for a in state(server, "")["enabled"]}
    assert "r0 appended m1@e1 at offset 0" in first["write(leader=r0)"]["changes"]
    assert all(a["breaks"] == [] for a in first.values())
    for k in (0, 4, len(actions) - 1):
        path = path_of(explorer, actions[:k])
        here = state(server, path)
        for action in here["enabled"]:
            after = state(server, f"{path}/{action['step']}" if path else action["step"])
            assert action["changes"] == after["changes"]
            now = {v["id"] for v in here["violations"]}
            assert action["breaks"] == [v["id"] for v in after["violations"] if v["id"] not in now]
    last = {a["step"]: a for a in state(server, path_of(explorer, actions[:-1]))["enabled"]}
    assert LOSS in last[explorer.step_text(actions[-1])]["breaks"]


# ------------------------------------------------------------------- find


def test_find_from_the_initial_state_is_checks_counterexample(server, loss, tmp_path):
    """The shortest violation from the initial state is as long as check's, and the path
    it loads is one: the page shows the violation there, and its export replays."""
    _config, actions, message = loss
    job = start_find(server, steps="", invariant=LOSS)
    assert job["invariant"] == LOSS and job["from"] == "" and job["max_states"] == 200_000
    done = finished(server, job)
    assert done["violated"] and done["status"] == "all-violated" and done["complete"]
    assert done["added"] == len(actions) == 10 and done["message"] == message
    data = state(server, done["path"])
    assert len(data["steps"]) == len(actions)
    assert {v["id"]: v["message"] for v in data["violations"]}[LOSS] == message
    status, _h, body = get(server, "/api/export.itf.json", done["path"])
    out = tmp_path / "found.itf.json"
    out.write_text(body)
    replayed = replcheck.replay(out)
    assert replayed.replays and replayed.invariant == LOSS and replayed.depth == len(actions)
    # the latest job is kept and answers again; no job number: the latest
    status, _h, body = get(server, "/api/find")
    assert status == 200 and json.loads(body) == done


def test_find_from_a_state_a_few_steps_in(server, loss):
    """From the 4th state of the shortest loss, the rest of it (6 steps) is the shortest:
    a shorter one would make a shorter loss from the initial state."""
    _config, actions, message = loss
    here = path_of(server.explorer, actions[:4])
    done = find(server, steps=here, invariant=LOSS, max_states=50_000, time_limit=60)
    assert done["violated"] and done["from"] == here
    assert done["added"] == len(actions) - 4 and done["path"].startswith(here + "/")
    assert LOSS in {v["id"] for v in state(server, done["path"])["violations"]}
    # where it is violated already, the path is the same, 0 steps added
    there = path_of(server.explorer, actions)
    done = find(server, steps=there, invariant=LOSS)
    assert done["violated"] and done["added"] == 0 and done["path"] == there
    assert done["message"] == message


def test_find_that_exhausts_without_a_violation():
    """2.1.0 keeps every committed record: the search from the initial state visits what
    check visits, and says so; with a small limit it says it stopped there."""
    config = config_from_dict({"kafka": "2.1.0"})
    checked = replcheck.check(config, invariants=[LOSS], workers=1)
    assert checked.holds and checked.status == "complete"
    with running(Explorer(config)) as srv:
        done = find(srv, invariant=LOSS, max_states=200_000, time_limit=120)
        assert done["violated"] is False and done["complete"] and done["status"] == "complete"
        assert done["states"] == checked.distinct_states and "path" not in done
        done = find(srv, invariant=LOSS, max_states=100)
        assert done["violated"] is False and not done["complete"]
        assert done["status"] == "max-states" and done["states"] == 100


def test_one_find_at_a_time(loss, capfd):
    """A second find while one runs is a 409; the state API answers meanwhile."""
    release, started = threading.Event(), threading.Event()

    def slow(explorer, request, on_progress) -> FindOutcome:
        on_progress(7, 1, 0.5)
        started.set()
        assert release.wait(120)
        return FindOutcome("complete", 7, 1, 0.5, None)

    with running(Explorer(loss[0]), find=slow) as srv:
        try:
            first = start_find(srv, invariant=LOSS)
            assert started.wait(60)
            status, _h, body = get(srv, "/api/find", query=f"job={first['job']}")
            running_now = json.loads(body)
            assert running_now["running"] and running_now["states"] == 7
            code, _h, body = post(srv, "/api/find", json.dumps({"invariant": "hw-le-leo"}).encode())
            error = json.loads(body)["error"]
            assert code == 409 and "\n" not in error
            assert error == (
                f"find: search {first['job']} is still running ({LOSS}); one at a time: "
                "wait for it to end"
            )
            assert state(srv, "write(leader=r0)")["steps"]  # the server still answers
        finally:
            release.set()
        done = finished(srv, first)
        assert done["violated"] is False and done["complete"]
        second = start_find(srv, invariant="hw-le-leo")  # the slot is free again
        assert second["job"] == first["job"] + 1
        finished(srv, second)
    out, err = capfd.readouterr()
    assert err == ""


def test_a_failing_engine_is_the_jobs_one_line_error(loss):
    def broken(explorer, request, on_progress) -> FindOutcome:
        raise RuntimeError("no\nluck")

    with running(Explorer(loss[0]), find=broken) as srv:
        done = find(srv, invariant=LOSS)
        assert done["error"] == "find: RuntimeError: no luck" and "violated" not in done


@pytest.mark.parametrize(
    "body,fragment",
    [
        (b'{"invariant": "nope"}', "find: invariant: expected one of no-committed-data-loss, "),
        (b"{}", "find: invariant: expected one of "),
        (b'{"invariant": "hw-le-leo", "max_states": 0}', "find: max_states: expected a whole "),
        (b'{"invariant": "hw-le-leo", "max_states": "9"}', "find: max_states: expected a whole"),
        (b'{"invariant": "hw-le-leo", "max_states": 1.5}', "find: max_states: expected a whole"),
        (b'{"invariant": "hw-le-leo", "max_states": 1e12}', "find: max_states: expected a whole"),
        (b'{"invariant": "hw-le-leo", "max_states": true}', "find: max_states: expected a whole"),
        (b'{"invariant": "hw-le-leo", "time_limit": -1}', "find: time_limit: expected seconds"),
        (b'{"invariant": "hw-le-leo", "time_limit": NaN}', "find: time_limit: expected seconds"),
        (b'{"invariant": "hw-le-leo", "time_limit": 1e9}', "find: time_limit: expected seconds"),
        (b'{"invariant": "hw-le-leo", "speed": 1}', "find: unknown key 'speed'"),
        (b'{"invariant": "hw-le-leo", "steps": 3}', "find: steps: expected the path as text"),
        (b'{"invariant": "hw-le-leo", "steps": "write(leader=r7)"}', "path: step 1: write("),
        (b"[1]", "find: the body must be a JSON object"),
        (b"{", "body: not JSON (Expecting property name"),
        (b"", "body: not JSON"),
    ],
)
def test_bad_finds_are_one_line_400s(server, capfd, body, fragment):
    code, headers, text = post(server, "/api/find", body)
    assert code == 400 and headers["Content-Type"] == "application/json"
    error = json.loads(text)["error"]
    assert error.startswith(fragment) and "\n" not in error
    out, err = capfd.readouterr()
    assert err == ""


def test_find_is_refused_where_no_engine_was_given(loss):
    with running(Explorer(loss[0]), find=None) as srv:
        code, _h, body = post(srv, "/api/find", json.dumps({"invariant": LOSS}).encode())
        assert code == 404 and json.loads(body)["error"].startswith("find: this server has no")
        code, _h, body = get(srv, "/api/find")
        assert code == 404 and json.loads(body)["error"].startswith("find: no search yet")
        assert 'id="find"' not in get(srv, "/")[2]


def test_an_unknown_job_is_404(server):
    code, _h, body = get(server, "/api/find", query="job=999999")
    assert code == 404 and "only the latest is kept" in json.loads(body)["error"]


# ------------------------------------------------------------------- load


def load(server, text: bytes, name: str):
    code, _h, body = post(server, "/api/load?" + urlencode({"name": name}), text)
    return code, json.loads(body)


@pytest.fixture(scope="module")
def seed_server():
    """A server of the examples' configuration (the seeds' loss: 1 record, 2 crashes)."""
    config = replcheck.replay(EXAMPLES / "seed-data-loss.itf.json").config
    with running(Explorer(config)) as srv:
        yield srv


@pytest.mark.parametrize(
    "example", ["seed-data-loss.itf.json", "data-loss.actions.toml", "data-loss.actions.itf.json"]
)
def test_load_a_trace_as_its_path(seed_server, example):
    """A trace file's text, as the page reads it, is the path it replays along."""
    code, answer = load(seed_server, (EXAMPLES / example).read_bytes(), example)
    assert code == 200, answer
    trace = replcheck.replay(EXAMPLES / example)
    assert answer["path"] == path_of(seed_server.explorer, [s.action for s in trace.steps[1:]])
    assert answer["steps"] == len(trace.steps) - 1 == 9 and answer["invariant"] == LOSS
    assert LOSS in {v["id"] for v in state(seed_server, answer["path"])["violations"]}


def test_an_exported_path_loads_back(server, loss):
    path = path_of(server.explorer, loss[1][:3])
    for route in ("/api/export.itf.json", "/api/export.actions.json"):
        _code, _h, body = get(server, route, path)
        code, answer = load(server, body.encode(), "explore.json")
        assert code == 200 and answer["path"] == path and answer["invariant"] is None


@pytest.mark.parametrize(
    "make,fragment",
    [
        (lambda: b"{", "up.json: invalid JSON at line 1 column 2"),
        (lambda: b"[1]", "up.json: not a trace"),
        (lambda: b"\xff\xfe", "up.json: not UTF-8 text (byte 0)"),
        (
            lambda: (EXAMPLES / "seed-data-loss.itf.json").read_bytes(),
            "up.json: a trace of mode=hw replicas=2 records=1 epochs=2 crashes=2 ",
        ),
    ],
)
def test_bad_loads_are_one_line_400s(server, capfd, make, fragment):
    code, answer = load(server, make(), "up.json")
    assert code == 400, answer
    assert answer["error"].startswith(fragment) and "\n" not in answer["error"]
    if "a trace of" in fragment:
        assert "not of this server's kafka=0.10.2 replicas=2 " in answer["error"]
    out, err = capfd.readouterr()
    assert err == ""


def test_a_trace_that_does_not_replay_is_a_400(seed_server):
    code, answer = load(seed_server, json.dumps(_diverged()).encode(), "up.json")
    assert code == 400 and answer["error"].startswith(
        "up.json: does not replay here: step 3: after "
    )
    toml = (EXAMPLES / "data-loss.actions.toml").read_text().replace('"write(leader=r0)"', '"x"', 1)
    code, answer = load(seed_server, toml.encode(), "up.toml")
    assert code == 400 and answer["error"].startswith("up.toml: actions[1]: unknown action 'x'")
    code, answer = load(seed_server, b"actions = [", "up.toml")
    assert code == 400 and answer["error"].startswith("up.toml: invalid TOML (")


def test_a_load_past_the_body_limit_is_413(server):
    code, answer = load(server, b" " * (MAX_BODY_BYTES + 1), "big.json")
    assert code == 413 and answer["error"] == (
        f"body: {MAX_BODY_BYTES + 1:,} bytes, more than the {MAX_BODY_BYTES:,} accepted"
    )
    code, answer = load(server, b" " * 10, "x.json")  # the server still answers
    assert code == 400 and answer["error"].startswith("x.json: invalid JSON")


def _diverged() -> dict:
    doc = json.loads((EXAMPLES / "seed-data-loss.itf.json").read_text())
    doc["states"][3]["replicas"][0]["hw"] = {"#bigint": "7"}
    return doc


# --------------------------------------------------------------- the command


@contextmanager
def serve_cli(*argv: str) -> Iterator[tuple[subprocess.Popen, str]]:
    """``python -m replcheck explore ARGV`` until its URL line; killed at the end, and
    after two minutes whatever happens (a hung server must not hang the suite)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "replcheck", "explore", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_default,
    )
    watchdog = threading.Timer(120, proc.kill)
    watchdog.start()
    try:
        url = proc.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            proc.kill()
            _out, err = proc.communicate()
            pytest.fail(f"no URL line: {url!r}; stderr: {err}")
        yield proc, url
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_the_command_serves_and_stops_on_ctrl_c():
    with serve_cli("--kafka", "0.10.2") as (proc, url):
        code, _h, page = get(url, "/")
        assert code == 200 and "kafka=0.10.2 replicas=2" in page
        assert state(url, "write(leader=r0)")["changes"]
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert out == ""  # the URL line was read already; nothing else goes to stdout
    assert "Traceback" not in err and "replcheck explore: stopped" in err


def test_the_command_starts_on_a_trace():
    trace = EXAMPLES / "seed-data-loss.itf.json"
    loaded = replcheck.replay(trace)
    with serve_cli("--trace", str(trace)) as (_proc, url):
        code, _h, page = get(url, "/")
        explorer = Explorer(loaded.config)
        start = explorer.path_text([s.action for s in loaded.steps[1:]])
        assert code == 200 and f'data-start="{start}"' in page.replace("&#x27;", "'")
        data = state(url, start)
        assert data["start"] == start and LOSS in {v["id"] for v in data["violations"]}


def test_the_command_starts_on_a_trace_in_another_release():
    trace = EXAMPLES / "seed-data-loss.itf.json"
    with serve_cli("--trace", str(trace), "--kafka", "2.1.0") as (_proc, url):
        first = state(url, "")
        assert first["config"].startswith("kafka=2.1.0 ") and first["start"]
        data = state(url, first["start"])
        assert len(data["steps"]) == 9 and LOSS not in {v["id"] for v in data["violations"]}


def test_a_port_in_use_is_one_line_exit_2():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "replcheck", "explore", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"replcheck explore: --port {port}: in use on 127.0.0.1 " + (
        "(another server listens there; --port 0 picks a free one)\n"
    )


def _diverging_trace(tmp_path: Path) -> Path:
    doc = json.loads((EXAMPLES / "seed-data-loss.itf.json").read_text())
    doc["states"][3]["replicas"][0]["hw"] = {"#bigint": "7"}
    bad = tmp_path / "bad.itf.json"
    bad.write_text(json.dumps(doc))
    return bad


@pytest.mark.parametrize(
    "make,fragment",
    [
        (lambda tmp: tmp / "missing.itf.json", "missing.itf.json"),
        (lambda tmp: _write(tmp / "broken.json", "{"), "broken.json: invalid JSON"),
        (lambda tmp: _write(tmp / "other.json", "[1]"), "other.json: not a trace"),
        (_diverging_trace, "does not replay: step 3: after "),
    ],
)
def test_bad_traces_are_one_line_exit_2(capsys, tmp_path, make, fragment):
    path = make(tmp_path)
    code = main(["explore", "--trace", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("replcheck explore: ") and err.count("\n") == 1 and fragment in err


def test_a_trace_under_another_release(capsys):
    """--kafka with --trace: the trace's steps in that release, as replay --kafka does;
    other model flags would change the model under the trace, and are refused."""
    trace = str(EXAMPLES / "seed-data-loss.itf.json")
    for flag in ("--records=1", "--no-kraft"):  # a flag that says no is given too
        code = main(["explore", "--trace", trace, flag])
        out, err = capsys.readouterr()
        assert code == 2 and out == "" and err.count("\n") == 1
        assert err.startswith("replcheck explore: --trace: the trace carries its configuration")
    code = main(["explore", "--trace", trace, "--kafka", "2.2.0"])  # KIP-380: no early restart
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"replcheck explore: --trace {trace}: does not replay: step ")
    assert "is not enabled" in err


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
