"""The ``replcheck`` command line: the parser and ``main``, which maps errors to exit codes.

Each subcommand lives in its own module under ``cli/commands/`` with
``NAME``, ``ORDER``, ``register(subparsers)`` and ``run(args) -> int``; this
module finds them, so adding a command means adding a file.
Exit codes: see :mod:`cli.exits`.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

from replcheck import compiled
from replcheck.cli import commands
from replcheck.cli.args import Parser
from replcheck.cli.exits import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from replcheck.model.errors import InputError


def _command_modules() -> list[Any]:
    found = []
    for info in pkgutil.iter_modules(commands.__path__):
        found.append(importlib.import_module(f"replcheck.cli.commands.{info.name}"))
    return sorted(found, key=lambda m: (m.ORDER, m.NAME))


def build_parser() -> tuple[Parser, dict[str, Callable[[argparse.Namespace], int]]]:
    parser = Parser(
        prog="replcheck",
        description="Model-check Kafka partition replication: HW truncation (hw) against "
        "leader-epoch truncation (kip101, kip279, kip320).",
        epilog="Exit codes: 0 holds, 1 violation found, 2 bad input, 3 incomplete (stopped at a "
        "limit before a verdict), 130 interrupted.  "
        "Run 'replcheck COMMAND --help' for a command's options.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    runners = {}
    for module in _command_modules():
        module.register(sub)
        runners[module.NAME] = module.run
    # After the commands: they import the hot modules, so it can say how they run.
    parser.add_argument(
        "--version", action=_Version, nargs=0, help="the version, and how the hot modules run"
    )
    return parser, runners


class _Version(argparse.Action):
    """argparse's own version action wraps the line at the terminal's width."""

    def __call__(self, parser, namespace, values, option_string=None):  # noqa: ANN001
        try:
            number = metadata.version("replcheck")
        except metadata.PackageNotFoundError:  # run from a source tree, not installed
            number = "(not installed)"
        print(f"replcheck {number}; {compiled.describe()}")
        parser.exit()


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser, runners = build_parser()  # imports every command: Ctrl-C may land here
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return EXIT_USAGE
        return runners[args.command](args)
    except InputError as exc:
        print(f"replcheck: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("replcheck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
