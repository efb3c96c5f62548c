"""Lamb, Lion and Adafactor, which torch lacks (or, for Adafactor, implements beside the paper),
checked against their papers' update rules: hand-computed first steps, then multi-step
references written in plain Python floats straight from the papers' pseudo-code."""

from __future__ import annotations

import math

import pytest
import torch

from torchtally import optim

# Gradients of a linear loss sum(g_t * w) are g_t whatever w is, so each step's gradient is
# known in advance and the references need no autograd.
GRADS = [
    [0.5, -1.0, 2.0, 0.25, -0.75, 1.5],
    [-1.0, -1.0, 1.0, 0.5, 0.25, -2.0],
    [0.1, 2.0, -0.5, -1.5, 1.0, 0.3],
    [1.2, -0.4, 0.0, 0.8, -2.5, 0.6],
    [-0.3, 0.9, 1.1, -0.2, 0.4, -1.0],
] * 4
START = [1.0, -2.0, 0.5, 3.0, -0.25, 1.5]
TOL = 1e-12
# The hand-computed steps use the decimal rates; the stored float32 rate differs by ~1e-9.
HAND_TOL = 1e-8


def f32(lr: float) -> float:
    """The rate as the optimizer stores it: a float32 tensor (0.01 becomes 0.0099999998)."""
    return float(torch.tensor(lr, dtype=torch.float32))


def run(
    optimizer_cls: type[optim.Optimizer],
    start: list[float],
    grads: list[list[float]],
    shape: tuple[int, ...],
    **kwargs: object,
) -> list[list[float]]:
    """The parameter after each step, flattened."""
    w = torch.tensor(start, dtype=torch.float64).reshape(shape).requires_grad_()
    opt = optimizer_cls([w], **kwargs)
    history = []
    for g in grads:
        opt.zero_grad()
        (torch.tensor(g, dtype=torch.float64).reshape(shape) * w).sum().backward()
        opt.step()
        history.append(w.detach().flatten().tolist())
    return history


def assert_history(actual: list[list[float]], expected: list[list[float]], tol: float) -> None:
    for step, (got, want) in enumerate(zip(actual, expected, strict=True), start=1):
        assert got == pytest.approx(want, abs=tol, rel=0), f"step {step}"


def sign(x: float) -> float:
    return (x > 0) - (x < 0)


# --- Lion: Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms", Program 1 ---


def lion_reference(w, grads, lr, beta1, beta2, wd):  # type: ignore[no-untyped-def]
    w, m, history = list(w), [0.0] * len(w), []
    for g in grads:
        c = [beta1 * mi + (1 - beta1) * gi for mi, gi in zip(m, g)]
        w = [wi - lr * (sign(ci) + wd * wi) for wi, ci in zip(w, c)]
        m = [beta2 * mi + (1 - beta2) * gi for mi, gi in zip(m, g)]
        history.append(w)
    return history


def test_lion_first_two_steps_by_hand() -> None:
    # w0 = (1, -2), lr 0.1, betas (0.9, 0.99), weight decay 0.1.
    # Step 1, g = (0.5, -1): c = 0.1 g = (0.05, -0.1), sign (1, -1);
    #   w1 = w0 - 0.1 * ((1, -1) + 0.1 * w0) = (0.89, -1.88); m1 = 0.01 g = (0.005, -0.01).
    # Step 2, g = (-1, -1): c = 0.9 m1 + 0.1 g = (-0.0955, -0.109), sign (-1, -1);
    #   w2 = w1 - 0.1 * ((-1, -1) + 0.1 * w1) = (0.9811, -1.7612).
    history = run(
        optim.Lion,
        [1.0, -2.0],
        [[0.5, -1.0], [-1.0, -1.0]],
        (2,),
        lr=0.1,
        betas=(0.9, 0.99),
        weight_decay=0.1,
    )
    assert_history(history, [[0.89, -1.88], [0.9811, -1.7612]], HAND_TOL)


@pytest.mark.parametrize("wd", [0.0, 0.3])
def test_lion_follows_program_1(wd: float) -> None:
    history = run(optim.Lion, START, GRADS, (2, 3), lr=0.02, betas=(0.8, 0.95), weight_decay=wd)
    assert_history(history, lion_reference(START, GRADS, f32(0.02), 0.8, 0.95, wd), TOL)


# --- LAMB: You et al. 2020, "Large Batch Optimization for Deep Learning", Algorithm 2 ---
# Algorithm 2 corrects the moments' bias: `bias_correction=True` (Cerebras' default is False,
# checked against the real cstorch.optim.Lamb in tests/cstorch_oracle/test_optim_parity.py).


