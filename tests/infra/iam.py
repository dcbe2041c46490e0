"""A small evaluator of the IAM statements the stack's managed policies use, for tests.

The emulator does not enforce IAM, so the policy tests evaluate each deployed policy
document against the requests a role's code sends, and against requests it must not be
able to send. Only what those policies use is modelled; anything else (another
operator, ``...IfExists``, ``NotAction``, a condition key not worked out for that
action) raises ``Unmodelled`` rather than guess. The rules, as AWS documents them:

IAM User Guide, "IAM JSON policy elements: Condition operators"
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html):

    "If the key that you specify in a policy condition is not present in the request
    context, the values do not match and the condition is false."
    ``StringEquals``: "Exact matching, case sensitive". ``StringLike``: "Case-sensitive
    matching. The values can include multi-character match wildcards (*) and
    single-character match wildcards (?) anywhere in the string."

IAM User Guide, "Creating a condition with multiple keys or values"
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_multi-value-conditions.html):

    "ForAllValues - The condition returns true if there's a match between every one of
    the specified key values in the request and at least one value in the policy."
    "ForAnyValue - The condition returns true if any one of the key values in the
    request matches any one of the condition values in the policy."
    "If the key values in the request resolve to an empty data set (for example, an
    empty string), a condition operator modified by ForAllValues returns true, and a
    condition operator modified by ForAnyValue returns false."

IAM User Guide, "IAM JSON policy elements: Condition": "Condition key names are not
case-sensitive"; a condition block's operators, and the keys under each, must all hold
(the DynamoDB guide below: "If any part of the Condition element is false, the entire
policy evaluates to false"), while the values listed for one key are alternatives.
Policy evaluation logic: an explicit ``Deny`` overrides any ``Allow``; a request no
statement allows is implicitly denied.

DynamoDB Developer Guide, "Using IAM policy conditions for fine-grained access control"
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html):

    ``dynamodb:LeadingKeys``: "Represents the first key attribute of a table—in other
    words, the partition key. The key name LeadingKeys is plural, even if the key is
    used with single-item actions."
    ``dynamodb:Attributes``: "Represents a list of the attribute names in a request, or
    the attributes that are returned from a request". Attributes so limited "can be
    read, written, or evaluated in a conditional write or scan filter", and a principal
    so limited "cannot perform conditional write operations based on any other
    attributes": the names a ``ConditionExpression`` compares count as much as the
    ones an ``UpdateExpression`` sets, and the key's name is among them ("you must
    specify the names of all of the primary key and index key attributes").
    ``dynamodb:ReturnValues``: "the ReturnValues parameter always has a value (NONE
    unless otherwise specified)" for ``UpdateItem``.

DynamoDB Developer Guide, "Using IAM with DynamoDB transactions"
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html):

    "Permissions for Put, Update, Delete, and Get actions are governed by the permissions
    used for the underlying PutItem, UpdateItem, DeleteItem, and GetItem operations. For
    the ConditionCheck action, you can use the dynamodb:ConditionCheckItem permission".

So there is no ``dynamodb:TransactWriteItems`` action to grant: each entry of a
``TransactWriteItems`` is a request of its own action, on its own table (an entry names
its ``TableName``), with its own condition keys worked out from the entry as from that
action's request, and ``dynamodb:EnclosingOperation`` the transaction (the guide's
examples allow or deny "only transactional operations" by it). An entry carries no
``ReturnValues`` (only ``ReturnValuesOnConditionCheckFailure``, for which DynamoDB has
no condition key), and AWS does not say what ``dynamodb:ReturnValues`` is for it, so a
policy that conditions an entry on it is ``Unmodelled``; nor does it say what
``EnclosingOperation`` is outside a transaction, so that is ``Unmodelled`` too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Values = tuple[str, ...] | None  # None: the key is known for the action but not present
Context = Mapping[str, Values]  # by lower-cased condition key
Decision = Literal["allowed", "implicitly denied", "explicitly denied"]

STATEMENT_FIELDS = {"Sid", "Effect", "Action", "Resource", "Condition"}
QUALIFIERS = {"", "ForAllValues", "ForAnyValue"}
# Item actions: their request names the items by key, so LeadingKeys is known.
ITEM_ACTIONS = {
    "GetItem",
    "PutItem",
    "UpdateItem",
    "DeleteItem",
    "BatchGetItem",
    "ConditionCheckItem",
}
WRITE_ACTIONS = {"PutItem", "UpdateItem", "DeleteItem"}  # take ReturnValues, NONE by default
TRANSACT_WRITE = "TransactWriteItems"
# A TransactWriteItems entry's operation, and the action that authorises it.
TRANSACT_WRITE_ENTRIES = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}
EXPRESSIONS = (
    "UpdateExpression",
    "ConditionExpression",
    "ProjectionExpression",
    "FilterExpression",
    "KeyConditionExpression",
)
NAMED = ("AttributesToGet", "AttributeUpdates", "Expected", "QueryFilter", "ScanFilter")
# Words of the expression grammar that are not attribute names (case-insensitive).
KEYWORDS = {"set", "remove", "add", "delete", "and", "or", "not", "in", "between"}
_TOKEN = re.compile(
    r"(?P<sep>[.\[]?)(?P<word>#[A-Za-z0-9_]+|:[A-Za-z0-9_]+|[A-Za-z_]\w*)(?P<call>\s*\()?"
)


class Unmodelled(AssertionError):
    """The policy uses something this evaluator does not model: extend it, don't guess."""


