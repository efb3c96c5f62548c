"""`RestartableDataLoader`: a run stopped mid-epoch and resumed from its checkpointed state yields
exactly the batches the uninterrupted run yields (oracle: the uninterrupted run of the same
loader; torch's `DataLoader` for the unshuffled order; torch's `DistributedSampler` for the
per-epoch order of a sampler with `set_epoch`). The protocol is cstorch 2.10's: the four
methods, `strict` on the loading pair, and a structural `isinstance`."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader as TorchDataLoader
from torch.utils.data import DistributedSampler, IterableDataset, TensorDataset

import torchtally as cstorch
from torchtally.utils.data import RestartableDataLoader

# torch's forked loader workers seed numpy.random; importing it there, while the parent's
# import lock may be held by another thread at fork time, can kill the worker
with contextlib.suppress(ImportError):  # numpy is optional; workers then skip it
    import numpy.random  # noqa: F401

N, BATCH, EPOCHS = 23, 4, 3  # 6 batches an epoch, the last one ragged


def dataset() -> TensorDataset:
    return TensorDataset(torch.arange(N), torch.arange(N) * 10)


def as_lists(batches: Any) -> list[list[int]]:
    return [b[0].tolist() for b in batches]


def checkpoint_roundtrip(state: dict[str, Any]) -> dict[str, Any]:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)  # plain data only


def uninterrupted(**kwargs: Any) -> list[list[list[int]]]:
    loader = RestartableDataLoader(dataset(), batch_size=BATCH, **kwargs)
    return [as_lists(loader) for _ in range(EPOCHS)]


@pytest.mark.parametrize("num_workers", [0, 2])
@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize(("stop_epoch", "stop_batch"), [(0, 3), (1, 5), (2, 6)])
def test_a_resumed_run_yields_the_batches_of_the_uninterrupted_run(
    num_workers: int, shuffle: bool, stop_epoch: int, stop_batch: int
) -> None:
    kwargs: dict[str, Any] = {"shuffle": shuffle, "num_workers": num_workers, "seed": 1234}
    expected = uninterrupted(**kwargs)
    flat_expected = [batch for epoch in expected for batch in epoch]

    first = RestartableDataLoader(dataset(), batch_size=BATCH, **kwargs)
    seen: list[list[int]] = []
    for _ in range(stop_epoch):
        seen.extend(as_lists(first))
    batches = iter(first)
    seen.extend(next(batches)[0].tolist() for _ in range(stop_batch))
    state = checkpoint_roundtrip(first.aggregate_state_dict([first.state_dict()]))
    del first, batches

    # another seed on construction: the checkpoint's seed wins
    resumed = RestartableDataLoader(dataset(), batch_size=BATCH, **{**kwargs, "seed": 99})
    resumed.load_state_dict(resumed.deaggregate_state_dict(state))
    remaining_epochs = EPOCHS - state["worker_states"][0]["epoch"]
    for _ in range(remaining_epochs):
        seen.extend(as_lists(resumed))
    assert seen == flat_expected


def test_persistent_workers_resume_the_same_way() -> None:
    kwargs: dict[str, Any] = {
        "shuffle": True,
        "num_workers": 2,
        "persistent_workers": True,
        "seed": 7,
    }
    expected = uninterrupted(**kwargs)
    loader = RestartableDataLoader(dataset(), batch_size=BATCH, **kwargs)
    seen = as_lists(loader)
    batches = iter(loader)
    seen += [next(batches)[0].tolist(), next(batches)[0].tolist()]
    state = loader.state_dict()
    resumed = RestartableDataLoader(dataset(), batch_size=BATCH, **kwargs)
    resumed.load_state_dict(state)
    seen += as_lists(resumed) + as_lists(resumed)
    assert seen == [b for epoch in expected for b in epoch]


def test_shuffled_epochs_are_permutations_that_differ_and_unshuffled_ones_are_torchs() -> None:
    epochs = uninterrupted(shuffle=True, seed=0)
    for epoch in epochs:
        assert sorted(i for batch in epoch for i in batch) == list(range(N))
        assert [len(b) for b in epoch] == [4, 4, 4, 4, 4, 3]
    assert epochs[0] != epochs[1] != epochs[2]
    assert uninterrupted(shuffle=True, seed=0) == epochs  # the seed fixes the run
    assert uninterrupted(shuffle=True, seed=1) != epochs
    torch_order = as_lists(TorchDataLoader(dataset(), batch_size=BATCH))
    assert uninterrupted(shuffle=False, seed=5) == [torch_order] * EPOCHS


def test_the_default_seed_follows_torch_manual_seed() -> None:
    torch.manual_seed(3)
    a = RestartableDataLoader(dataset(), batch_size=BATCH, shuffle=True)
    torch.manual_seed(3)
    b = RestartableDataLoader(dataset(), batch_size=BATCH, shuffle=True)
    assert as_lists(a) == as_lists(b)
    g = torch.Generator().manual_seed(42)
    assert RestartableDataLoader(dataset(), generator=g).state_dict()["seed"] == 42


def test_a_sampler_with_set_epoch_gets_each_epochs_number() -> None:
    def sampler() -> DistributedSampler[Any]:
        return DistributedSampler(dataset(), num_replicas=2, rank=1, shuffle=True, seed=5)

    expected = []
    for epoch in range(EPOCHS):
        oracle = sampler()
        oracle.set_epoch(epoch)
        order = list(oracle)
        expected.append([order[i : i + BATCH] for i in range(0, len(order), BATCH)])
    loader = RestartableDataLoader(dataset(), batch_size=BATCH, sampler=sampler())
    got = [as_lists(loader) for _ in range(EPOCHS)]
    assert got == expected
    # and resumed in epoch 1 after one batch
    loader = RestartableDataLoader(dataset(), batch_size=BATCH, sampler=sampler())
    loader.load_state_dict({"epoch": 1, "batches_yielded": 1, "seed": 0})
    assert as_lists(loader) == expected[1][1:]


class Stream(IterableDataset):  # type: ignore[type-arg]
    """0..n-1, split across loader workers by worker id."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self) -> Iterator[torch.Tensor]:
        info = torch.utils.data.get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(torch.arange(worker, self.n, workers))


