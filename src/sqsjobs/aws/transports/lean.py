"""The worker's hot requests, sent by botocore's own parts without its per-call pipeline.

A claim and its outcome cost two DynamoDB ``UpdateItem``s and a share of SQS receives
and deletes, and aiobotocore spends most of a worker's CPU on each of them before any
byte leaves: about a dozen hook events, parameter validation, endpoint rules, a
user-agent string rebuilt from scratch, shape-driven serialization and parsing. For the
JSON-protocol operations in ``LEAN``, the request is the operation's parameters as JSON
(botocore's serializer writes the same document for them), so ``LeanSender`` sends it
with the client's own parts:

- where and how: the first call of each operation (and table) goes through the client
  as usual, and its prepared request is noted on its way out (``before-send``): URL and
  headers as botocore's endpoint rules and configuration made them, and the signing
  name and region it signed for (``before-sign``). Later calls reuse them;
- signing: the client's signer (``get_auth_instance``: its credentials, refreshed as
  they expire), for every attempt; SigV4 from the route's fixed canonical parts
  (``lean_sign``), any other signer as botocore runs it;
- sending: the client's own aiohttp session (its timeouts, pool, proxies and TLS
  settings), which raises the botocore exceptions aiobotocore raises;
- per call: the headers botocore makes for each call are made for each call here too
  (the retry counters, the invocation id, Lambda's ``X-Amzn-Trace-Id``), and a header
  holding a CR, LF or NUL is refused before anything is sent;
- retries: the client's own standard-mode handler and retry quota, through its
  ``needs-retry`` and ``after-call`` events, with the ``amz-sdk-request`` headers
  botocore writes (a first 2xx reply that handler would pass, ``lean_retry``, skips
  ``needs-retry`` only);
- replies: ``json.loads``, as botocore's parser returns them, unless the body holds
  what that parser would change (a blob or timestamp member, a null), is no JSON
  object, or the request failed: then botocore's parser reads it, and the error
  raised is the client's modeled ``ClientError`` subclass with the same response dict.

Parameters that are not plain JSON (bytes, for a binary attribute) and calls to a
client that is not an aiobotocore one (a test's fake) take the ordinary path.

It is an opt-in (``SqsJobStore(lean=True)``), because what it skips after each
operation's first call is the SDK's per-call pipeline: ``before-call``,
``request-created``, ``before-send`` and ``provide-client-params`` handlers, ``Stubber``,
and the instrumentation of ``_make_api_call`` (ddtrace, aws-xray-sdk, OpenTelemetry)
see only that first call. It relies on botocore's private names (``lean_guard``):
``missing_names`` checks them when a client opens, before it sends anything, and a
store whose botocore lacks one uses the SDK's pipeline (one warning).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from aiobotocore.client import AioBaseClient  # type: ignore[import-untyped]
from aiobotocore.endpoint import convert_to_response_dict  # type: ignore[import-untyped]
from botocore import UNSIGNED  # type: ignore[import-untyped]
from botocore import auth as botocore_auth
from botocore.awsrequest import AWSPreparedRequest, AWSRequest  # type: ignore[import-untyped]
from botocore.exceptions import NoCredentialsError  # type: ignore[import-untyped]
from botocore.handlers import add_recursion_detection_header  # type: ignore[import-untyped]

from ..wire.protocol import Reply
from .lean_guard import refuse_unsafe
from .lean_retry import FirstReplies
from .lean_sign import Plan, Signer, plan

# The operations a worker sends for every job (claims, outcomes, receives, deletes,
# visibility changes, re-sends): JSON protocol, no idempotency tokens, no host prefix.
LEAN = frozenset(
    {
        ("dynamodb", "update_item"),
        ("dynamodb", "put_item"),
        ("dynamodb", "get_item"),
        ("dynamodb", "delete_item"),
        ("sqs", "receive_message"),
        ("sqs", "delete_message"),
        ("sqs", "delete_message_batch"),
        ("sqs", "change_message_visibility"),
        ("sqs", "change_message_visibility_batch"),
        ("sqs", "send_message"),
        ("sqs", "send_message_batch"),
    }
)
# Headers made for one attempt, never reused: the signature and the retry counters.
PER_ATTEMPT = frozenset(
    {
        "authorization",
        "x-amz-date",
        "x-amz-security-token",
        "x-amz-content-sha256",
        "amz-sdk-invocation-id",
        "amz-sdk-request",
        "content-length",
        "x-amzn-trace-id",  # botocore's, from Lambda's environment at each call
    }
)
# The counters ``add_retry_headers`` writes into ``amz-sdk-request``, in its order.
RETRY_KEYS = ("ttl", "attempt", "max")
# A member whose value is null, which botocore's parser drops: a key's closing quote
# (not preceded by an odd run of backslashes, so no quote inside a string) then null.
NULL_MEMBER = re.compile(rb'(?<!\\)(?:\\\\)*"\s*:\s*null')


class Route(NamedTuple):
    """Where one operation's requests go and how they are signed, as botocore made them."""

    model: Any  # botocore's OperationModel
    url: str
    headers: tuple[tuple[str, str], ...]
    auth: Mapping[str, Any]  # get_auth_instance's arguments
    verbatim: tuple[bytes, ...]  # keys whose values botocore's parser would change
    plan: Plan  # the canonical request's fixed parts, for SigV4
    wire: tuple[tuple[str, bytes], ...]  # ``headers`` encoded, as botocore sends them


