"""The blocking transport: boto3 clients, made on first use and shared by threads."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import boto3  # type: ignore[import-untyped]
import botocore.session  # type: ignore[import-untyped]
from botocore.config import Config  # type: ignore[import-untyped]
from botocore.exceptions import ClientError  # type: ignore[import-untyped]

from ..wire.protocol import Call, Reply, Service
from .endpoint import Endpoint
from .errors import NO_RESPONSE, SDK_FAILURES, from_aws, no_response, sdk_failure, translate
from .unreachable import limit_unreachable_retries

_models_lock = threading.Lock()
_models: list[Any] = []


def new_session(kind: Callable[[], Any] = botocore.session.Session) -> Any:
    """A fresh botocore session (own credentials and config) on the shared API models.

    Parsing the service models costs ~150 ms per session; they are immutable data, so
    every session in the process shares one loader and a new client costs ~20 ms.
    """
    session = kind()
    with _models_lock:
        if not _models:
            _models.append(botocore.session.get_session().get_component("data_loader"))
        session.register_component("data_loader", _models[0])
    return session


class BotoTransport:
    """Blocking ``send`` over boto3 clients, made on first use and shared by threads."""

    def __init__(self, endpoint: Endpoint) -> None:
        self._endpoint = endpoint
        self._clients: dict[Service, Any] = {}
        self._lock = threading.Lock()

    def client(self, service: Service) -> Any:
        with self._lock:
            client = self._clients.get(service)
            if client is None:
                session = self._endpoint.session or boto3.session.Session(
                    botocore_session=new_session(), region_name=self._endpoint.region_name
                )
                client = session.client(
                    service,
                    region_name=self._endpoint.region_name,
                    endpoint_url=self._endpoint.endpoint_url,
                    config=self._endpoint.merged(Config(**self._endpoint.client_options())),
                )
                limit_unreachable_retries(client, self._endpoint, None)
                self._clients[service] = client
            return client

    def __call__(self, call: Call) -> Reply:
        try:
            client = self.client(call.service)
            reply: Reply = getattr(client, call.operation)(**call.params)
        except ClientError as error:
            raise translate(error, call.operation) from None
        except NO_RESPONSE as error:
            raise no_response(error, call.operation) from None
        except SDK_FAILURES as error:
            raise sdk_failure(error, call.operation) from None
        return from_aws(reply, client.meta.endpoint_url, call.operation)

    def close(self) -> None:
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()