@pytest.mark.parametrize("num_workers", [0, 2])
def test_an_iterable_dataset_resumes_by_reading_past_the_consumed_batches(
    num_workers: int,
) -> None:
    def make() -> RestartableDataLoader:
        return RestartableDataLoader(Stream(22), batch_size=3, num_workers=num_workers, seed=0)

    expected = [b.tolist() for b in make()]
    # the oracle for the stream itself: torch's own loader
    plain = TorchDataLoader(Stream(22), batch_size=3, num_workers=num_workers)
    assert expected == [b.tolist() for b in plain]
    loader = make()
    batches = iter(loader)
    seen = [next(batches).tolist() for _ in range(3)]
    state = loader.state_dict()
    assert state["batches_per_epoch"] is None  # a stream without a length
    resumed = make()
    resumed.load_state_dict(state)
    seen += [b.tolist() for b in resumed]
    assert seen == expected


def test_state_dict_counts_a_finished_epoch_as_the_next_ones_start() -> None:
    loader = RestartableDataLoader(dataset(), batch_size=BATCH, seed=2)
    assert loader.state_dict() == {
        "epoch": 0,
        "batches_yielded": 0,
        "seed": 2,
        "batches_per_epoch": 6,
    }
    batches = iter(loader)
    for _ in range(6):  # every batch, but the loop never saw StopIteration
        next(batches)
    assert loader.state_dict()["epoch"] == 1
    assert loader.state_dict()["batches_yielded"] == 0
    list(loader)
    assert (loader.state_dict()["epoch"], loader.state_dict()["batches_yielded"]) == (2, 0)


def test_a_stale_iterator_is_refused() -> None:
    loader = RestartableDataLoader(dataset(), batch_size=BATCH, seed=2)
    old = iter(loader)
    next(old)
    iter(loader)
    with pytest.raises(RuntimeError, match="stale"):
        next(old)


