"""The IAM evaluator (``tests/infra/iam.py``) on cases whose answer AWS documents.

The examples are the IAM User Guide's ("Creating a condition with multiple keys or
values") and the DynamoDB Developer Guide's ("Using IAM policy conditions for
fine-grained access control"), with the verdicts those pages give.
"""

from __future__ import annotations

from typing import Any

import pytest

from .iam import (
    Context,
    Request,
    Unmodelled,
    allowed,
    attributes,
    decide,
    dynamodb_context,
    expression_names,
    like,
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