@dataclass(frozen=True)
class Request:
    """What IAM authorises: one action on one resource, with the request's context."""

    action: str  # "dynamodb:PutItem"
    resource: str  # the ARN
    context: Context


def decide(statements: Sequence[Mapping[str, Any]], request: Request) -> Decision:
    """The verdict of an identity policy's ``statements`` on ``request``."""
    verdicts = {_effect(statement) for statement in statements if _applies(statement, request)}
    if "Deny" in verdicts:
        return "explicitly denied"
    return "allowed" if "Allow" in verdicts else "implicitly denied"


def allowed(statements: Sequence[Mapping[str, Any]], request: Request) -> bool:
    return decide(statements, request) == "allowed"


def _effect(statement: Mapping[str, Any]) -> str:
    effect = str(statement["Effect"])
    if effect not in ("Allow", "Deny"):
        raise Unmodelled(f"Effect {effect!r}")
    return effect


def _applies(statement: Mapping[str, Any], request: Request) -> bool:
    if set(statement) - STATEMENT_FIELDS:
        raise Unmodelled(f"statement fields {sorted(set(statement) - STATEMENT_FIELDS)}")
    actions = _listed(statement["Action"])
    if not any(like(a.lower(), request.action.lower()) for a in actions):
        return False
    if not any(like(r, request.resource) for r in _listed(statement["Resource"])):
        return False
    return condition_holds(statement.get("Condition", {}), request.context)


def condition_holds(condition: Mapping[str, Mapping[str, Any]], context: Context) -> bool:
    """Every operator of the block, and every key under it, holds."""
    return all(
        _key_holds(operator, key, _listed(wanted), context)
        for operator, keys in condition.items()
        for key, wanted in keys.items()
    )


def _key_holds(operator: str, key: str, wanted: list[str], context: Context) -> bool:
    qualifier, _, base = operator.rpartition(":")
    match = {"StringEquals": str.__eq__, "StringLike": like}.get(base)
    if match is None or qualifier not in QUALIFIERS:
        raise Unmodelled(f"condition operator {operator!r}")
    if key.lower() not in context:
        raise Unmodelled(f"condition key {key!r} for this request")
    values = context[key.lower()]

    def matches(value: str) -> bool:
        return any(match(pattern, value) for pattern in wanted)

    if qualifier == "ForAllValues":
        return all(matches(value) for value in values or ())
    if qualifier == "ForAnyValue":
        return any(matches(value) for value in values or ())
    if values is None:
        return False
    if len(values) != 1:
        raise Unmodelled(f"{operator} on the multivalued key {key!r}: qualify it")
    return matches(values[0])


