"""AWS clients for a LocalStack endpoint, made through ``localstack-client``.

The tests, benchmarks, demo and Terraform harness all talk to the harness's LocalStack
through this one factory: ``localstack_client.session.Session`` builds each service's
endpoint from the LocalStack host (``127.0.0.1:<port>``) and sets the dummy
credentials and region, so no caller repeats them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

import boto3
from localstack_client.session import Session

REGION = "us-east-1"

ClientFactory = Callable[..., Any]


def client_factory(
    endpoint: str, region: str = REGION, account: str | None = None
) -> ClientFactory:
    """``factory("lambda")`` returns a boto3 client bound to the LocalStack at ``endpoint``.

    ``account``: a 12-digit account id to act in (LocalStack takes the account from an
    access key of 12 digits); None is LocalStack's default account, 000000000000.
    """
    session = Session(
        aws_access_key_id=account or "test",
        aws_secret_access_key="test",
        region_name=region,
        localstack_host=urlparse(endpoint).netloc,
    )

    made: dict[str, Any] = {}
    lock = threading.Lock()

    def client(service: str, **kwargs: Any) -> Any:
        # One client per service (boto3 clients are thread-safe): a new one costs
        # 5-15 ms of CPU (its class, endpoint rules, a connection pool) and tests ask
        # for one per call; a test worker spent a sixth of its CPU making clients.
        # A client with options of its own (a Config, another region) is new each time.
        if kwargs:
            return session.client(service, **kwargs)
        with lock:
            if service not in made:
                made[service] = session.client(service)
            return made[service]

    return client


def session_clients(
    endpoint: str, role_arn: str, session_name: str = "consumer", region: str = REGION
) -> Callable[[str], Any]:
    """A client factory signing as a session of ``role_arn``.

    The role is assumed with the account's own keys; the harness's IAM decides the
    calls of role sessions, so what the role's policies allow is what the clients may do.
    """
    admin_sts = boto3.client(
        "sts",
        endpoint_url=endpoint,
        region_name=region,
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    creds = admin_sts.assume_role(RoleArn=role_arn, RoleSessionName=session_name)["Credentials"]
    session = boto3.Session(
        aws_access_key_id=creds["AccessKeyId"],
        aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=creds["SessionToken"],
        region_name=region,
    )
    return lambda service: session.client(service, endpoint_url=endpoint)
