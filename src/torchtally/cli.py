"""The `torchtally` command: `torchtally demo` runs the main job."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


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
        from torchtally._demo import run_demo

        return run_demo(epochs=args.epochs, compile_step=not args.no_compile, out=args.out)
    if args.command == "plot":
        from torchtally.learn import plot_logdir

        for path in plot_logdir(args.logdir, args.out):
            print(path)
        return 0
    return 2  # pragma: no cover - argparse rejects unknown commands
