"""The store the Lambda handler runs on: a threaded twin of the user's ``SqsJobStore``.

A Lambda container runs each invocation on an event loop of its own, and its import
time is billed: the twin drives boto3 from threads (aiobotocore is never loaded) and
leaves the deletes of completed jobs' messages to Lambda, which deletes every message
the handler does not name in ``batchItemFailures``.
"""

from __future__ import annotations

import copy
from typing import NamedTuple

from .background import Background
from .claims import Claims
from .settling import Mode
from .sqs_store import SqsJobStore


class LambdaMode(NamedTuple):
    """A store for the Lambda handler, and its claiming and background work."""

    store: SqsJobStore  # threaded (boto3 only); leaves completed jobs' deletes to Lambda
    claims: Claims
    background: Background  # sent at the end of each invocation


def lambda_mode(store: SqsJobStore) -> LambdaMode:
    """A Lambda-mode copy of ``store``; ``store`` itself is left as it was.

    The copy is of the same class, with the same attributes (a subclass's overrides
    apply), and shares the state: the layout learned so far, the clock, the claims'
    messages and the boto3 clients (made once per container). It runs every AWS call in
    a thread, so no aiobotocore is loaded and clients outlive each invocation's event loop.
    """
    twin = copy.copy(store)
    twin._open(store._state, Mode(threaded=True, delete_on_complete=False))
    return LambdaMode(twin, twin._claims, twin._background)
