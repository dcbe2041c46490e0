"""The demo's (and ``sqsjobs emulator``'s) AWS: the emulator in this process, with
throwaway credentials and no noise.

The emulator accepts any credentials, but boto3 still wants some, and an operator's
profile must neither be needed nor be sent anywhere: for the demo's duration the
environment carries dummy keys and no profile. The emulator implements only part of
CloudFormation and says so while the templates deploy (a logged warning and a Python
warning per CloudWatch alarm). Those two notices, and only those, are silenced while the
demo runs; anything else it reports still shows.
"""

from __future__ import annotations

import logging
import os
import re
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from ..testing.emulator import local_aws

DEMO_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "demo",
    "AWS_SECRET_ACCESS_KEY": "demo",
    "AWS_SESSION_TOKEN": "demo",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}
# A profile the demo cannot use would be looked up before the keys above are.
DEMO_UNSET = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE")
EMULATOR_LOGGER = "moto"
UNSUPPORTED_LOG = re.compile(r"No Moto CloudFormation support for ")
UNSUPPORTED_WARNING = r"Tried to parse AWS::\S+ but it's not supported by moto"


def demo_stack_name() -> str:
    """Unique per run: the emulator's state lives as long as the process that started it."""
    return f"sqsjobs-demo-{uuid.uuid4().hex[:6]}"


@contextmanager
def emulated_aws(*, port: int = 0) -> Iterator[str]:
    """Start the emulator for the block (on ``port``, 0 for a free one); yields its URL."""
    with demo_environment(), quiet_emulator(), local_aws(port=port) as endpoint:
        yield endpoint


@contextmanager
def demo_environment() -> Iterator[None]:
    """Dummy credentials and no profile for the block; the environment is restored after."""
    names = (*DEMO_ENVIRONMENT, *DEMO_UNSET)
    saved = {name: os.environ.get(name) for name in names}
    for name in DEMO_UNSET:
        os.environ.pop(name, None)
    os.environ.update(DEMO_ENVIRONMENT)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class _DropUnsupported(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not UNSUPPORTED_LOG.match(str(record.msg))


@contextmanager
def quiet_emulator() -> Iterator[None]:
    """Silence the emulator's "not supported by CloudFormation" notices for the block."""
    logger = logging.getLogger(EMULATOR_LOGGER)
    drop = _DropUnsupported()
    logger.addFilter(drop)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=UNSUPPORTED_WARNING, category=UserWarning)
            yield
    finally:
        logger.removeFilter(drop)
