"""moto's DynamoDB with the expression cache of fixes/moto_expression_cache.py.

The same sequence of requests (updates of every action kind, conditions of every
operator and function, lost conditions with ALL_OLD, invalid expressions, puts,
deletes, filtered queries, a transaction) runs once on moto as it is and once
patched, each expression several times with different values and items; every
answer, error and the table after each step must be the same. A cached tree that a
request changed would show as a later request's different answer.
"""

from __future__ import annotations

import copy
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from sfn_patterns_localstack.emulation.fixes import moto_expression_cache

S, N = "S", "N"

# (UpdateExpression, ConditionExpression or None, names, values): each runs on
# several items with several value sets (see _values).
UPDATES: list[tuple[str, str | None, dict[str, str], list[str]]] = [
    (
        "SET #s = :a, n = n + :one ADD c :one",
        "attribute_exists(pk)",
        {"#s": "status"},
        [":a", ":one"],
    ),
    ("SET #s = :a", "#s IN (:p, :f)", {"#s": "status"}, [":a", ":p", ":f"]),
    ("SET l = list_append(if_not_exists(l, :empty), :a1)", None, {}, [":empty", ":a1"]),
    (
        "SET m.x = :a, m.#y.z = :b",
        "attribute_not_exists(m.x) OR m.x < :b",
        {"#y": "y"},
        [":a", ":b"],
    ),
    ("REMOVE l[0], gone", "size(l) > :zero", {}, [":zero"]),
    ("ADD tags :set", "NOT contains(tags, :one_tag)", {}, [":set", ":one_tag"]),
    (
        "DELETE tags :one_set",
        "begins_with(pk, :prefix) AND n BETWEEN :lo AND :hi",
        {},
        [":one_set", ":prefix", ":lo", ":hi"],
    ),
    ("SET n = :a - n", "(n <> :b) AND attribute_type(n, :ntype)", {}, [":a", ":b", ":ntype"]),
]


def _values(names: list[str], round_: int) -> dict[str, Any]:
    pool: dict[str, Any] = {
        ":a": {N: str(3 + round_)},
        ":b": {N: str(5 - round_)},
        ":one": {N: "1"},
        ":p": {S: "pending"},
        ":f": {S: "failed"},
        ":empty": {"L": []},
        ":a1": {"L": [{N: str(round_)}]},
        ":zero": {N: "0"},
        ":set": {"SS": [f"t{round_}", "shared"]},
        ":one_tag": {S: f"t{round_ + 1}"},
        ":one_set": {"SS": ["shared"]},
        ":prefix": {S: "k"},
        ":lo": {N: "-100"},
        ":hi": {N: str(100 * round_)},
        ":ntype": {S: "N"},
    }
    values = {name: pool[name] for name in names}
    # ":a" is a number in arithmetic, a string where status is set.
    if ":p" in names:
        values[":a"] = {S: "taken" if round_ % 2 else "pending"}
    return values


