"""The fork server's parsed botocore data (lambda_executor/worker.py) is what botocore parses.

In a fresh interpreter (the patch is process-wide, as in a fork server): after the
warm-up, two separate sessions' loaders get the same data a loader without the patch
parses from the files, their clients build the same requests, and a file that was not
warmed is still read from disk.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from sfn_patterns_localstack.emulation import lambda_executor

# The fork server's worker script, found without importing the executor (LocalStack).
WORKER = Path(lambda_executor.__file__).with_name("worker.py")


def test_warm_data_equals_a_fresh_parse_and_serves_every_session() -> None:
    code = textwrap.dedent(
        f"""
        import importlib.util, json, sys
        spec = importlib.util.spec_from_file_location("worker", {str(WORKER)!r})
        worker = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(worker)
        from botocore import loaders
        original = loaders.JSONFileLoader.load_file
        fresh = loaders.create_loader()
        expected = {{
            "endpoints": fresh.load_data("endpoints"),
            "ddb": fresh.load_service_model("dynamodb", "service-2"),
            "sfn": fresh.load_service_model("stepfunctions", "service-2"),
        }}
        assert worker.warm_botocore_data() >= 10
        import boto3
        first, second = boto3.session.Session(), boto3.session.Session()
        for session in (first, second):
            loader = session._session.get_component("data_loader")
            assert loader.load_data("endpoints") == expected["endpoints"]
            assert loader.load_service_model("dynamodb", "service-2") == expected["ddb"]
            assert loader.load_service_model("stepfunctions", "service-2") == expected["sfn"]
        shared = [
            s._session.get_component("data_loader").load_service_model("dynamodb", "service-2")
            for s in (first, second)
        ]
        assert shared[0] is shared[1]
        # Not warmed: read from its file, as before.
        assert first._session.get_component("data_loader").load_service_model(
            "kinesis", "service-2"
        )["metadata"]["serviceId"] == "Kinesis"
        kwargs = dict(region_name="us-east-1", aws_access_key_id="a",
                      aws_secret_access_key="b", endpoint_url="http://127.0.0.1:9")
        ops = [sorted(s.client("dynamodb", **kwargs).meta.service_model.operation_names)
               for s in (first, second)]
        assert ops[0] == ops[1] and "TransactWriteItems" in ops[0]
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