def like(pattern: str, value: str) -> bool:
    """``StringLike``: ``*`` any run of characters, ``?`` one, everything else literal."""
    wildcards = {"*": ".*", "?": "."}
    regex = "".join(wildcards.get(c) or re.escape(c) for c in pattern)
    return re.fullmatch(regex, value, re.DOTALL) is not None


def _listed(value: str | Iterable[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


# -- the request context of a DynamoDB call ----------------------------------------------


def transaction_entries(params: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """A ``TransactWriteItems``'s entries as IAM authorises them: each one's action
    (``PutItem`` for a ``Put``) and its request, which names its own table."""
    entries: list[tuple[str, Mapping[str, Any]]] = []
    for entry in params["TransactItems"]:
        if len(entry) != 1 or set(entry) - set(TRANSACT_WRITE_ENTRIES):
            raise Unmodelled(f"transaction entry {sorted(entry)}")
        ((operation, request),) = entry.items()
        entries.append((TRANSACT_WRITE_ENTRIES[operation], request))
    return entries


def dynamodb_context(
    action: str, params: Mapping[str, Any], partition_key: str, enclosing: str | None = None
) -> Context:
    """The DynamoDB condition keys of one request (``action`` as the API names it), or of
    one entry of a transaction (``enclosing``: ``TransactWriteItems``).

    ``LeadingKeys`` is worked out for item actions only: a ``Query``'s is the partition
    value in its key condition, which this evaluator does not parse, so a policy that
    conditions a query on it is ``Unmodelled`` rather than taken as absent.
    """
    context: dict[str, Values] = {"dynamodb:attributes": tuple(sorted(attributes(action, params)))}
    if enclosing is None:
        returned = params.get("ReturnValues", "NONE")
        context["dynamodb:returnvalues"] = (str(returned),) if action in WRITE_ACTIONS else None
    else:
        context["dynamodb:enclosingoperation"] = (enclosing,)
    if action in ITEM_ACTIONS:
        keys = _items(action, params)
        context["dynamodb:leadingkeys"] = tuple(str(key[partition_key]["S"]) for key in keys)
    return context


def _items(action: str, params: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The keys (or, for ``PutItem``, the items) a request names."""
    if action == "PutItem":
        return [params["Item"]]
    if action == "BatchGetItem":
        return [key for table in params["RequestItems"].values() for key in table["Keys"]]
    return [params["Key"]]


def attributes(action: str, params: Mapping[str, Any]) -> set[str]:
    """The top-level attribute names a request names: its keys or item, and every name
    in its expressions and legacy parameters."""
    requests = list(params["RequestItems"].values()) if action == "BatchGetItem" else [params]
    found: set[str] = set()
    for request in requests:
        for key in request.get("Keys", [request.get("Key") or request.get("Item") or {}]):
            found |= set(key)
        for legacy in NAMED:
            found |= set(request.get(legacy) or ())
        names = request.get("ExpressionAttributeNames", {})
        for expression in EXPRESSIONS:
            found |= expression_names(request.get(expression, ""), names)
    return found


def expression_names(expression: str, names: Mapping[str, str]) -> set[str]:
    """The top-level attributes an expression names: ``#placeholders`` resolved, bare
    names, never a value (``:v``), a function, a keyword or a nested path's parts."""
    found: set[str] = set()
    for token in _TOKEN.finditer(expression):
        word = token["word"]
        if token["sep"] or token["call"] or word.startswith(":") or word.lower() in KEYWORDS:
            continue
        if word.startswith("#") and word not in names:
            raise Unmodelled(f"{word} is not in ExpressionAttributeNames")
        found.add(names[word] if word.startswith("#") else word)
    return found
