"""inert: JAX-style program transformations for numpy, with activity analysis.

This module only re-exports. `inert.numpy(.linalg)`, `inert.lax(.linalg)`, `inert.scipy`
(linalg, special, stats, integrate, signal), `inert.experimental.ode`,
`inert.example_libraries` and `inert.tree_util` live under `api/` and are registered here
under those names, the way the standard library provides `os.path`: a folder named `numpy`
at the repository root would shadow the real numpy.
"""

import sys as _sys

__version__ = "0.1.0"  # the release; pyproject.toml reads it from here

from .api import (
    checkpoint_policies,
    debug,
    example_libraries,
    experimental,
    lax,
    nn,
    numpy,
    random,
    ref,
    scipy,
    test_util,
)
from .api.compiled import block_until_compiled, device_put, jit
from .api.control import checkpoint, checkpoint_name, custom_jvp, custom_vjp, remat
from .api.experimental import ode as _experimental_ode
from .api.gradients import grad, value_and_grad
from .api.jacobian import hessian, jacfwd, jacobian, jacrev
from .api.lax import linalg as _lax_linalg
from .api.lax import stop_gradient
from .api.numpy import _methods  # noqa: F401 — installs operators on tracers
from .api.numpy import fft as _numpy_fft
from .api.numpy import linalg as _numpy_linalg
from .api.numpy._array import Array
from .api.pytrees import flatten_util, tree, tree_util
from .api.ref import empty_ref, freeze, new_ref
from .api.residuals import (
    activity_jaxpr,
    draw_activity,
    memory_profile,
    print_activity,
    print_saved_residuals,
    saved_residuals,
)
from .api.scipy import integrate as _scipy_integrate
from .api.scipy import linalg as _scipy_linalg
from .api.scipy import signal as _scipy_signal
from .api.scipy import special as _scipy_special
from .api.scipy import stats as _scipy_stats
from .api.transforms import (
    ShapeDtypeStruct,
    eval_shape,
    jvp,
    linear_transpose,
    linearize,
    make_jaxpr,
    vjp,
)
from .api.vmap import vmap
from .core import errors, typing
from .core.activity import Inactive
from .core.avals import float0
from .core.check import check_jaxpr, enable_checks
from .core.config import config, debug_nans, disable_jit
from .core.ir import ClosedJaxpr, Jaxpr
from .interpreters.eval import eval_jaxpr

for _name, _module in [("numpy", numpy), ("numpy.linalg", _numpy_linalg),
                       ("numpy.fft", _numpy_fft), ("lax", lax), ("lax.linalg", _lax_linalg),
                       ("scipy", scipy), ("scipy.linalg", _scipy_linalg),
                       ("scipy.special", _scipy_special),
                       ("scipy.stats", _scipy_stats), ("scipy.integrate", _scipy_integrate),
                       ("experimental", experimental), ("experimental.ode", _experimental_ode),
                       ("scipy.signal", _scipy_signal),
                       ("example_libraries", example_libraries),
                       ("example_libraries.stax", example_libraries.stax),
                       ("example_libraries.optimizers", example_libraries.optimizers),
                       ("tree_util", tree_util), ("errors", errors), ("ref", ref),
                       ("random", random), ("nn", nn), ("nn.initializers", nn.initializers),
                       ("tree", tree), ("flatten_util", flatten_util),
                       ("test_util", test_util), ("debug", debug), ("typing", typing)]:
    _sys.modules[f"{__name__}.{_name}"] = _module
for _name in _scipy_stats.DISTRIBUTIONS:  # jax.scipy.stats.norm is a module too
    _sys.modules[f"{__name__}.scipy.stats.{_name}"] = getattr(_scipy_stats, _name)

__all__ = [
    "activity_jaxpr", "checkpoint", "checkpoint_name", "checkpoint_policies", "custom_jvp",
    "custom_vjp", "remat", "hessian", "jacfwd", "jacrev", "print_activity", "draw_activity",
    "ClosedJaxpr", "Inactive", "Jaxpr", "check_jaxpr", "config", "debug_nans", "enable_checks",
    "errors", "eval_jaxpr", "experimental",
    "float0", "grad", "jit", "jvp", "lax", "linear_transpose", "linearize", "make_jaxpr", "numpy",
    "print_saved_residuals", "saved_residuals", "memory_profile", "scipy", "stop_gradient",
    "tree_util",
    "value_and_grad", "vjp", "vmap", "new_ref", "empty_ref", "freeze", "ref",
    "block_until_compiled", "device_put", "example_libraries", "flatten_util", "nn", "random",
    "test_util", "tree",
    "__version__", "Array", "debug", "disable_jit", "ShapeDtypeStruct", "eval_shape", "jacobian",
    "typing",
]
