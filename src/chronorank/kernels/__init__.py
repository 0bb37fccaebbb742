"""Decay kernels: age in days -> weight in [floor, 1].

One kernel per module; :mod:`~chronorank.kernels.base` holds the protocol and the
half-life/floor conventions, :mod:`~chronorank.kernels.registry` the names and aliases,
:mod:`~chronorank.kernels.curve` the ASCII and matplotlib renderings.
"""

from chronorank.kernels.base import BaseKernel, Kernel
from chronorank.kernels.callable_kernel import CallableKernel
from chronorank.kernels.cliff import Cliff
from chronorank.kernels.constant import Constant
from chronorank.kernels.curve import ascii_curve, plot_kernel
from chronorank.kernels.delayed_peak import DelayedPeak
from chronorank.kernels.exponential import Exponential
from chronorank.kernels.gaussian import Gaussian
from chronorank.kernels.linear import Linear
from chronorank.kernels.piecewise import Piecewise
from chronorank.kernels.power_law import PowerLaw
from chronorank.kernels.registry import (
    ALIASES,
    DEFAULT_KERNEL,
    KERNELS,
    get_kernel,
    kernel_names,
    register_kernel,
)
from chronorank.kernels.weibull import Weibull

__all__ = [
    "ALIASES",
    "DEFAULT_KERNEL",
    "KERNELS",
    "BaseKernel",
    "CallableKernel",
    "Cliff",
    "Constant",
    "DelayedPeak",
    "Exponential",
    "Gaussian",
    "Kernel",
    "Linear",
    "Piecewise",
    "PowerLaw",
    "Weibull",
    "ascii_curve",
    "get_kernel",
    "kernel_names",
    "plot_kernel",
    "register_kernel",
]
