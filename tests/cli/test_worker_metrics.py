"""``sqsjobs worker --metrics``: a real worker process, scraped over HTTP or read on stdout."""

from __future__ import annotations

import signal
import socket
import urllib.request

import pytest

from sqsjobs import JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from tests.support.processes import ended

from ..support.emf import documents, totals
from .conftest import Env, invoke, wait_until
from .process import closed_port
from .test_worker import get, start_worker, stop


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        assert reply.status == 200
        text: str = reply.read().decode()
    return text


def scraped_or_empty(port: int) -> str:
    try:
        return scrape(port)
    except OSError:
        return ""  # not listening yet


@pytest.mark.slow
def test_the_prometheus_endpoint_counts_what_the_worker_ran(
    store: SqsJobStore, cli_env: Env
) -> None:
    producer = SyncJobQueue(store)
    jobs = [producer.enqueue("sleep", {"seconds": s}).job.id for s in (0.01, 0.02, 0.03)]
    noted = producer.enqueue("note", {"text": "zwölf"}).job.id
    port = closed_port()
    worker = start_worker(cli_env, "--metrics", "prometheus", "--metrics-port", str(port))
    try:
        wait_until(
            lambda: all(get(store, j).status is JobStatus.COMPLETED for j in [*jobs, noted]),
            what="the jobs to complete",
        )
        expected = 'sqsjobs_job_outcomes_total{job="sleep",outcome="completed",queue="default"} 3.0'
        wait_until(lambda: expected in scraped_or_empty(port), what="the scraped counts")
        text = scrape(port)
        log = stop(worker)
    finally:
        ended(worker)
    assert worker.returncode == 0, log
    assert 'sqsjobs_jobs_started_total{job="sleep",queue="default"} 3.0' in text
    assert 'sqsjobs_job_outcomes_total{job="note",outcome="completed",queue="default"} 1.0' in text
    assert 'sqsjobs_queue_wait_seconds_count{job="sleep",queue="default"} 3.0' in text
    assert (
        'sqsjobs_run_duration_seconds_count{job="sleep",outcome="completed",queue="default"}'
        in text
    )
    assert f"Prometheus metrics on port {port}" in log
    with pytest.raises(OSError):
        scrape(port)  # the endpoint went with the worker


@pytest.mark.slow
def test_emf_lines_go_to_stdout_and_logs_stay_on_stderr(store: SqsJobStore, cli_env: Env) -> None:
    producer = SyncJobQueue(store)
    job = producer.enqueue("sleep", {"seconds": 0.01}, tenant="acme").job.id
    env = {**cli_env, "SQSJOBS_METRICS": "emf", "SQSJOBS_METRICS_NAMESPACE": "Acme/Jobs"}
    worker = start_worker(env)
    try:
        wait_until(lambda: get(store, job).status is JobStatus.COMPLETED, what="the job")
        worker.send_signal(signal.SIGTERM)
        out, log = worker.communicate(timeout=30)
    finally:
        ended(worker)
    assert worker.returncode == 0, log
    docs = documents(out, namespace="Acme/Jobs")
    summed = totals(docs)
    assert {key: summed[key] for key in summed if key[2].startswith("Jobs")} == {
        ("default", "sleep", "JobsStarted"): 1,
        ("default", "sleep", "JobsCompleted"): 1,
    }
    [outcome] = [d for d in docs if "Outcome" in d]
    assert outcome["Outcome"] == "completed" and outcome["RunDuration"] >= 0.01
    assert '"_aws"' not in log  # logs stay on stderr, one record per line


def test_prometheus_on_a_port_in_use_is_bad_usage(cli_env: Env) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**cli_env, "SQSJOBS_METRICS": "prometheus", "SQSJOBS_METRICS_PORT": str(port)}
        result = invoke(env, "worker", "tests.cli.handlers:registry")
    assert result.exit_code == 2, result.output
    assert f"--metrics-port {port}" in result.output


def test_a_namespace_cloudwatch_would_not_take_is_bad_usage(cli_env: Env) -> None:
    env = {**cli_env, "SQSJOBS_METRICS": "emf", "SQSJOBS_METRICS_NAMESPACE": "Jöbs"}
    result = invoke(env, "worker", "tests.cli.handlers:registry")
    assert result.exit_code == 2, result.output
    assert "--metrics-namespace: Invalid metrics namespace 'Jöbs'" in result.output
