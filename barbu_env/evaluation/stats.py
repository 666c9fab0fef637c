"""Statistics of duplicate evaluation: Student-t quantiles and the mean of per-board numbers with a
two-sided t confidence interval (pure numpy and math)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def t_quantile(p: float, df: int) -> float:
    """Quantile ``p`` (0.5 < p < 1) of Student's t with ``df`` degrees of freedom: exact for df 1, 2;
    otherwise Newton steps on the CDF (Simpson integration of the density) from the Cornish-Fisher
    expansion; accurate to about 1e-8."""
    if not 0.5 < p < 1:
        raise ValueError(f"bad probability {p!r}: expected 0.5 < p < 1")
    if isinstance(df, bool) or df < 1:
        raise ValueError(f"bad degrees of freedom {df!r}: expected >= 1")
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return 2 * (p - 0.5) * math.sqrt(2 / (4 * p * (1 - p)))
    z = _normal_quantile(p)
    v = float(df)
    t = (
        z
        + (z**3 + z) / (4 * v)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
    )
    for _ in range(8):
        step = (_t_cdf(t, v) - p) / _t_density(np.array([t]), v)[0]
        t -= step
        if abs(step) < 1e-12:
            break
    return float(t)


def _t_density(x: np.ndarray, v: float) -> np.ndarray:
    log_c = math.lgamma((v + 1) / 2) - math.lgamma(v / 2) - 0.5 * math.log(v * math.pi)
    return np.exp(log_c - (v + 1) / 2 * np.log1p(x * x / v))


def _t_cdf(t: float, v: float, n: int = 2048) -> float:
    """P(T <= t) for t >= 0 by Simpson's rule on the density over [0, t]."""
    xs = np.linspace(0.0, t, n + 1)
    f = _t_density(xs, v)
    return 0.5 + (t / n) / 3 * float(f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())


def _normal_quantile(p: float) -> float:
    """Standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9)."""
    a = (
        -3.969683028665376e01,
        2.209460984245205e02,
        -2.759285104469687e02,
        1.383577518672690e02,
        -3.066479806614716e01,
        2.506628277459239e00,
    )
    b = (
        -5.447609879822406e01,
        1.615858368580409e02,
        -1.556989798598866e02,
        6.680131188771972e01,
        -1.328068155288572e01,
    )
    c = (
        -7.784894002430293e-03,
        -3.223964580411365e-01,
        -2.400758277161838e00,
        -2.549732539343734e00,
        4.374664141464968e00,
        2.938163982698783e00,
    )
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)  # fmt: skip
    if p < 0.02425:
        q = math.sqrt(-2 * math.log(p))
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1
        )
    if p > 1 - 0.02425:
        return -_normal_quantile(1 - p)
    q = p - 0.5
    r = q * q
    return (
        (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5])
        * q
        / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    )


def confidence_interval(values: Sequence[float], level: float = 0.95) -> dict[str, float]:
    """Mean of per-board values with a two-sided Student-t interval: ``mean ± t·sd/√n``.

    Returns ``n``, ``mean``, ``sd``, ``half_width``, ``low``, ``high`` (half-width NaN when n < 2)."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n == 0:
        raise ValueError("no values: a confidence interval needs at least one board")
    mean = float(x.mean())
    if n < 2:
        sd = hw = float("nan")
    else:
        sd = float(x.std(ddof=1))
        hw = t_quantile(0.5 + level / 2, n - 1) * sd / math.sqrt(n)
    return {"n": n, "mean": mean, "sd": sd, "half_width": hw, "low": mean - hw, "high": mean + hw}
