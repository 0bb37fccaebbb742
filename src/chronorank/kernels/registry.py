"""Kernels by name: ``KERNELS``, aliases, :func:`get_kernel` and :func:`register_kernel`."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from chronorank.errors import InvalidInput
from chronorank.kernels.base import BaseKernel, Kernel
from chronorank.kernels.callable_kernel import CallableKernel
from chronorank.kernels.cliff import Cliff
from chronorank.kernels.constant import Constant
from chronorank.kernels.delayed_peak import DelayedPeak
from chronorank.kernels.exponential import Exponential
from chronorank.kernels.gaussian import Gaussian
from chronorank.kernels.linear import Linear
from chronorank.kernels.piecewise import Piecewise
from chronorank.kernels.power_law import PowerLaw
from chronorank.kernels.weibull import Weibull
from chronorank.spec import parse_spec

__all__ = ["ALIASES", "DEFAULT_KERNEL", "KERNELS", "get_kernel", "kernel_names", "register_kernel"]

DEFAULT_KERNEL = "exponential(half_life_days=180)"

KERNELS: dict[str, Callable[..., Kernel]] = {
    "exponential": Exponential,
    "weibull": Weibull,
    "power_law": PowerLaw,
    "delayed_peak": DelayedPeak,
    "cliff": Cliff,
    "linear": Linear,
    "gaussian": Gaussian,
    "piecewise": Piecewise,
    "constant": Constant,
}

ALIASES: dict[str, str] = {
    "exp": "exponential",
    "expo": "exponential",
    "powerlaw": "power_law",
    "power": "power_law",
    "hyperbolic": "power_law",
    "delayed": "delayed_peak",
    "peak": "delayed_peak",
    "logistic": "cliff",
    "sigmoid": "cliff",
    "gauss": "gaussian",
    "normal": "gaussian",
    "piecewise_linear": "piecewise",
    "steps": "piecewise",
    "flat": "constant",
    "none": "constant",
    "no_decay": "constant",
}


def _key(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def kernel_names() -> list[str]:
    """Registered kernel names followed by their aliases."""
    return sorted(KERNELS) + sorted(ALIASES)


def _resolve(name: str) -> tuple[str, Callable[..., Kernel]]:
    key = _key(name)
    key = ALIASES.get(key, key)
    factory = KERNELS.get(key)
    if factory is None:
        import difflib  # here: only an error message needs it (1-2 ms of every start)

        # cutoff 0.75: a typo ('exponentail') still matches, an unrelated word ('nonsense' ~ 'none') does not
        close = difflib.get_close_matches(key, kernel_names(), n=1, cutoff=0.75)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise InvalidInput(
            f"unknown kernel {name!r}.{hint} Known kernels: {', '.join(sorted(KERNELS))} "
            f"(aliases: {', '.join(f'{a}->{t}' for a, t in sorted(ALIASES.items()))})"
        )
    return key, factory


def _valid_params(factory: Callable[..., Any]) -> list[str] | None:
    if dataclasses.is_dataclass(factory):
        names = [f.name for f in dataclasses.fields(factory) if f.init]
        return sorted(names, key=lambda n: n == "floor")
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
        return None
    return [p.name for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_POSITIONAL]


def _build(name: str, params: Mapping[str, Any]) -> Kernel:
    key, factory = _resolve(name)
    valid = _valid_params(factory)
    if valid is not None:
        for p in params:
            if p not in valid:
                import difflib  # here: only an error message needs it

                close = difflib.get_close_matches(p, valid, n=1)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise InvalidInput(
                    f"unknown parameter {p!r} for kernel {key!r}.{hint} "
                    f"Valid parameters: {', '.join(valid) or '(none)'}"
                )
    try:
        return factory(**params)
    except TypeError as exc:
        raise InvalidInput(f"kernel {key!r} rejected parameters {dict(params)!r}: {exc}") from exc


def get_kernel(spec: Any = None, /, **params: Any) -> Kernel:
    """Build a kernel from a spec string, a name and parameters, a kernel, or a callable.

    >>> get_kernel("weibull(half_life_days=90, shape=2)")
    weibull(half_life_days=90, shape=2)
    >>> get_kernel("power", half_life_days=30)
    power_law(half_life_days=30, beta=1)

    * ``None`` gives the default ``exponential(half_life_days=180)`` (``params`` apply to it).
    * A string is a spec (:mod:`chronorank.spec`); keyword ``params`` override its values.
    * A kernel instance is returned as is (``params`` make a modified copy of built-ins).
    * A mapping ``{"name": ..., **params}`` (from JSON configs) is accepted.
    * Any other callable is wrapped in :class:`CallableKernel`.

    Unknown names raise InvalidInput listing the known kernels; unknown parameters raise
    InvalidInput naming the parameter and listing the valid ones.
    """
    if spec is None:
        if not params:
            return Exponential()
        return _build("exponential", params)
    if isinstance(spec, str):
        name, spec_params = parse_spec(spec)
        return _build(name, {**spec_params, **params})
    if isinstance(spec, Mapping):
        spec_params = dict(spec)
        name = spec_params.pop("name", None) or spec_params.pop("kernel", None)
        if not isinstance(name, str):
            raise InvalidInput(f"kernel mapping {dict(spec)!r} needs a 'name' key, e.g. {{'name': 'exponential', 'half_life_days': 30}}")
        return _build(name, {**spec_params, **params})
    if isinstance(spec, BaseKernel):
        if not params:
            return spec
        valid = list(spec.params)
        for p in params:
            if p not in valid:
                raise InvalidInput(f"unknown parameter {p!r} for kernel {spec.name!r}. Valid parameters: {', '.join(valid)}")
        return dataclasses.replace(spec, **params)
    if isinstance(spec, type):
        for key, factory in KERNELS.items():
            if factory is spec:
                return _build(key, params)
        raise InvalidInput(f"kernel class {spec.__name__} is not registered; register it with register_kernel(name, cls)")
    if isinstance(spec, Kernel):
        if params:
            raise InvalidInput(f"cannot apply parameters {sorted(params)} to the kernel {spec!r}; build it with them instead")
        return spec
    if callable(spec):
        return CallableKernel(spec, **params)
    raise InvalidInput(
        f"kernel must be a spec string like {DEFAULT_KERNEL!r}, a kernel or a callable, "
        f"got {type(spec).__name__} {spec!r}"
    )


def register_kernel(
    name: str, cls: Callable[..., Kernel], aliases: Iterable[str] = (), *, replace: bool = False
) -> None:
    """Register a kernel class (or factory) under ``name`` and ``aliases`` for get_kernel and specs.

    Re-registering an existing name or alias raises InvalidInput unless ``replace=True``.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise InvalidInput(f"kernel name {name!r} must be an identifier such as 'my_decay'")
    if not callable(cls):
        raise InvalidInput(f"register_kernel({name!r}, ...) needs a class or factory, got {cls!r}")
    key = _key(name)
    alias_keys = [_key(a) for a in aliases]
    if not replace:
        for k in [key, *alias_keys]:
            owner = KERNELS.get(k) or KERNELS.get(ALIASES.get(k, ""))
            if owner is not None and owner is not cls:
                raise InvalidInput(f"kernel name {k!r} is already registered; pass replace=True to override it")
    KERNELS[key] = cls
    ALIASES.pop(key, None)
    for a in alias_keys:
        if a != key:
            ALIASES[a] = key