def _outcome(call: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        answer = call(**kwargs)
    except ClientError as error:
        return "error", (
            error.response["Error"]["Code"],
            error.response["Error"]["Message"],
            error.response.get("Item"),
        )
    answer.pop("ResponseMetadata", None)
    return "ok", answer


def _table_t() -> Any:
    """A client of the mocked account (inside ``mock_aws``) with table ``t`` (key ``pk``)."""
    ddb = boto3.client("dynamodb", region_name="us-east-1")
    ddb.create_table(
        TableName="t",
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
    )
    return ddb


def _run() -> list[tuple[str, Any]]:
    from moto import mock_aws

    with mock_aws():
        ddb = _table_t()
        log: list[tuple[str, Any]] = []
        for i in range(3):
            log.append(
                _outcome(
                    ddb.put_item,
                    TableName="t",
                    Item={
                        "pk": {S: f"k{i}"},
                        "status": {S: "pending"},
                        "n": {N: str(i)},
                        "gone": {S: "x"},
                        "m": {"M": {"y": {"M": {}}}},
                    },
                    ConditionExpression="attribute_not_exists(pk)",
                )
            )
        for round_ in range(3):
            for update, condition, names, value_names in UPDATES:
                for pk in ("k0", "k1", "k2", "new"):
                    kwargs: dict[str, Any] = {
                        "TableName": "t",
                        "Key": {"pk": {S: pk}},
                        "UpdateExpression": update,
                        "ExpressionAttributeValues": _values(value_names, round_),
                        "ReturnValues": "ALL_NEW" if round_ % 2 else "UPDATED_OLD",
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                    }
                    if names:
                        kwargs["ExpressionAttributeNames"] = names
                    if condition:
                        kwargs["ConditionExpression"] = condition
                    log.append(_outcome(ddb.update_item, **kwargs))
            log.append(("scan", sorted(ddb.scan(TableName="t")["Items"], key=str)))
        invalid = [
            {"UpdateExpression": "SET = :a", "ExpressionAttributeValues": {":a": {N: "1"}}},
            {"UpdateExpression": "SET n = :missing", "ExpressionAttributeValues": {":a": {N: "1"}}},
            {
                "UpdateExpression": "SET n = :a",
                "ExpressionAttributeNames": {"#never": "x"},
                "ExpressionAttributeValues": {":a": {N: "1"}},
            },
            {
                "UpdateExpression": "SET n = :a, n = :a",
                "ExpressionAttributeValues": {":a": {N: "1"}},
            },
            {"UpdateExpression": "SET pk = :a", "ExpressionAttributeValues": {":a": {S: "k9"}}},
        ]
        for _ in range(2):
            for kwargs in invalid:
                log.append(
                    _outcome(ddb.update_item, TableName="t", Key={"pk": {S: "k0"}}, **kwargs)
                )
        # The same request twice: the second's handler check of the names and values
        # used (here a name only the condition uses) reads the kept parse.
        for _ in range(2):
            log.append(
                _outcome(
                    ddb.update_item,
                    TableName="t",
                    Key={"pk": {S: "k0"}},
                    UpdateExpression="SET n = :a",
                    ConditionExpression="#s <> :p",
                    ExpressionAttributeNames={"#s": "status"},
                    ExpressionAttributeValues={":a": {N: "2"}, ":p": {S: "none"}},
                )
            )
        for round_ in range(2):
            log.append(
                _outcome(
                    ddb.put_item,
                    TableName="t",
                    Item={"pk": {S: "k1"}, "n": {N: "7"}},
                    ConditionExpression="n = :n",
                    ExpressionAttributeValues={":n": {N: str(round_)}},
                    ReturnValuesOnConditionCheckFailure="ALL_OLD",
                )
            )
            log.append(
                _outcome(
                    ddb.delete_item,
                    TableName="t",
                    Key={"pk": {S: "k2"}},
                    ConditionExpression="attribute_exists(pk) AND n > :n",
                    ExpressionAttributeValues={":n": {N: str(100 - 100 * round_)}},
                    ReturnValues="ALL_OLD",
                )
            )
            log.append(
                _outcome(
                    ddb.scan,
                    TableName="t",
                    FilterExpression="attribute_exists(#s) OR n >= :n",
                    ExpressionAttributeNames={"#s": "status"},
                    ExpressionAttributeValues={":n": {N: str(round_)}},
                )
            )
            log.append(
                _outcome(
                    ddb.transact_write_items,
                    TransactItems=[
                        {
                            "Update": {
                                "TableName": "t",
                                "Key": {"pk": {S: "k0"}},
                                "UpdateExpression": "SET n = n + :one",
                                "ConditionExpression": "n < :cap",
                                "ExpressionAttributeValues": {
                                    ":one": {N: "1"},
                                    ":cap": {N: str(1000 * round_)},
                                },
                            }
                        }
                    ],
                )
            )
        log.append(("scan", sorted(ddb.scan(TableName="t")["Items"], key=str)))
        return log


def _as_moto(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto.dynamodb import comparisons
    from moto.dynamodb.parsing import ast_nodes, validators
    from moto.dynamodb.parsing.expressions import UpdateExpressionParser

    make = UpdateExpressionParser.make.__func__
    monkeypatch.setattr(UpdateExpressionParser, "make", classmethod(make.__wrapped__))
    monkeypatch.setattr(validators, "deepcopy", copy.deepcopy)
    parse = comparisons.ConditionExpressionParser.parse
    monkeypatch.setattr(comparisons.ConditionExpressionParser, "parse", parse.__wrapped__)
    walker = ast_nodes.DepthFirstTraverser
    for name in ("nodes_to_be_processed", "process"):
        monkeypatch.setattr(walker, name, getattr(walker, name).__wrapped__)


def test_same_answers_errors_and_items_as_moto(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto.dynamodb import comparisons

    assert moto_expression_cache.apply() is True
    assert getattr(comparisons.ConditionExpressionParser.parse, "_sfnp_patched", False)
    cached = _run()
    _as_moto(monkeypatch)
    as_moto = _run()
    assert cached == as_moto
    outcomes = [outcome for outcome, _ in cached]
    # The sequence exercised both sides: applied updates and refused ones.
    assert outcomes.count("ok") > 40 and outcomes.count("error") > 20, outcomes
    codes = {answer[0] for outcome, answer in cached if outcome == "error"}
    assert {"ConditionalCheckFailedException", "ValidationException"} <= codes, codes


def test_each_expression_is_parsed_once_a_request_or_once_for_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The UpdateExpression is tokenized once for all five requests, the condition
    (whose values change every request) once per request instead of twice."""
    from moto import mock_aws
    from moto.dynamodb import comparisons
    from moto.dynamodb.parsing.tokens import ExpressionTokenizer

    assert moto_expression_cache.apply() is True
    monkeypatch.setattr(moto_expression_cache, "_update_trees", moto_expression_cache._Bounded(8))
    monkeypatch.setattr(moto_expression_cache, "_conditions", moto_expression_cache._Bounded(8))
    tokenized: list[str] = []
    lexed: list[str] = []
    tokenize = ExpressionTokenizer.make_list
    lex = comparisons.ConditionExpressionParser._lex_condition_expression

    def counting_tokenize(expression: str) -> Any:
        tokenized.append(expression)
        return tokenize(expression)

    def counting_lex(self: Any) -> Any:
        lexed.append(self.condition_expression)
        return lex(self)

    monkeypatch.setattr(ExpressionTokenizer, "make_list", staticmethod(counting_tokenize))
    monkeypatch.setattr(
        comparisons.ConditionExpressionParser, "_lex_condition_expression", counting_lex
    )
    condition = "attribute_not_exists(n) OR n < :n"
    with mock_aws():
        ddb = _table_t()
        for i in range(5):
            ddb.update_item(
                TableName="t",
                Key={"pk": {S: f"k{i % 2}"}},
                UpdateExpression="SET n = :n ADD c :one",
                ConditionExpression=condition,
                ExpressionAttributeValues={":n": {N: str(i)}, ":one": {N: "1"}},
            )
        items = sorted(ddb.scan(TableName="t")["Items"], key=str)
    assert tokenized == ["SET n = :n ADD c :one"]
    assert lexed == [condition] * 5
    assert items == [
        {"c": {N: "3"}, "n": {N: "4"}, "pk": {S: "k0"}},
        {"c": {N: "2"}, "n": {N: "3"}, "pk": {S: "k1"}},
    ]
