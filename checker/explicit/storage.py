"""Where a breadth-first search keeps its states: RAM up to a budget, then disk.

The visited set (``checker.explicit.spill.SpillingVisited``) and each level
(``checker.explicit.frontier.Level``) share the budget, and a checkpoint
(``checker.explicit.checkpoint``) is what they hold, written to disk and read back: both
the single-process and the multi-process search keep their states here (a worker
of ``checker.explicit.parallel_bfs`` with its share of the budget).
"""

from __future__ import annotations

import os
from pathlib import Path

from replcheck.checker.explicit.checkpoint import CheckpointWriter, Saved
from replcheck.checker.explicit.frontier import Codec, Level
from replcheck.checker.explicit.spill import SpillingVisited, saved_entries
from replcheck.model.errors import InputError


class Storage:
    """Where a search keeps its states: RAM up to ``ram_budget`` (two thirds for the
    visited set, a sixth for each level), then the spill folder."""

    def __init__(
        self,
        ram_budget: int | None,
        spill_dir: str | os.PathLike | None,
        codec: Codec = None,
    ) -> None:
        self.spill_dir = spill_dir
        self.codec = codec  # the model's state codec (model.interface.state_codec)
        self.visited_ram = None if ram_budget is None else ram_budget * 2 // 3
        self.level_ram = None if ram_budget is None else ram_budget // 6
        self.peak = 0

    def visited(self) -> SpillingVisited:
        return SpillingVisited(self.visited_ram, self.spill_dir)

    def level(self) -> Level:
        return Level(self.level_ram, self.spill_dir, self.codec)

    def load_level(self, paths: list[Path]) -> Level:
        return Level.load(paths, self.level_ram, self.spill_dir, self.codec)

    def resume(self, saved: Saved) -> tuple[SpillingVisited, Level, Level, Level]:
        """The visited set, the level to expand, the next level so far and the states to
        offer again, from a checkpoint of any engine (one part per worker that wrote it)."""
        try:
            parts = saved.parts
            if len(parts) == 1:
                visited = SpillingVisited.load(
                    saved.folder, parts[0]["visited"], self.visited_ram, self.spill_dir
                )
            else:
                visited = self.visited()
                for part in parts:
                    for key, parent in saved_entries(saved.folder, part["visited"]):
                        visited.add(key, parent)
            levels = [
                Level.load(
                    [saved.path(p[name]) for p in parts if p.get(name)],
                    self.level_ram,
                    self.spill_dir,
                    self.codec,
                )
                for name in ("frontier", "next", "retry")
            ]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise InputError(
                f"--resume {saved.folder.parent}: the checkpoint does not read ({e})"
            ) from None
        if len(visited) != saved.distinct:
            raise InputError(
                f"--resume {saved.folder.parent}: {len(visited):,} distinct states in its files, "
                f"{saved.distinct:,} in checkpoint.json"
            )
        return visited, *levels  # type: ignore[return-value]

    def save(
        self,
        writer: CheckpointWriter,
        visited: SpillingVisited,
        frontier: Level,
        next_level: Level | None,
        depth: int,
        transitions: int,
        seconds: float,
        found: dict[str, tuple[int, str]],
        status: str,
    ) -> None:
        data = writer.begin()
        part = {"visited": visited.save(data, "visited"), "frontier": "frontier.bin"}
        frontier.save(data / "frontier.bin")
        if next_level is not None:
            part["next"] = "next.bin"
            next_level.save(data / "next.bin")
        saved = Saved(
            identity=writer.identity,
            depth=depth,
            in_level=next_level is not None,
            distinct=len(visited),
            transitions=transitions,
            seconds=seconds,
            found=[(i, fp, m) for i, (fp, m) in found.items()],
            parts=[part],
            status=status,
        )
        writer.commit(data, saved)

    def note_disk(self, visited: SpillingVisited, *levels: Level) -> None:
        """Keep the most bytes on disk so far (a level's file goes once it is read)."""
        if visited.spilled or any(level.spilled for level in levels):
            self.peak = self.disk_peak(visited, *levels)

    def disk_peak(self, visited: SpillingVisited, *levels: Level) -> int:
        return max(self.peak, visited.disk_bytes + sum(level.disk_bytes for level in levels))
