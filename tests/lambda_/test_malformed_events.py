"""make_lambda_handler given events Lambda's SQS event source mapping never sends.

Another service's event, or no SQS event at all, is a wiring mistake: it is refused with a
``JobConfigError`` naming what came, before any AWS request. Within an SQS event, a bad
record is skipped without stopping the batch or losing a job, and only what a retry can
help is named in ``batchItemFailures``. Records are the emulator's own messages, received
as Lambda's poller receives them, wherever the test needs a real id, handle or ARN; those
made up (another account's queue, the filler of a full batch) have Lambda's shape.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sqsjobs import Backoff, JobConfigError, JobContext, JobError, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_lambda_handler
from sqsjobs.aws.wire.sqs import body
from sqsjobs.testing import RequestCounts

from ..aws.emulator import COUNTER
from .conftest import Context, receive_event

ACCOUNT = "123456789012"
SQS_EXPECTED = "takes SQS events ({'Records': [...]}, each record with eventSource 'aws:sqs'"


def depths(sqs: Any, url: str) -> dict[str, int]:
    names = [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
    ]
    got = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    return {name.removeprefix("ApproximateNumberOf"): int(got[name]) for name in names}


def queue_arn(sqs: Any, url: str) -> str:
    reply = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
    return str(reply["Attributes"]["QueueArn"])


def sqs_record(body_text: str, arn: str) -> dict[str, Any]:
    """A record as Lambda writes it, for a message the test did not send itself."""
    sent = int(time.time() * 1000) - 1_250
    return {
        "messageId": str(uuid.uuid4()),
        "receiptHandle": "AQEB" + base64.b64encode(os.urandom(180)).decode(),
        "body": body_text,
        "attributes": {
            "ApproximateReceiveCount": "1",
            "SentTimestamp": str(sent),
            "SenderId": "AROAIWPX5BD2BHG722MW4:app-producer",
            "ApproximateFirstReceiveTimestamp": str(sent + 40),
        },
        "messageAttributes": {},
        "md5OfBody": "0f1f3e3c5e8f5b1a2d7c9e4b6a8d0c2e",
        "eventSource": "aws:sqs",
        "eventSourceARN": arn,
        "awsRegion": "eu-west-1",
    }


def without(field: str) -> Callable[[dict[str, Any]], object]:
    return lambda record: {k: v for k, v in record.items() if k != field}


def replaced(field: str, value: object) -> Callable[[dict[str, Any]], object]:
    return lambda record: {**record, field: value}


def malformed_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.__dict__.get("event") == "jobs.malformed_message"]


@pytest.fixture
def aws_requests() -> Iterator[Callable[[], RequestCounts]]:
    """The AWS requests the emulator served since the test asked for this."""
    before = COUNTER.counts()
    yield lambda: COUNTER.counts() - before


# -- events that are not SQS events -----------------------------------------------------------

S3_PUT = {
    "Records": [
        {
            "eventVersion": "2.1",
            "eventSource": "aws:s3",
            "awsRegion": "eu-west-1",
            "eventTime": "2025-03-14T09:26:53.589Z",
            "eventName": "ObjectCreated:Put",
            "userIdentity": {"principalId": "AWS:AIDAJDPLRKLG7UEXAMPLE"},
            "requestParameters": {"sourceIPAddress": "203.0.113.17"},
            "responseElements": {
                "x-amz-request-id": "C3D13FE58DE4C810",
                "x-amz-id-2": "FMyUVURIY8/IgAtTv8xRjskZQpcIZ9KG4V5Wp6S7S/JRWeUWerMUE5JgHvANOjpD",
            },
            "s3": {
                "s3SchemaVersion": "1.0",
                "configurationId": "invoices-uploaded",
                "bucket": {
                    "name": "acme-invoices-prod",
                    "ownerIdentity": {"principalId": "A3NL1KOZZKExample"},
                    "arn": "arn:aws:s3:::acme-invoices-prod",
                },
                "object": {
                    "key": "2025/03/rechnung-zo%C3%AB-4711.pdf",
                    "size": 48213,
                    "eTag": "d41d8cd98f00b204e9800998ecf8427e",
                    "sequencer": "0055AED6DCD90281E5",
                },
            },
        }
    ]
}
SNS_NOTIFICATION = {
    "Records": [
        {
            "EventVersion": "1.0",
            "EventSubscriptionArn": (
                f"arn:aws:sns:eu-west-1:{ACCOUNT}:order-events:2bcfbf39-05c3-41de-beaa-fcfcc21c8f55"
            ),
            "EventSource": "aws:sns",
            "Sns": {
                "SignatureVersion": "1",
                "Timestamp": "2025-03-14T09:27:01.000Z",
                "Signature": "EXAMPLEpH+DcEwjAPg8O9mY8dReBSwksfg2S7WKQcikcNKWLQjwu6A4Vbe",
                "SigningCertUrl": "https://sns.eu-west-1.amazonaws.com/SimpleNotificationService.pem",
                "MessageId": "95df01b4-ee98-5cb9-9903-4c221d41eb5e",
                "Message": '{"order": 4711, "status": "versandt", "kunde": "Zoë Müller"}',
                "MessageAttributes": {},
                "Type": "Notification",
                "UnsubscribeUrl": "https://sns.eu-west-1.amazonaws.com/?Action=Unsubscribe",
                "TopicArn": f"arn:aws:sns:eu-west-1:{ACCOUNT}:order-events",
                "Subject": "Bestellung versandt",
            },
        }
    ]
}
API_GATEWAY_REST = {
    "resource": "/orders/{id}",
    "path": "/orders/4711",
    "httpMethod": "POST",
    "headers": {"content-type": "application/json", "user-agent": "curl/8.5.0"},
    "multiValueHeaders": {"content-type": ["application/json"]},
    "queryStringParameters": None,
    "pathParameters": {"id": "4711"},
    "stageVariables": None,
    "requestContext": {
        "resourceId": "2gxmpl",
        "resourcePath": "/orders/{id}",
        "httpMethod": "POST",
        "requestId": "e6a7d2b4-5b0c-4f0e-9d5a-1c2b3d4e5f60",
        "accountId": ACCOUNT,
        "stage": "prod",
        "apiId": "1234567890",
    },
    "body": '{"note": "bitte schnell 🚚"}',
    "isBase64Encoded": False,
}
API_GATEWAY_HTTP = {
    "version": "2.0",
    "routeKey": "POST /orders",
    "rawPath": "/orders",
    "rawQueryString": "",
    "headers": {"content-type": "application/json"},
    "requestContext": {
        "accountId": ACCOUNT,
        "apiId": "r3pmxmplak",
        "http": {"method": "POST", "path": "/orders", "protocol": "HTTP/1.1"},
        "requestId": "JKJaXmPLvHcESHA=",
        "routeKey": "POST /orders",
        "stage": "$default",
        "timeEpoch": 1741944413000,
    },
    "body": '{"order": 4711}',
    "isBase64Encoded": False,
}
EVENTBRIDGE_SCHEDULE = {
    "version": "0",
    "id": "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa",
    "detail-type": "Scheduled Event",
    "source": "aws.events",
    "account": ACCOUNT,
    "time": "2025-03-14T09:30:00Z",
    "region": "eu-west-1",
    "resources": [f"arn:aws:events:eu-west-1:{ACCOUNT}:rule/app-reconcile"],
    "detail": {},
}
DYNAMODB_STREAM = {
    "Records": [
        {
            "eventID": "c4ca4238a0b923820dcc509a6f75849b",
            "eventName": "INSERT",
            "eventVersion": "1.1",
            "eventSource": "aws:dynamodb",
            "awsRegion": "eu-west-1",
            "dynamodb": {"Keys": {"pk": {"S": "order#4711"}}, "SequenceNumber": "4421584500000"},
            "eventSourceARN": (
                f"arn:aws:dynamodb:eu-west-1:{ACCOUNT}:table/orders/stream/2025-03-14T00:00:00.000"
            ),
        }
    ]
}


@pytest.mark.parametrize(
    ("event", "described"),
    [
        pytest.param(S3_PUT, "an event whose records come from 'aws:s3'", id="s3"),
        pytest.param(SNS_NOTIFICATION, "an event whose records come from 'aws:sns'", id="sns"),
        pytest.param(DYNAMODB_STREAM, "records come from 'aws:dynamodb'", id="dynamodb-stream"),
        pytest.param(
            API_GATEWAY_REST, "an API Gateway request ('POST /orders/4711')", id="api-gateway"
        ),
        pytest.param(API_GATEWAY_HTTP, "an API Gateway request ('POST /orders')", id="http-api"),
        pytest.param(
            EVENTBRIDGE_SCHEDULE,
            "an EventBridge event (source 'aws.events', detail-type 'Scheduled Event') (a "
            "schedule is for make_reconcile_handler or make_cron_handler)",
            id="eventbridge-schedule",
        ),
        pytest.param({}, "an empty object", id="empty-object"),
        pytest.param(
            {"order": 4711, "kunde": "Zoë"},
            "an object with keys 'order', 'kunde' and no 'Records'",
            id="another-object",
        ),
        pytest.param({"Records": None}, "an object whose 'Records' is None", id="records-null"),
        pytest.param(
            {"Records": "[]"}, "an object whose 'Records' is a str, not a list", id="records-text"
        ),
        pytest.param(
            {"Records": {"0": {"messageId": "m"}}},
            "an object whose 'Records' is a dict, not a list",
            id="records-object",
        ),
        pytest.param(None, "it got None.", id="null"),
        pytest.param('{"Records": []}', "it got a str.", id="json-text"),
        pytest.param([], "it got a list.", id="bare-list"),
    ],
)
def test_an_event_that_is_no_sqs_event_is_refused_before_any_request(
    store: SqsJobStore,
    aws_requests: Callable[[], RequestCounts],
    event: Any,
    described: str,
) -> None:
    handler = make_lambda_handler({"invoice.send": lambda ctx: None}, store=store)
    with pytest.raises(JobConfigError) as refused:
        handler(event, Context())
    assert refused.value.code == "invalid_event"
    assert SQS_EXPECTED in str(refused.value)  # what is expected
    assert described in str(refused.value)  # and what came
    assert aws_requests() == RequestCounts.none()


def test_the_records_of_an_sqs_event_handed_over_bare_are_refused_and_not_lost(
    store: SqsJobStore, sqs: Any, aws_requests: Callable[[], RequestCounts]
) -> None:
    """``handler(event["Records"], context)``, a wrapper's slip: a list, not an event."""
    queue = SyncJobQueue(store)
    job = queue.enqueue("invoice.send", {"invoice": "RE-2025-0042"}).job
    event = receive_event(sqs, store.queue_urls["default"], 1)
    handler = make_lambda_handler({"invoice.send": lambda ctx: "sent"}, store=store)
    counted = aws_requests()
    with pytest.raises(JobConfigError, match="it got a list"):
        handler(event["Records"], Context())
    assert aws_requests() - counted == RequestCounts.none()
    assert handler(event, Context()) == {"batchItemFailures": []}  # the same event, whole
    done = queue.get(job.id)
    assert done is not None and done.status is JobStatus.COMPLETED


