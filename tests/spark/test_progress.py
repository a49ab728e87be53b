"""The walk job's progress line and session settings, without Spark: a fake status tracker."""

from __future__ import annotations

import io
import time
from types import SimpleNamespace

from replcheck.checker.spark import session as spark_session
from replcheck.checker.spark.walks import ProgressReporter


def stage(stage_id: int, tasks: int, active: int, completed: int) -> SimpleNamespace:
    return SimpleNamespace(
        stageId=stage_id,
        currentAttemptId=0,
        name=f"stage {stage_id}",
        numTasks=tasks,
        numActiveTasks=active,
        numCompletedTasks=completed,
        numFailedTasks=0,
    )


class FakeTracker:
    """pyspark's StatusTracker, as ProgressReporter uses it."""

    def __init__(self, stages, groups, active=None):
        self.stages = {s.stageId: s for s in stages}
        self.groups = groups  # group -> {job id: stage ids}
        self.active = active if active is not None else list(self.stages)

    def getActiveStageIds(self):
        return list(self.active)

    def getJobIdsForGroup(self, group):
        return list(self.groups.get(group, {}))

    def getJobInfo(self, job_id):
        for jobs in self.groups.values():
            if job_id in jobs:
                return SimpleNamespace(jobId=job_id, stageIds=jobs[job_id], status="RUNNING")
        return None

    def getStageInfo(self, stage_id):
        return self.stages.get(stage_id)


def reporter(tracker, slots=2, **kw) -> ProgressReporter:
    return ProgressReporter(
        None, 2000, 8, out=io.StringIO(), group="walk", tracker=tracker, slots=slots, **kw
    )


def test_running_never_exceeds_the_slots_or_the_tasks_left():
    # Spark posts a task's start before the end of the task whose slot it took: for a
    # moment the stage counts 3 active tasks on 2 cores.
    r = reporter(FakeTracker([stage(0, 8, active=3, completed=2)], {"walk": {0: [0]}}))
    assert r.sample() == (2, 2)
    assert r.line(2, 2, 12.4) == "walks: 500 of 2,000 done (2/8 tasks, 2 running), 12 s"
    near_end = reporter(FakeTracker([stage(0, 8, active=3, completed=7)], {"walk": {0: [0]}}))
    assert near_end.sample() == (7, 1)
    wide = reporter(FakeTracker([stage(0, 8, active=3, completed=0)], {"walk": {0: [0]}}), 4)
    assert wide.sample() == (0, 3)  # with 4 slots, 3 really can run


def test_only_the_walk_stage_of_the_walk_job_counts():
    tracker = FakeTracker(
        [
            stage(0, 8, active=0, completed=8),  # the walk stage, done
            stage(1, 8, active=2, completed=3),  # the count's next stage, reading the cache
            stage(2, 1, active=1, completed=0),
            stage(5, 8, active=2, completed=1),  # another job's stage of 8 tasks
        ],
        {"walk": {0: [0], 1: [1, 2]}, "other": {4: [5]}},
    )
    r = reporter(tracker)
    assert r.sample() == (8, 0)
    assert r.line(*r.sample(), 30) == "walks: 2,000 of 2,000 done (8/8 tasks, 0 running), 30 s"


def test_without_a_group_the_active_stages_are_used():
    tracker = FakeTracker([stage(3, 5, 1, 0), stage(4, 8, 2, 1)], {}, active=[3, 4])
    r = ProgressReporter(None, 2000, 8, out=io.StringIO(), tracker=tracker, slots=2)
    assert r.sample() == (1, 2)
    assert reporter(FakeTracker([], {})).sample() is None  # the walk job has not started


def test_the_reporter_prints_changes_only_and_stops_when_told():
    walk_stage = stage(0, 8, active=0, completed=0)
    r = reporter(FakeTracker([walk_stage], {"walk": {0: [0]}}), every=0.01)
    with r:
        time.sleep(0.1)  # nothing started: no line
        walk_stage.numActiveTasks = 3
        time.sleep(0.1)
        walk_stage.numActiveTasks, walk_stage.numCompletedTasks = 2, 4
        time.sleep(0.1)
        r.stop()  # Ctrl-C: the job is being cancelled
        walk_stage.numCompletedTasks = 6
        time.sleep(0.1)
    lines = [line.rsplit(",", 1)[0] for line in r.out.getvalue().splitlines()]
    assert lines == [
        "walks: 0 of 2,000 done (0/8 tasks, 2 running)",
        "walks: 1,000 of 2,000 done (4/8 tasks, 2 running)",
    ]


def test_local_sessions_keep_every_temporary_file_in_one_folder(tmp_path):
    options = spark_session._options(
        "local[2]", [("spark.driver.memory", "2g")], str(tmp_path), True
    )
    scratch = tmp_path / "scratch"
    assert scratch.is_dir() and (tmp_path / "log4j2.properties").is_file()
    assert f"-Djava.io.tmpdir={scratch}" in options["spark.driver.extraJavaOptions"]
    assert options["spark.ui.liveUpdate.period"] == "0"  # see ProgressReporter
    assert options["spark.driver.memory"] == "2g" and options["spark.master"] == "local[2]"
    spaced = tmp_path / "with space"
    spaced.mkdir()
    quoted = spark_session._options("local", [], str(spaced), True)["spark.driver.extraJavaOptions"]
    assert quoted.startswith('"-Dlog4j2.configurationFile=') and quoted.endswith('scratch"')
    (tmp_path / "c").mkdir()
    cluster = spark_session._options("spark://h:7077", [], str(tmp_path / "c"), False)
    assert "java.io.tmpdir" not in cluster["spark.driver.extraJavaOptions"]
