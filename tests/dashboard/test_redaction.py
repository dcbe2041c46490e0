"""``show_payloads=False`` hides all that can carry a payload's data, and ``error_redactor``.

An error's message often quotes what the handler was given (``card ending 4242``), and
an idempotency key is often built from the payload (``receipt:<email>:<month>``): with
payloads hidden, an error shows its exception class only and a key is not shown at all,
on every page, in text, attributes and titles alike. ``error_redactor`` lets a host
app decide what an error shows instead, with payloads shown or hidden.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from sqsjobs import EnqueueRequest, JobQueue, MemoryJobStore
from sqsjobs.contrib.dashboard import make_dashboard
from sqsjobs.contrib.dashboard._redact import Redaction

from .conftest import local
from .seed import CHARGE_FRAME, CHARGE_KEY, DECLINED, RECEIPT_KEY, Seeded

# What the seeded payloads, results, keys and error messages hold, and no page may show.
SECRETS = [
    "jörg@acme.example",
    "41.97",
    "msg-83c1",
    RECEIPT_KEY,
    CHARGE_KEY,
    "Zoë Ångström",
    "amount_cents",
    "ending 4242",
    "東京",
    "insufficient funds",
    "alert('payload')",
    "bold",
    'alert("error")',
    "alert(2)",
    '"older_than_days"',
    '"month"',
]


@pytest.fixture
def hidden(store: MemoryJobStore) -> Iterator[TestClient]:
    with local(make_dashboard(store, actions=True, show_payloads=False)) as made:
        yield made


def every_page(seeded: Seeded) -> list[str]:
    ids = [seeded.completed, seeded.dead, seeded.hostile, seeded.cancelled, *seeded.waiting]
    lists = ["/", "/jobs", "/jobs?status=dead", "/jobs?tenant=globex", "/dead", "/dead?queue=other"]
    return lists + [f"/jobs/{job_id}" for job_id in ids]


def test_hidden_payloads_leave_no_trace_of_them_on_any_page(
    hidden: TestClient, seeded: Seeded
) -> None:
    for url in every_page(seeded):
        page = hidden.get(url)
        assert page.status_code == 200, url
        shown = html.unescape(page.text) + str(page.headers)
        for secret in SECRETS:
            assert secret not in shown, (url, secret)


def test_the_same_pages_show_all_of_it_when_payloads_are_shown(
    acting: TestClient, seeded: Seeded
) -> None:
    """The sweep above is only worth something if these values are on the pages."""
    shown = "".join(html.unescape(acting.get(url).text) for url in every_page(seeded))
    for secret in SECRETS:
        assert secret in shown, secret


def test_a_hidden_error_shows_its_exception_class(hidden: TestClient, seeded: Seeded) -> None:
    dead = hidden.get(f"/jobs/{seeded.dead}").text
    assert '<pre class="error" id="last-error">PaymentDeclined</pre>' in dead
    assert 'id="error-hidden"' in dead
    listed = hidden.get("/dead").text
    assert '<td class="error">PaymentDeclined</td>' in listed
    assert '<td class="error">ValueError</td>' in listed
    jobs = hidden.get("/jobs", params={"status": "dead"}).text
    assert '<td class="error">ValueError</td>' in jobs


def test_a_hidden_idempotency_key_says_it_is_hidden(hidden: TestClient, seeded: Seeded) -> None:
    page = hidden.get(f"/jobs/{seeded.completed}").text
    assert '<dd id="idempotency-key" class="muted">hidden</dd>' in page
    waiting = hidden.get(f"/jobs/{seeded.waiting[0]}").text  # no key: nothing to hide
    assert '<dd id="idempotency-key">—</dd>' in waiting


def test_a_shown_idempotency_key_is_on_the_job_page(acting: TestClient, seeded: Seeded) -> None:
    page = acting.get(f"/jobs/{seeded.dead}").text
    assert f'<dd id="idempotency-key"><code>{CHARGE_KEY}</code></dd>' in page


async def failed_with(store: MemoryJobStore, error: str) -> str:
    """A job of ``store`` that failed for good with ``error``; its id."""
    job = (await JobQueue(store).enqueue("sync.ledger", {"ledger": "eu-7"}, max_attempts=1)).job
    claimed = await store.claim("default", "worker-3c9e", time.time(), limit=10, wait=0)
    token = next(found.lease_token for found in claimed if found.id == job.id)
    assert await store.fail(job.id, token or "", error, None, time.time())
    return job.id


async def test_an_error_not_in_exception_form_is_hidden_whole_unless_it_is_the_librarys() -> None:
    store = MemoryJobStore()
    own = await failed_with(store, "lease expired after final attempt")
    foreign = await failed_with(store, "charged Zoë twice for order 8841")
    with local(make_dashboard(store, show_payloads=False)) as client:
        mine = client.get(f"/jobs/{own}").text
        theirs = client.get(f"/jobs/{foreign}").text
    assert '<pre class="error" id="last-error">lease expired after final attempt</pre>' in mine
    assert "Zoë" not in theirs and "8841" not in theirs
    assert '<pre class="error" id="last-error">(message hidden)</pre>' in theirs


def mask_digits(text: str) -> str:
    return re.sub(r"\d{4}", "####", text)


def test_an_error_redactor_applies_with_payloads_shown(
    store: MemoryJobStore, seeded: Seeded
) -> None:
    with local(make_dashboard(store, error_redactor=mask_digits)) as client:
        page = client.get(f"/jobs/{seeded.dead}").text
        listed = client.get("/dead").text
    assert (
        "PaymentDeclined: card ending #### declined (東京 gateway said: insufficient funds)" in page
    )
    assert "ending 4242" not in page and "ending 4242" not in listed
    assert "&#34;customer&#34;: &#34;Zoë Ångström&#34;" in page  # the payload is still shown
    assert 'id="error-hidden"' not in page


def test_an_error_redactor_decides_what_a_hidden_error_shows(
    store: MemoryJobStore, seeded: Seeded
) -> None:
    seen: list[str] = []

    def first_clause(text: str) -> str:
        seen.append(text)
        return text.split(" (")[0]

    app = make_dashboard(store, show_payloads=False, error_redactor=first_clause)
    with local(app) as client:
        page = client.get(f"/jobs/{seeded.dead}").text
    assert (
        '<pre class="error" id="last-error">PaymentDeclined: card ending 4242 declined</pre>'
        in page
    )
    assert 'id="payload-hidden"' in page and "&#34;customer&#34;" not in page  # still hidden
    assert seen == [
        DECLINED,  # the failed attempt's in the history
        DECLINED,  # the last error, then each message of its traceback
        "billing.gateway.GatewayError: declined for jörg@acme.example\n"
        "  detail: amount 41.97 over the limit of Zoë Ångström's card",
        DECLINED,
    ]


def test_a_hidden_traceback_shows_its_frames_and_each_exceptions_class(
    hidden: TestClient, seeded: Seeded
) -> None:
    page = html.unescape(hidden.get(f"/jobs/{seeded.dead}").text)
    trace = page.split('id="traceback">', 1)[1].split("</pre>", 1)[0]
    assert trace.split("\n") == [
        "Traceback (most recent call last):",
        CHARGE_FRAME,
        "    receipt = gateway.capture(payload.card, payload.total)",
        "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "billing.gateway.GatewayError",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        '  File "/srv/app/billing/charge.py", line 91, in charge_card',
        "    raise PaymentDeclined(str(error)) from error",
        "PaymentDeclined",
    ]


def test_a_traceback_cut_inside_a_message_leaves_the_cut_rest_out() -> None:
    cut = "Traceback (most recent call last):\n  … 40 lines left out …\n  detail: Zoë's card\nE: x"
    shown = Redaction(show_payloads=False, error_redactor=None).traceback(cut)
    assert shown == "Traceback (most recent call last):\n  … 40 lines left out …\nE"


def test_make_dashboard_refuses_an_error_redactor_that_cannot_be_called(
    store: MemoryJobStore,
) -> None:
    with pytest.raises(TypeError, match="error_redactor must be a callable"):
        make_dashboard(store, error_redactor="mask")  # type: ignore[arg-type]


def test_a_redactor_that_returns_no_text_fails_loudly(
    store: MemoryJobStore, seeded: Seeded
) -> None:
    app = make_dashboard(store, error_redactor=lambda text: None)  # type: ignore[arg-type,return-value]
    with local(app) as client, pytest.raises(TypeError, match="error_redactor returned None"):
        client.get(f"/jobs/{seeded.dead}")


async def test_labels_show_escaped_and_hide_with_the_payloads() -> None:
    store = MemoryJobStore()
    labels = {"team": "billing", "Quelle": "<b>Import 7 ü</b>"}
    job = (await JobQueue(store).enqueue("sync.ledger", None, labels=labels)).job
    with local(make_dashboard(store)) as shown:
        page = shown.get(f"/jobs/{job.id}").text
    assert (
        '<dd id="labels"><code>Quelle=&lt;b&gt;Import 7 ü&lt;/b&gt;</code> '
        "<code>team=billing</code></dd>"
    ) in page
    with local(make_dashboard(store, show_payloads=False)) as hidden:
        page = hidden.get(f"/jobs/{job.id}").text
    assert '<dd id="labels" class="muted">2 hidden</dd>' in page and "billing" not in page


async def test_progress_shows_escaped_and_hides_with_the_payloads() -> None:
    store = MemoryJobStore()
    queue = JobQueue(store)
    job = (await queue.enqueue("sync.ledger", None)).job
    [claimed] = await store.claim("default", "w1", queue.clock())
    progress = {"stage": "</code><script>alert(1)</script>", "done": 42}
    now = queue.clock()
    assert await store.heartbeat(
        job.id, claimed.lease_token or "", now + 30, now, progress=progress
    )
    with local(make_dashboard(store)) as shown:
        page = shown.get(f"/jobs/{job.id}").text
    assert '<dd id="progress"><code>{"done": 42, "stage": ' in page
    assert "<script>alert" not in page  # tojson escapes <, > and & for HTML
    with local(make_dashboard(store, show_payloads=False)) as hidden:
        page = hidden.get(f"/jobs/{job.id}").text
    assert '<dd id="progress" class="muted">hidden</dd>' in page and "stage" not in page


async def test_a_job_with_parents_links_each_one() -> None:
    store = MemoryJobStore()
    queue = JobQueue(store)
    parents = [(await queue.enqueue("ledger.extract", delay=60)).job for _ in range(2)]
    child = (await queue.enqueue("ledger.load", None, after=[p.id for p in parents])).job
    with local(make_dashboard(store)) as shown:
        page = shown.get(f"/jobs/{child.id}").text
    for parent in parents:
        assert f'<a href="/jobs/{parent.id}"><code>{parent.id}</code></a>' in page
    with local(make_dashboard(store)) as shown:
        parent_page = shown.get(f"/jobs/{parents[0].id}").text
    assert f'<dd id="children"><a href="/jobs/{child.id}"><code>{child.id}</code></a></dd>' in (
        parent_page
    )
    assert '<span class="status status-waiting">waiting</span>' in page


async def test_a_batch_page_shows_how_far_it_has_come_and_its_callbacks() -> None:
    store = MemoryJobStore()
    queue = JobQueue(store)
    batch = await queue.batch(
        [EnqueueRequest("invoice.render", {"n": n}) for n in range(4)],
        on_complete=EnqueueRequest("invoice.summary", queue="other"),
    )
    [first, *_] = await store.claim("default", "w1", queue.clock(), limit=4)
    assert await store.complete(first.id, first.lease_token or "", queue.clock(), None)
    with local(make_dashboard(store)) as shown:
        page = shown.get(f"/batches/{batch.id}").text
        member = shown.get(f"/jobs/{first.id}").text
        missing = shown.get("/batches/no-such-batch")
    assert '<progress max="4" value="1"></progress> 1 of 4 jobs ended' in page
    assert '<dd id="batch-completed">1</dd>' in page and '<dd id="batch-open">3</dd>' in page
    [callback] = batch.callback_ids
    assert f'<a href="/jobs/{callback}"><code>{callback}</code></a>' in page
    assert f'<a href="/batches/{batch.id}"><code>{batch.id}</code></a>' in member
    assert missing.status_code == 404 and "No such batch" in missing.text
