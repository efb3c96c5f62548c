"""The `torchtally` command: `torchtally demo` runs the main job, `torchtally plot LOGDIR`
renders a learner's logs."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]

#: What `torchtally demo` imports beyond torch: (module, pip name, extra). The demo writes
#: checkpoints, TensorBoard logs and plots, and checks its values against scikit-learn.
DEMO_NEEDS = (
    ("numpy", "numpy", "all"),
    ("sklearn", "scikit-learn", "all"),
    ("matplotlib", "matplotlib", "plots"),
    ("h5py", "h5py", "checkpoint"),
    ("tensorboard", "tensorboard", "tensorboard"),
)
PLOT_NEEDS = (("numpy", "numpy", "plots"), ("matplotlib", "matplotlib", "plots"))


class CommandError(Exception):
    """A failure the user can fix; printed as one line, without a traceback."""


def missing_packages(needs: Sequence[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """The (pip name, extra) of every module in `needs` that cannot be imported.

    Args:
        needs: (module, pip name, extra) triples.

    Returns:
        Those that fail to import, in order.

    Example:
        >>> missing_packages([("json", "json", "none")])
        []
    """
    missing = []
    for module, package, extra in needs:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append((package, extra))
    return missing


def _require(command: str, needs: Sequence[tuple[str, str, str]]) -> None:
    missing = missing_packages(needs)
    if not missing:
        return
    names = [package for package, _ in missing]
    extras = sorted({extra for _, extra in missing})
    # one extra covers them all when they share it; otherwise [all] is the one-line fix
    extra = extras[0] if len(extras) == 1 else "all"
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    verb = "is" if len(names) == 1 else "are"
    raise CommandError(
        f"`torchtally {command}` needs {listed}, which {verb} not installed. "
        f"Install {'it' if len(names) == 1 else 'them'} with `pip install 'torchtally[{extra}]'`."
    )


def _demo(args: argparse.Namespace) -> int:
    if args.epochs < 1:
        raise CommandError(f"Argument `--epochs` must be >= 1. Received: --epochs {args.epochs}")
    _require("demo", DEMO_NEEDS)
    if args.out is not None and Path(args.out).exists() and not Path(args.out).is_dir():
        raise CommandError(
            f"Argument `--out` must be a folder (new or existing). Received: --out {args.out!r}, "
            "which is a file"
        )
    from torchtally._demo import run_demo

    return run_demo(epochs=args.epochs, compile_step=not args.no_compile, out=args.out)


def _plot(args: argparse.Namespace) -> int:
    _require("plot", PLOT_NEEDS)
    from torchtally.learn import plot_logdir

    try:
        paths = plot_logdir(args.logdir, args.out)
    except (FileNotFoundError, ValueError) as err:
        if not str(err).startswith("Argument `logdir`"):
            raise  # not about LOGDIR: a defect, whose traceback is wanted
        message = str(err).replace("Argument `logdir`", "Argument LOGDIR", 1)
        raise CommandError(
            f"{message}. Give the `logdir` folder of a Learner or FileLogger."
        ) from err
    for path in paths:
        print(path)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m torchtally` and the `torchtally` script.

    Args:
        argv: The arguments; default `sys.argv[1:]`.

    Returns:
        The exit code: 0 on success, 1 when the demo's checks fail, 2 on a usage error or a
        missing optional package (one line on stderr, no traceback).
    """
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
    try:
        return _demo(args) if args.command == "demo" else _plot(args)
    except CommandError as err:
        print(f"torchtally {args.command}: error: {err}", file=sys.stderr)
        return 2
