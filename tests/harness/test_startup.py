"""LocalStack's lean start (emulation/startup.py) skips imports, never behaviour.

Each case runs in a fresh interpreter: the shortcuts act on ``sys.modules`` before
LocalStack imports anything, which this test process has done long ago.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_localstack_gateway_and_sfn_batch_import_without_openapi_core_or_moto_batch() -> None:
    out = _run(
        """
        import sys
        from sfn_patterns_localstack.emulation import startup
        print(startup.lean_imports())
        import localstack.aws.app
        from localstack.aws import handlers
        import importlib
        batch = importlib.import_module(
            "localstack.services.stepfunctions.asl.component.state.state_execution"
            ".state_task.service.state_task_service_batch"
        )
        from moto.batch.utils import JobStatus
        assert batch.JobStatus is JobStatus and JobStatus.SUCCEEDED.value == "SUCCEEDED"
        assert isinstance(handlers.validate_request_schema, startup.OpenAPIRequestValidator)
        for skipped in ("openapi_core", "moto.batch", "moto.ec2", "moto.batch.models"):
            assert skipped not in sys.modules, skipped
        # moto's Batch still imports whole, and keeps the enum already loaded.
        import moto.batch
        assert moto.batch.batch_backends is not None
        assert sys.modules["moto.batch.utils"].JobStatus is JobStatus
        print("ok")
        """
    )
    assert "['localstack.aws.handlers.validation', 'moto.batch.utils']" in out
    assert out.rstrip().endswith("ok")


def test_the_validators_do_nothing_when_off_and_validate_when_on() -> None:
    out = _run(
        """
        import sys
        from sfn_patterns_localstack.emulation import startup
        startup.lean_imports()
        from localstack import config
        from localstack.aws import handlers
        from localstack.aws.api import RequestContext
        from localstack.http import Request, Response

        class Chain:
            stopped = False
            def stop(self):
                self.stopped = True

        def call(handler, path, body):
            request = Request(
                "POST",
                path,
                body=body,
                headers={
                    "Content-Type": "application/json",
                    "Host": "localhost.localstack.cloud:4566",
                },
            )
            context = RequestContext(request)
            response, chain = Response(), Chain()
            handler(chain, context, response)
            return chain.stopped, response.status_code

        bad = b'{"not": "a valid body"}'
        # Off (LocalStack's default): nothing is checked, nothing is imported.
        print("off", call(handlers.validate_request_schema, "/_aws/sqs/messages", bad))
        assert "openapi_core" not in sys.modules
        # On: LocalStack's own validator answers, as it would without the stand-in.
        config.OPENAPI_VALIDATE_REQUEST = True
        print("on", call(handlers.validate_request_schema, "/_localstack/config", bad))
        assert "openapi_core" in sys.modules
        """
    )
    assert "off (False, 200)" in out
    assert "on (True, 400)" in out
