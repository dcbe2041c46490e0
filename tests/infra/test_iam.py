"""The IAM evaluator (``tests/infra/iam.py``) on cases whose answer AWS documents.

The examples are the IAM User Guide's ("Creating a condition with multiple keys or
values") and the DynamoDB Developer Guide's ("Using IAM policy conditions for
fine-grained access control", "Using IAM with DynamoDB transactions"), with the verdicts
those pages give.
"""

from __future__ import annotations

from typing import Any

import pytest

from .iam import (
    TRANSACT_WRITE,
    Context,
    Request,
    Unmodelled,
    allowed,
    attributes,
    decide,
    dynamodb_context,
    expression_names,
    like,
    transaction_entries,
)

THREAD = "arn:aws:dynamodb:us-west-2:123456789012:table/Thread"
SCORES = "arn:aws:dynamodb:us-west-2:123456789012:table/GameScores"


def statement(action: str | list[str], condition: dict[str, Any] | None = None, **kw: Any) -> Any:
    found = {"Effect": kw.get("effect", "Allow"), "Action": action}
    found["Resource"] = kw.get("resource", THREAD)
    return found | ({"Condition": condition} if condition is not None else {})


def on(action: str, context: Context, resource: str = THREAD) -> Request:
    return Request(action, resource, context)


def attrs(*names: str) -> Context:
    return {"dynamodb:attributes": names}


# -- set operators: the IAM User Guide's Thread examples ----------------------------------

ONLY_THREE = statement(
    "dynamodb:GetItem",
    {
        "ForAllValues:StringLike": {
            "dynamodb:Attributes": ["PostDateTime", "Message", "Tags"],
        }
    },
)


def test_for_all_values_allows_a_request_whose_every_value_is_listed() -> None:
    assert allowed([ONLY_THREE], on("dynamodb:GetItem", attrs("PostDateTime", "Message")))


def test_for_all_values_refuses_a_request_with_one_value_not_listed() -> None:
    request = on("dynamodb:GetItem", attrs("PostDateTime", "UserName"))
    assert decide([ONLY_THREE], request) == "implicitly denied"


def test_an_empty_set_satisfies_for_all_values_and_fails_for_any_value() -> None:
    empty = on("dynamodb:GetItem", attrs())
    assert allowed([ONLY_THREE], empty)
    any_of = statement(
        "dynamodb:GetItem",
        {"ForAnyValue:StringLike": ONLY_THREE["Condition"]["ForAllValues:StringLike"]},
    )
    assert not allowed([any_of], empty)


def test_an_explicit_deny_for_any_listed_value_overrides_an_allow() -> None:
    deny = statement(
        "dynamodb:PutItem",
        {"ForAnyValue:StringLike": {"dynamodb:Attributes": ["ID", "PostDateTime"]}},
        effect="Deny",
    )
    allow = statement("dynamodb:PutItem")
    put = on("dynamodb:PutItem", attrs("UserName", "Message", "PostDateTime"))
    assert decide([allow, deny], put) == "explicitly denied"
    assert decide([allow, deny], on("dynamodb:PutItem", attrs("UserName"))) == "allowed"
    assert decide([deny], on("dynamodb:PutItem", attrs("UserName"))) == "implicitly denied"


# -- leading keys: the DynamoDB guide's GameScores example --------------------------------

OWN_ITEMS = statement(
    ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem"],
    {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["amzn1.account.ZOË"]}},
    resource=SCORES,
)


def scores(action: str, params: dict[str, Any]) -> Request:
    return on(f"dynamodb:{action}", dynamodb_context(action, params, "UserId"), SCORES)


def key(user: str) -> dict[str, Any]:
    return {"UserId": {"S": user}, "GameTitle": {"S": "Meteor Blasters"}}


def test_leading_keys_allow_only_the_items_under_the_listed_partition_keys() -> None:
    mine, theirs = key("amzn1.account.ZOË"), key("amzn1.account.BJÖRN")
    assert allowed([OWN_ITEMS], scores("GetItem", {"TableName": "GameScores", "Key": mine}))
    assert not allowed([OWN_ITEMS], scores("GetItem", {"TableName": "GameScores", "Key": theirs}))
    item = {**theirs, "TopScore": {"N": "5842"}}
    assert not allowed([OWN_ITEMS], scores("PutItem", {"TableName": "GameScores", "Item": item}))


def test_a_batch_is_allowed_only_if_every_key_it_names_is() -> None:
    both = {"GameScores": {"Keys": [key("amzn1.account.ZOË"), key("amzn1.account.BJÖRN")]}}
    assert not allowed([OWN_ITEMS], scores("BatchGetItem", {"RequestItems": both}))
    one = {"GameScores": {"Keys": [key("amzn1.account.ZOË")]}}
    assert allowed([OWN_ITEMS], scores("BatchGetItem", {"RequestItems": one}))


# -- single-valued keys, operators, actions and resources ---------------------------------


def test_a_single_valued_condition_on_a_key_not_in_the_request_is_false() -> None:
    returns_none = statement(
        "dynamodb:GetItem", {"StringEquals": {"dynamodb:ReturnValues": "NONE"}}
    )
    get = on("dynamodb:GetItem", dynamodb_context("GetItem", {"Key": key("z")}, "UserId"))
    assert get.context["dynamodb:returnvalues"] is None
    assert not allowed([returns_none], get)


