"""sqsjobs on AWS: ``SqsJobStore`` keeps jobs in SQS (delivery) and DynamoDB (the record).

Importing this package loads boto3 but never aioboto3 or aiohttp: the asyncio clients
are opened on the store's first async call, so blocking producers stay light.
"""

from ._dead_letters import DeadLetter
from ._operations import RedriveReport
from ._reconcile import ReconcileReport
from ._stats import QueueStats
from ._store import SqsJobStore

__all__ = ["DeadLetter", "QueueStats", "ReconcileReport", "RedriveReport", "SqsJobStore"]
