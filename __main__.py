"""`python -m inert`: a short tour — a function, its jaxpr, its value, its gradient,
and what activity analysis saves between the forward and the backward pass."""

import argparse

import numpy as np

import inert
import inert.numpy as inp


def loss(w, x):
    return inp.sum(inp.tanh(x * w) * x)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m inert", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"inert {inert.__version__}")
    parser.parse_args(argv)
    w, x = np.linspace(-1.0, 1.0, 4), np.linspace(0.5, 2.0, 4)
    print("f(w, x) = sum(tanh(x * w) * x)\n")
    print("its jaxpr:")
    print(inert.make_jaxpr(loss)(w, x))
    print(f"\nf(w, x)        = {loss(w, x):.6f}")
    print(f"grad_w f(w, x) = {inert.grad(loss)(w, x)}")
    print("\nactive values (*) when differentiating in w only:")
    inert.print_activity(loss, w, inert.Inactive(x))
    print("\nresiduals kept for the backward pass, all arguments active:")
    inert.print_saved_residuals(loss, w, x)
    print("\n... and with x Inactive: only what d/dw needs")
    inert.print_saved_residuals(loss, w, inert.Inactive(x))


if __name__ == "__main__":
    main()
