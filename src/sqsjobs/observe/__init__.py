"""What a run tells the operator: log events and their format (``log``, ``log_format``),
metrics and their outputs (``metrics``, ``outputs``, ``emf``, ``prometheus``), traces
(``tracing``), and ``telemetry``, which reports one run to the metrics and its span.
Each output loads only when chosen.
"""
