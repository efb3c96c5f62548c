"""Use torchtally as a user who ran `pip install torch==2.13.0 && pip install torchtally` (no
extras): every module imports (or names the extra it needs), and the core works.

Run by `make bare-install-check` in a fresh venv holding only torch and torchtally. Checks:
no optional package is installed; every module of the package imports, or raises an
ImportError naming the `torchtally[...]` extra to install; core metrics, a MetricCollection,
the functional API and the TorchMetrics-compatible classes give the values computed here by
hand; the numpy-backed helpers and checkpoints fail with the extra's name; `torchtally demo`
says which extras it needs, without a traceback. Exits 1 on any failure.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import pkgutil
import subprocess
import sys
import warnings
from collections.abc import Callable

OPTIONAL = ["numpy", "h5py", "hdf5plugin", "sklearn", "matplotlib", "rich", "tensorboard", "psutil"]
failures: list[str] = []


def check(what: str, condition: bool, detail: str = "") -> None:
    print(f"  {'ok  ' if condition else 'FAIL'} {what}{f' ({detail})' if detail else ''}")
    if not condition:
        failures.append(what)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def raises_naming_extra(call: Callable[[], object], extra: str) -> tuple[bool, str]:
    try:
        call()
    except ImportError as err:
        return f"torchtally[{extra}]" in str(err), str(err)
    return False, "no ImportError"


def main() -> int:
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    import torch

    print(f"python {sys.version.split()[0]}, torch {torch.__version__}")
    print("1. a bare environment")
    present = [name for name in OPTIONAL if importlib.util.find_spec(name) is not None]
    check(
        "no optional package installed",
        not present,
        ", ".join(present) or "none of " + ", ".join(OPTIONAL),
    )

    import torchtally

    print(f"2. every module of torchtally {torchtally.__version__} imports")
    imported, needs_extra, on_use = 0, [], []
    for info in pkgutil.walk_packages(torchtally.__path__, "torchtally."):
        if info.name.endswith("__main__"):
            continue  # runs the command line
        private = any(part.startswith("_") for part in info.name.split(".")[1:])
        try:
            importlib.import_module(info.name)
            imported += 1
        except ImportError as err:
            if "pip install torchtally[" in str(err):
                needs_extra.append(f"{info.name}: {str(err).split('. ')[0]}")
            elif private and getattr(err, "name", None) in OPTIONAL:
                # a private module the public API imports only once the extra is there;
                # section 7 checks that the public entry points name the extra
                on_use.append(f"{info.name} ({err.name})")
            else:
                check(f"import {info.name}", False, f"{type(err).__name__}: {err}")
    check(f"{imported} modules import with torch alone", imported > 100)
    for line in needs_extra:
        print(f"       (public, names its extra) {line}")
    for line in on_use:
        print(f"       (private, imported on use) {line}")

    print("3. core metrics (values computed by hand)")
    from torchtally.metrics import (
        AccuracyMetric,
        AUROCMetric,
        F1ScoreMetric,
        MeanMetric,
        MetricCollection,
        MSEMetric,
    )

    labels = torch.tensor([0, 1, 2, 2, 1, 0])
    scores = torch.tensor(
        [
            [0.8, 0.1, 0.1],
            [0.2, 0.7, 0.1],
            [0.1, 0.2, 0.7],
            [0.6, 0.3, 0.1],
            [0.3, 0.3, 0.4],
            [0.5, 0.4, 0.1],
        ]
    )
    accuracy = AccuracyMetric(num_classes=3)
    accuracy.update(labels[:3], scores[:3])
    accuracy.update(labels[3:], scores[3:])
    check("AccuracyMetric 4/6", close(float(accuracy.compute()), 4 / 6))
    mean = MeanMetric()
    mean.update(torch.tensor([1.0, 2.0, 3.0]))
    mean.update(torch.tensor([10.0]))
    check("MeanMetric 16/4", close(float(mean.compute()), 4.0))
    mse = MSEMetric()
    mse.update(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.5, 2.0, 2.0]))
    check("MSEMetric 1.25/3", close(float(mse.compute()), 1.25 / 3))
    auroc = AUROCMetric(capacity=16)
    auroc.update(torch.tensor([0, 0, 1, 1]), torch.tensor([0.1, 0.4, 0.35, 0.8]))
    check("AUROCMetric 3/4", close(float(auroc.compute()), 0.75))
    # predicted 0,1,2,0,2,0: per class 2TP/(2TP+FP+FN) = 4/5, 2/3, 2/4
    f1 = F1ScoreMetric(3, average_type="macro")
    f1.update(labels, scores)
    per_class = [4 / 5, 2 / 3, 2 / 4]
    check("F1ScoreMetric macro", close(float(f1.compute()), sum(per_class) / 3))

    print("4. a MetricCollection")
    collection = MetricCollection(
        {"accuracy": AccuracyMetric(num_classes=3), "f1": F1ScoreMetric(3, average_type="macro")},
        prefix="valid/",
    )
    collection.update(labels, scores)
    values = {k: float(v) for k, v in collection.compute().items()}
    check(
        "collection values",
        close(values["valid/accuracy"], 4 / 6) and close(values["valid/f1"], sum(per_class) / 3),
        str(values),
    )

    print("5. the functional API")
    import torchtally.functional as F

    check("functional.accuracy", close(float(F.accuracy(labels, scores)), 4 / 6))
    check(
        "functional.mean_squared_error",
        close(
            float(
                F.mean_squared_error(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.5, 2.0, 2.0]))
            ),
            1.25 / 3,
        ),
    )

    print("6. the TorchMetrics-compatible classes")
    from torchtally.compat import torchmetrics as tm

    multiclass = tm.classification.MulticlassAccuracy(num_classes=3, average="micro")
    multiclass.update(scores, labels)  # TorchMetrics' order: preds, target
    check("compat MulticlassAccuracy", close(float(multiclass.compute()), 4 / 6))
    compat_mean = tm.MeanMetric()
    compat_mean.update(torch.tensor([1.0, 2.0, 3.0, 10.0]))
    check("compat MeanMetric", close(float(compat_mean.compute()), 4.0))
    compat_mse = tm.regression.MeanSquaredError()
    compat_mse.update(torch.tensor([1.5, 2.0, 2.0]), torch.tensor([1.0, 2.0, 3.0]))
    check("compat MeanSquaredError", close(float(compat_mse.compute()), 1.25 / 3))

    print("7. features that need an extra say which")
    from torchtally import runtime

    ok, message = raises_naming_extra(lambda: runtime.to_numpy(torch.ones(2)), "numpy")
    check("runtime.to_numpy names torchtally[numpy]", ok, message)
    ok, message = raises_naming_extra(
        lambda: runtime.save({"w": torch.ones(2)}, "never.h5"), "checkpoint"
    )
    check("runtime.save names torchtally[checkpoint]", ok, message)
    try:
        runtime.from_numpy([1, 2])  # type: ignore[arg-type]
        check("runtime.from_numpy refuses a list", False)
    except TypeError as err:
        check("runtime.from_numpy refuses a list with a TypeError", "`array`" in str(err), str(err))

    print("8. python -m torchtally demo")
    demo = subprocess.run(
        [sys.executable, "-m", "torchtally", "demo", "--epochs", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    said = (demo.stdout + demo.stderr).strip()
    last = said.splitlines()[-1] if said else ""  # above it: torch's own "no NumPy" warning
    check(
        "demo names its extras, no traceback",
        demo.returncode == 2 and "torchtally[all]" in said and "Traceback" not in said,
        f"rc={demo.returncode}: {last}",
    )

    print(f"bare install: {'FAILED: ' + ', '.join(failures) if failures else 'all checks passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