def test_an_sqs_record_among_another_sources_makes_the_whole_event_refused(
    store: SqsJobStore, sqs: Any, aws_requests: Callable[[], RequestCounts]
) -> None:
    queue = SyncJobQueue(store)
    job = queue.enqueue("invoice.send", {"invoice": "RE-2025-0043"}).job
    event = receive_event(sqs, store.queue_urls["default"], 1)
    mixed = {"Records": [*event["Records"], *S3_PUT["Records"]]}
    handler = make_lambda_handler({"invoice.send": lambda ctx: "sent"}, store=store)
    counted = aws_requests()
    with pytest.raises(JobConfigError, match="records come from 'aws:s3'"):
        handler(mixed, Context())
    assert aws_requests() - counted == RequestCounts.none()
    waiting = queue.get(job.id)
    assert waiting is not None and (waiting.status, waiting.attempts) == (JobStatus.QUEUED, 0)


def test_a_record_from_another_stores_queue_refuses_the_event_before_any_request(
    store: SqsJobStore, sqs: Any, aws_requests: Callable[[], RequestCounts]
) -> None:
    """The function is mapped to a queue this store lacks: its messages are not ours to
    delete, so nothing of the event is run and Lambda sees an error."""
    queue = SyncJobQueue(store)
    job = queue.enqueue("invoice.send", {"invoice": "RE-2025-0044"}).job
    event = receive_event(sqs, store.queue_urls["default"], 1)
    other = f"arn:aws:sqs:eu-west-1:{ACCOUNT}:billing-prod-default"
    event["Records"].append(sqs_record(body(job.id, "default"), other))
    handler = make_lambda_handler({"invoice.send": lambda ctx: "sent"}, store=store)
    counted = aws_requests()
    with pytest.raises(JobConfigError) as refused:
        handler(event, Context())
    assert aws_requests() - counted == RequestCounts.none()
    assert isinstance(refused.value, JobError) and refused.value.code == "invalid_event"
    assert f"Event record from {other!r}: this store's queues are" in str(refused.value)
    assert store.queue_urls["default"].rsplit("/", 1)[-1] in str(refused.value)
    waiting = queue.get(job.id)
    assert waiting is not None and (waiting.status, waiting.attempts) == (JobStatus.QUEUED, 0)