@pytest.mark.parametrize(
    ("pattern", "value", "matches"),
    [
        ("job#*", "job#3f9c2a", True),
        ("job#*", "job#", True),
        ("job#*", "limit#job#3f9c2a", False),
        ("job#*", "JOB#3f9c2a", False),  # case-sensitive
        ("job#*", "job", False),
        ("body#?", "body#7", True),
        ("body#?", "body#77", False),
        ("limit#[a]*", "limit#[a]x", True),  # no character classes: [ is literal
        ("limit#[a]*", "limit#ax", False),
        ("café#*", "café#naïve", True),
    ],
)
def test_string_like_has_only_two_wildcards(pattern: str, value: str, matches: bool) -> None:
    assert like(pattern, value) is matches


def test_actions_match_regardless_of_case_and_resources_exactly() -> None:
    shouting = statement("DynamoDB:getitem")
    assert allowed([shouting], on("dynamodb:GetItem", attrs()))
    assert not allowed([shouting], on("dynamodb:PutItem", attrs()))
    assert not allowed([shouting], on("dynamodb:GetItem", attrs(), f"{THREAD}/index/by_user"))
    assert not allowed([shouting], on("dynamodb:GetItem", attrs(), SCORES))


def test_condition_key_names_are_not_case_sensitive() -> None:
    lower = statement(
        "dynamodb:GetItem", {"ForAllValues:StringLike": {"DYNAMODB:attributes": ["Tags"]}}
    )
    assert allowed([lower], on("dynamodb:GetItem", attrs("Tags")))
    assert not allowed([lower], on("dynamodb:GetItem", attrs("Tags", "ID")))


@pytest.mark.parametrize(
    "condition",
    [
        {"StringEqualsIfExists": {"dynamodb:ReturnValues": "NONE"}},
        {"NumericLessThan": {"dynamodb:ReturnValues": "3"}},
        {"ForAllValues:StringEquals": {"dynamodb:Select": ["SPECIFIC_ATTRIBUTES"]}},
        {"StringEquals": {"dynamodb:Attributes": "Tags"}},  # multivalued, unqualified
    ],
)
def test_what_is_not_modelled_raises_instead_of_guessing(condition: dict[str, Any]) -> None:
    request = on("dynamodb:UpdateItem", dynamodb_context("UpdateItem", {"Key": key("z")}, "UserId"))
    with pytest.raises(Unmodelled):
        decide([statement("dynamodb:UpdateItem", condition)], request)


def test_a_statement_with_fields_not_modelled_raises() -> None:
    with pytest.raises(Unmodelled):
        decide(
            [{**statement("dynamodb:GetItem"), "NotResource": SCORES}],
            on("dynamodb:GetItem", attrs()),
        )


def test_leading_keys_of_a_query_are_not_modelled() -> None:
    query = {"KeyConditionExpression": "#u = :u", "ExpressionAttributeNames": {"#u": "UserId"}}
    request = on("dynamodb:Query", dynamodb_context("Query", query, "UserId"), SCORES)
    with pytest.raises(Unmodelled):
        decide([OWN_ITEMS | {"Action": "dynamodb:Query"}], request)


# -- the attributes a request names -------------------------------------------------------


def test_an_update_names_its_key_what_it_sets_and_removes_and_what_its_condition_reads() -> None:
    params = {
        "Key": {"pk": {"S": "job#3f9c2a"}},
        "UpdateExpression": "SET #resent_at = :now, tally = if_not_exists(tally, :zero) + :one"
        " REMOVE #lease_until, notes.draft[0]",
        "ConditionExpression": "#status = :status AND attribute_not_exists(#resent_at)"
        " AND size(#queue) BETWEEN :low AND :high",
        "ExpressionAttributeNames": {
            "#resent_at": "resent_at",
            "#lease_until": "lease_until",
            "#status": "status",
            "#queue": "queue",
            "#unused": "never_referenced",
        },
    }
    assert attributes("UpdateItem", params) == {
        "pk",
        "resent_at",
        "tally",
        "lease_until",
        "notes",
        "status",
        "queue",
    }


def test_a_put_names_every_attribute_of_its_item() -> None:
    item = {"pk": {"S": "job#3f9c2a"}, "status": {"S": "queued"}, "payload": {"S": "{}"}}
    params = {"Item": item, "ConditionExpression": "attribute_not_exists(#pk)"}
    context = dynamodb_context(
        "PutItem", params | {"ExpressionAttributeNames": {"#pk": "pk"}}, "pk"
    )
    assert context == {
        "dynamodb:attributes": ("payload", "pk", "status"),
        "dynamodb:returnvalues": ("NONE",),
        "dynamodb:leadingkeys": ("job#3f9c2a",),
    }