def lamb_reference(w, grads, lr, beta1, beta2, eps, wd):  # type: ignore[no-untyped-def]
    w, m, v, history = list(w), [0.0] * len(w), [0.0] * len(w), []
    for t, g in enumerate(grads, start=1):
        m = [beta1 * mi + (1 - beta1) * gi for mi, gi in zip(m, g)]
        v = [beta2 * vi + (1 - beta2) * gi * gi for vi, gi in zip(v, g)]
        m_hat = [mi / (1 - beta1**t) for mi in m]
        v_hat = [vi / (1 - beta2**t) for vi in v]
        r = [mh / (math.sqrt(vh) + eps) for mh, vh in zip(m_hat, v_hat)]
        u = [ri + wd * wi for ri, wi in zip(r, w)]
        w_norm, u_norm = math.hypot(*w), math.hypot(*u)
        trust = w_norm / u_norm if w_norm > 0 and u_norm > 0 else 1.0
        w = [wi - lr * trust * ui for wi, ui in zip(w, u)]
        history.append(w)
    return history


def test_lamb_first_step_by_hand() -> None:
    # w0 = (3, 4): ||w0|| = 5. Step 1, g = (1, 2): m_hat = g, v_hat = g^2, so with eps 0
    # r = g / |g| = (1, 1); u = r + 0.1 w0 = (1.3, 1.4); ||u|| = sqrt(3.65);
    # w1 = w0 - 0.01 * 5 / sqrt(3.65) * (1.3, 1.4).
    ratio = 0.01 * 5 / math.sqrt(3.65)
    history = run(
        optim.Lamb,
        [3.0, 4.0],
        [[1.0, 2.0]],
        (2,),
        lr=0.01,
        eps=0.0,
        weight_decay=0.1,
        bias_correction=True,
    )
    assert_history(history, [[3 - ratio * 1.3, 4 - ratio * 1.4]], HAND_TOL)


@pytest.mark.parametrize("wd", [0.0, 0.05])
def test_lamb_follows_algorithm_2(wd: float) -> None:
    history = run(
        optim.Lamb,
        START,
        GRADS,
        (3, 2),
        lr=0.01,
        betas=(0.9, 0.99),
        eps=1e-6,
        weight_decay=wd,
        bias_correction=True,
    )
    assert_history(history, lamb_reference(START, GRADS, f32(0.01), 0.9, 0.99, 1e-6, wd), TOL)


def test_lamb_trust_ratio_is_one_for_a_zero_weight() -> None:
    # ||w|| = 0: the paper's ratio is 0/x; the convention (and cstorch's) is a ratio of 1.
    history = run(
        optim.Lamb, [0.0, 0.0], [[1.0, -1.0]], (2,), lr=0.1, eps=0.0, bias_correction=True
    )
    assert_history(history, [[-0.1, 0.1]], HAND_TOL)


def test_lamb_adam_option_fixes_the_ratio_at_one() -> None:
    history = run(
        optim.Lamb,
        [3.0, 4.0],
        [[1.0, 2.0]],
        (2,),
        lr=0.01,
        eps=0.0,
        adam=True,
        bias_correction=True,
    )
    assert_history(history, [[2.99, 3.99]], HAND_TOL)


# --- Adafactor: Shazeer & Stern 2018, Algorithms 4 (matrices) and 5 (vectors), with relative
# step rho_t = min(1e-2, 1/sqrt(t)), alpha_t = max(eps2, RMS(X)) rho_t, beta2_t = 1 - t^-0.8,
# update clipping at d, and eps1 added to the squared gradient. Row and column SUMS, as printed.


def rms(xs: list[float]) -> float:
    return math.sqrt(sum(x * x for x in xs) / len(xs))


def adafactor_matrix_reference(x, grads, rows, cols, eps1=1e-30, eps2=1e-3, d=1.0):  # type: ignore[no-untyped-def]
    x, r, c, history = list(x), [0.0] * rows, [0.0] * cols, []
    for t, g in enumerate(grads, start=1):
        rho = min(f32(1e-2), 1 / math.sqrt(t))
        alpha = max(eps2, rms(x)) * rho
        beta2 = 1 - t**-0.8
        sq = [gi * gi + eps1 for gi in g]  # (G_t^2 + eps1 1 1^T)
        r = [
            beta2 * r[i] + (1 - beta2) * sum(sq[i * cols + j] for j in range(cols))
            for i in range(rows)
        ]
        c = [
            beta2 * c[j] + (1 - beta2) * sum(sq[i * cols + j] for i in range(rows))
            for j in range(cols)
        ]
        v = [r[i] * c[j] / sum(r) for i in range(rows) for j in range(cols)]
        u = [gi / math.sqrt(vi) for gi, vi in zip(g, v)]
        clip = max(1.0, rms(u) / d)
        x = [xi - alpha * ui / clip for xi, ui in zip(x, u)]
        history.append(x)
    return history


