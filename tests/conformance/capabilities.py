"""The protocols the conformance suite checks that nothing in sqsjobs looks for on a
store (``sqsjobs.core.operator_calls``): each store has the calls, on each face, that
``test_redrive.py``'s table says."""

from sqsjobs.core.operator_calls import (
    DeadLetterStore,
    ReconcileStore,
    SyncDeadLetterStore,
    SyncDepthStore,
    SyncPresenceStore,
    SyncReconcileStore,
    SyncRedriveStore,
    SyncRetryStore,
    SyncStatsStore,
)

__all__ = [
    "DeadLetterStore",
    "ReconcileStore",
    "SyncDeadLetterStore",
    "SyncDepthStore",
    "SyncPresenceStore",
    "SyncReconcileStore",
    "SyncRedriveStore",
    "SyncRetryStore",
    "SyncStatsStore",
]
