"""A fake training run driving the Dashboard, run by test_dashboard_pty.py under a pseudo-terminal.

Usage: python _dash_child.py MODE, MODE one of
    quit        run until `q` is pressed (SIGUSR1 makes the loop print a line, once)
    interrupt   run until Ctrl-C; the KeyboardInterrupt is handled like the learner does
    unhandled   run until Ctrl-C; the KeyboardInterrupt is left uncaught (atexit cleans up)

After the dashboard closes it prints markers the parent looks for on the screen:
STOP_CALLBACK_FIRED, TERMIOS_RESTORED / TERMIOS_CHANGED, STREAMS_RESTORED, INTERRUPT_HANDLED.
Exit code 0 when everything it checks holds, 3 when something does not, 4 when the parent
never stopped it.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import math
import os
import signal
import sys
import termios
import threading
import time

MAX_SECONDS = 60.0
TRAIN_STEPS = 40
VALID_STEPS = 8


def main(mode: str) -> int:
    # Started in a new session by the test: take the pty as controlling terminal, as a login
    # shell would, so Ctrl-C reaches us and we are its foreground process group.
    with contextlib.suppress(OSError):
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    initial = termios.tcgetattr(0)
    original_streams = (sys.stdout, sys.stderr)

    def check_terminal() -> bool:
        restored = termios.tcgetattr(0) == initial
        os.write(1, b"\r\nTERMIOS_RESTORED\r\n" if restored else b"\r\nTERMIOS_CHANGED\r\n")
        return restored

    if mode == "unhandled":
        # Registered before the dashboard's own hook, so it runs after it (atexit is LIFO).
        atexit.register(check_terminal)

    from torchtally._records import SYSTEM_SPLIT, MetricRecord, Progress, RunInfo
    from torchtally.learn._dashboard.dashboard import Dashboard

    stop = threading.Event()
    fired: list[float] = []

    def stop_callback() -> None:
        fired.append(time.time())
        stop.set()

    print_requested = threading.Event()
    signal.signal(signal.SIGUSR1, lambda *_: print_requested.set())

    dashboard = Dashboard(stop_callback=stop_callback, refresh_per_second=8)
    names = ("loss", "accuracy")
    dashboard.on_run_start(RunInfo(("train", "valid"), 50, {"train": names, "valid": names}))

    def system_sampler() -> None:
        while not stop.is_set():
            now = time.time()
            dashboard.on_records(
                [
                    MetricRecord(SYSTEM_SPLIT, 0, 0, "cpu_usage", 0.231, now, "%"),
                    MetricRecord(SYSTEM_SPLIT, 0, 0, "cpu_memory", 12.3, now, "GiB"),
                    MetricRecord(SYSTEM_SPLIT, 0, 0, "cpu_temperature", 61.0, now, "°C"),
                ]
            )
            time.sleep(0.2)

    threading.Thread(target=system_sampler, daemon=True).start()
    started = time.monotonic()
    global_step = valid_step = 0
    printed = False
    try:
        for epoch in range(1, 51):
            for step in range(1, TRAIN_STEPS + 1):
                if stop.is_set() or time.monotonic() - started > MAX_SECONDS:
                    break
                global_step += 1
                if print_requested.is_set() and not printed:
                    print("hello from user code")
                    printed = True
                dashboard.on_progress(
                    Progress("train", epoch, 50, step, TRAIN_STEPS, global_step, 1000.0)
                )
                loss = 2.0 * math.exp(-global_step / 60) + 0.1 * math.sin(global_step)
                accuracy = 1.0 - 0.9 * math.exp(-global_step / 80)
                now = time.time()
                dashboard.on_records(
                    [
                        MetricRecord("train", epoch, global_step, "loss", loss, now),
                        MetricRecord("train", epoch, global_step, "accuracy", accuracy, now, "%"),
                    ]
                )
                time.sleep(0.04)
            dashboard.on_epoch_end("train", epoch)
            if stop.is_set() or time.monotonic() - started > MAX_SECONDS:
                break
            for step in range(1, VALID_STEPS + 1):
                valid_step += 1
                dashboard.on_progress(
                    Progress("valid", epoch, 50, step, VALID_STEPS, global_step, 3000.0)
                )
                time.sleep(0.01)
            now = time.time()
            dashboard.on_records(
                [
                    MetricRecord("valid", epoch, valid_step, "loss", 1.5 / epoch + 0.2, now),
                    MetricRecord("valid", epoch, valid_step, "accuracy", 1 - 0.5 / epoch, now, "%"),
                ]
            )
            dashboard.on_epoch_end("valid", epoch)
    except KeyboardInterrupt:
        if mode != "interrupt":
            raise
        dashboard.on_run_end(stopped_early=True)
        stop.set()
        print("INTERRUPT_HANDLED")
        return 0 if check_terminal() else 3
    dashboard.on_run_end(stopped_early=stop.is_set())
    stop.set()
    if fired:
        print("STOP_CALLBACK_FIRED")
    if (sys.stdout, sys.stderr) == original_streams:
        print("STREAMS_RESTORED")
    restored = check_terminal()
    if not fired:
        return 4
    return 0 if restored and (sys.stdout, sys.stderr) == original_streams else 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
