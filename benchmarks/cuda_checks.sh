#!/usr/bin/env bash
# The CUDA checks of issue 16, as one script for a GPU machine (CI has none):
#   tests     the registry and a model's steps on CUDA: no host sync over evaluation loops
#             (set_sync_debug_mode("error")), CUDA-graph capture/replay of updates and of a
#             whole training step, a reduce-overhead compiled step in one graph;
#   grid      the eager grid on CUDA against raw torch, TorchMetrics and torcheval;
#   compiled  the grid's small sizes (--quick) with compile_update(mode="reduce-overhead");
#   step      the transformer training step with six metrics (CUDA graphs), host syncs counted.
#
#   bash benchmarks/cuda_checks.sh OUTDIR [PART ...]     (default: every part, in that order)
#
# Needs torch with CUDA, torchmetrics, torcheval, scikit-learn, hypothesis and pytest; run from
# the repository root. Each part writes its own log into OUTDIR as it goes.
set -uo pipefail
out=${1:?usage: cuda_checks.sh OUTDIR [tests] [grid] [compiled] [step]}
shift
parts=${*:-tests grid compiled step}
mkdir -p "$out"
export PYTHONPATH="src:.${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
python3 -c 'import torch; print(torch.__version__, torch.cuda.get_device_name())' | tee "$out/device.txt"
for part in $parts; do
    start=$SECONDS
    case $part in
    tests)
        timeout 150 python3 -m pytest -q -p no:cacheprovider --timeout 60 -o addopts="-ra" \
            tests/metrics/test_common_cuda.py tests/metrics/collection/test_collection_cuda.py \
            >"$out/tests.log" 2>&1
        tail -25 "$out/tests.log"
        ;;
    grid)
        timeout 240 python3 -m benchmarks.bench_eager_grid --device cuda --no-compile-update \
            --rounds 5 >"$out/grid.jsonl" 2>"$out/grid.err"
        tail -1 "$out/grid.jsonl"
        tail -3 "$out/grid.err"
        ;;
    compiled)
        timeout 240 python3 -m benchmarks.bench_eager_grid --device cuda --quick --rounds 5 \
            --compile-mode reduce-overhead --compile-cache \
            >"$out/grid-compiled.jsonl" 2>"$out/grid-compiled.err"
        tail -1 "$out/grid-compiled.jsonl"
        tail -3 "$out/grid-compiled.err"
        ;;
    step)
        timeout 150 python3 -m benchmarks.bench_gpu_step --steps 50 \
            >"$out/step.json" 2>"$out/step.err"
        cat "$out/step.json"
        tail -3 "$out/step.err"
        ;;
    *) echo "unknown part: $part" >&2 ;;
    esac
    echo "== $part: $((SECONDS - start)) s"
done