def test_an_empty_records_list_is_an_empty_batch(
    store: SqsJobStore, aws_requests: Callable[[], RequestCounts]
) -> None:
    handler = make_lambda_handler({"invoice.send": lambda ctx: None}, store=store)
    assert handler({"Records": []}, Context()) == {"batchItemFailures": []}
    assert aws_requests() == RequestCounts.none()


# -- bad records inside an SQS event ----------------------------------------------------------

Spoil = Callable[[dict[str, Any]], object]
# How a record can be spoilt, and what the log then says of it.
SPOILS: list[tuple[str, Spoil, str]] = [
    ("record-as-json-text", json.dumps, "not an object (a str)"),
    ("record-null", lambda r: None, "not an object (None)"),
    ("record-as-pairs", lambda r: list(r.items()), "not an object (a list)"),
    ("no-messageId", without("messageId"), "messageId missing"),
    ("numeric-messageId", replaced("messageId", 4711), "messageId missing"),
    ("no-receiptHandle", without("receiptHandle"), "receiptHandle missing"),
    ("empty-handle", replaced("receiptHandle", ""), "receiptHandle missing"),
    ("no-body", without("body"), "body missing"),
    ("null-body", replaced("body", None), "body missing"),
    ("empty-body", replaced("body", ""), "body missing, empty or not a string"),
    ("no-eventSourceARN", without("eventSourceARN"), "eventSourceARN missing"),
    (
        "sns-topic-arn",
        replaced("eventSourceARN", f"arn:aws:sns:eu-west-1:{ACCOUNT}:order-events"),
        "eventSourceARN is not an SQS queue's ARN",
    ),
]


