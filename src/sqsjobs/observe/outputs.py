"""Where a worker's or a Lambda handler's metrics go: a mode name, or the environment.

Each output's module is imported only when chosen, so a Lambda cold start with EMF
loads ``json`` and nothing else new, and one with ``"off"`` loads nothing.
"""

from __future__ import annotations

import os
from typing import cast

from ..core.errors import JobConfigError
from .metrics import DEFAULT_NAMESPACE, MODES, OFF, Metrics, MetricsMode


def metrics_for(
    mode: MetricsMode | Metrics,
    *,
    namespace: str = DEFAULT_NAMESPACE,
    port: int | None = None,
) -> Metrics:
    """The ``Metrics`` for a mode name, or ``mode`` itself when it is one already.

    ``port`` serves ``"prometheus"`` over HTTP on it; without one the series are on
    ``prometheus_client``'s default registry, for an application that serves it already.
    """
    if isinstance(mode, Metrics):
        return mode
    if mode == "off":
        return OFF
    if mode == "emf":
        from .emf import EmfMetrics

        return EmfMetrics(namespace)
    if mode == "prometheus":
        from .prometheus import PrometheusMetrics

        return PrometheusMetrics(port=port)
    raise JobConfigError(
        "invalid_option",
        f"Invalid metrics {mode!r}: use one of {', '.join(MODES)}, or a Metrics object",
    )


def metrics_from_env(default: MetricsMode) -> Metrics:
    """``SQSJOBS_METRICS`` (else ``default``) in ``SQSJOBS_METRICS_NAMESPACE`` (else
    ``sqsjobs``), with ``SQSJOBS_METRICS_PORT`` for ``"prometheus"``: for code configured
    by its environment (a Lambda function, the CLI's defaults)."""
    mode = os.environ.get("SQSJOBS_METRICS", default)
    port = os.environ.get("SQSJOBS_METRICS_PORT")
    return metrics_for(
        cast(MetricsMode, mode),  # metrics_for refuses a name that is none of MODES
        namespace=os.environ.get("SQSJOBS_METRICS_NAMESPACE", DEFAULT_NAMESPACE),
        port=None if port is None else int(port),
    )
