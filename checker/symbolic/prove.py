"""Symbolic checking with z3: bounded model checking and k-induction.

The model comes twice, as one transition system: explicitly (:class:`Model`,
the source of truth) and as z3 terms (:class:`SymbolicModel`).  The engine knows
neither which model it runs nor how its states are encoded.

* **BMC** unrolls the transition relation from the initial states one step at a
  time, in one incremental solver, and asks at each depth whether some
  invariant can be false there.  ``unsat`` clears the depth for every
  interleaving; ``sat`` is turned into the shortest counterexample: z3's action
  choices are replayed through the explicit model, which must reach the very
  states z3 found (anything else is a bug in the encoding, reported as such).
* **k-induction** proves a property for every depth: if it holds in k
  consecutive states it holds in the next, from any state of the model's
  domain, not only reachable ones.  Properties that are true but not inductive
  need strengthening lemmas (named predicates the model declares); they are
  proved together with the property, so each lemma is itself checked.  When the
  step fails, its states are a counterexample to induction (CTI) for the user
  to read.  The step is checked once per action out of its last state, in
  worker processes: one query per action was faster than one over all of them
  even in one process (2.1.0, 3 replicas: 348 s against 813 s), and the queries
  are independent.

Ctrl-C stops either between queries or by cancelling the one under way, never in the
middle of building a term (:mod:`checker.symbolic.z3_interrupt` says why).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
import warnings
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait

import z3

from replcheck.checker.explicit.bfs import Step, Violation
from replcheck.checker.symbolic.z3_interrupt import ctrl_c_cancels_z3
from replcheck.model.errors import ReplcheckError
from replcheck.model.interface import Action, Model, SymbolicModel

# A named predicate over symbolic states: an invariant or a lemma.
Predicate = Callable[[object], z3.BoolRef]


class EncodingMismatch(ReplcheckError):
    """z3 found an execution the explicit model does not take: the encoding is wrong."""


@dataclass(frozen=True)
class Property:
    """What prove checks: an id, its z3 form, and the explicit check that explains a
    violation in words (``None`` when the state satisfies it)."""

    id: str
    holds: Predicate
    explain: Callable[[Hashable], str | None]


@dataclass(frozen=True)
class Lemma:
    """A strengthening lemma: a property the model's author believes inductive together
    with the invariants, and which is proved along with them."""

    id: str
    doc: str
    holds: Predicate


@dataclass
class DepthReport:
    depth: int
    seconds: float  # solver time at this depth
    result: str  # "clear", "violated", "unknown"


@dataclass
class BmcResult:
    """``status``: ``complete`` (every depth up to the bound was settled),
    ``all-violated``, ``timeout``, ``interrupted`` or ``unknown`` (z3 gave up)."""

    status: str
    max_depth: int
    # Every invariant not in ``violations`` holds in every execution of at most this
    # many steps (-1: not even the initial states were settled).
    cleared: int
    seconds: float
    violations: dict[str, Violation] = field(default_factory=dict)
    depths: list[DepthReport] = field(default_factory=list)


@dataclass
class InductionResult:
    """``status``: ``proved`` (at ``k``), ``violated`` (the base case found a real
    counterexample), ``cti`` (the step still fails at the largest k tried),
    ``timeout``, ``interrupted`` or ``unknown``."""

    status: str
    k: int
    seconds: float
    properties: tuple[str, ...]
    lemmas: tuple[str, ...]
    violation: Violation | None = None
    # The counterexample to induction: k states satisfying every property, then one
    # that breaks ``cti_broken``; each state as the explicit model's state.
    cti: list[Hashable] = field(default_factory=list)
    cti_actions: list[Action] = field(default_factory=list)
    cti_broken: tuple[str, ...] = ()
    # Known properties (invariants or lemmas not in use) false somewhere in the CTI's
    # first k states: each, if it holds, would rule this CTI out.
    suggestions: tuple[str, ...] = ()


class _Unrolling:
    """States s_0, s_1, ... of one solver, with the action chosen at each step.

    Each step is encoded as a function, not as a disjunction of whole-state
    equalities: one Bool per action instance, exactly one of them true, its guard
    holds, and each variable of the next state is an if-then-else over the
    instances that change it (the others keep it).  On the Kafka model that is
    about a third faster than the disjunction, which repeats every unchanged
    variable in every instance.
    """

    def __init__(self, model: SymbolicModel, solver: z3.Solver, tag: str) -> None:
        self.model = model
        self.solver = solver
        self.tag = tag
        self.instances = model.instances()
        self.states: list[object] = []
        self.choices: list[list[z3.BoolRef]] = []

    def add_state(self) -> object:
        s = self.model.fresh(f"{self.tag}{len(self.states)}")
        if self.states:
            self.solver.add(self._transition(self.states[-1], s))
        self.states.append(s)
        return s

    def _transition(self, s: object, t: object) -> z3.BoolRef:
        chosen = [
            z3.Bool(f"{self.tag}do{len(self.choices)}_{i}") for i in range(len(self.instances))
        ]
        self.choices.append(chosen)
        one, guards, updates = step_parts(self.model, self.instances, s, t, chosen)
        return z3.And([one, *guards, *updates])

    def actions(self, solution: z3.ModelRef) -> list[Action]:
        out = []
        for chosen in self.choices:
            picked = [i for i, c in enumerate(chosen) if z3.is_true(solution.eval(c))]
            out.append(self.instances[picked[0]])
        return out


def step_parts(
    model: SymbolicModel, instances: Sequence[Action], s: object, t: object, chosen: list
) -> tuple[z3.BoolRef, list[z3.BoolRef], list[z3.BoolRef]]:
    """One step from ``s`` to ``t`` as a function of the choice: exactly one of
    ``chosen`` (a Bool per instance) is true, the chosen instance's guard holds, and
    each variable of ``t`` is an if-then-else over the instances that change it.
    Returned apart, so that an engine can leave the guards out (PDR's lifting)."""
    before = model.variables(s)
    effects = [model.variables(model.effect(s, a)) for a in instances]
    one = z3.PbEq([(c, 1) for c in chosen], 1)
    guards = [z3.Implies(c, model.guard(s, a)) for c, a in zip(chosen, instances, strict=True)]
    updates = []
    for j, (old, new) in enumerate(zip(before, model.variables(t), strict=True)):
        value = old
        for c, effect in zip(reversed(chosen), reversed(effects), strict=True):
            if not effect[j].eq(old):
                value = z3.If(c, effect[j], value)
        updates.append(new == value)
    return one, guards, updates


def _solver(model: SymbolicModel) -> z3.Solver:
    """An incremental SAT solver (QF_FD: bit-blasting) when every variable is a Bool
    or a bit-vector, which was several times faster than z3's SMT core on the Kafka
    model; the general solver otherwise (Ints).  z3 leaves SIGINT to Python (see
    ``checker.symbolic.z3_interrupt``)."""
    sample = model.variables(model.fresh("_probe"))
    bits = all(z3.is_bool(v) or z3.is_bv(v) for v in sample)
    solver = z3.SolverFor("QF_FD") if bits else z3.Solver()
    solver.set("ctrl_c", False)
    return solver


def _never() -> bool:
    return False


def _check(
    solver: z3.Solver, deadline: float | None, interrupted: Callable[[], bool] = _never
) -> z3.CheckSatResult:
    """The solver's answer; "unknown" without asking once Ctrl-C was pressed."""
    if interrupted():
        return z3.unknown
    if deadline is not None:
        left_ms = int((deadline - time.monotonic()) * 1000)
        if left_ms <= 0:
            return z3.unknown
        solver.set("timeout", left_ms)
    return solver.check()


def _why_unknown(
    solver: z3.Solver, deadline: float | None, interrupted: Callable[[], bool] = _never
) -> str:
    """z3 answers "unknown" when Ctrl-C cancels it, at the time limit, or when it gives
    up."""
    reason = solver.reason_unknown()
    # "interrupted": Context.interrupt (checker.symbolic.z3_interrupt); "canceled": z3's own
    # handler.
    if interrupted() or any(word in reason for word in ("interrupt", "cancel", "keyboard")):
        return "interrupted"
    # z3's own timer may fire a moment before the deadline.
    if deadline is not None and (time.monotonic() >= deadline or "timeout" in reason):
        return "timeout"
    return "unknown"


def is_interrupt(e: BaseException) -> bool:
    """Ctrl-C: Python's, or z3's "canceled" when it arrives inside check()."""
    return isinstance(e, KeyboardInterrupt) or "cancel" in str(e)


def _all_hold(predicates: Sequence[Property | Lemma], s: object) -> z3.BoolRef:
    return z3.And([p.holds(s) for p in predicates])


def _is_false(solution: z3.ModelRef, formula: z3.BoolRef) -> bool:
    return z3.is_false(solution.eval(formula, model_completion=True))


def replay(
    explicit: Model, symbolic: SymbolicModel, solution: z3.ModelRef, unrolling: _Unrolling
) -> list[Step]:
    """z3's execution, re-run through the explicit model; it must reach z3's states."""
    states = [symbolic.decode(solution, s) for s in unrolling.states]
    actions = unrolling.actions(solution)
    if states[0] not in explicit.init_states():
        raise EncodingMismatch(f"z3's initial state is not the model's: {states[0]}")
    steps = [Step(None, states[0])]
    for i, action in enumerate(actions):
        here = steps[-1].state
        if action not in set(explicit.actions(here)):
            raise EncodingMismatch(f"step {i + 1}: {action} is not enabled in {here}")
        after = explicit.next_state(here, action)
        if after != states[i + 1]:
            raise EncodingMismatch(
                f"step {i + 1}: {action} leads to {after}, z3 says {states[i + 1]}"
            )
        steps.append(Step(action, after))
    return steps


def bmc(
    explicit: Model,
    symbolic: SymbolicModel,
    properties: Sequence[Property],
    max_depth: int,
    *,
    time_limit: float | None = None,
    on_depth: Callable[[DepthReport], None] | None = None,
) -> BmcResult:
    """Every execution of up to ``max_depth`` steps, depth by depth: the first depth at
    which each property can fail, with a replayed counterexample of that length."""
    start = time.monotonic()
    deadline = start + time_limit if time_limit is not None else None
    result = BmcResult("complete", max_depth, -1, 0.0)
    remaining = list(properties)
    try:
        with ctrl_c_cancels_z3() as interrupted:
            solver = _solver(symbolic)
            run = _Unrolling(symbolic, solver, "s")
            solver.add(symbolic.init(run.add_state()))
            for depth in range(max_depth + 1):
                if depth:
                    run.add_state()
                here = run.states[-1]
                t0 = time.monotonic()
                verdict = "clear"
                while remaining:
                    solver.push()
                    solver.add(z3.Or([z3.Not(p.holds(here)) for p in remaining]))
                    answer = _check(solver, deadline, interrupted)
                    if answer == z3.sat:
                        solution = solver.model()
                        trace = replay(explicit, symbolic, solution, run)
                        broken = [p for p in remaining if _is_false(solution, p.holds(here))]
                        for p in broken:
                            message = p.explain(trace[-1].state) or "(no explanation)"
                            result.violations[p.id] = Violation(p.id, message, trace)
                        remaining = [p for p in remaining if p not in broken]
                        verdict = "violated"
                    solver.pop()
                    if answer == z3.unsat:
                        break
                    if answer == z3.unknown:
                        verdict = "unknown"
                        result.status = _why_unknown(solver, deadline, interrupted)
                        break
                report = DepthReport(depth, time.monotonic() - t0, verdict)
                result.depths.append(report)
                if on_depth:
                    on_depth(report)
                if verdict == "unknown":
                    break
                # The properties still unbroken hold up to here; once every one is
                # broken, what is known is that none broke before this depth.
                result.cleared = depth if remaining else depth - 1
                if not remaining:
                    result.status = "all-violated"
                    break
    except (KeyboardInterrupt, z3.Z3Exception) as e:
        if not is_interrupt(e):
            raise
        result.status = "interrupted"
    result.seconds = time.monotonic() - start
    return result


def k_induction(
    explicit: Model,
    symbolic: SymbolicModel,
    properties: Sequence[Property],
    lemmas: Sequence[Lemma],
    max_k: int,
    *,
    candidates: Sequence[Property | Lemma] = (),
    time_limit: float | None = None,
    jobs: int = 1,
    on_step: Callable[[str, int, float], None] | None = None,
    on_action: Callable[[int, int, int], None] | None = None,
) -> InductionResult:
    """Prove ``properties`` and ``lemmas`` together for every depth, by k-induction with
    k = 1 .. ``max_k``.  ``candidates`` are other known predicates, offered as lemma
    suggestions when a CTI violates them.  ``jobs`` processes share the induction
    step's actions; ``on_action(k, done, total)`` follows them."""
    start = time.monotonic()
    deadline = start + time_limit if time_limit is not None else None
    everything: list[Property | Lemma] = [*properties, *lemmas]
    result = InductionResult(
        "cti", 0, 0.0, tuple(p.id for p in properties), tuple(lem.id for lem in lemmas)
    )

    # Base case: no execution of fewer than k steps breaks any of them.  One BMC run,
    # deepened as k grows (the lemmas are checked here like the invariants).
    try:
        with ctrl_c_cancels_z3() as interrupted:
            base_solver = _solver(symbolic)
            base = _Unrolling(symbolic, base_solver, "b")
            base_solver.add(symbolic.init(base.add_state()))
            for k in range(1, max_k + 1):
                result.k = k
                t0 = time.monotonic()
                if k > 1:
                    base.add_state()
                base_solver.push()
                base_solver.add(z3.Not(_all_hold(everything, base.states[-1])))
                answer = _check(base_solver, deadline, interrupted)
                if answer == z3.sat:
                    solution = base_solver.model()
                    trace = replay(explicit, symbolic, solution, base)
                    last = base.states[-1]
                    broken = [p for p in everything if _is_false(solution, p.holds(last))]
                    first = broken[0]
                    explain = getattr(first, "explain", None)
                    message = (explain and explain(trace[-1].state)) or f"lemma {first.id} is false"
                    result.violation = Violation(first.id, message, trace)
                    result.status = "violated"
                    break
                base_solver.pop()
                if answer == z3.unknown:
                    result.status = _why_unknown(base_solver, deadline, interrupted)
                    break
                if on_step:
                    on_step("base", k, time.monotonic() - t0)

                t0 = time.monotonic()
                job = _StepJob(symbolic, everything, candidates, k, deadline)
                refuted = _induction_step(job, jobs, on_action, interrupted)
                if on_step:
                    on_step("step", k, time.monotonic() - t0)
                if refuted is None:
                    result.status = "proved"
                    break
                if refuted.answer != "sat":
                    result.status = refuted.answer
                    break
                result.cti = refuted.cti
                result.cti_actions = refuted.actions
                result.cti_broken = refuted.broken
                result.suggestions = refuted.suggestions
    except (KeyboardInterrupt, z3.Z3Exception) as e:
        if not is_interrupt(e):
            raise
        result.status = "interrupted"
    result.seconds = time.monotonic() - start
    return result


# ------------------------------------------------------------ the induction step


@dataclass(frozen=True)
class _StepJob:
    """The induction step at ``k``: what a worker needs to check actions of it."""

    symbolic: SymbolicModel
    everything: Sequence[Property | Lemma]
    candidates: Sequence[Property | Lemma]
    k: int
    deadline: float | None

    def holds(self, s: object) -> z3.BoolRef:
        return _all_hold(self.everything, s)


@dataclass(frozen=True)
class _StepAnswer:
    """One action's query: ``answer`` is "unsat", "sat" (then the CTI), or why z3 gave
    no answer ("timeout", "interrupted", "unknown")."""

    answer: str
    cti: list[Hashable] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    broken: tuple[str, ...] = ()
    suggestions: tuple[str, ...] = ()


def _induction_path(job: _StepJob) -> tuple[z3.Solver, _Unrolling]:
    """k states of the domain where everything holds, all different (a simple path);
    the step out of the last one is added per action, by _refute_step."""
    solver = _solver(job.symbolic)
    path = _Unrolling(job.symbolic, solver, f"k{job.k}_")
    for _ in range(job.k):
        solver.add(job.symbolic.domain(path.add_state()))
    for i, s in enumerate(path.states):
        solver.add(job.holds(s))
        for t in path.states[i + 1 :]:
            solver.add(z3.Not(job.symbolic.same(s, t)))
    return solver, path


def _refute_step(
    job: _StepJob,
    solver: z3.Solver,
    path: _Unrolling,
    index: int,
    interrupted: Callable[[], bool] = _never,
) -> _StepAnswer:
    """Can action ``index``, taken from the path's last state, reach a state of the
    domain where something fails?"""
    m = job.symbolic
    action = path.instances[index]
    before = path.states[-1]
    after = m.effect(before, action)
    solver.push()
    try:
        solver.add(m.guard(before, action), m.domain(after), z3.Not(job.holds(after)))
        answer = _check(solver, job.deadline, interrupted)
        if answer == z3.unsat:
            return _StepAnswer("unsat")
        if answer == z3.unknown:
            return _StepAnswer(_why_unknown(solver, job.deadline, interrupted))
        solution = solver.model()
        used = {p.id for p in job.everything}
        return _StepAnswer(
            "sat",
            cti=[m.decode(solution, s) for s in (*path.states, after)],
            actions=[*path.actions(solution), action],
            broken=tuple(p.id for p in job.everything if _is_false(solution, p.holds(after))),
            suggestions=tuple(
                c.id
                for c in job.candidates
                if c.id not in used and any(_is_false(solution, c.holds(s)) for s in path.states)
            ),
        )
    finally:
        solver.pop()


# The job and this process's solver for it, in the workers (inherited by fork).
_JOB: _StepJob | None = None
_WORKER_PATH: tuple[z3.Solver, _Unrolling] | None = None


def _step_worker(index: int) -> _StepAnswer:
    global _WORKER_PATH
    assert _JOB is not None
    try:
        if _WORKER_PATH is None:
            _WORKER_PATH = _induction_path(_JOB)
        return _refute_step(_JOB, *_WORKER_PATH, index)
    except (KeyboardInterrupt, z3.Z3Exception) as e:
        if not is_interrupt(e):
            raise
        return _StepAnswer("interrupted")


def _induction_step(
    job: _StepJob,
    jobs: int,
    on_action: Callable[[int, int, int], None] | None,
    interrupted: Callable[[], bool],
) -> _StepAnswer | None:
    """The first action that refutes the step (a CTI, or z3 giving up), or None when
    none does.  With ``jobs`` > 1 the actions are shared among forked workers (the z3
    terms cannot be pickled; where fork is missing it runs in this process), and the
    first CTI any worker finds is the one reported."""
    total = len(job.symbolic.instances())
    if jobs > 1 and total > 1 and "fork" in multiprocessing.get_all_start_methods():
        answers = _forked_answers(job, total, min(jobs, total), interrupted)
    else:
        solver, path = _induction_path(job)
        answers = (_refute_step(job, solver, path, i, interrupted) for i in range(total))
    try:
        for done, answer in enumerate(answers, 1):
            if on_action:
                on_action(job.k, done, total)
            if answer.answer != "unsat":
                return answer
        return None
    finally:
        answers.close()  # stops the workers at once


def _forked_answers(
    job: _StepJob, total: int, workers: int, interrupted: Callable[[], bool]
) -> Iterator[_StepAnswer]:
    """The answers for actions 0 .. total-1 from forked workers, as they come, or
    "interrupted" once Ctrl-C was pressed.

    Each worker takes the next action from a shared counter and sends its answers down
    its own pipe; closing the generator kills the workers wherever they are.  The
    workers ignore Ctrl-C (this process stops them) and stop by themselves if this
    process is gone.  Nothing the parent waits on is shared with them:
    ``multiprocessing.Pool.terminate`` could hang for good on a queue lock that a worker
    it killed held while sending a result.
    """
    global _JOB
    _JOB = job
    context = multiprocessing.get_context("fork")
    counter = context.Value("i", 0)  # the next action to take, under its own lock
    processes, pipes = [], []
    try:
        for _ in range(workers):
            reader, writer = context.Pipe(duplex=False)
            process = context.Process(
                target=_step_loop, args=(counter, total, writer, os.getpid()), daemon=True
            )
            with warnings.catch_warnings():
                # Python 3.12+ warns of fork with threads running: Ctrl-C's watcher
                # (checker.symbolic.z3_interrupt) only reads a pipe, and the workers never use it.
                warnings.simplefilter("ignore", DeprecationWarning)
                process.start()
            writer.close()
            processes.append(process)
            pipes.append(reader)
        live, answered = list(pipes), 0
        while answered < total:
            if interrupted():  # first: a SIGTERM to the process group also ends workers
                yield _StepAnswer("interrupted")
                return
            if not live:
                codes = [p.exitcode for p in processes]
                raise ReplcheckError(f"prove: a worker process stopped (exit codes {codes})")
            for pipe in wait(live, timeout=0.1):
                try:
                    answer = pipe.recv()
                except EOFError:  # that worker is done (or died): the others go on
                    live.remove(pipe)
                    continue
                if isinstance(answer, BaseException):
                    raise answer
                answered += 1
                yield answer
    finally:
        _JOB = None
        for process in processes:
            process.kill()
        for process in processes:
            process.join()
        for pipe in pipes:
            pipe.close()


def _step_loop(counter, total: int, out, parent: int) -> None:  # noqa: ANN001 - fork's
    """A worker: answer the next unclaimed action until none is left, or until the
    parent is gone (it inherited the pipe's reading end: sending would not fail)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the workers
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's flag: kill works
    while os.getppid() == parent:
        with counter.get_lock():
            index = counter.value
            counter.value = index + 1
        if index >= total:
            return
        try:
            answer: _StepAnswer | BaseException = _step_worker(index)
        except Exception as e:  # noqa: BLE001 - the parent raises it
            answer = e
        out.send(answer)
