"""A function's ``KMSKeyArn`` is kept and returned (LocalStack 4.14.0).

AWS keeps the customer managed key a function's environment variables are encrypted
with: ``CreateFunction`` and ``UpdateFunctionConfiguration`` take ``KMSKeyArn``, and
every ``FunctionConfiguration`` (``GetFunction``, ``GetFunctionConfiguration``,
``ListFunctions``, the create and update answers) carries it until an update sets it to
``""`` (back to the AWS managed key). The Terraform provider reads it back into
``kms_key_arn``, so without it every plan of a function with a key shows a change.

LocalStack 4.14.0 drops it: ``VersionFunctionConfiguration`` has no field for it (its
``kms_key_arn`` is commented out in ``lambda_models.py``) and ``map_config_out`` renders
none. The patch remembers the key per function (its unqualified ARN) from the requests
that set it, forgets it when the function is deleted, and adds it to every rendered
configuration of that function. Versions share the function's key here (AWS keeps one
per published version; the modules publish none).
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)

_KEYS: dict[str, str] = {}  # unqualified function ARN -> KMSKeyArn
_LOCK = threading.Lock()


def _unqualified(arn: str) -> str:
    """``arn:...:function:NAME`` of a function ARN, qualified or not."""
    parts = arn.split(":")
    return ":".join(parts[:7])


def _remember(configuration: dict[str, Any], key: str | None) -> None:
    """Keep (or, for ``""``, drop) ``key`` for the function ``configuration`` describes."""
    if key is None or not configuration.get("FunctionArn"):
        return
    arn = _unqualified(str(configuration["FunctionArn"]))
    with _LOCK:
        if key:
            _KEYS[arn] = key
        else:
            _KEYS.pop(arn, None)
    if key:
        configuration["KMSKeyArn"] = key
    else:
        configuration.pop("KMSKeyArn", None)


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; False (and nothing changed) on any other version."""
    try:
        from localstack import version
        from localstack.services.lambda_ import api_utils
        from localstack.services.lambda_.provider import LambdaProvider
    except ImportError:
        return False
    render = getattr(api_utils, "map_config_out", None)
    if version.__version__ != LOCALSTACK_VERSION or render is None:
        LOG.warning("sfn-patterns KMSKeyArn patch not applied (localstack %s)", version.__version__)
        return False
    if getattr(render, "_sfnp_patched", False):
        return True

    @functools.wraps(render)
    def map_config_out(version: Any, *args: Any, **kwargs: Any) -> Any:
        configuration = render(version, *args, **kwargs)
        with _LOCK:
            key = _KEYS.get(version.id.unqualified_arn())
        if key:
            configuration["KMSKeyArn"] = key
        return configuration

    create = LambdaProvider.create_function
    update = LambdaProvider.update_function_configuration
    delete = LambdaProvider.delete_function

    @functools.wraps(create)
    def create_function(self: Any, context: Any, request: Any) -> Any:
        configuration = create(self, context, request)
        _remember(configuration, request.get("KMSKeyArn") or None)
        return configuration

    @functools.wraps(update)
    def update_function_configuration(self: Any, context: Any, request: Any) -> Any:
        configuration = update(self, context, request)
        _remember(configuration, request.get("KMSKeyArn"))
        return configuration

    @functools.wraps(delete)
    def delete_function(
        self: Any, context: Any, function_name: str, qualifier: str | None = None, **kwargs: Any
    ) -> Any:
        answer = delete(self, context, function_name, qualifier, **kwargs)
        if not qualifier:
            from localstack.services.lambda_ import api_utils as utils

            account, region = utils.get_account_and_region(function_name, context)
            name = utils.get_function_name(function_name, context)
            arn = utils.unqualified_lambda_arn(name, account, region)
            with _LOCK:
                _KEYS.pop(arn, None)
        return answer

    map_config_out._sfnp_patched = True  # type: ignore[attr-defined]
    api_utils.map_config_out = map_config_out
    LambdaProvider.create_function = create_function
    LambdaProvider.update_function_configuration = update_function_configuration
    LambdaProvider.delete_function = delete_function
    return True