class LeanSender:
    """Sends ``LEAN`` operations of one aiobotocore client; see the module docstring."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._service = client.meta.service_model.service_name
        self._event_id = client.meta.service_model.service_id.hyphenize()
        self._endpoint = client._endpoint
        self._signer = client._request_signer
        self._http: Any = self._endpoint.http_session
        self._parser = self._endpoint._response_parser_factory.create_parser(
            client.meta.service_model.resolved_protocol
        )
        self._routes: dict[str, Route | None] = {}
        self._sigv4 = Signer()
        self._first_replies = FirstReplies(client)
        self._noting: dict[str, dict[str, Any]] = {}  # by API name, while it is learnt
        self._aliases: dict[str, str] = {}  # event names as botocore's aliaser renames them
        client.meta.events.register(f"before-sign.{self._event_id}", self._note_signing)
        client.meta.events.register(f"before-send.{self._event_id}", self._note_request)

    @classmethod
    def of(cls, client: Any) -> LeanSender | None:
        """A sender for a real aiobotocore client; ``None`` for anything else."""
        return cls(client) if isinstance(client, AioBaseClient) else None

    async def __call__(self, operation: str, params: Mapping[str, Any]) -> Reply:
        route = self._routes.get(operation)
        body = _json(params) if route is not None else None
        if route is None or body is None:
            return await self._ordinary(operation, params)
        return await self._send(route, body)

    async def _ordinary(self, operation: str, params: Mapping[str, Any]) -> Reply:
        """The client's own call; the first of a ``LEAN`` operation notes its route.

        Calls of one operation from one client share a route: botocore's endpoint rules
        for DynamoDB and SQS read only the client's configuration and credentials
        (and the ARN a table may be named by, which one store keeps fixed).
        """
        api_name = self._client.meta.method_to_api_mapping[operation]
        learn = operation not in self._routes and (self._service, operation) in LEAN
        learn = learn and api_name not in self._noting  # one call learns at a time
        if learn:
            self._noting[api_name] = {}
        try:
            reply: Reply = await getattr(self._client, operation)(**params)
        finally:  # a request that was prepared and signed taught its route, answered or not
            noted = self._noting.pop(api_name, {}) if learn else {}
            if noted.keys() == {"auth", "special", "url", "headers"}:
                self._routes[operation] = self._route(api_name, noted)
        return reply

    def _notes(self, event_name: str) -> dict[str, Any]:
        """Where the request of ``event_name`` (``before-….service.ApiName``) is noted."""
        return self._noting.get(event_name.rpartition(".")[2], {})

    def _note_signing(self, request: Any, signing_name: str, **kwargs: Any) -> None:
        signing = request.context.get("signing", {})
        notes = self._notes(kwargs["event_name"])
        notes["auth"] = {
            "signing_name": signing.get("signing_name", signing_name),
            "region_name": signing.get("region", self._signer.region_name),
            "signature_version": kwargs.get("signature_version"),
        }
        notes["special"] = bool(
            signing.get("request_credentials") or signing.get("identity_cache") is not None
        )

    def _note_request(self, request: Any, **kwargs: Any) -> None:
        notes = self._notes(kwargs["event_name"])
        notes["url"] = request.url
        notes["headers"] = tuple(
            (name, value if isinstance(value, str) else value.decode())
            for name, value in request.headers.items()
            if name.lower() not in PER_ATTEMPT
        )

    def _route(self, api_name: str, noted: dict[str, Any]) -> Route | None:
        """The route noted while the ordinary call ran; ``None``: always the ordinary path."""
        if noted["special"]:
            return None
        model = self._client.meta.service_model.operation_model(api_name)
        verbatim = _verbatim(model.output_shape)
        url, headers, auth = noted["url"], noted["headers"], noted["auth"]
        signing = plan(url, headers, auth["region_name"], auth["signing_name"])
        wire = tuple((name, value.encode()) for name, value in headers)
        return Route(model, url, headers, auth, verbatim, signing, wire)

    async def _send(self, route: Route, body: bytes) -> Reply:
        """botocore's attempt loop (``Endpoint._send_request``) over a prebuilt request."""
        model = route.model
        context: dict[str, Any] = {"client_config": self._client.meta.config}
        request_dict = {"context": context}
        attempts = 1
        self._endpoint._update_retries_context(context, attempts)
        response, error = await self._attempt(route, body, context)
        retried = error is not None or not await self._settled(model, response, context)
        try:
            while retried and await self._endpoint._needs_retry(
                attempts, model, request_dict, response, error
            ):
                attempts += 1
                self._endpoint._update_retries_context(context, attempts, response)
                response, error = await self._attempt(route, body, context)
        except Exception as ended:  # a needs-retry handler ended the tries (``unreachable``)
            error = ended  # reported as botocore's client reports it
        if error is not None:
            await self._emit(
                f"after-call-error.{self._event_id}.{model.name}", exception=error, context=context
            )
            raise error
        http, parsed = response
        if "ResponseMetadata" in parsed:
            parsed["ResponseMetadata"]["RetryAttempts"] = attempts - 1
        return await self._outcome(model, http, parsed, context)

    async def _settled(self, model: Any, response: Any, context: dict[str, Any]) -> bool:
        """A first reply that botocore's standard retry handler would pass (``lean_retry``)."""
        http, parsed = response
        content: bytes = await http.content
        event_name = f"needs-retry.{self._event_id}.{model.name}"
        return self._first_replies.settled(event_name, http, parsed, content, context)

    async def _attempt(
        self, route: Route, body: bytes, context: dict[str, Any]
    ) -> tuple[Any, Exception | None]:
        """One attempt, its headers in botocore's order: the route's, the signature's,
        the retry counters (``add_retry_headers``), the length (``AWSRequest.prepare``);
        values as bytes but the length, as botocore's ``create_request`` leaves them."""
        headers = await self._signed(route, body, context)
        retries = context["retries"]
        counters = "; ".join(f"{key}={retries[key]}" for key in RETRY_KEYS if key in retries)
        headers["amz-sdk-invocation-id"] = retries["invocation-id"].encode()
        headers["amz-sdk-request"] = counters.encode()
        headers["Content-Length"] = str(len(body))  # type: ignore[assignment]
        traced: dict[str, Any] = {"headers": {}}
        add_recursion_detection_header(traced)  # as botocore's ``before-call`` handler
        for name, value in traced["headers"].items():
            headers[name] = value.encode()
        refuse_unsafe(headers)
        request = AWSPreparedRequest("POST", route.url, headers, body, False)
        try:
            http = await self._http.send(request)
            content: bytes = await http.content
        except Exception as error:  # what botocore's endpoint hands its retry handler
            return None, error
        parsed = None
        if http.status_code < 300 and not _changed_by_botocore(content, route.verbatim):
            parsed = _fast(content, http)
        if parsed is None:
            parsed = await self._parsed(route.model, http)
        return (http, parsed), None

    async def _signed(self, route: Route, body: bytes, context: dict[str, Any]) -> dict[str, bytes]:
        """The route's headers and the signature's, as ``RequestSigner.sign`` adds it."""
        headers = dict(route.wire)
        if route.auth["signature_version"] is UNSIGNED:
            return headers
        auth = await self._signer.get_auth_instance(**route.auth)
        if type(auth) is botocore_auth.SigV4Auth:
            if auth.credentials is None:
                raise NoCredentialsError()
            now = botocore_auth.get_current_datetime()
            added = self._sigv4.headers(route.plan, auth.credentials, body, now)
            context["timestamp"] = added["X-Amz-Date"]
        else:  # another algorithm: botocore's own, on a request of its own kind
            plain = dict(route.headers)
            request = AWSRequest(method="POST", url=route.url, data=body, headers=plain)
            request.context = context
            auth.add_auth(request)
            added = dict(request.headers.items())
        for name, value in added.items():
            headers[name] = value.encode() if isinstance(value, str) else value
        return headers

    async def _emit(self, event_name: str, **kwargs: Any) -> None:
        """``events.emit``, with the alias of ``event_name`` worked out once: botocore's
        aliaser splits and looks up every name it emits, and the alias of a name is
        fixed (its table never changes)."""
        events = self._client.meta.events
        emitter = getattr(events, "_emitter", None)
        if emitter is None or not hasattr(events, "_alias_event_name"):  # after a send: no raise
            await events.emit(event_name, **kwargs)
            return
        aliased = self._aliases.get(event_name)
        if aliased is None:
            aliased = self._aliases[event_name] = events._alias_event_name(event_name)
        await emitter.emit(aliased, **kwargs)

    async def _parsed(self, model: Any, http: Any) -> Reply:
        response_dict = await convert_to_response_dict(http, model)
        parsed: Reply = await self._parser.parse(response_dict, model.output_shape)
        if http.status_code >= 300:
            await self._endpoint._add_modeled_error_fields(
                response_dict, parsed, model, self._parser
            )
        return parsed

    async def _outcome(self, model: Any, http: Any, parsed: Reply, context: Any) -> Reply:
        """As ``_make_api_call`` ends: ``after-call``, then the reply or the modeled error."""
        await self._emit(
            f"after-call.{self._event_id}.{model.name}",
            http_response=http,
            parsed=parsed,
            model=model,
            context=context,
        )
        if http.status_code < 300:
            return parsed
        code = context.get("error_code_override") or parsed.get("Error", {}).get("Code")
        raise self._client.exceptions.from_code(code)(parsed, model.name)