def test_bad_states_are_refused_with_the_key_named() -> None:
    loader = RestartableDataLoader(dataset(), batch_size=BATCH, seed=2)
    good = loader.state_dict()
    with pytest.raises(ValueError, match=r"lacks \['seed'\]"):
        loader.load_state_dict({"epoch": 0, "batches_yielded": 0})
    with pytest.raises(ValueError, match=r"state_dict\['epoch'\]` must be an integer >= 0"):
        loader.load_state_dict({**good, "epoch": -1})
    with pytest.raises(ValueError, match=r"does not save: \['extra'\]"):
        loader.load_state_dict({**good, "extra": 1})
    loader.load_state_dict({**good, "extra": 1}, strict=False)
    with pytest.raises(ValueError, match="epochs of 5 batches but this loader's epochs have 6"):
        loader.load_state_dict({**good, "batches_per_epoch": 5})
    with pytest.raises(ValueError, match="states of 2 processes but this run has 1"):
        loader.deaggregate_state_dict(loader.aggregate_state_dict([good, good]))
    assert loader.deaggregate_state_dict(loader.aggregate_state_dict([good, good]), strict=False)
    with pytest.raises(ValueError, match="worker_states"):
        loader.aggregate_state_dict([])
    with pytest.raises(ValueError, match="aggregated_state_dict"):
        loader.deaggregate_state_dict({"epoch": 0})
    with pytest.raises(TypeError, match="Argument `seed` must be an integer"):
        RestartableDataLoader(dataset(), seed="1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Argument `shuffle` must be False"):
        RestartableDataLoader(Stream(4), shuffle=True)


class Handwritten:
    """A user's loader implementing cstorch's protocol without the class."""

    def __iter__(self) -> Iterator[int]:
        return iter(range(3))

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> None:
        pass

    def aggregate_state_dict(self, worker_states: list[dict[str, Any]]) -> dict[str, Any]:
        return {}

    def deaggregate_state_dict(self, aggregated: dict[str, Any], strict: bool = True) -> Any:
        return {}


def test_isinstance_is_structural_as_for_cstorchs_runtime_checkable_protocol() -> None:
    assert isinstance(Handwritten(), RestartableDataLoader)
    assert not isinstance(TorchDataLoader(dataset()), RestartableDataLoader)
    assert isinstance(RestartableDataLoader(dataset()), TorchDataLoader)
    assert cstorch.utils.data.RestartableDataLoader is RestartableDataLoader
    wrapped = cstorch.utils.data.DataLoader(
        lambda: RestartableDataLoader(dataset(), batch_size=BATCH, seed=0)
    )
    assert wrapped.is_restartable
    assert not cstorch.utils.data.DataLoader(lambda: TorchDataLoader(dataset())).is_restartable


# ---------------------------------------------------- through cstorch's DataLoader and executor


def test_a_cstorch_flow_checkpoints_the_loader_and_resumes_at_the_same_batch() -> None:
    def input_fn(batch_size: int) -> RestartableDataLoader:
        return RestartableDataLoader(dataset(), batch_size=batch_size, shuffle=True, seed=3)

    def run(steps: int, state: dict[str, Any] | None = None) -> tuple[list[list[int]], Any]:
        dataloader = cstorch.utils.data.DataLoader(input_fn, BATCH)
        if state is not None:
            dataloader.load_state_dict(state)
        seen = []
        for batch in cstorch.utils.data.DataExecutor(dataloader, num_steps=steps):
            seen.append(batch[0].tolist())
        return seen, dataloader

    expected, _ = run(15)  # two and a half epochs of 6 batches
    first, dataloader = run(8)
    state = checkpoint_roundtrip(dataloader.state_dict())
    assert state["worker_states"][0]["epoch"] == 1
    assert state["worker_states"][0]["batches_yielded"] == 2
    rest, _ = run(7, state)
    assert first + rest == expected


def test_cstorchs_dataloader_refuses_state_for_a_loader_that_cannot_restart() -> None:
    plain = cstorch.utils.data.DataLoader(lambda: TorchDataLoader(dataset()))
    with pytest.raises(RuntimeError, match=r"not configured for getting state.*RestartableData"):
        plain.state_dict()
    with pytest.raises(RuntimeError, match="not configured for setting state"):
        plain.load_state_dict({})


def test_every_rank_resumes_its_own_shard_at_its_own_batch() -> None:
    from _restart_ranks import stop_and_resume

    from torchtally.distributed import run_local_ranks

    results = run_local_ranks(stop_and_resume, 2, timeout=150)
    for rank, result in enumerate(results):
        assert result["seen"] == result["expected"], rank
        # the checkpoint holds both ranks' positions, gathered in rank order
        assert len(result["state"]["worker_states"]) == 2
    shards = [sorted(i for b in r["expected"][:5] for i in b) for r in results]
    assert shards[0] != shards[1]  # each rank read its own shard
