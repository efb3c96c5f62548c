"""`Benchmark`: runs a model over a dataloader and evaluates static and workload metrics.

The interface is NeuroBench 2.3.0's (`metric_list=[[static classes], [workload classes]]`,
`run(...)` returning results keyed by class name, `save_benchmark_results`), so NeuroBench
scripts port by changing imports. Differences: a failing metric raises `MetricFailedError`
instead of reporting 0.0 or None; hooks are on the model only during `run`; the loop runs
under `torch.no_grad()` and reads metric values from the device once, after the last batch;
run-time overrides of the processors apply to that run only.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from pathlib import Path
from typing import Any, cast, final

import torch
from torch import Tensor, nn

from torchtally.bench._harness.failure import MetricFailedError
from torchtally.bench._harness.model import BenchModel, as_bench_model
from torchtally.bench._harness.results_io import save_results
from torchtally.bench._harness.runners import MetricRunner, make_runner, to_python
from torchtally.bench._metrics.metric_types import StaticMetric, WorkloadMetric
from torchtally.bench._processing.processors import check_processors
from torchtally.metrics import Metric

__all__ = ["Benchmark"]

Processor = Callable[..., Any]


@final
class Benchmark:
    """Evaluates a model on a dataloader with static and workload metrics.

    Args:
        model: A `BenchModel` (`TorchModel`, `SNNTorchModel`, ...) or a plain `nn.Module`.
        dataloader: Yields batches `(inputs, labels, ...)`; may be None if every `run` passes
            one.
        preprocessors: Callables applied in turn to each batch before the model.
        postprocessors: Callables applied in turn to the model's output.
        metric_list: `[[static metric classes], [workload metric classes]]`: classes, not
            instances, keyed in the results by class name. Workload classes may be
            `WorkloadMetric`, `AccumulatedMetric` or `torchtally.metrics.Metric` subclasses.
            A `functools.partial` of a class passes constructor arguments, e.g.
            `partial(R2ScoreMetric, num_outputs=2)`.

    Raises:
        TypeError, ValueError: For malformed arguments, naming the argument.
        MetricFailedError: If a metric class fails to construct.

    Example:
        >>> from torch import nn
        >>> from torchtally.bench import ClassificationAccuracy, ParameterCount, SynapticOperations
        >>> _ = torch.manual_seed(0)
        >>> net = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 3))
        >>> data = torch.utils.data.TensorDataset(torch.randn(8, 2), torch.randint(0, 3, (8,)))
        >>> loader = torch.utils.data.DataLoader(data, batch_size=4)
        >>> bench = Benchmark(net, loader, [], [lambda out: out.argmax(-1)],
        ...                   [[ParameterCount], [ClassificationAccuracy, SynapticOperations]])
        >>> bench.run(quiet=True)  # doctest: +NORMALIZE_WHITESPACE
        {'ParameterCount': 27, 'ClassificationAccuracy': 0.25,
         'SynapticOperations': {'Effective_MACs': 10.625, 'Effective_ACs': 0.0, 'Dense': 20.0}}
        >>> bench.save_benchmark_results("runs/net", "json")
        PosixPath('runs/net.json')
    """

    def __init__(
        self,
        model: BenchModel | nn.Module,
        dataloader: Iterable[Any] | None,
        preprocessors: Sequence[Processor] | None,
        postprocessors: Sequence[Processor] | None,
        metric_list: Sequence[Sequence[type]],
    ) -> None:
        self.model = as_bench_model(model)
        self.dataloader = dataloader
        self.preprocessors = check_processors("preprocessors", preprocessors)
        self.postprocessors = check_processors("postprocessors", postprocessors)
        static_classes, workload_classes = _split_metric_list(metric_list)
        self.static_metrics: dict[str, StaticMetric] = {
            name: _construct(name, cls) for name, cls in static_classes
        }
        self.workload_metrics: list[MetricRunner] = [
            make_runner(_construct(name, cls), name) for name, cls in workload_classes
        ]
        self.results: dict[str, Any] | None = None

    def run(
        self,
        quiet: bool = False,
        verbose: bool = False,
        dataloader: Iterable[Any] | None = None,
        preprocessors: Sequence[Processor] | None = None,
        postprocessors: Sequence[Processor] | None = None,
        device: torch.device | str | None = None,
    ) -> dict[str, Any]:
        """Evaluate every metric over one pass of the data.

        Args:
            quiet: Hide the progress bar.
            verbose: Print the results so far after every batch (this reads every metric
                from the device at every batch).
            dataloader: Use this dataloader for this run.
            preprocessors: Use these preprocessors for this run.
            postprocessors: Use these postprocessors for this run.
            device: Move the network and the batches to this device.

        Returns:
            `{metric class name: value}`, static metrics first, in the order given.

        Raises:
            MetricFailedError: If a metric raises, naming it and the batch.
            ValueError: If there is no dataloader, or it yields no batch.
        """
        loader = dataloader if dataloader is not None else self.dataloader
        if not quiet:
            print("Running benchmark")
        if loader is None:
            raise ValueError("Argument `dataloader` must be given to run() or to Benchmark()")
        pre = _override("preprocessors", preprocessors, self.preprocessors)
        post = _override("postprocessors", postprocessors, self.postprocessors)
        self.results = None
        results = {name: self._evaluate_static(name, m) for name, m in self.static_metrics.items()}
        self._prepare_workload(device)
        with self._hooks_registered(), torch.no_grad():
            self._run_batches(loader, pre, post, device, quiet, verbose, results)
        results |= {runner.name: self._final_value(runner) for runner in self.workload_metrics}
        self.results = results
        return dict(results)

    def _prepare_workload(self, device: torch.device | str | None) -> None:
        if device is not None:
            self.model.__net__().to(device)
        for runner in self.workload_metrics:
            if device is not None:
                runner.to(device)
            runner.reset()

    @contextlib.contextmanager
    def _hooks_registered(self) -> Iterator[None]:
        # Hooks live on the user's model only during a run, removed even when a metric fails.
        hooked = any(runner.requires_hooks for runner in self.workload_metrics)
        if hooked:
            self.model.register_hooks()
        try:
            yield
        finally:
            if hooked:
                self.model.cleanup_hooks()

    def save_benchmark_results(
        self, file_path: str | os.PathLike[str], file_format: str = "json"
    ) -> Path:
        """Save the last run's results (see `save_results`).

        Args:
            file_path: The path without extension; its folder is created.
            file_format: ``"json"``, ``"csv"`` or ``"txt"``.

        Returns:
            The path written.

        Raises:
            RuntimeError: If `run` has not completed yet.
        """
        if self.results is None:
            raise RuntimeError("Benchmark.save_benchmark_results: call run() first")
        return save_results(self.results, file_path, file_format)

    def to_nir(self, dummy_input: Tensor, filename: str | os.PathLike[str], **kwargs: Any) -> None:
        """Export the network to NIR (Neural Intermediate Representation) with snnTorch.

        Args:
            dummy_input: An input of the network's shape, to trace it.
            filename: The file to write.
            **kwargs: Passed to `snntorch.export_nir.export_to_nir`.

        Raises:
            ImportError: If `nir`, or snnTorch >= 0.9 with its NIR export, is not installed.
        """
        try:
            import nir  # type: ignore[import-not-found,unused-ignore]
        except ImportError as exc:
            raise ImportError("Benchmark.to_nir needs the `nir` package (pip install nir)") from exc
        try:
            from snntorch.export_nir import export_to_nir
        except ImportError as exc:
            raise ImportError(
                "Benchmark.to_nir needs snntorch >= 0.9 (its `snntorch.export_nir` module)"
            ) from exc
        graph = export_to_nir(self.model.__net__(), dummy_input, **kwargs)
        nir.write(os.fspath(filename), graph)
        print(f"Model exported to {os.fspath(filename)}")

    def to_onnx(self, dummy_input: Tensor, filename: str | os.PathLike[str], **kwargs: Any) -> None:
        """Export the network to ONNX with `torch.onnx.export`, in eval mode and without
        gradients (the network's training mode is restored afterwards).

        Args:
            dummy_input: An input of the network's shape, to trace it.
            filename: The `.onnx` file to write.
            **kwargs: Passed to `torch.onnx.export`.

        Raises:
            ImportError: If the `onnx` package is not installed.
        """
        import importlib.util

        if importlib.util.find_spec("onnx") is None:
            raise ImportError("Benchmark.to_onnx needs the `onnx` package (pip install onnx)")
        net = self.model.__net__()
        _reset_snntorch_state(net)
        was_training = net.training
        net.eval()
        try:
            with torch.no_grad():
                torch.onnx.export(net, (dummy_input.detach(),), os.fspath(filename), **kwargs)
        finally:
            net.train(was_training)
        print(f"Model exported to {os.fspath(filename)}")

    def _run_batches(
        self,
        loader: Iterable[Any],
        pre: list[Processor],
        post: list[Processor],
        device: torch.device | str | None,
        quiet: bool,
        verbose: bool,
        results: dict[str, Any],
    ) -> None:
        batches = 0
        for index, batch in enumerate(_progress(loader, quiet)):
            data = _as_batch(batch, device)
            batch_size = _batch_size(data)
            inputs = _apply(pre, data)[0]
            preds = _apply(post, self.model(inputs))
            for runner in self.workload_metrics:
                try:
                    runner.update(self.model, preds, data, batch_size)
                except Exception as exc:
                    raise MetricFailedError(runner.name, f"batch {index}", exc) from exc
            self.model.reset_hooks()
            batches += 1
            if verbose:
                current = {r.name: self._final_value(r) for r in self.workload_metrics}
                total = f"/{len(loader)}" if isinstance(loader, Sized) else ""
                print(f"\nBatch num {index + 1}{total}")
                print(results | current)
        if batches == 0:
            raise ValueError("Argument `dataloader` must yield at least one batch")

    def _evaluate_static(self, name: str, metric: StaticMetric) -> Any:
        try:
            return to_python(metric(self.model))
        except Exception as exc:
            raise MetricFailedError(name, "static evaluation", exc) from exc

    @staticmethod
    def _final_value(runner: MetricRunner) -> Any:
        try:
            return runner.result()
        except Exception as exc:
            raise MetricFailedError(runner.name, "compute", exc) from exc


def _reset_snntorch_state(net: nn.Module) -> None:
    # snnTorch neurons with init_hidden keep the last batch's membrane; NeuroBench resets it
    # before export so the exported graph starts from rest.
    try:
        from snntorch import utils
    except ImportError:
        return
    utils.reset(net)


def _override(
    name: str, given: Sequence[Processor] | None, default: list[Processor]
) -> list[Processor]:
    return default if given is None else check_processors(name, given)


Named = list[tuple[str, Any]]


def _split_metric_list(metric_list: Any) -> tuple[Named, Named]:
    shape_ok = isinstance(metric_list, (list, tuple)) and len(metric_list) == 2
    if not shape_ok or not all(isinstance(group, (list, tuple)) for group in metric_list):
        raise TypeError(
            "Argument `metric_list` must be [[static metric classes], [workload metric "
            f"classes]]. Received: metric_list={metric_list!r}"
        )
    static = [_named(f"metric_list[0][{i}]", c, 0) for i, c in enumerate(metric_list[0])]
    workload = [_named(f"metric_list[1][{i}]", c, 1) for i, c in enumerate(metric_list[1])]
    for index, (_, cls) in enumerate(static):
        _check_class(f"metric_list[0][{index}]", cls, (StaticMetric,))
    for index, (_, cls) in enumerate(workload):
        _check_class(f"metric_list[1][{index}]", cls, (WorkloadMetric, Metric))
    names = [name for name, _ in static + workload]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(
            "Argument `metric_list` must not name a metric class twice (results are keyed "
            f"by class name). Received duplicates: {duplicates}"
        )
    return static, workload


def _named(argument: str, item: Any, group: int) -> tuple[str, Any]:
    """`(result key, factory)`: a class is keyed by its name; a string (NeuroBench's deprecated
    form) names a built-in metric and is itself the key, as in NeuroBench."""
    if not isinstance(item, str):
        return _metric_name(item), item
    from torchtally.bench import builtin_metric_class

    class_name = neurobench_class_name(item)
    # NeuroBench announces the deprecation on stdout, before the lookup can fail.
    print(
        f"[DEPRECATION WARNING]: Using string-based metric names ('{item}') is deprecated "
        "and will be removed in a future release. Please use the metric class "
        f"'{class_name}' instead."
    )
    found = builtin_metric_class(class_name, static=group == 0)
    if found is None:
        kind = "static" if group == 0 else "workload"
        raise ValueError(
            f"Argument `{argument}` must name a built-in {kind} metric. Received: "
            f"{argument}={item!r} (looked for class {class_name!r})"
        )
    return item, found


def neurobench_class_name(metric_name: str) -> str:
    """NeuroBench's mapping of a deprecated string metric name to its class name.

    Args:
        metric_name: e.g. ``"classification_accuracy"``, ``"sMAPE"``.

    Returns:
        The class name, e.g. ``"ClassificationAccuracy"``, ``"SMAPE"``.

    Example:
        >>> neurobench_class_name("synaptic_operations")
        'SynapticOperations'
    """
    if metric_name in ("sMAPE", "r2", "mse"):
        return metric_name.upper()
    return "".join(word.title() for word in metric_name.split("_"))


def _metric_class(factory: Any) -> Any:
    # A functools.partial of a metric class stands for the class, with constructor
    # arguments (e.g. partial(R2ScoreMetric, num_outputs=2)); it is keyed by the class name.
    return factory.func if isinstance(factory, functools.partial) else factory


def _metric_name(factory: Any) -> str:
    # An instance has no __name__; its class's name keys it until _check_class rejects it.
    cls = _metric_class(factory)
    return str(getattr(cls, "__name__", type(cls).__name__))


def _check_class(name: str, factory: Any, bases: tuple[type, ...]) -> None:
    cls = _metric_class(factory)
    if not (isinstance(cls, type) and issubclass(cls, bases)):
        kinds = " or ".join(b.__name__ for b in bases)
        raise TypeError(
            f"Argument `{name}` must be a {kinds} subclass (the class, not an instance). "
            f"Received: {name}={factory!r}"
        )


def _construct(name: str, factory: Callable[[], Any]) -> Any:
    try:
        return factory()
    except Exception as exc:
        raise MetricFailedError(name, "construction", exc) from exc


def _as_batch(batch: Any, device: torch.device | str | None) -> tuple[Any, ...]:
    if not isinstance(batch, (tuple, list)) or not batch:
        raise TypeError(
            "Argument `dataloader` must yield (inputs, labels, ...) sequences. "
            f"Received a batch of type {type(batch).__name__}"
        )
    if device is None:
        return tuple(batch)
    return tuple(x.to(device) if isinstance(x, Tensor) else x for x in batch)


def _batch_size(data: tuple[Any, ...]) -> int:
    inputs = data[0]
    if not isinstance(inputs, Tensor) or inputs.dim() == 0:
        raise TypeError(
            "Argument `dataloader` must yield batches whose first element is a batched "
            f"tensor. Received: {type(inputs).__name__}"
        )
    return inputs.shape[0]


def _apply(processors: list[Processor], value: Any) -> Any:
    for processor in processors:
        value = processor(value)
    return value


def _progress(loader: Iterable[Any], quiet: bool) -> Iterable[Any]:
    if quiet:
        return loader
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is optional; no bar without it
        return loader
    total = len(loader) if isinstance(loader, Sized) else None
    return cast(Iterable[Any], tqdm(loader, total=total, desc="Benchmark"))