@pytest.mark.parametrize(
    ("spoil", "reason"), [pytest.param(spoil, why, id=name) for name, spoil, why in SPOILS]
)
def test_a_malformed_record_is_skipped_and_the_rest_of_the_batch_runs(
    store: SqsJobStore,
    sqs: Any,
    caplog: pytest.LogCaptureFixture,
    spoil: Spoil,
    reason: str,
) -> None:
    """Nothing is done with the bad record (its job stays queued for the message to bring
    back), it is not named (a retry of the same record cannot mend it), and the log says
    which record it was and why."""
    queue = SyncJobQueue(store)
    url = store.queue_urls["default"]
    spoiled = queue.enqueue("report.render", {"report": "Q1 — Umsätze, Zürich"}).job
    good = queue.enqueue("report.render", {"report": "Q2 — Überblick"}).job
    event = receive_event(sqs, url, 2)
    records = event["Records"]
    [index] = [i for i, r in enumerate(records) if spoiled.id in r["body"]]
    message_id = records[index]["messageId"]
    records[index] = spoil(records[index])
    handler = make_lambda_handler({"report.render": lambda ctx: "rendered"}, store=store)
    with caplog.at_level(logging.WARNING, logger="sqsjobs"):
        assert handler(event, Context()) == {"batchItemFailures": []}
    done, kept = queue.get(good.id), queue.get(spoiled.id)
    assert done is not None and done.status is JobStatus.COMPLETED
    assert kept is not None and (kept.status, kept.attempts) == (JobStatus.QUEUED, 0)
    assert depths(sqs, store.dead_letter_queue_urls["default"])["Messages"] == 0
    [warning] = malformed_warnings(caplog)
    assert warning.levelno == logging.WARNING and warning.__dict__["skipped"] == 1
    text = warning.getMessage()
    assert "Skipped 1 of 2 event record(s)" in text and reason in text
    spoilt = records[index]
    named = isinstance(spoilt, dict) and isinstance(spoilt.get("messageId"), str)
    assert (repr(message_id) if named else f"#{index}") in text  # which record it was


