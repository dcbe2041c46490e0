"""Where and how a store's AWS clients connect, shared by the boto3 and aiobotocore transports.

Two policies share one shape. A worker is patient: botocore's 60-second connect timeout
and five attempts ride out a network blip without dropping a job. An operator's command
(``sqsjobs jobs list``, a dashboard) wants the opposite: an endpoint that cannot be
reached should be reported within seconds, so it passes ``connect_timeout`` and
``max_attempts`` (``SqsJobStore(..., connect_timeout=2, max_attempts=2)``).

Under both, a connection that could not be made at all (refused, no such host, connect
timeout) is tried twice, not five times (``unreachable``): nothing was sent, and five
tries with backoff only made a dead endpoint take 9 to 18 s to report.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Any, NamedTuple

from ...core.validation import Span, integer, seconds

PATIENT_ATTEMPTS = 5  # botocore's standard mode: the first try and four retries
READ_TIMEOUT = 40.0  # leaves room for a 20-second long poll
CONNECT_TIMEOUT = Span(positive=True, maximum=READ_TIMEOUT, why="the read timeout")


class Endpoint(NamedTuple):
    """Where and how clients connect; ``None`` fields follow boto3's standard chain.

    ``connect_timeout`` (seconds) and ``max_attempts`` (tries per call, the first
    included): ``None`` keeps the patient defaults, botocore's 60 s and five attempts.
    Values from a caller go through ``checked`` (or ``of``), which refuses what botocore
    would misuse.
    """

    endpoint_url: str | None = None
    region_name: str | None = None
    connect_timeout: float | None = None
    max_attempts: int | None = None
    lean: bool = False  # the worker's hot calls past the SDK's per-call pipeline
    session: Any = None  # the caller's boto3.Session
    aio_session: Any = None  # the caller's AioSession (aiobotocore) or aioboto3.Session
    config: Any = None  # the caller's botocore Config

    @classmethod
    def checked(
        cls,
        endpoint_url: str | None = None,
        region_name: str | None = None,
        connect_timeout: float | None = None,
        max_attempts: int | None = None,
        lean: bool = False,
        session: Any = None,
        aio_session: Any = None,
        config: Any = None,
    ) -> Endpoint:
        """An endpoint from a caller's values, refused when botocore would misuse them."""
        if connect_timeout is not None:
            seconds(connect_timeout, "connect_timeout", CONNECT_TIMEOUT, code=None)
        if max_attempts is not None:
            integer(max_attempts, "max_attempts", minimum=1, maximum=10, code=None)
        if not isinstance(lean, bool):
            raise ValueError(f"lean must be True or False, got {lean!r}")
        _check_sdk_objects(session, aio_session, config)
        return cls(
            endpoint_url,
            region_name,
            connect_timeout,
            max_attempts,
            lean,
            session,
            aio_session,
            config,
        )

    @classmethod
    def of(cls, arguments: Mapping[str, Any]) -> Endpoint:
        """The endpoint that a store's keyword ``arguments`` describe (others ignored)."""
        return cls.checked(**{name: arguments[name] for name in cls._fields if name in arguments})

    def client_options(self) -> dict[str, Any]:
        """botocore ``Config`` options shared by the boto3 and aiobotocore clients.

        Standard-mode retries handle throttling and transient errors for every call.
        ``total_max_attempts`` counts the first try (botocore's ``max_attempts`` would
        count only the retries after it).
        """
        attempts = self.max_attempts or PATIENT_ATTEMPTS
        options: dict[str, Any] = {
            "retries": {"mode": "standard", "total_max_attempts": attempts},
            "max_pool_connections": 64,
            "read_timeout": READ_TIMEOUT,
            "parameter_validation": False,  # the store's own requests, checked by its tests
        }
        if self.connect_timeout is not None:
            options["connect_timeout"] = self.connect_timeout
        if not self._app_id_configured():
            options["user_agent"] = fixed_user_agent()
        return options

    def _app_id_configured(self) -> bool:
        """Whether the caller names an app id for the User-Agent, which only botocore's
        own header carries (a fixed ``user_agent`` would leave it out)."""
        configured = getattr(self.config, "user_agent_appid", None)
        return configured is not None or bool(os.environ.get("AWS_SDK_UA_APP_ID"))

    def merged(self, ours: Any) -> Any:
        """``ours`` (a ``Config`` of ``client_options``) with the caller's ``config`` over it."""
        return ours if self.config is None else ours.merge(self.config)


@functools.cache
def fixed_user_agent() -> str:
    """The User-Agent of every request, built once: botocore's legacy form (the SDK and
    Python releases, the OS) and this package's release.

    botocore builds its structured header anew for every request, twice (when the request
    is made and again after its handlers ran), which costs a worker more CPU per job than
    signing it. Its public ``Config(user_agent=...)`` option takes a fixed string instead;
    ``user_agent_extra`` of the caller's config and session still follow it.
    """
    import platform

    import botocore  # type: ignore[import-untyped]

    from ... import __version__

    python = f"Python/{platform.python_version()}"
    system = f"{platform.system()}/{platform.release()}"
    return f"Botocore/{botocore.__version__} {python} {system} sqsjobs/{__version__}"


def _package(value: object) -> str:
    return type(value).__module__.partition(".")[0]


def _async_session(value: object, boto3_session: type) -> bool:
    """An aioboto3 ``Session``, or aiobotocore's ``AioSession`` (a botocore ``Session``
    whose clients are async), told apart without importing either."""
    if _package(value) == "aioboto3":
        return isinstance(value, boto3_session)
    import botocore.session  # type: ignore[import-untyped]

    return isinstance(value, botocore.session.Session) and _package(value) == "aiobotocore"


def _check_sdk_objects(session: object, aio_session: object, config: object) -> None:
    """The caller's SDK objects, refused at construction when of the wrong kind."""
    if session is None and aio_session is None and config is None:
        return  # nothing to check, and no SDK to load for it
    import boto3  # type: ignore[import-untyped]
    from botocore.config import Config  # type: ignore[import-untyped]

    if session is not None and (
        not isinstance(session, boto3.Session) or _package(session) == "aioboto3"
    ):
        raise ValueError(
            f"session must be a boto3.Session, got {type(session).__name__}"
            " (an async session goes in aio_session)"
        )
    if aio_session is not None and not _async_session(aio_session, boto3.Session):
        kind = type(aio_session).__name__
        raise ValueError(
            f"aio_session must be an aiobotocore AioSession or an aioboto3.Session, got {kind}"
        )
    if config is not None and not isinstance(config, Config):
        raise ValueError(f"config must be a botocore.config.Config, got {type(config).__name__}")
