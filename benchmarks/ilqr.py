"""The iLQR/MPC workload: iterative LQR on a planar quadrotor, a loop program.

Not a gradient workload (the `Workload` shape times `value_and_grad`): the program IS
the optimiser. A `fori_loop` over iLQR iterations, each linearising the dynamics
along the trajectory (`jacfwd` inside a `scan`), a backward Riccati `scan` with a
2x2 solve per step, and a forward `scan` rolling out the new controls. It is what a
model-predictive controller runs at every control step, and what issue 28 measured
28-63x slower than JAX under jit. It reads `inp`, `lax` and `jacfwd` as globals so
that `jax_column.jax_port` runs the same text on JAX.
"""

from __future__ import annotations

import time

import numpy as np

import inert
import inert.numpy as inp
from inert import jacfwd, lax

from .jax_column import jax_available, jax_port

DT = 0.05
MASS, ARM, INERTIA, GRAVITY = 1.0, 0.25, 0.02, 9.81
STATE, CONTROL = 6, 2  # (x, y, θ, ẋ, ẏ, θ̇); the two rotors' thrusts
HORIZON, ITERATIONS = 40, 8
GOAL = np.array([1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
STATE_COST = np.diag([10.0, 10.0, 1.0, 0.1, 0.1, 0.1])
CONTROL_COST = 0.01 * np.eye(CONTROL)
FINAL_COST = 100.0 * np.eye(STATE)
REGULARISATION = 1e-6


def dynamics(x, u):
    """One explicit Euler step of the planar quadrotor: thrust along the body axis,
    torque from the thrusts' difference."""
    theta, velocity, omega = x[2], x[3:5], x[5]
    thrust = u[0] + u[1]
    acceleration = inp.stack([-thrust * inp.sin(theta) / MASS,
                              thrust * inp.cos(theta) / MASS - GRAVITY])
    alpha = ARM * (u[0] - u[1]) / INERTIA
    return x + DT * inp.concatenate([velocity, omega[None], acceleration, alpha[None]])


def rollout(x0, us):
    """The states the controls `us` reach from `x0` (the first is `x0`)."""
    def step(x, u):
        return dynamics(x, u), x

    last, xs = lax.scan(step, x0, us)
    return inp.concatenate([xs, last[None]])


def linearise(xs, us):
    """The dynamics' jacobians in the state and the control at every step."""
    def step(carry, xu):
        a, b = jacfwd(dynamics, argnums=(0, 1))(*xu)
        return carry, (a, b)

    return lax.scan(step, 0.0, (xs[:-1], us))[1]


def riccati(xs, us, a, b):
    """The backward pass: the feedforward `k` and feedback `K` gains of each step, from
    the quadratic model of the cost-to-go (V_x, V_xx) carried backwards."""
    def step(carry, t):
        v_x, v_xx = carry
        x, u, a_t, b_t = t
        q_x = STATE_COST @ (x - GOAL) + a_t.T @ v_x
        q_u = CONTROL_COST @ u + b_t.T @ v_x
        q_xx = STATE_COST + a_t.T @ v_xx @ a_t
        q_uu = CONTROL_COST + b_t.T @ v_xx @ b_t + REGULARISATION * inp.eye(CONTROL)
        q_ux = b_t.T @ v_xx @ a_t
        gains = -inp.linalg.solve(q_uu, inp.concatenate([q_u[:, None], q_ux], axis=1))
        k, gain = gains[:, 0], gains[:, 1:]
        v_x = q_x + gain.T @ q_uu @ k + gain.T @ q_u + q_ux.T @ k
        v_xx = q_xx + gain.T @ q_uu @ gain + gain.T @ q_ux + q_ux.T @ gain
        return (v_x, 0.5 * (v_xx + v_xx.T)), (k, gain)

    final = (FINAL_COST @ (xs[-1] - GOAL), FINAL_COST)
    return lax.scan(step, final, (xs[:-1], us, a, b), reverse=True)[1]


def improve(xs, us, k, gain):
    """The forward pass: the new controls, the feedback closing on the new states."""
    def step(x, t):
        x_old, u_old, k_t, gain_t = t
        u = u_old + k_t + gain_t @ (x - x_old)
        return dynamics(x, u), (x, u)

    last, (new_xs, new_us) = lax.scan(step, xs[0], (xs[:-1], us, k, gain))
    return inp.concatenate([new_xs, last[None]]), new_us


def cost(xs, us):
    """The quadratic cost of a trajectory: distance to the goal and control effort."""
    dx = xs - GOAL
    running = inp.sum((dx[:-1] @ STATE_COST) * dx[:-1]) + inp.sum((us @ CONTROL_COST) * us)
    return 0.5 * (running + dx[-1] @ FINAL_COST @ dx[-1])


def ilqr(x0, us, iterations: int = ITERATIONS):
    """`iterations` iLQR iterations from the controls `us`: the final controls, states
    and cost."""
    def iteration(i, trajectory):
        xs, us = trajectory
        a, b = linearise(xs, us)
        k, gain = riccati(xs, us, a, b)
        return improve(xs, us, k, gain)

    xs, us = lax.fori_loop(0, iterations, iteration, (rollout(x0, us), us))
    return us, xs, cost(xs, us)


def ilqr_args(horizon: int = HORIZON):
    """A hover start at the origin, each rotor lifting half the weight."""
    return np.zeros(STATE), np.full((horizon, CONTROL), 0.5 * MASS * GRAVITY)


def ilqr_line(median_times, repeat: int) -> str:
    """`jit(ilqr)` on each backend against `jax.jit(ilqr)`, medians interleaved."""
    args = ilqr_args()
    calls, first = {}, {}
    for backend in ("numpy", "numba"):
        jitted = inert.jit(ilqr, backend=backend)
        start = time.perf_counter()
        jitted(*args)
        first[backend] = time.perf_counter() - start
        calls[backend] = lambda f=jitted: f(*args)
    if jax_available():
        import jax

        jitted = jax.jit(jax_port(ilqr))
        start = time.perf_counter()
        jax.block_until_ready(jitted(*args))
        first["JAX"] = time.perf_counter() - start
        calls["JAX"] = lambda: jax.block_until_ready(jitted(*args))
    times = dict(zip(calls, median_times(list(calls.values()), repeat)))
    line = (f"iLQR on a planar quadrotor ({ITERATIONS} iterations, horizon {HORIZON}), "
            f"jit: numpy backend {times['numpy'] * 1e3:.2f} ms, numba "
            f"{times['numba'] * 1e3:.2f} ms")
    if "JAX" in times:
        line += (f", JAX jit {times['JAX'] * 1e3:.2f} ms: numba / JAX "
                 f"{times['numba'] / times['JAX']:.2f}x (target ≤ 2x)")
    return line + "; first calls " + ", ".join(f"{k} {v:.2f} s" for k, v in first.items())