def test_a_malformed_record_in_a_fifo_batch_does_not_hold_the_records_after_it(
    fifo_store: SqsJobStore, sqs: Any
) -> None:
    store = fifo_store
    queue = SyncJobQueue(store)
    jobs = [queue.enqueue("ledger.post", {"n": n}, tenant="kunde-42").job for n in range(3)]
    ran: list[int] = []

    def post(ctx: JobContext) -> None:
        ran.append(ctx.payload["n"])

    event = receive_event(sqs, store.queue_urls["default"], 3)
    del event["Records"][1]["receiptHandle"]
    handler = make_lambda_handler({"ledger.post": post}, store=store)
    assert handler(event, Context()) == {"batchItemFailures": []}
    assert ran == [0, 2]
    statuses = [j.status for j in map(queue.get, [job.id for job in jobs]) if j]
    assert statuses == [JobStatus.COMPLETED, JobStatus.QUEUED, JobStatus.COMPLETED]


@pytest.mark.parametrize(
    "attributes",
    [
        pytest.param(None, id="missing"),
        pytest.param("ApproximateReceiveCount=1", id="text"),
        pytest.param({"ApproximateReceiveCount": "many"}, id="count-unreadable"),
        pytest.param({"ApproximateReceiveCount": "1", "SentTimestamp": "gestern"}, id="sent-text"),
        pytest.param(
            {"ApproximateReceiveCount": 1, "SentTimestamp": int(time.time() * 1000)},
            id="numbers-not-text",
        ),
    ],
)
def test_unreadable_attributes_run_the_job_and_a_retry_comes_back_as_a_fresh_message(
    store: SqsJobStore, sqs: Any, attributes: object
) -> None:
    """The record's history is unknown, so its message may be near its receive limit or
    its retention: the retry re-sends a fresh message instead of hiding this one."""
    queue = SyncJobQueue(store)
    url = store.queue_urls["default"]
    job = queue.enqueue("sync.crm", {"contact": "Zoë Ångström"}).job

    def flaky(ctx: JobContext) -> None:
        raise ConnectionError("CRM antwortet nicht")

    event = receive_event(sqs, url, 1)
    [record] = event["Records"]
    if attributes is None:
        del record["attributes"]
    else:
        record["attributes"] = (
            {**record["attributes"], **attributes} if isinstance(attributes, dict) else attributes
        )
    backoff = Backoff(base=60.0, max=60.0, random=lambda: 1.0)
    handler = make_lambda_handler({"sync.crm": flaky}, store=store, backoff=backoff)
    assert handler(event, Context()) == {
        "batchItemFailures": [{"itemIdentifier": record["messageId"]}]
    }
    failed = queue.get(job.id)
    assert failed is not None and (failed.status, failed.attempts) == (JobStatus.DELAYED, 1)
    assert depths(sqs, url) == {"Messages": 0, "MessagesNotVisible": 0, "MessagesDelayed": 1}


def test_readable_attributes_hide_the_retried_message_instead(store: SqsJobStore, sqs: Any) -> None:
    """The counterpart of the test above: a known, young history keeps the one message."""
    queue = SyncJobQueue(store)
    url = store.queue_urls["default"]
    queue.enqueue("sync.crm", {"contact": "Zoë Ångström"})

    def flaky(ctx: JobContext) -> None:
        raise ConnectionError("CRM antwortet nicht")

    event = receive_event(sqs, url, 1)
    backoff = Backoff(base=60.0, max=60.0, random=lambda: 1.0)
    handler = make_lambda_handler({"sync.crm": flaky}, store=store, backoff=backoff)
    assert len(handler(event, Context())["batchItemFailures"]) == 1
    assert depths(sqs, url) == {"Messages": 0, "MessagesNotVisible": 1, "MessagesDelayed": 0}


FOREIGN_BODIES = [
    # An S3 notification sent to the queue by a misconfigured bucket.
    json.dumps({"Records": [{"eventSource": "aws:s3", "s3": {"object": {"key": "a.pdf"}}}]}),
    # An SNS envelope (a subscription without raw delivery).
    json.dumps(
        {
            "Type": "Notification",
            "MessageId": "95df01b4-ee98-5cb9-9903-4c221d41eb5e",
            "TopicArn": f"arn:aws:sns:eu-west-1:{ACCOUNT}:order-events",
            "Message": '{"order": 4711}',
        }
    ),
    '{"v": 2, "id": "0f3c9a7e5b1d4c2e8a6f0b9d7c5e3a1f", "queue": "reports"}',  # another queue's
    '{"v": 3, "id": "0f3c9a7e5b1d4c2e8a6f0b9d7c5e3a1f", "queue": "default"}',  # a newer version
    "[4711, 4712]",
    "null",
    '{"order": 4711, "kunde": "Zoë',  # cut off: not JSON
    "Bestellung #4711 für Zoë Müller: drei Kaffee ☕, Lieferung 🚚 Zürich",
    "注文 #4711 を発送しました",
    "   ",
]


