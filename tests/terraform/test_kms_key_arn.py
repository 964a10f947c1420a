"""Every ``kms_key_arn`` variable is validated as a KMS key ARN, the same way, in every module.

The modules put the key in log groups, Lambda environments and IAM policies, which
take only the key's own ARN (not a key ID, alias name or alias ARN), and DynamoDB reads
the key ARN back, so an alias would show a change on every plan. The validation must
accept null and a key ARN of every partition (aws, aws-cn, aws-us-gov, ...), single-
and multi-Region keys. Each module's terraform test (tftest.hcl) proves Terraform
refuses a key ID and an alias ARN; this test checks the one expression they share
against a table of ARNs, with Python's ``re`` (the expression uses only syntax RE2 and
``re`` read the same way).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODULES = [
    "",  # the root module
    "modules/dag-aggregate",
    "modules/event-completion",
    "modules/job-poller",
    "modules/lambda-function",
    "modules/semaphore",
    "modules/sqs-throttle",
    "modules/state-machine",
    "modules/status-table",
]
BLOCK = re.compile(r'^variable "kms_key_arn" \{\n(.*?)^\}', re.MULTILINE | re.DOTALL)
CONDITION = re.compile(
    r'condition\s*=\s*var\.kms_key_arn == null \|\| can\(regex\("(.*)", var\.kms_key_arn\)\)\n'
)
MESSAGE = re.compile(r'error_message\s*=\s*"(.*)"\n')


def _validation(module: str) -> tuple[str, str]:
    text = (REPO / module / "variables.tf").read_text()
    block = BLOCK.search(text)
    assert block, f"{module or 'root'}: no kms_key_arn variable"
    condition, message = CONDITION.search(block.group(1)), MESSAGE.search(block.group(1))
    assert condition and message, f"{module or 'root'}: kms_key_arn has no ARN validation"
    # HCL string escapes: only \\ and \" can occur in these expressions.
    return condition.group(1).replace("\\\\", "\\"), message.group(1)


def test_every_module_with_a_key_validates_it() -> None:
    with_key = sorted(
        str(p.parent.relative_to(REPO))
        for p in REPO.glob("modules/*/variables.tf")
        if 'variable "kms_key_arn"' in p.read_text()
    )
    assert with_key == MODULES[1:]
    patterns = {module: _validation(module)[0] for module in MODULES}
    assert len(set(patterns.values())) == 1, patterns
    for module in MODULES:
        message = _validation(module)[1]
        # Names the variable, what is expected, and what to do with an alias.
        assert message.startswith("kms_key_arn must be the ARN of a KMS key"), module
        assert "null" in message and "describe-key" in message, module


KEY = "1234abcd-12ab-34cd-56ef-1234567890ab"
MRK = "mrk-1234abcd12ab34cd56ef1234567890ab"


@pytest.mark.parametrize(
    "arn",
    [
        f"arn:aws:kms:eu-west-1:123456789012:key/{KEY}",
        f"arn:aws-cn:kms:cn-north-1:123456789012:key/{KEY}",
        f"arn:aws-us-gov:kms:us-gov-west-1:123456789012:key/{KEY}",
        f"arn:aws-iso-b:kms:us-isob-east-1:123456789012:key/{KEY}",
        f"arn:aws:kms:ap-southeast-5:123456789012:key/{MRK}",
    ],
)
def test_key_arns_of_every_partition_are_accepted(arn: str) -> None:
    assert re.fullmatch(_validation("")[0], arn)


@pytest.mark.parametrize(
    "value",
    [
        KEY,  # a key ID
        "alias/data",  # an alias name
        "arn:aws:kms:eu-west-1:123456789012:alias/data",  # an alias ARN
        "arn:aws:kms:eu-west-1:123456789012:key/",  # no key ID
        f"arn:aws:kms:eu-west-1:12345678901:key/{KEY}",  # 11-digit account
        f"arn:aws:kms::123456789012:key/{KEY}",  # no region
        f"arn:aws:s3:::bucket/{KEY}",  # another service
        f"arn:aws:kms:eu-west-1:123456789012:key/{KEY} ",  # trailing space
        f"arn:aws:kms:eu-west-1:123456789012:key/{KEY.upper()}",
    ],
)
def test_anything_else_is_refused(value: str) -> None:
    assert re.fullmatch(_validation("")[0], value) is None


# The semaphore's keys of machines it does not own take the same pattern.
FOREIGN_KEYS = {
    "target_kms_key_arn": (
        r"var\.target_kms_key_arn == null \|\| "
        r'can\(regex\("(.*)", var\.target_kms_key_arn\)\)'
    ),
    "holder_kms_key_arns": r'can\(regex\("(.*)", arn\)\)',
}


@pytest.mark.parametrize("variable", sorted(FOREIGN_KEYS))
def test_the_semaphores_foreign_keys_are_validated_the_same_way(variable: str) -> None:
    text = (REPO / "modules/semaphore/variables.tf").read_text()
    block = re.search(rf'^variable "{variable}" \{{\n(.*?)^\}}', text, re.MULTILINE | re.DOTALL)
    assert block, f"modules/semaphore: no {variable} variable"
    condition = re.search(FOREIGN_KEYS[variable], block.group(1))
    assert condition, f"modules/semaphore: {variable} has no ARN validation"
    assert condition.group(1).replace("\\\\", "\\") == _validation("")[0]
    message = MESSAGE.search(block.group(1))
    assert message and message.group(1).startswith(f"{variable} must"), variable
