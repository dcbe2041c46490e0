"""Pure tests of the operator flows: the sequence of AWS operations each makes, on a fake."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from sqsjobs import JobConfigError, JobStatus
from sqsjobs.aws import DeadLetter, RedriveReport
from sqsjobs.aws.flows import dead_letters as _dead_letters
from sqsjobs.aws.flows import reconcile as _reconcile
from sqsjobs.aws.flows import redrive as _operations
from sqsjobs.aws.flows import stats as _stats
from sqsjobs.aws.wire import sqs as _sqs
from sqsjobs.aws.wire.copy_marks import copy_mark
from sqsjobs.aws.wire.index_keys import DEFAULT_SHARDS, list_sk
from sqsjobs.aws.wire.layout import Layout
from sqsjobs.aws.wire.protocol import AwsError, drive

from .fakes import DLQ, NOW, URL, FakeAws, failure, layout, prepared, refused, stored

JOB = prepared({"order": 7}).job
BODY = _sqs.body(JOB.id, "default")
DEAD = stored(JOB, status=JobStatus.DEAD, attempts=5, last_error="boom", expires_at=NOW + 500)
QUEUED = stored(JOB, status=JobStatus.QUEUED, attempts=0, last_error="boom")


def at(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


SENT_MS = int(NOW * 1000)  # SQS's SentTimestamp: epoch milliseconds


def received(*bodies: str, receive_count: int = 1, first: int = 0) -> dict[str, Any]:
    """A ``ReceiveMessage`` reply carrying ``bodies`` (ids and handles counted from ``first``)."""
    attributes = {"ApproximateReceiveCount": str(receive_count), "SentTimestamp": str(SENT_MS)}
    return {
        "Messages": [
            {
                "MessageId": f"m-{i}",
                "ReceiptHandle": f"h-{i}-{receive_count}",
                "Body": body,
                "Attributes": attributes,
            }
            for i, body in enumerate(bodies, start=first)
        ]
    }


def sent(count: int = 1) -> dict[str, Any]:
    return {"Successful": [{"Id": str(i)} for i in range(count)]}


# -- retry --------------------------------------------------------------------------------


def test_retry_reads_the_record_holds_its_copies_then_revives_and_sends() -> None:
    aws = FakeAws(get_item=[{"Item": DEAD}], update_item=[{"Attributes": QUEUED}])
    assert drive(_operations.retry(layout(), JOB.id, NOW), aws)
    # The DLQ is looked through for the job's copies (an empty one here) *before* the
    # revive, so a copy of a death after it can never be among those deleted.
    assert aws.operations == ["get_item", "receive_message", "update_item", "send_message"]
    update = aws.calls[2].params
    assert update["ReturnValues"] == "ALL_NEW"
    assert update["ExpressionAttributeValues"][":new_status"] == {"S": "queued"}
    assert update["ExpressionAttributeValues"][":gsi_pk"]["S"].startswith("queued#")
    assert aws.calls[3].params["QueueUrl"] == URL


def test_a_retry_whose_dead_letter_sweep_fails_still_revives_the_job() -> None:
    unavailable = AwsError("ServiceUnavailable", "try again", "receive_message", Exception())
    aws = FakeAws(
        get_item=[{"Item": DEAD}],
        update_item=[{"Attributes": QUEUED}],
        receive_message=[unavailable],
    )
    assert drive(_operations.retry(layout(), JOB.id, NOW), aws)
    assert aws.operations == ["get_item", "receive_message", "update_item", "send_message"]


def test_retry_deletes_the_copies_it_held_and_hands_the_rest_back_first() -> None:
    other = _sqs.body("f" * 32, "default")
    aws = FakeAws(
        get_item=[{"Item": DEAD}],
        update_item=[{"Attributes": QUEUED}],
        receive_message=[received(BODY, other, "not json"), received(BODY, first=3)],
    )
    assert drive(_operations.retry(layout(), JOB.id, NOW), aws)
    assert aws.operations == [
        "get_item",
        "receive_message",
        "receive_message",
        "receive_message",
        "change_message_visibility_batch",
        "update_item",
        "send_message",
        "delete_message_batch",
    ]
    handed_back = aws.calls[4].params["Entries"]
    assert [(e["ReceiptHandle"], e["VisibilityTimeout"]) for e in handed_back] == [
        ("h-1-1", 0),
        ("h-2-1", 0),
    ]
    deleted = aws.calls[7].params["Entries"]
    assert [e["ReceiptHandle"] for e in deleted] == ["h-0-1", "h-3-1"]


def test_a_revive_refused_after_the_sweep_hands_the_copies_back() -> None:
    aws = FakeAws(
        get_item=[{"Item": DEAD}],
        update_item=[refused(QUEUED)],
        receive_message=[received(BODY)],
    )
    assert not drive(_operations.retry(layout(), JOB.id, NOW), aws)
    assert aws.operations[-2:] == ["update_item", "change_message_visibility_batch"]
    assert [e["ReceiptHandle"] for e in aws.calls[-1].params["Entries"]] == ["h-0-1"]


@pytest.mark.parametrize(
    "item",
    [None, QUEUED, stored(JOB, status=JobStatus.DEAD, expires_at=NOW - 1)],
    ids=["unknown", "not dead", "expired"],
)
def test_a_refused_retry_writes_and_sends_nothing(item: dict[str, Any] | None) -> None:
    aws = FakeAws(get_item=[{} if item is None else {"Item": item}])
    assert not drive(_operations.retry(layout(), JOB.id, NOW), aws)
    assert aws.operations == ["get_item"]


def test_a_retry_refused_for_an_unknown_queue_says_so() -> None:
    elsewhere = stored(JOB, queue="reports", status=JobStatus.DEAD, expires_at=NOW + 500)
    aws = FakeAws(get_item=[{"Item": elsewhere}])
    with pytest.raises(JobConfigError, match="'reports' has no SQS queue"):
        drive(_operations.retry(layout(), JOB.id, NOW), aws)
    assert aws.operations == ["get_item"]


# -- redrive ------------------------------------------------------------------------------


def redrive(aws: FakeAws, limit: int | None = None) -> RedriveReport:
    return drive(_operations.redrive(layout(), ["default"], NOW, limit), aws)


def test_redrive_sends_a_dead_job_back_before_deleting_its_dlq_message() -> None:
    aws = FakeAws(
        receive_message=[received(BODY)],
        get_item=[{"Item": DEAD}],
        update_item=[{"Attributes": QUEUED}],
        send_message_batch=[sent()],
    )
    assert redrive(aws) == RedriveReport(redriven=1, discarded=0, skipped=0)
    assert aws.operations == [
        "receive_message",
        "get_item",
        "update_item",
        "send_message_batch",
        "delete_message_batch",
        "receive_message",
    ]
    assert aws.calls[0].params["QueueUrl"] == DLQ
    assert aws.calls[3].params["QueueUrl"] == URL
    assert aws.calls[4].params["QueueUrl"] == DLQ
    assert aws.calls[4].params["Entries"] == [{"Id": "0", "ReceiptHandle": "h-0-1"}]


def test_a_message_whose_copy_was_not_sent_stays_in_the_dlq() -> None:
    aws = FakeAws(
        receive_message=[received(BODY)],
        get_item=[{"Item": DEAD}],
        update_item=[{"Attributes": QUEUED}],
        send_message_batch=[{"Failed": [{"Id": "0"}]}],
    )
    assert redrive(aws) == RedriveReport(redriven=0, discarded=0, skipped=1)
    assert aws.operations == [
        "receive_message",
        "get_item",
        "update_item",
        "send_message_batch",
        "receive_message",
        "change_message_visibility_batch",
    ]


@pytest.mark.parametrize(
    "item",
    [
        None,
        stored(JOB, status=JobStatus.COMPLETED),
        stored(JOB, status=JobStatus.CANCELLED),
        stored(JOB, status=JobStatus.DEAD, expires_at=NOW - 1),
    ],
    ids=["missing", "completed", "cancelled", "expired"],
)
def test_a_message_with_nothing_left_to_run_is_deleted(item: dict[str, Any] | None) -> None:
    aws = FakeAws(receive_message=[received(BODY)], get_item=[{"Item": item} if item else {}])
    assert redrive(aws) == RedriveReport(redriven=0, discarded=1, skipped=0)
    assert aws.operations == [
        "receive_message",
        "get_item",
        "delete_message_batch",
        "receive_message",
    ]


def test_a_malformed_message_is_left_in_place_and_shown_again_at_the_end() -> None:
    aws = FakeAws(receive_message=[received("not json")])
    assert redrive(aws) == RedriveReport(redriven=0, discarded=0, skipped=1)
    assert aws.operations == [
        "receive_message",
        "receive_message",
        "change_message_visibility_batch",
    ]
    assert aws.calls[2].params["Entries"][0]["VisibilityTimeout"] == 0


def test_a_waiting_job_s_message_is_sent_back_with_its_record_untouched() -> None:
    delayed = stored(JOB, status=JobStatus.DELAYED, run_at=at(NOW + 120))
    aws = FakeAws(
        receive_message=[received(BODY)],
        get_item=[{"Item": delayed}],
        send_message_batch=[sent()],
    )
    assert redrive(aws) == RedriveReport(redriven=1, discarded=0, skipped=0)
    assert "update_item" not in aws.operations
    assert aws.calls[2].params["Entries"][0]["DelaySeconds"] == 120


def test_an_abandoned_run_is_recorded_dead_then_revived() -> None:
    running = stored(
        JOB, status=JobStatus.RUNNING, attempts=2, lease_token="t", lease_until=at(NOW - 2.1)
    )
    aws = FakeAws(
        receive_message=[received(BODY, receive_count=6)],  # moved after 5 receives
        get_item=[{"Item": running}],
        update_item=[{"Attributes": DEAD}, {"Attributes": QUEUED}],
        send_message_batch=[sent()],
    )
    assert redrive(aws) == RedriveReport(redriven=1, discarded=0, skipped=0)
    first, second = (c.params for c in aws.calls if c.operation == "update_item")
    assert first["ExpressionAttributeValues"][":new_status"] == {"S": "dead"}
    assert second["ExpressionAttributeValues"][":new_status"] == {"S": "queued"}


def copied(*bodies: str, receive_count: int) -> dict[str, Any]:
    """A receive of copies the store itself sent to the DLQ (marked as such)."""
    reply = received(*bodies, receive_count=receive_count)
    mark = copy_mark(None)
    for message in reply["Messages"]:
        message["MessageAttributes"] = mark
    return reply


@pytest.mark.parametrize(
    "reply",
    [received(BODY, receive_count=4), copied(BODY, receive_count=40)],
    ids=["fewer receives than maxReceiveCount", "a copy the store sent"],
)
def test_only_a_message_the_redrive_policy_moved_gets_a_run_recorded_dead(
    reply: dict[str, Any],
) -> None:
    running = stored(
        JOB, status=JobStatus.RUNNING, attempts=2, lease_token="t", lease_until=at(NOW - 2.1)
    )
    aws = FakeAws(receive_message=[reply], get_item=[{"Item": running}])
    found = drive(_dead_letters.peek(layout(), "default", NOW, 10, wait=0), aws)
    assert [item.reconciled for item in found] == [False]
    assert "update_item" not in aws.operations


def test_a_dlq_pass_neither_judges_nor_shows_another_queues_job() -> None:
    elsewhere = stored(
        JOB,
        queue="other",
        status=JobStatus.RUNNING,
        attempts=2,
        lease_token="t",
        lease_until=at(NOW - 2.1),
    )
    aws = FakeAws(receive_message=[received(BODY, receive_count=9)], get_item=[{"Item": elsewhere}])
    (item,) = drive(_dead_letters.peek(layout(), "default", NOW, 10, wait=0), aws)
    assert (item.job_id, item.stored, item.reconciled) == (JOB.id, None, False)
    assert "update_item" not in aws.operations


def test_a_job_sent_back_earlier_in_the_pass_and_dead_again_keeps_its_new_copy() -> None:
    """Batch 1 revives and sends the job; batch 2 finds it dead again: that copy stays."""
    finished = [
        stored(prepared({"n": n}).job, status=JobStatus.COMPLETED, expires_at=NOW + 500)
        for n in range(9)
    ]
    fillers = [_sqs.body(item["id"]["S"], "default") for item in finished]
    # Records are read in job id order, one batch at a time.
    first_batch = sorted([DEAD, *finished], key=lambda item: item["id"]["S"])
    aws = FakeAws(
        receive_message=[received(BODY, *fillers), received(BODY, first=20), {}],
        get_item=[{"Item": item} for item in first_batch] + [{"Item": DEAD}],
        update_item=[{"Attributes": QUEUED}],
        send_message_batch=[sent()],
    )
    report = redrive(aws)
    assert report == RedriveReport(redriven=1, discarded=9, skipped=1)
    revives = [c for c in aws.calls if c.operation == "update_item"]
    assert len(revives) == 1  # not revived a second time in the same pass
    deleted = [
        e["ReceiptHandle"]
        for c in aws.calls
        if c.operation == "delete_message_batch"
        for e in c.params["Entries"]
    ]
    assert "h-20-1" not in deleted
    handed_back = aws.calls[-1].params["Entries"]
    assert [e["ReceiptHandle"] for e in handed_back] == ["h-20-1"]


def test_two_copies_of_one_dead_job_send_it_back_once() -> None:
    aws = FakeAws(
        receive_message=[received(BODY, BODY)],
        get_item=[{"Item": DEAD}],
        update_item=[{"Attributes": QUEUED}],
        send_message_batch=[sent()],
    )
    assert redrive(aws) == RedriveReport(redriven=1, discarded=1, skipped=0)
    assert aws.operations.count("get_item") == 1
    assert len(aws.calls[3].params["Entries"]) == 1
    assert len(aws.calls[4].params["Entries"]) == 2


def test_a_revive_refused_meanwhile_judges_the_record_as_it_now_is() -> None:
    aws = FakeAws(
        receive_message=[received(BODY)],
        get_item=[{"Item": DEAD}],
        update_item=[refused(stored(JOB, status=JobStatus.COMPLETED))],
    )
    assert redrive(aws) == RedriveReport(redriven=0, discarded=1, skipped=0)


def test_redrive_takes_no_more_than_its_limit() -> None:
    aws = FakeAws(receive_message=[received("x")])
    assert redrive(aws, limit=1) == RedriveReport(redriven=0, discarded=0, skipped=1)
    assert aws.operations == ["receive_message", "change_message_visibility_batch"]
    assert aws.calls[0].params["MaxNumberOfMessages"] == 1


def test_redrive_reports_progress_after_each_batch() -> None:
    aws = FakeAws(receive_message=[received("x"), received("y", first=1)])
    seen: list[RedriveReport] = []
    drive(_operations.redrive(layout(), ["default"], NOW, None, seen.append), aws)
    assert seen == [RedriveReport(0, 0, 1), RedriveReport(0, 0, 2)]


def test_a_message_met_again_in_a_long_redrive_is_handled_once() -> None:
    """Its hide ran out while the redrive went on: it is not counted twice, and the end
    of the pass shows it again by its latest receipt handle."""
    aws = FakeAws(receive_message=[received("x"), received("x", receive_count=2)])
    assert redrive(aws) == RedriveReport(redriven=0, discarded=0, skipped=1)
    assert aws.operations == [
        "receive_message",
        "receive_message",
        "change_message_visibility_batch",
    ]
    assert aws.calls[2].params["Entries"] == [
        {"Id": "0", "ReceiptHandle": "h-0-2", "VisibilityTimeout": 0}
    ]


def test_a_refused_send_leaves_the_message_in_the_dlq() -> None:
    aws = FakeAws(
        receive_message=[received(BODY)],
        get_item=[{"Item": DEAD}],
        update_item=[{"Attributes": QUEUED}],
        send_message_batch=[failure()],
    )
    assert redrive(aws) == RedriveReport(redriven=0, discarded=0, skipped=1)
    assert "delete_message_batch" not in aws.operations


# -- dead letters and the reconciler --------------------------------------------------------


def test_dead_letters_peeks_then_makes_every_message_visible_again() -> None:
    aws = FakeAws(
        receive_message=[received(BODY, "garbage", receive_count=3)], get_item=[{"Item": DEAD}]
    )
    letters = drive(_dead_letters.dead_letters(layout(), ["default"], NOW, 100), aws)
    assert aws.operations == [
        "receive_message",
        "get_item",
        "receive_message",
        "change_message_visibility_batch",
    ]
    assert [e["VisibilityTimeout"] for e in aws.calls[3].params["Entries"]] == [0, 0]
    assert [(d.job_id, d.receive_count) for d in letters] == [(JOB.id, 3), (None, 3)]
    assert isinstance(letters[0], DeadLetter) and letters[0].job is not None
    assert letters[0].job.status is JobStatus.DEAD and letters[1].job is None
    assert letters[0].sent_at == at(SENT_MS / 1000)


def test_the_reconciler_reads_dlq_records_and_writes_only_abandoned_ones() -> None:
    aws = FakeAws(receive_message=[received(BODY)], get_item=[{"Item": DEAD}])
    report = drive(_reconcile.reconcile(layout(), ["default"], NOW, 60.0), aws)
    assert (report.dead, report.resent) == (0, 0)
    assert "update_item" not in aws.operations
    assert aws.operations[:4] == [
        "receive_message",
        "get_item",
        "receive_message",
        "change_message_visibility_batch",
    ]
    assert aws.calls[0].params["WaitTimeSeconds"] == 0  # a periodic pass never long-polls


# -- stats --------------------------------------------------------------------------------


DEPTH_REPLIES = [
    {
        "Attributes": {
            "ApproximateNumberOfMessages": "4",
            "ApproximateNumberOfMessagesNotVisible": "5",
            "ApproximateNumberOfMessagesDelayed": "6",
        }
    },
    {"Attributes": {"ApproximateNumberOfMessages": "7"}},
]


def entry(job_id: str, phase: str, created: float = NOW - 60) -> dict[str, Any]:
    """A ``by_queue`` index entry as a query returns it (keys and projected attributes)."""
    return {
        "pk": {"S": f"job#{job_id}"},
        "list_sk": {"S": list_sk(created, job_id)},
        "phase": {"S": phase},
        "name": {"S": "fake.job"},
    }


ENDED_RANGES = 3 * DEFAULT_SHARDS  # completed, dead and cancelled partitions


def test_stats_counts_open_jobs_by_their_records_and_ended_ones_in_the_window() -> None:
    waiting = [prepared({"n": n}).job for n in range(3)]
    records = [
        stored(waiting[0]),
        stored(waiting[1], status=JobStatus.RUNNING, attempts=1),
        stored(waiting[2], status=JobStatus.DELAYED),
    ]
    pages: list[dict[str, Any]] = [{"Items": []} for _ in range(DEFAULT_SHARDS)]
    # Record format 2 ended jobs in place: counted by phase when created in the window.
    pages[0] = {
        "Items": [entry(waiting[0].id, "open"), entry("d1", "dead")],
        "LastEvaluatedKey": {"pk": {"S": "job#d1"}},
    }
    pages[2] = {
        "Items": [entry(waiting[1].id, "open"), entry("c0", "completed", NOW - 7_200)],
    }
    more = {"Items": [entry(waiting[2].id, "open"), entry("c2", "completed")]}
    counted = [{"Count": 0} for _ in range(ENDED_RANGES)]
    counted[0] = {"Count": 40, "LastEvaluatedKey": {"pk": {"S": "job#c40"}}}
    aws = FakeAws(
        query=[*pages, more, *counted, {"Count": 2}],
        batch_get_item=[{"Responses": {"jobs": records}}],
        get_queue_attributes=DEPTH_REPLIES,
    )
    [found] = drive(_stats.stats(layout(), ["default"], NOW), aws)
    assert aws.operations == (
        ["query"] * (DEFAULT_SHARDS + 1)
        + ["batch_get_item"]
        + ["query"] * (ENDED_RANGES + 1)
        + ["query"]  # the workers' presence records: none
        + ["get_queue_attributes"] * 2
    )
    queries = [c for c in aws.calls if c.operation == "query"]
    assert {c.params["IndexName"] for c in queries} == {"by_queue"}
    assert queries[DEFAULT_SHARDS].params["ExclusiveStartKey"] == {"pk": {"S": "job#d1"}}
    asked = aws.calls[DEFAULT_SHARDS + 1].params["RequestItems"]["jobs"]["Keys"]
    assert sorted(key["pk"]["S"] for key in asked) == sorted(f"job#{j.id}" for j in waiting)
    presence = queries[-1].params["ExpressionAttributeValues"][":partition"]
    assert presence == {"S": "!workers"}
    # Each terminal status's partitions: counted, from the window's start only.
    ended = queries[DEFAULT_SHARDS + 1 : -1]
    assert all(c.params["Select"] == "COUNT" for c in ended)
    values = [c.params["ExpressionAttributeValues"] for c in ended]
    assert {v[":partition"]["S"].split("#", 2)[2] for v in values} == {
        "completed",
        "dead",
        "cancelled",
    }
    assert {v[":low"]["S"] for v in values} == {list_sk(NOW - _stats.ENDED_WINDOW, "")}
    assert ended[-1].params["ExclusiveStartKey"] == {"pk": {"S": "job#c40"}}
    assert {status: n for status, n in found.counts.items() if n} == {
        JobStatus.QUEUED: 1,
        JobStatus.RUNNING: 1,
        JobStatus.DELAYED: 1,
        JobStatus.CANCELLED: 42,  # the first ended range, sorted: cancelled#0, two pages
        JobStatus.COMPLETED: 1,  # c2; c0 was created before the window
        JobStatus.DEAD: 1,
    }
    assert found.ended_since == datetime.fromtimestamp(NOW - _stats.ENDED_WINDOW, UTC)
    assert (found.messages, found.in_flight, found.delayed, found.dead_letter_messages) == (
        4,
        5,
        6,
        7,
    )


def test_stats_also_counts_the_previous_layout_s_index_while_the_table_has_it() -> None:
    before = DEFAULT_SHARDS + ENDED_RANGES
    aws = FakeAws(
        query=[{"Items": []} for _ in range(DEFAULT_SHARDS)] + [{}] * ENDED_RANGES + [{"Count": 2}]
    )
    previous = layout()._replace(previous_index=True)
    [found] = drive(_stats.stats(previous, ["default"], NOW), aws)
    queries = [c for c in aws.calls if c.operation == "query"]
    assert len(queries) == before + 6 * DEFAULT_SHARDS + 1  # and the presence records'
    counted = queries[before:-1]
    assert {c.params["IndexName"] for c in counted} == {"by_status"}
    assert all(c.params["Select"] == "COUNT" for c in counted)
    assert sum(found.counts.values()) == 2  # the first (queued#0) range's count
    # Expired records are filtered where they can be: by_queue and terminal statuses,
    # and those count over the window only.
    expiring = {
        c.params["ExpressionAttributeValues"][":partition"]["S"].split("#")[0]
        for c in counted
        if ":now" in c.params["ExpressionAttributeValues"]
    }
    assert expiring == {"completed", "dead", "cancelled"}
    for call in counted:
        values = call.params["ExpressionAttributeValues"]
        recent = values[":partition"]["S"].split("#")[0] in expiring
        assert (values[":low"]["S"] != "default#") == recent
    assert all("FilterExpression" in c.params for c in queries[:DEFAULT_SHARDS])
    # Records by_queue also lists (record format 1) are counted there, not twice.
    assert all(
        c.params["FilterExpression"].endswith("attribute_not_exists(#list_sk)") for c in counted
    )


def test_a_queue_without_a_dlq_has_no_dead_letter_count() -> None:
    plain = Layout("jobs", {"default": URL}, {}, {"default": _sqs.QueueInfo(URL, None, None)})
    aws = FakeAws()
    [found] = drive(_stats.stats(plain, ["default"], NOW), aws)
    assert found.dead_letter_messages is None
    assert aws.operations.count("get_queue_attributes") == 1


def test_the_operator_values_are_exported_from_sqsjobs_aws() -> None:
    import sqsjobs.aws

    assert sqsjobs.aws.__all__ == sorted(sqsjobs.aws.__all__)
    assert {"DeadLetter", "QueueStats", "RedriveReport"} <= set(sqsjobs.aws.__all__)
