"""lambda_kms_key_arn (fixes/): a function's KMSKeyArn is kept and returned, as on AWS.

Plain LocalStack 4.14.0 drops it, so GetFunctionConfiguration answers no KMSKeyArn and
Terraform plans a change to ``kms_key_arn`` of every function with a customer managed
key on every plan.
"""

from __future__ import annotations

import io
import uuid
import zipfile
from collections.abc import Callable, Iterator

import pytest

from sfn_patterns_localstack.emulation.fixes import lambda_kms_key_arn
from sfn_patterns_localstack.roles import delete_role, function_role


def test_it_applies_to_the_pinned_version() -> None:
    assert lambda_kms_key_arn.apply() is True


def _code() -> bytes:
    """A function's zip: one handler that answers its event."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("app.py", "def handler(event, context):\n    return event\n")
    return archive.getvalue()


@pytest.fixture
def key_and_function(aws: Callable) -> Iterator[tuple[str, str]]:
    key = aws("kms").create_key(Description="lambda-kms-key-arn test")["KeyMetadata"]["Arn"]
    name = f"kms-arn-{uuid.uuid4().hex[:8]}"
    role = function_role(aws("iam"), name, [name])
    client = aws("lambda")
    client.create_function(
        FunctionName=name,
        Runtime="python3.12",
        Role=role,
        Handler="app.handler",
        Code={"ZipFile": _code()},
        Environment={"Variables": {"SECRET": "x"}},
        KMSKeyArn=key,
    )
    yield key, name
    client.delete_function(FunctionName=name)
    delete_role(aws("iam"), name)


@pytest.mark.integration
def test_the_key_is_returned_until_an_update_resets_it(
    aws: Callable, key_and_function: tuple[str, str]
) -> None:
    key, name = key_and_function
    client = aws("lambda")
    assert client.get_function_configuration(FunctionName=name).get("KMSKeyArn") == key
    assert client.get_function(FunctionName=name)["Configuration"].get("KMSKeyArn") == key
    listed = [f for f in client.list_functions()["Functions"] if f["FunctionName"] == name]
    assert [f.get("KMSKeyArn") for f in listed] == [key]
    client.get_waiter("function_updated_v2").wait(FunctionName=name)
    # An update that does not name the key keeps it.
    answer = client.update_function_configuration(FunctionName=name, Timeout=5)
    assert answer.get("KMSKeyArn") == key
    client.get_waiter("function_updated_v2").wait(FunctionName=name)
    # "" goes back to the AWS managed key: no KMSKeyArn any more.
    answer = client.update_function_configuration(FunctionName=name, KMSKeyArn="")
    assert "KMSKeyArn" not in answer
    assert "KMSKeyArn" not in client.get_function_configuration(FunctionName=name)


@pytest.mark.integration
def test_a_function_created_again_without_a_key_has_none(
    aws: Callable, key_and_function: tuple[str, str]
) -> None:
    _, name = key_and_function
    client = aws("lambda")
    code = client.get_function(FunctionName=name)["Code"]
    assert code  # the function exists with its key
    client.delete_function(FunctionName=name)
    client.create_function(
        FunctionName=name,
        Runtime="python3.12",
        Role=aws("iam").get_role(RoleName=name)["Role"]["Arn"],
        Handler="app.handler",
        Code={"ZipFile": _code()},
    )
    assert "KMSKeyArn" not in client.get_function_configuration(FunctionName=name)