def test_return_values_are_as_sent_and_none_when_omitted() -> None:
    update = {"Key": {"pk": {"S": "job#3f9c2a"}}, "UpdateExpression": "SET a = :a"}
    assert dynamodb_context("UpdateItem", update, "pk")["dynamodb:returnvalues"] == ("NONE",)
    asked = update | {"ReturnValues": "ALL_NEW"}
    assert dynamodb_context("UpdateItem", asked, "pk")["dynamodb:returnvalues"] == ("ALL_NEW",)


def test_a_placeholder_without_a_name_raises() -> None:
    with pytest.raises(Unmodelled):
        expression_names("SET #ghost = :v", {})


# -- transactions: the DynamoDB guide's "Using IAM with DynamoDB transactions" ------------

TABLE04 = "arn:aws:dynamodb:us-west-2:123456789012:table/table04"
ITEM_WRITES = ["dynamodb:ConditionCheckItem", "dynamodb:PutItem", "dynamodb:UpdateItem"]
ALL_FIVE = [*ITEM_WRITES, "dynamodb:DeleteItem", "dynamodb:GetItem"]
TRANSACTIONAL = {
    "ForAnyValue:StringEquals": {
        "dynamodb:EnclosingOperation": ["TransactWriteItems", "TransactGetItems"]
    }
}


def transaction(*entries: dict[str, Any]) -> list[Request]:
    """Each entry of a ``TransactWriteItems`` as IAM authorises it."""
    return [
        on(
            f"dynamodb:{action}",
            dynamodb_context(action, params, "UserId", TRANSACT_WRITE),
            TABLE04,
        )
        for action, params in transaction_entries({"TransactItems": list(entries)})
    ]


def entries(user: str = "amzn1.account.ZOË") -> list[dict[str, Any]]:
    """One entry of each kind, on ``user``'s items of table04."""
    table = {"TableName": "table04"}
    return [
        {"Put": table | {"Item": key(user) | {"TopScore": {"N": "5842"}}}},
        {"Update": table | {"Key": key(user), "UpdateExpression": "SET Wins = Wins + :one"}},
        {"Delete": table | {"Key": key(user)}},
        {"ConditionCheck": table | {"Key": key(user), "ConditionExpression": "Wins > :n"}},
    ]


def test_each_entry_is_authorised_as_its_own_action() -> None:
    requests = transaction(*entries())
    assert [r.action for r in requests] == [
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:ConditionCheckItem",
    ]
    # Example 1: the item actions allow a transaction of them.
    example_1 = statement(ALL_FIVE, resource=TABLE04)
    assert [allowed([example_1], r) for r in requests] == [True] * 4
    # Without ConditionCheckItem, the ConditionCheck entry is refused; without DeleteItem
    # the Delete: there is no TransactWriteItems action to grant them.
    writes = statement(ITEM_WRITES[1:], resource=TABLE04)
    assert [allowed([writes], r) for r in requests] == [True, True, False, False]
    transact = statement("dynamodb:TransactWriteItems", resource=TABLE04)
    assert [allowed([transact], r) for r in requests] == [False] * 4


def test_entries_have_the_transaction_as_their_enclosing_operation() -> None:
    requests = transaction(*entries())
    # Example 2 allows only transactional operations; example 3 denies them.
    only_transactions = statement(ALL_FIVE, TRANSACTIONAL, resource=TABLE04)
    assert [allowed([only_transactions], r) for r in requests] == [True] * 4
    deny = statement(ALL_FIVE, TRANSACTIONAL, resource=TABLE04, effect="Deny")
    allow = statement(ALL_FIVE[1:], resource=TABLE04)
    assert {decide([deny, allow], r) for r in requests} == {"explicitly denied"}


def test_an_entry_s_condition_keys_are_its_own() -> None:
    """Leading keys and attributes are each entry's, worked out as for its action."""
    mine, theirs = transaction(*entries()), transaction(*entries("amzn1.account.BJÖRN"))
    own_items = OWN_ITEMS | {"Action": ALL_FIVE, "Resource": TABLE04}
    assert [allowed([own_items], r) for r in mine] == [True] * 4
    assert [allowed([own_items], r) for r in theirs] == [False] * 4
    assert mine[1].context["dynamodb:attributes"] == ("GameTitle", "UserId", "Wins")


def test_return_values_of_an_entry_are_not_modelled() -> None:
    """An entry has no ``ReturnValues``, and AWS does not say what the key is for it."""
    put = {"Item": key("z")}
    entry = on("dynamodb:PutItem", dynamodb_context("PutItem", put, "UserId", TRANSACT_WRITE))
    returns_none = statement(
        "dynamodb:PutItem", {"StringEquals": {"dynamodb:ReturnValues": "NONE"}}
    )
    with pytest.raises(Unmodelled):
        decide([returns_none], entry)


def test_the_enclosing_operation_of_a_request_alone_is_not_modelled() -> None:
    alone = on("dynamodb:PutItem", dynamodb_context("PutItem", {"Item": key("z")}, "UserId"))
    with pytest.raises(Unmodelled):
        decide([statement("dynamodb:PutItem", TRANSACTIONAL)], alone)


def test_an_entry_of_no_known_kind_raises() -> None:
    with pytest.raises(Unmodelled):
        transaction_entries({"TransactItems": [{"Get": {"TableName": "table04"}}]})
