"""The reachable state graph of a small configuration, as a networkx MultiDiGraph.

Nodes are states (numbered in BFS order, 0 the initial state) with their
invariant verdicts; edges are actions.  Any model will do (the Kafka model, the
TLA+ spec): the labels come from functions the caller passes, by default the
state's fields and the action's parameters as the model names them.  Once the
graph is built, networkx makes a few questions cheap: deadlocks, shortest paths
to violations, and the states from which no violation is reachable any more.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import networkx as nx

from replcheck.checker.explicit.bfs import peak_memory_bytes
from replcheck.invariants import Invariant
from replcheck.model.interface import Action, Model
from replcheck.model.kafka.state import State
from replcheck.traces.text import controller_cell, replica_cell

FORMATS = (".graphml", ".dot", ".json")


class GraphIncomplete(Exception):
    """The graph could not be finished within a limit; ``states`` were built so far."""

    def __init__(self, reason: str, states: int):
        self.reason, self.states = reason, states
        super().__init__(reason)


class TooManyStates(GraphIncomplete):
    """The configuration has more reachable states than the bound allows."""

    def __init__(self, bound: int):
        self.bound = bound
        super().__init__(f"more than {bound:,} reachable states (--max-states)", bound)


class GraphTimeout(GraphIncomplete):
    """The time limit passed before every reachable state was built."""


class GraphMemory(GraphIncomplete):
    """The memory budget was reached before every reachable state was built."""


@dataclass
class StateGraph:
    graph: nx.MultiDiGraph
    states: list[Hashable]  # node id -> state
    invariants: Sequence[Invariant]
    violating: dict[str, list[int]] = field(default_factory=dict)  # invariant -> nodes


def state_label(s: State) -> str:
    """A Kafka model state: the controller, then each replica."""
    cells = [f"r{i}: {replica_cell(i, r, s)}" for i, r in enumerate(s.replicas)]
    return " | ".join([f"ctrl {controller_cell(s)}", *cells])


def plain_state_label(s: Hashable) -> str:
    """Any model's state: its fields (a named tuple's), else its repr."""
    fields = getattr(s, "_fields", None)
    if fields is None:
        return repr(s)
    return " | ".join(f"{name}={value!r}" for name, value in zip(fields, s, strict=True))


def build_graph(
    model: Model,
    invariants: Sequence[Invariant],
    max_states: int,
    symmetry: bool = False,
    time_limit: float | None = None,
    memory_limit: int | None = None,
    *,
    label: Callable[[Hashable], str] = plain_state_label,
    describe: Callable[[Action], str] | None = None,
) -> StateGraph:
    """Every reachable state (up to symmetry if asked) and every transition between them.

    ``label`` names a node's state and ``describe`` an edge's action (default: the
    action's parameters by the names ``model.action_params`` gives them).

    Raises TooManyStates as soon as more than ``max_states`` states are found,
    GraphTimeout once ``time_limit`` seconds have passed and GraphMemory once the
    process holds ``memory_limit`` bytes: half a graph answers no question about
    deadlocks or safe states, so there is none to return.
    """
    deadline = time.monotonic() + time_limit if time_limit is not None else None
    canon = model.representative if symmetry else (lambda s: s)
    if describe is None:
        describe = partial(describe_plain, model)
    graph = nx.MultiDiGraph()
    ids: dict[Hashable, int] = {}
    states: list[Hashable] = []
    result = StateGraph(graph, states, invariants, {inv.id: [] for inv in invariants})

    def add(state: Hashable, depth: int) -> int:
        node = ids.get(state)
        if node is not None:
            return node
        if len(states) >= max_states:
            raise TooManyStates(max_states)
        node = ids[state] = len(states)
        states.append(state)
        broken = [inv.id for inv in invariants if inv.check(state) is not None]
        for inv_id in broken:
            result.violating[inv_id].append(node)
        graph.add_node(
            node,
            label=label(state),
            depth=depth,
            initial=depth == 0,
            violated=",".join(broken),
        )
        return node

    frontier = [add(canon(s), 0) for s in model.init_states()]
    depth = 0
    while frontier:
        depth += 1
        next_level = []
        for node in frontier:
            if memory_limit is not None and node % 256 == 0 and peak_memory_bytes() >= memory_limit:
                raise GraphMemory(
                    f"--memory budget reached after {len(states):,} states", len(states)
                )
            if deadline is not None and time.monotonic() >= deadline:
                raise GraphTimeout(
                    f"--timeout {time_limit:g} s reached after {len(states):,} states",
                    len(states),
                )
            state = states[node]
            for action in model.actions(state):
                succ = canon(model.next_state(state, action))
                known = succ in ids
                target = add(succ, depth)
                graph.add_edge(node, target, action=describe(action), name=action.name)
                if not known:
                    next_level.append(target)
        frontier = next_level
    return result


def describe_plain(model: Model, action: Action) -> str:
    """``LeaderWrite(replica=0, id=1, offset=0)``: the parameters as the model names them."""
    params = ", ".join(f"{k}={v}" for k, v in model.action_params(action).items())
    return f"{action.name}({params})"


@dataclass
class Facts:
    states: int
    edges: int
    deadlocks: list[int]
    shortest: dict[str, tuple[int, list[str]] | None]  # invariant -> (target node, actions)
    violating: dict[str, int]  # invariant -> number of violating states
    safe: int  # states from which no violation (of the checked invariants) is reachable

    def to_json(self) -> dict[str, Any]:
        return {
            "states": self.states,
            "edges": self.edges,
            "deadlocks": self.deadlocks,
            "states_without_reachable_violation": self.safe,
            "invariants": {
                inv: {
                    "violating_states": self.violating[inv],
                    "shortest_path_length": len(path[1]) if path else None,
                    "shortest_path_target": path[0] if path else None,
                    "shortest_path": path[1] if path else None,
                }
                for inv, path in self.shortest.items()
            },
        }


def graph_facts(sg: StateGraph) -> Facts:
    g = sg.graph
    deadlocks = [n for n, degree in g.out_degree() if degree == 0]
    distance = nx.single_source_shortest_path_length(g, 0)
    shortest: dict[str, tuple[int, list[str]] | None] = {}
    for inv_id, nodes in sg.violating.items():
        reachable = [n for n in nodes if n in distance]
        if not reachable:
            shortest[inv_id] = None
            continue
        target = min(reachable, key=lambda n: (distance[n], n))
        path = nx.shortest_path(g, 0, target)
        actions = [next(iter(g.get_edge_data(u, v).values()))["action"] for u, v in _pairs(path)]
        shortest[inv_id] = (target, actions)
    bad = {n for nodes in sg.violating.values() for n in nodes}
    if bad:
        can_reach = nx.multi_source_dijkstra_path_length(g.reverse(copy=False), bad)
        safe = g.number_of_nodes() - len(can_reach)
    else:
        safe = g.number_of_nodes()
    for node in g.nodes:
        g.nodes[node]["violation_reachable"] = bool(bad) and node in can_reach
        g.nodes[node]["distance"] = distance.get(node, -1)
    return Facts(
        g.number_of_nodes(),
        g.number_of_edges(),
        deadlocks,
        shortest,
        {inv: len(nodes) for inv, nodes in sg.violating.items()},
        safe,
    )


def _pairs(path: list[int]) -> list[tuple[int, int]]:
    return list(zip(path, path[1:], strict=False))


# ------------------------------------------------------------------ writing


def write_graph(sg: StateGraph, path: str | Path) -> None:
    """Write GraphML, DOT or node-link JSON, by the file's suffix."""
    path = Path(path)
    suffix = path.suffix.lower()
    g = sg.graph
    if suffix == ".graphml":
        nx.write_graphml(g, path)
    elif suffix == ".json":
        data = nx.node_link_data(g, edges="edges")
        path.write_text(json.dumps(data) + "\n", encoding="utf-8")
    elif suffix == ".dot":
        path.write_text(to_dot(g), encoding="utf-8")
    else:  # the command checks the suffix first
        raise ValueError(f"{path}: unknown graph format {suffix!r}")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(g: nx.MultiDiGraph) -> str:
    """Graphviz DOT text (no pydot or pygraphviz needed)."""
    lines = [
        "digraph replcheck {",
        '  node [shape=box, fontname="monospace", fontsize=9];',
        '  edge [fontname="monospace", fontsize=8];',
    ]
    for node, data in g.nodes(data=True):
        attrs = {"label": f"{node}: {data['label'].replace(' | ', chr(10))}"}
        if data.get("violated"):
            attrs.update(color="red", style="filled", fillcolor="#ffdddd")
            attrs["label"] += f"\nVIOLATES {data['violated']}"
        elif g.out_degree(node) == 0:
            attrs.update(style="filled", fillcolor="#dddddd")
        if data.get("initial"):
            attrs["penwidth"] = "2"
        body = ", ".join(f"{k}={_quote(str(v))}" for k, v in attrs.items())
        lines.append(f"  n{node} [{body}];")
    for u, v, data in g.edges(data=True):
        lines.append(f"  n{u} -> n{v} [label={_quote(data['action'])}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
