"""The `torchtally` command: `torchtally demo` runs the main job."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m torchtally` and the `torchtally` script."""
    parser = argparse.ArgumentParser(prog="torchtally", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="evaluate a digits classifier with the catalog")
    demo.add_argument("--epochs", type=int, default=30, help="training epochs (default 30)")
    demo.add_argument("--no-compile", action="store_true", help="run the eval step eagerly")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from torchtally._demo import run_demo

        return run_demo(epochs=args.epochs, compile_step=not args.no_compile)
    return 2  # pragma: no cover - argparse rejects unknown commands
