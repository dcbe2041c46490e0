"""Running the emulator leaves the process's botocore as it found it.

moto's import adds its mock's stubber to every botocore client the process makes.
``local_aws`` serves moto over HTTP and needs none of that, so a process that runs it
(a user's test session, the demo) keeps clients for real AWS exactly as they were, and
``mock_aws`` still works if the same process asks for it later. Each case runs in a
fresh interpreter: in this one moto was imported long ago.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def run(script: str) -> str:
    environment = {**os.environ, **CREDENTIALS, "AWS_DEFAULT_REGION": "eu-central-1"}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        environment.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_emulator_leaves_botocores_handlers_as_they_were() -> None:
    printed = run(
        """
        import boto3
        from botocore.handlers import BUILTIN_HANDLERS
        from sqsjobs.testing import local_aws

        before = list(BUILTIN_HANDLERS)
        with local_aws() as endpoint:
            sqs = boto3.client("sqs", endpoint_url=endpoint)
            sqs.create_queue(QueueName="mail-sends")
            print(len(sqs.list_queues()["QueueUrls"]))
        after = list(BUILTIN_HANDLERS)
        print(after == before)
        print(any(type(entry[1]).__module__.startswith("moto") for entry in after))
        """
    )
    assert printed.splitlines() == ["1", "True", "False"]


def test_mock_aws_still_works_in_a_process_that_ran_the_emulator() -> None:
    printed = run(
        """
        import boto3
        from sqsjobs.testing import local_aws

        with local_aws():
            pass
        from moto import mock_aws

        with mock_aws():
            sqs = boto3.client("sqs", region_name="eu-central-1")
            sqs.create_queue(QueueName="mocked")
            print(sqs.list_queues()["QueueUrls"][0].rsplit("/", 1)[1])
        """
    )
    assert printed == "mocked"


def test_a_process_that_imported_moto_first_keeps_its_stubber() -> None:
    printed = run(
        """
        import moto
        from botocore.handlers import BUILTIN_HANDLERS
        from sqsjobs.testing import local_aws

        before = list(BUILTIN_HANDLERS)
        with local_aws():
            pass
        print(list(BUILTIN_HANDLERS) == before)
        print(any(type(entry[1]).__name__ == "BotocoreStubber" for entry in BUILTIN_HANDLERS))
        """
    )
    assert printed.splitlines() == ["True", "True"]
