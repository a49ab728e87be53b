"""The model's steps as actions on a started cluster, each waiting for Kafka's evidence.

One method per op of the plan (``op_<name>``), on the relay, the client helper and the
processes; a helper for each kind of evidence.  Where Kafka does not take a step the
model takes, ``StepTimeout`` says what was awaited; where it refuses one outright (a
fixed release's rule), ``StepRefused`` says Kafka's reason.
"""

from __future__ import annotations

import shutil
import signal
import time
from collections.abc import Callable
from typing import Any

from replcheck.cluster import evidence
from replcheck.cluster.client import Client
from replcheck.cluster.nodes import BROKER_SETTINGS, Cluster, StepRefused, StepTimeout
from replcheck.cluster.relay import ALTER_PARTITION, FETCH, OFFSETS_FOR_LEADER_EPOCH

# What a follower sends its leader, one at a time: a step's fetch is either.
FOLLOWER_KEYS = (FETCH, OFFSETS_FOR_LEADER_EPOCH)
LAG_S = int(BROKER_SETTINGS["replica.lag.time.max.ms"][0]) / 1000


class ClusterSteps:
    """The ops, on a started cluster."""

    def __init__(self, cluster: Cluster, client: Client, lagging: set[int]) -> None:
        self.c = cluster
        self.client = client
        self.lagging = set(lagging)
        # (follower, leader) -> when the follower's last fetch went through to that leader
        self.fetched_at: dict[tuple[int, int], float] = {}
        self.down: set[int] = set()
        self.shrinks_used: dict[int, int] = {}  # leader -> its shrink proposals taken by steps
        self.first_fetch: dict[tuple[int, int], float] = {}  # (follower, leader) -> epoch start

    def _waiting(self, link: str) -> int | None:
        """The API key of the follower's request waiting on ``link``, if one does."""
        for key in FOLLOWER_KEYS:
            if self.c.relay.waiting(link, key):
                return key
        return None

    def _answers_held(self, link: str) -> int:
        return sum(self.c.relay.waiting_responses(link, key) for key in FOLLOWER_KEYS)

    # -- helpers ---------------------------------------------------------------------

    def _until(self, test: Callable[[], Any], timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            got = test()
            if got:
                return got
            if time.monotonic() > deadline:
                raise StepTimeout(f"{what} (waited {timeout:.0f} s)")
            time.sleep(0.05)

    def _sync_up_to_date(self, what: str) -> None:
        """Brokers that do not lag apply each change as it is committed: wait for it."""
        target = evidence.controller_epoch(self.c)
        for b in self.c.brokers:
            if b in self.lagging or b in self.down:
                continue
            self._until(
                lambda b=b: evidence.applied_epoch(self.c, b) >= target,
                30,
                f"{what}: broker {b} did not apply partition epoch {target}",
            )

    def _controller_change(self, before: int, what: str) -> None:
        self._until(
            lambda: evidence.controller_epoch(self.c) > before,
            30,
            f"{what}: the controller wrote no partition change",
        )
        self._sync_up_to_date(what)

    def _let_pass(self, op: dict[str, Any]) -> None:
        """After this step the model's leader does not count these followers toward its
        HW: before it, let their last catch-up age past replica.lag.time.max.ms, or
        Kafka's leader would count them still (Partition.maybeIncrementLeaderHW) when the
        step recomputes its HW (a write, a fetch, a metadata change, an ISR answer)."""
        for leader, followers in op.get("let_pass", {}).items():
            for f in followers:
                since = time.monotonic() - self.fetched_at.get((f, int(leader)), -1e9)
                if since < LAG_S + 0.5:
                    time.sleep(LAG_S + 0.5 - since)

    def _lines(self, node: str, since: int) -> list[str]:
        return evidence.decisive_lines(self.c, node, since)

    # -- the ops ---------------------------------------------------------------------

    def run(self, op: dict[str, Any], changes: bool) -> list[str]:
        """Takes ``op``; ``changes``: the model's controller writes a partition change."""
        self.changes = changes
        self._let_pass(op)
        return getattr(self, "op_" + op["op"])(op)

    def op_write(self, op: dict[str, Any]) -> list[str]:
        leader = f"broker-{op['leader']}"
        pos = self.c.log_size(leader)
        answer = self.client.ask("send", id=f"m{op['id']}")
        if not answer.get("ok"):
            raise StepTimeout(f"write: the producer refused: {answer.get('error')}")
        line = self.c.wait_log(
            leader,
            "Appended message set",
            30,
            pos,
            f"write m{op['id']}: broker {op['leader']} appended nothing",
        )
        return [line]

    def op_fetch_request(self, op: dict[str, Any]) -> list[str]:
        f, leader = op["follower"], op["leader"]
        link = self.c.fetch_link(f, leader)
        wait = f"fetch_request: broker {f} sent no fetch to broker {leader}"
        key = self._until(lambda: self._waiting(link), 30, wait)
        glue: list[str] = []
        since = self.c.relay.waiting_since(link, key)
        if since is not None and since < evidence.epoch_started_at(self.c, f):
            # Sent before the follower applied its current leader epoch: the model's
            # follower has no such request.  Kafka answers it (a fenced epoch, or data
            # the follower drops); then the follower's fresh request is the step's.
            glue = self._flush_stale(f, leader, link, key)
            key = self._until(lambda: self._waiting(link), 30, wait)
        self._space_first_fetch(f, leader)
        answered = self._answers_held(link)
        pos = self.c.log_size(f"broker-{leader}")
        self.c.relay.release(link, key)
        self.fetched_at[(f, leader)] = time.monotonic()
        self._until(
            lambda: self._answers_held(link) > answered,
            30,
            f"fetch_request: broker {leader} did not answer broker {f}'s fetch",
        )
        return glue + self._lines(f"broker-{leader}", pos)

    def _space_first_fetch(self, f: int, leader: int) -> None:
        """A follower's first fetch in the leader's epoch comes at least half the lag
        (plus a second) after the leader took the epoch.  Kafka's leader checks for lagging
        followers every replica.lag.time.max.ms / 2 (its isr-expiration task) and removes
        every follower out of sync at that check; a follower that never fetched is out of
        sync one lag after the epoch began.  Spaced so, the check that finds one
        never-fetched follower out of sync comes before a fetched one is: they leave in
        separate changes, as a model's steps take them one by one."""
        started = evidence.epoch_started_at(self.c, leader)
        if self.first_fetch.get((f, leader)) == started:
            return
        self.first_fetch[(f, leader)] = started
        wait = started + LAG_S / 2 + 1.0 - time.time()
        if 0 < wait <= LAG_S:
            time.sleep(wait)

    def _flush_stale(self, f: int, leader: int, link: str, key: int) -> list[str]:
        answered = self._answers_held(link)
        self.c.relay.release(link, key)
        self._until(
            lambda: self._answers_held(link) > answered,
            30,
            f"broker {leader} did not answer broker {f}'s stale fetch",
        )
        self.c.relay.release_response(link, key)
        return [f"(a fetch broker {f} sent before its current leader epoch: answered first)"]

    def op_fetch_response(self, op: dict[str, Any]) -> list[str]:
        f = op["follower"]
        links = [self.c.fetch_link(f, leader) for leader in self.c.brokers if leader != f]
        held = [
            (link, key)
            for link in links
            for key in FOLLOWER_KEYS
            if self.c.relay.waiting_responses(link, key)
        ]
        if not held:
            raise StepTimeout(f"fetch_response: no answer to broker {f} is held")
        pos = self.c.log_size(f"broker-{f}")
        self.c.relay.release_response(*held[0])
        self._until(
            lambda: any(self._waiting(link) for link in links),
            30,
            f"fetch_response: broker {f} sent no next fetch after the answer",
        )
        return self._lines(f"broker-{f}", pos)

    def op_diverging_truncate(self, op: dict[str, Any]) -> list[str]:
        return ["Kafka truncated while handling the fetch response (one step there)"]

    def _shrink(self, leader: int, followers: list[int]) -> list[str]:
        """The leader's next ISR shrink proposal (Kafka's clock makes it), which must
        remove the trace's followers."""
        node = f"broker-{leader}"
        used = self.shrinks_used.get(leader, 0)

        def proposed() -> str | None:
            found = evidence.shrink_lines(self.c, leader)
            return found[used] if len(found) > used else None

        line = self._until(
            proposed,
            LAG_S * 3 + 10,
            f"shrink_isr: broker {leader} did not propose removing {followers}",
        )
        self.shrinks_used[leader] = used + 1
        removed = evidence.out_of_sync(line)
        if removed != set(followers):
            raise StepTimeout(
                f"shrink_isr: broker {leader} proposed removing {sorted(removed)}, the trace "
                f"{sorted(followers)} ({node}: {_message(line)})"
            )
        return [line]

    def op_shrink_isr(self, op: dict[str, Any]) -> list[str]:
        return self._shrink(op["leader"], [op["follower"]])

    def op_shrink_isr_set(self, op: dict[str, Any]) -> list[str]:
        return self._shrink(op["leader"], list(op["followers"]))

    def op_alter_isr(self, op: dict[str, Any]) -> list[str]:
        leader = op["leader"]
        link = self.c.meta_link(leader)
        down = leader in self.down  # sent before it died: the bytes still reach the controller
        self._until(
            lambda: self.c.relay.waiting(link, ALTER_PARTITION, even_if_closed=down),
            30,
            f"alter_isr: broker {leader} sent no AlterPartition",
        )
        before = evidence.controller_epoch(self.c)
        answered = self.c.relay.count(link, ALTER_PARTITION)[1]
        pos = self.c.log_size(f"broker-{leader}")
        cpos = self.c.log_size("controller")
        self.c.relay.release(link, ALTER_PARTITION, even_if_closed=down)
        if self.changes:

            def decided() -> bool:
                rejected = self.c.find_line("controller", "Rejecting AlterPartition", cpos)
                if rejected:
                    raise StepRefused(f"alter_isr: Kafka's controller: {_message(rejected)}")
                return evidence.controller_epoch(self.c) > before

            self._until(decided, 30, "alter_isr: the controller wrote no partition change")
            self._sync_up_to_date("alter_isr")
        if not down:
            self._until(
                lambda: self.c.relay.count(link, ALTER_PARTITION)[1] > answered,
                30,
                f"alter_isr: the controller did not answer broker {leader}",
            )
            marks = evidence.ANSWER_HANDLED
            self._until(
                lambda: any(m in self.c.read_log(f"broker-{leader}", pos) for m in marks),
                15,
                f"alter_isr: broker {leader} did not handle the answer",
            )
        if evidence.controller_epoch(self.c) > before:
            self._sync_up_to_date("alter_isr")
        return self._lines("controller", cpos) + self._lines(f"broker-{leader}", pos)

    def _committed(self) -> None:
        """The controller's last change is committed in the metadata log, not only
        replayed in its memory (it replays a record before the raft layer appends and
        commits it): a held broker let through now receives it, and with it all it missed,
        in one answer."""
        time.sleep(0.5)  # the raft layer appends a batch within its linger (25 ms)
        end = self.client.ask("quorum", timeout=30).get("end", -1)
        self._until(
            lambda: self.client.ask("quorum", timeout=30).get("hw", -1) >= end,
            30,
            "the controller did not commit its metadata change",
        )

    def _metadata(self, replica: int) -> list[str]:
        node = f"broker-{replica}"
        target = evidence.controller_epoch(self.c)
        pos = self.c.log_size(node)
        if replica in self.lagging and evidence.applied_epoch(self.c, replica) < target:
            self._committed()
            link = self.c.meta_link(replica)
            self._until(
                lambda: self.c.relay.waiting(link, FETCH),
                30,
                f"broker {replica} sent no metadata fetch",
            )
            self.c.relay.release(link, FETCH)
        self._until(
            lambda: evidence.applied_epoch(self.c, replica) >= target,
            30,
            f"broker {replica} did not apply partition epoch {target}",
        )
        return self._lines(node, pos)

    def op_deliver(self, op: dict[str, Any]) -> list[str]:
        return self._metadata(op["replica"])

    op_deliver_latest = op_deliver

    def op_apply_isr(self, op: dict[str, Any]) -> list[str]:
        return self._metadata(op["leader"])

    op_reapply_isr = op_apply_isr

    def op_elect(self, op: dict[str, Any]) -> list[str]:
        before, cpos = evidence.controller_epoch(self.c), self.c.log_size("controller")
        answer = self.client.ask("elect")
        if not answer.get("ok") or answer.get("error"):
            refusal = answer.get("error")
            raise StepRefused(f"elect broker {op['leader']}: the controller refused: {refusal}")
        self._controller_change(before, f"elect broker {op['leader']}")
        return self._lines("controller", cpos)

    def op_reorder(self, op: dict[str, Any]) -> list[str]:
        before = evidence.controller_epoch(self.c)
        answer = self.client.ask("reorder", replicas=op["replicas"])
        if not answer.get("ok"):
            raise StepRefused(f"reorder: the controller refused: {answer.get('error')}")
        self._controller_change(before, f"reorder to {op['replicas']}")
        return [f"replicas reordered to {op['replicas']}"]

    def op_crash(self, op: dict[str, Any]) -> list[str]:
        r = op["replica"]
        self.c.signal(f"broker-{r}", signal.SIGKILL)
        self.down.add(r)
        out = [f"broker {r} killed (SIGKILL)"]
        if op["keep"] == 0:
            shutil.rmtree(
                self.c.folder / "data" / f"broker-{r}" / evidence.PARTITION, ignore_errors=True
            )
            out.append(f"broker {r}: its log of {evidence.PARTITION} removed (a new disk)")
        return out

    def op_notice_crash(self, op: dict[str, Any]) -> list[str]:
        before, cpos = evidence.controller_epoch(self.c), self.c.log_size("controller")
        r = op["replica"]
        self.c.wait_log(
            "controller",
            f"Fencing broker {r} ",
            60,
            cpos,
            f"notice_crash: the controller did not fence broker {r}",
        )
        if self.changes:
            self._controller_change(before, f"notice_crash of broker {r}")
        self._expect_leader(op["new_leader"], f"notice_crash of broker {r}")
        return self._lines("controller", cpos)

    def _expect_leader(self, expected: int, what: str) -> None:
        """The controller's leader must be the model's choice; if Kafka chose another
        (an election rule the model's release lacks), the steps stop there."""
        leader = evidence.controller_leader(self.c)
        if leader != expected:
            chosen = "no leader" if leader in (-1, None) else f"broker {leader} leader"
            wanted = "none" if expected == -1 else f"broker {expected}"
            raise StepRefused(f"{what}: Kafka's controller made {chosen}; the model: {wanted}")

    def op_restart(self, op: dict[str, Any]) -> list[str]:
        r = op["replica"]
        self.restart_pos = self.c.log_size(f"broker-{r}")
        if r in self.lagging:  # it reads the metadata log anew, all of it
            self.c.relay.open(self.c.meta_link(r), FETCH)
            self.lagging.discard(r)
        self.c.start(f"broker-{r}")
        return [f"broker {r} started again"]

    def op_notice_restart(self, op: dict[str, Any]) -> list[str]:
        r = op["replica"]
        line = self.c.wait_log(
            f"broker-{r}",
            "Transition from STARTING to STARTED",
            120,
            getattr(self, "restart_pos", 0),
            f"notice_restart: broker {r} was not unfenced",
        )
        self.down.discard(r)
        return [line]

    def op_shutdown(self, op: dict[str, Any]) -> list[str]:
        r = op["replica"]
        before = evidence.controller_epoch(self.c)
        self.c.signal(f"broker-{r}", signal.SIGTERM, wait=120)
        self.down.add(r)
        if evidence.controller_epoch(self.c) > before:
            self._sync_up_to_date(f"shutdown of broker {r}")
        return [f"broker {r} shut down (SIGTERM)"]


def _message(line: str) -> str:
    """A log line without its time, level and logger."""
    text = line.split("] ", 2)[-1] if line.startswith("[") else line
    return text.rsplit(" (", 1)[0]
