"""The KMS decisions wired into the IAM handler, over LocalStack's stores.

``emulation/plugins.py`` passes ``key_check`` to ``iam.handler.install``, which calls it
once per LocalStack process: KMS follows the same ``SFNP_IAM`` mode (enforce, audit,
off) and usage file as IAM.
"""

from __future__ import annotations

from sfn_patterns_localstack.emulation.iam.handler import KeyCheck
from sfn_patterns_localstack.emulation.iam.principals import Directory
from sfn_patterns_localstack.emulation.iam.usage import UsageRecorder


def key_check(directory: Directory, recorder: UsageRecorder) -> KeyCheck:
    """A ``KeyChecker`` reading LocalStack 4.14.0's stores (``stores``)."""
    from sfn_patterns_localstack.emulation.kms.check import KeyChecker
    from sfn_patterns_localstack.emulation.kms.stores import (
        LocalStackResources,
        Registry,
        moto_role_id,
        resolve_key,
    )

    registry = Registry(moto_role_id)
    return KeyChecker(
        directory,
        recorder,
        resolve=resolve_key,
        resources=lambda scope: LocalStackResources(registry, scope.account, scope.region),
        role_id=moto_role_id,
        observe=registry.observe,
    )
