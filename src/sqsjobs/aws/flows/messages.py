"""Received messages: receiving them, and what happens to them once their records decided.

Claim and settle decide per message (delete it, hide it, re-send it fresh, move it to the
dead-letter queue) and collect the decisions in a ``MessagePlan``; ``carry_out`` turns a
plan into batched SQS requests. A message is deleted only after its replacement (fresh
copy or DLQ copy) was sent, so a failure in between leaves a duplicate, never a loss;
duplicates are harmless because every claim is a conditional write.
"""

from __future__ import annotations

from ..wire import sqs
from ..wire.protocol import AwsError, Flow
from ..wire.sqs import Hide, Message, QueueInfo, Resend


class MessagePlan:
    __slots__ = ("dead_letters", "deletes", "hides", "keys", "resends")

    def __init__(
        self, *, dead_letters: list[Message] | None = None, keys: dict[str, str] | None = None
    ) -> None:
        self.deletes: list[str] = []  # receipt handles
        self.hides: list[tuple[str, int]] = []  # handle, seconds
        self.resends: list[tuple[Message, int]] = []  # message, delay
        self.dead_letters: list[Message] = dead_letters or []
        # The key of each dead job's death its copy carries, by message id (``copy_marks``).
        self.keys: dict[str, str] = keys or {}

    def return_at(self, message: Message, plan: Hide | Resend) -> None:
        if isinstance(plan, Hide):
            self.hides.append((message.receipt_handle, plan.seconds))
        else:
            self.resends.append((message, plan.delay))

    def __bool__(self) -> bool:
        return bool(self.deletes or self.hides or self.resends or self.dead_letters)


def carry_out(plan: MessagePlan, info: QueueInfo) -> Flow[list[Message]]:
    """Batched requests for ``plan`` on one queue; per-entry failures are left to SQS.

    A message whose hide or delete failed simply comes back later and is judged again.
    Returns the dead letters whose copy the DLQ accepted (none without a DLQ).
    """
    deletes = list(plan.deletes)
    resent = yield from send_copies(info.url, [(m, d) for m, d in plan.resends])
    deletes += [m.receipt_handle for m in resent]
    moved: list[Message] = []
    if info.dead_letter_url is None:
        deletes += [m.receipt_handle for m in plan.dead_letters]
    else:
        copies = [(m, 0) for m in plan.dead_letters]
        moved = yield from send_copies(info.dead_letter_url, copies, copy=True, keys=plan.keys)
        deletes += [m.receipt_handle for m in moved]
    calls = [sqs.change_visibility_batch(info.url, batch) for batch in sqs.chunks(plan.hides)]
    calls += [sqs.delete_batch(info.url, handles) for handles in sqs.chunks(deletes)]
    for call in calls:
        try:
            yield call
        except AwsError:
            continue  # the message comes back at its visibility timeout and is judged again
    return moved


def send_copies(
    url: str,
    copies: list[tuple[Message, int]],
    *,
    copy: bool = False,
    keys: dict[str, str] | None = None,
) -> Flow[list[Message]]:
    """Send each message's body to ``url``; the messages whose copy was accepted.

    ``copy``: they go to a DLQ, marked as the store's own copies, a dead job's with the
    key of its death from ``keys`` (by message id; ``copy_marks``).
    """
    sent: list[Message] = []
    for batch in sqs.chunks(copies):
        entries = [(m.body, delay, m.group) for m, delay in batch]
        marks = [(keys or {}).get(m.message_id) for m, _ in batch]
        try:
            reply = yield sqs.send_batch(url, entries, copy=copy, keys=marks)
        except AwsError:
            continue  # not copied, so not deleted: the original comes back later
        ok = {int(entry["Id"]) for entry in reply.get("Successful", [])}
        sent += [message for i, (message, _) in enumerate(batch) if i in ok]
    return sent


def receive(url: str, limit: int, wait: int, visibility: int) -> Flow[list[Message]]:
    reply = yield sqs.receive(url, limit, wait, visibility)
    return [sqs.message_from_reply(raw) for raw in reply.get("Messages", [])]


def delete_all(url: str, handles: list[str]) -> Flow[None]:
    for batch in sqs.chunks(handles):
        yield sqs.delete_batch(url, batch)


def hand_back(url: str, messages: list[Message]) -> Flow[None]:
    """Make messages received but not acted on visible at once, for any worker to take."""
    for batch in sqs.chunks(messages):
        yield sqs.change_visibility_batch(url, [(m.receipt_handle, 0) for m in batch])