def _json(params: Mapping[str, Any]) -> bytes | None:
    """The request body; ``None`` if the parameters are not plain JSON (bytes, NaN)."""
    try:
        return json.dumps(params, allow_nan=False).encode()
    except (TypeError, ValueError):
        return None


def _changed_by_botocore(content: bytes, verbatim: tuple[bytes, ...]) -> bool:
    """Whether botocore's parser would read ``content`` otherwise than ``json.loads``."""
    if any(key in content for key in verbatim):
        return True
    return b"null" in content and NULL_MEMBER.search(content) is not None


def _fast(content: bytes, http: Any) -> Reply | None:
    """The reply as botocore's parser reads it; ``None``: not a JSON object, for botocore."""
    try:
        parsed = json.loads(content) if content else {}
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    metadata = {"HTTPStatusCode": http.status_code, "HTTPHeaders": http.headers}
    if "x-amzn-requestid" in http.headers:
        metadata["RequestId"] = http.headers["x-amzn-requestid"]
    parsed["ResponseMetadata"] = metadata
    return parsed


def _verbatim(shape: Any) -> tuple[bytes, ...]:
    """Byte strings whose presence in a reply means botocore's parser would change it.

    ``b""`` (found in every reply) when a member is read from the headers.
    """
    if shape is not None and any(m.serialization.get("location") for m in shape.members.values()):
        return (b"",)
    names: set[str] = set()
    _changed_members(shape, names, set())
    return tuple(f'"{name}"'.encode() for name in sorted(names))


def _changed_members(shape: Any, names: set[str], seen: set[str]) -> None:
    """Members of ``shape``, at any depth, whose values botocore's JSON parser transforms."""
    if shape is None or shape.name in seen:
        return
    seen.add(shape.name)
    if shape.type_name == "structure":
        for name, member in shape.members.items():
            serialized = member.serialization.get("name", name)
            if _transformed(member) or serialized != name:
                names.add(serialized)
            _changed_members(member, names, seen)
    elif shape.type_name == "list":
        _changed_members(shape.member, names, seen)
    elif shape.type_name == "map":
        _changed_members(shape.value, names, seen)


def _transformed(shape: Any) -> bool:
    """A blob or timestamp, or a list or map of them (decoded or parsed by botocore)."""
    if shape.type_name in ("blob", "timestamp"):
        return True
    if shape.type_name == "list":
        return _transformed(shape.member)
    if shape.type_name == "map":
        return _transformed(shape.key) or _transformed(shape.value)
    return False
