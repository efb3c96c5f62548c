"""The `torchtally` command: `torchtally demo` runs the main job."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# What the demo cannot run without (its data set and its plots), by import name and package;
# every extra it shows off comes with `torchtally[all]`.
_DEMO_NEEDS = {"sklearn": "scikit-learn", "matplotlib": "matplotlib"}
_DEMO_HINT = "Install the demo's extras with `pip install torchtally[all]`."


def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)  # the demo imports it next anyway
    except ImportError:
        return False
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m torchtally` and the `torchtally` script."""
    parser = argparse.ArgumentParser(prog="torchtally", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="train, evaluate and benchmark a digits classifier")
    demo.add_argument("--epochs", type=int, default=20, help="training epochs (default 20)")
    demo.add_argument("--no-compile", action="store_true", help="run the eval step eagerly")
    demo.add_argument("--out", default=None, help="output folder (default: a new tally-out/...)")
    plot = commands.add_parser("plot", help="render a log folder to PNG plots and report.html")
    plot.add_argument("logdir", help="a learner's log folder")
    plot.add_argument("--out", default=None, help="where to write (default: LOGDIR/plots)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        missing = [pkg for name, pkg in _DEMO_NEEDS.items() if not _importable(name)]
        if missing:
            print(f"torchtally demo needs {' and '.join(missing)}. {_DEMO_HINT}", file=sys.stderr)
            return 2
        from torchtally._demo import run_demo

        try:
            return run_demo(epochs=args.epochs, compile_step=not args.no_compile, out=args.out)
        except ModuleNotFoundError as err:  # an extra the checks above do not name
            if not err.name or err.name.partition(".")[0] in ("torch", "torchtally"):
                raise
            print(
                f"torchtally demo needs {err.name}, which is not installed. {_DEMO_HINT}",
                file=sys.stderr,
            )
            return 2
    if args.command == "plot":
        from torchtally.learn import plot_logdir

        for path in plot_logdir(args.logdir, args.out):
            print(path)
        return 0
    return 2  # pragma: no cover - argparse rejects unknown commands
