"""``replcheck explore``: serve a local page to step through the model by hand.

The command line's part is small on purpose: build the model from the flags
``check`` takes (or from a trace, whose path the page starts on), bind the port,
print the URL, and serve until Ctrl-C.  The page and its API are
``replcheck.traces.explore_server``; the search behind its "find" is
``replcheck.checker.explicit.explore_find``, wired in here (the traces layer may not import the
engines).  Every bad input is one line, exit 2.
"""

from __future__ import annotations

import argparse
import sys
import webbrowser

import replcheck
from replcheck.checker.explicit.explore_find import find_violation
from replcheck.cli.args import (
    add_model_args,
    add_model_choice,
    given_model_flags,
    model_config_from_args,
    whole_number,
)
from replcheck.cli.exits import EXIT_OK, EXIT_USAGE, UsageError
from replcheck.model.errors import InputError
from replcheck.model.interface import Action
from replcheck.model.kafka.config import Config
from replcheck.model.registry import AnyConfig
from replcheck.traces.explore import Explorer
from replcheck.traces.explore_server import make_server
from replcheck.traces.load import load_trace

NAME = "explore"
ORDER = 35


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 to 65535 (0: a free one)."""
    value = whole_number(0)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"must be 0..65535 (got {value})")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="step through the model by hand in a browser (a local web page)",
        description="Serve a local page that shows the model's state as the timeline draws it, "
        "the enabled actions as buttons (each says where it leads), every invariant's status, "
        "and the path taken so far (in the address, #/steps/..., so a link reproduces it); "
        "find the shortest violation of an invariant from the current state; load a trace "
        "file; export the path as ITF or as an action list for replcheck replay.  Prints the "
        "URL and serves until Ctrl-C (exit 0).  Exit 2: bad input (a trace that does not "
        "replay, a port in use), one line.  See docs/explore.md.",
    )
    add_model_args(p)
    add_model_choice(p)
    g = p.add_argument_group("explore")
    g.add_argument(
        "--trace",
        metavar="FILE",
        help="start on this trace's path (an ITF trace or an action list, as replay reads); "
        "its configuration is used unless model flags are given, under which its actions "
        "replay instead",
    )
    g.add_argument(
        "--port",
        type=port_number,
        default=0,
        metavar="N",
        help="the TCP port to listen on (default 0: a free one)",
    )
    g.add_argument(
        "--host",
        default="127.0.0.1",
        metavar="ADDRESS",
        help="the address to listen on (default 127.0.0.1: this machine only)",
    )
    g.add_argument("--open", action="store_true", help="open the page in the default web browser")


def run(args: argparse.Namespace) -> int:
    try:
        config, start = _model_and_start(args)
        explorer = Explorer(config, start)
        server = make_server(explorer, args.host, args.port, find=find_violation)
    except InputError as exc:
        print(f"replcheck explore: {exc}", file=sys.stderr)
        return EXIT_USAGE
    with server:
        print(server.url, flush=True)
        print("replcheck explore: serving; Ctrl-C stops it", file=sys.stderr, flush=True)
        if args.open and not webbrowser.open(server.url):
            print("replcheck explore: no web browser found; open the URL above", file=sys.stderr)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("replcheck explore: stopped", file=sys.stderr)
    return EXIT_OK


def _model_and_start(args: argparse.Namespace) -> tuple[AnyConfig, list[Action]]:
    """The configuration (the flags', else the trace's) and the path to start on."""
    if args.trace is None:
        return model_config_from_args(args), []
    release = args.kafka or args.mode
    if args.kafka and args.mode:
        raise UsageError("--kafka and --mode: give one of them")
    args.kafka = args.mode = None
    if given_model_flags(args):
        raise UsageError(
            "--trace: the trace carries its configuration; of the model flags only --kafka "
            "or --mode may go with it (its steps in another release, as replay does)"
        )
    trace = load_trace(args.trace)  # missing, unreadable, not a trace: one line
    if release and not isinstance(trace.config, Config):
        raise UsageError(f"--kafka: a Kafka model option; this trace is of {trace.config.model}")
    # As replay --kafka does: the same actions under that release.
    result = replcheck.replay(trace, **({"kafka": release} if release else {})).engine
    if result.divergence is not None:
        div = result.divergence
        raise UsageError(f"--trace {args.trace}: does not replay: step {div.step}: {div.reason}")
    return result.trace.config, list(result.trace.actions)