def adafactor_vector_reference(x, grads, eps1=1e-30, eps2=1e-3, d=1.0):  # type: ignore[no-untyped-def]
    x, v, history = list(x), [0.0] * len(x), []
    for t, g in enumerate(grads, start=1):
        rho = min(f32(1e-2), 1 / math.sqrt(t))
        alpha = max(eps2, rms(x)) * rho
        beta2 = 1 - t**-0.8
        v = [beta2 * vi + (1 - beta2) * (gi * gi + eps1) for vi, gi in zip(v, g)]
        u = [gi / math.sqrt(vi) for gi, vi in zip(g, v)]
        clip = max(1.0, rms(u) / d)
        x = [xi - alpha * ui / clip for xi, ui in zip(x, u)]
        history.append(x)
    return history


def test_adafactor_first_step_by_hand_rank_one_gradient() -> None:
    # X0 = [[3, 0], [0, 4]]: RMS = sqrt(25 / 4) = 2.5, so alpha_1 = 2.5 * min(0.01, 1) = 0.025.
    # G = [[1, -2], [2, -4]]: beta2_1 = 0, G^2 = [[1, 4], [4, 16]] is rank one, so
    # V = R C / sum(R) = G^2 exactly and U = G / |G| = [[1, -1], [1, -1]], RMS 1: no clipping.
    history = run(
        optim.Adafactor,
        [3.0, 0.0, 0.0, 4.0],
        [[1.0, -2.0, 2.0, -4.0]],
        (2, 2),
        lr=0.01,
        eps=(1e-30, 1e-3),
    )
    assert_history(history, [[2.975, 0.025, -0.025, 4.025]], HAND_TOL)


def test_adafactor_first_step_by_hand_factored_estimate() -> None:
    # X0 = ones: alpha_1 = 0.01. G = I: R = C = (1, 1), sum(R) = 2, so V = 1/2 everywhere (the
    # factorization spreads the diagonal) and U = G / sqrt(1/2) = sqrt(2) I, whose RMS is 1.
    step = 0.01 * math.sqrt(2)
    history = run(
        optim.Adafactor, [1.0] * 4, [[1.0, 0.0, 0.0, 1.0]], (2, 2), lr=0.01, eps=(1e-30, 1e-3)
    )
    assert_history(history, [[1 - step, 1.0, 1.0, 1 - step]], HAND_TOL)


def test_adafactor_clips_the_update_by_hand() -> None:
    # Vector X0 = (1, 1), alpha = 0.01 at both steps (RMS(X) stays near 1; computed exactly).
    # Step 1, g = (1, 1): V = g^2, U = (1, 1). Step 2, g = (10, 10): beta2_2 = 1 - 2^-0.8,
    # V = beta2_2 + (1 - beta2_2) 100, U = 10 / sqrt(V) > 1 everywhere, so it is clipped to 1.
    history = run(
        optim.Adafactor, [1.0, 1.0], [[1.0, 1.0], [10.0, 10.0]], (2,), lr=0.01, eps=(1e-30, 1e-3)
    )
    beta2 = 1 - 2**-0.8
    assert 10 / math.sqrt(beta2 + (1 - beta2) * 100) > 1  # the clip is active
    x2 = 0.99 - 0.99 * min(0.01, 1 / math.sqrt(2)) * 1.0
    assert_history(history, [[0.99, 0.99], [x2, x2]], HAND_TOL)


def test_adafactor_matrix_follows_algorithm_4() -> None:
    history = run(optim.Adafactor, START, GRADS, (2, 3), lr=0.01, eps=(1e-30, 1e-3))
    assert_history(history, adafactor_matrix_reference(START, GRADS, 2, 3), TOL)


def test_adafactor_vector_follows_algorithm_5() -> None:
    history = run(optim.Adafactor, START, GRADS, (6,), lr=0.01, eps=(1e-30, 1e-3), d=1.2)
    assert_history(history, adafactor_vector_reference(START, GRADS, d=1.2), TOL)


def test_adafactor_relative_step_with_warmup_init_by_hand() -> None:
    # Hugging Face's warmup: rate min(1e-6 t, 1/sqrt(t)) = 1e-6 t early on. Vector g = (1, 1):
    # V = g^2 + eps1, U = (1, 1), no clipping; without parameter scaling the step is the rate.
    history = run(
        optim.Adafactor,
        [1.0, 1.0],
        [[1.0, 1.0], [1.0, 1.0]],
        (2,),
        eps=(1e-30, 1e-3),
        relative_step=True,
        warmup_init=True,
        scale_parameter=False,
    )
    assert_history(history, [[1 - 1e-6] * 2, [1 - 3e-6] * 2], HAND_TOL)


def test_adafactor_relative_step_caps_at_lr_by_hand() -> None:
    # rate min(lr, 1/sqrt(t)): 1/sqrt(t) = 0.5 at t = 4 is below lr = 0.9.
    grads = [[1.0, 1.0]] * 4
    history = run(
        optim.Adafactor, [0.0, 0.0], grads, (2,), lr=0.9, relative_step=True, scale_parameter=False
    )
    expected = [-(f32(0.9) + 1 / math.sqrt(2) + 1 / math.sqrt(3) + 0.5)] * 2
    assert_history(history[-1:], [expected], HAND_TOL)