def test_bodies_that_are_not_ours_go_to_the_dead_letter_queue_and_are_not_named(
    store: SqsJobStore, sqs: Any, caplog: pytest.LogCaptureFixture
) -> None:
    queue = SyncJobQueue(store)
    url = store.queue_urls["default"]
    job = queue.enqueue("invoice.send", {"invoice": "RE-2025-0045"}).job
    for text in FOREIGN_BODIES:
        sqs.send_message(QueueUrl=url, MessageBody=text)
    event = receive_event(sqs, url, len(FOREIGN_BODIES) + 1)
    handler = make_lambda_handler({"invoice.send": lambda ctx: "sent"}, store=store)
    with caplog.at_level(logging.WARNING, logger="sqsjobs"):
        assert handler(event, Context()) == {"batchItemFailures": []}
    done = queue.get(job.id)
    assert done is not None and done.status is JobStatus.COMPLETED
    copies: list[str] = []
    while len(copies) < len(FOREIGN_BODIES):
        reply = sqs.receive_message(
            QueueUrl=store.dead_letter_queue_urls["default"],
            MaxNumberOfMessages=10,
            WaitTimeSeconds=1,
        )
        copies += [m["Body"] for m in reply.get("Messages", [])]
    assert sorted(copies) == sorted(FOREIGN_BODIES)  # each exactly as sent, unicode and all
    assert len(malformed_warnings(caplog)) == len(FOREIGN_BODIES)


# -- a batch of the largest size Lambda sends -------------------------------------------------

LAMBDA_MAX_BATCH = 10_000


def test_a_batch_of_ten_thousand_mixed_records_runs_ours_and_names_only_retries(
    store: SqsJobStore, sqs: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Sixty of our jobs (ten of them failing), forty foreign bodies and malformed records
    of every kind up to Lambda's largest batch: one answer, in seconds, naming exactly the
    ten retries, with one log line for every skipped record."""
    queue = SyncJobQueue(store)
    url = store.queue_urls["default"]
    jobs = [
        queue.enqueue("thumbnail.make", {"photo": f"urlaub-{n:02d}-é.jpg"}).job for n in range(60)
    ]
    for n in range(40):
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"order": n, "kunde": "Zoë"}))
    received = receive_event(sqs, url, 100)["Records"]
    arn = queue_arn(sqs, url)
    template = sqs_record(body(jobs[0].id, "default"), arn)
    records: list[object] = list(received)
    while len(records) < LAMBDA_MAX_BATCH:
        fresh = {**template, "messageId": str(uuid.uuid4())}
        records.insert(
            len(records) * 7919 % (len(records) + 1), SPOILS[len(records) % len(SPOILS)][1](fresh)
        )
    failing = {job.id for job in jobs[::6]}

    def make(ctx: JobContext) -> str:
        if ctx.job.id in failing:
            raise TimeoutError("image service busy")
        return "thumb.webp"

    handler = make_lambda_handler(
        {"thumbnail.make": make}, store=store, backoff=Backoff(base=60.0, max=60.0)
    )
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="sqsjobs"):
        reply = handler({"Records": records}, Context(remaining_ms=300_000))
    elapsed = time.monotonic() - started
    assert elapsed < 60.0, f"answered in {elapsed:.1f}s"
    named = [item["itemIdentifier"] for item in reply["batchItemFailures"]]
    expected = [r["messageId"] for r in received if json.loads(r["body"]).get("id") in failing]
    assert sorted(named) == sorted(expected) and len(named) == 10
    statuses = [j.status for j in map(queue.get, [job.id for job in jobs]) if j]
    assert statuses.count(JobStatus.COMPLETED) == 50 and statuses.count(JobStatus.DELAYED) == 10
    assert depths(sqs, store.dead_letter_queue_urls["default"])["Messages"] == 40
    [summary] = [r for r in malformed_warnings(caplog) if "skipped" in r.__dict__]
    assert summary.__dict__["skipped"] == LAMBDA_MAX_BATCH - 100
    assert summary.getMessage().startswith("Skipped 9900 of 10000 event record(s)")
    assert len(summary.getMessage()) < 4000  # the first few of each kind, not 9,900 ids
