"""LocalStack CPU fixes (emulation/fixes) give the answers LocalStack's own code gives.

moto_dispatch: the kept handler names of a response class are moto's own listing.
serializer_mime: a kept content type is the one LocalStack's negotiation picks.

region_lookup: every service's valid regions are LocalStack's own list, from one shared
session. service_catalog: the index LocalStack builds is kept, byte for byte, and a
later LocalStack finds it in its own cache directory instead of building it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sfn_patterns_localstack.emulation.fixes import region_lookup, service_catalog


def test_both_apply_to_the_pinned_versions(tmp_path: Path) -> None:
    assert region_lookup.apply() is True
    assert service_catalog.apply(tmp_path / "shared") is True


@pytest.mark.parametrize(
    "service",
    [
        "dynamodb",
        "sqs",
        "s3",
        "stepfunctions",
        "lambda",
        "cloudwatch",
        "logs",
        "events",
        "sns",
        "kms",
        "iam",
        "sts",
        "scheduler",
        "redshift-data",
        "no-such-service",
    ],
)
def test_regions_are_localstack_s_own(service: str) -> None:
    from localstack.utils.aws import aws_stack

    assert region_lookup.apply()
    own = region_lookup.valid_regions_for_service.__wrapped__
    original = aws_stack.get_valid_regions_for_service
    assert original is region_lookup.valid_regions_for_service
    # LocalStack's body (a fresh boto3 session per call), without its cache.
    import boto3

    session = boto3.Session()
    expected = list(session.get_available_regions(service))
    expected += session.get_available_regions("cloudwatch", partition_name="aws-us-gov")
    expected += session.get_available_regions("cloudwatch", partition_name="aws-cn")
    assert own(service) == expected
    assert region_lookup.valid_regions_for_service(service) == expected


def test_the_providers_that_import_the_lookup_by_name_get_the_shared_one() -> None:
    """region_lookup: LocalStack 4.14.0's S3 and DynamoDB providers import it by name."""
    import importlib

    assert region_lookup.apply()
    for name in region_lookup.BY_NAME:
        module = importlib.import_module(name)
        assert module.get_valid_regions_for_service is region_lookup.valid_regions_for_service
    assert region_lookup.apply()  # again, with the providers loaded: nothing changes
    for name in region_lookup.BY_NAME:
        module = importlib.import_module(name)
        assert module.get_valid_regions_for_service is region_lookup.valid_regions_for_service


def test_a_built_index_is_kept_and_seeds_the_next_localstack(tmp_path: Path) -> None:
    shared, first, second = tmp_path / "shared", tmp_path / "ls1", tmp_path / "ls2"
    built: list[str] = []

    def build(file_path: str) -> str:
        built.append(file_path)
        Path(file_path).write_bytes(b"index bytes")
        return "index"

    first.mkdir()
    wrapped = service_catalog._keeping(build, shared)
    name = "service-catalog-4_14_0-1_0.dill"
    assert wrapped(str(first / name)) == "index"
    assert (shared / name).read_bytes() == b"index bytes"
    assert not [p for p in shared.iterdir() if p.name.startswith(".staging-")]
    # The next LocalStack's cache directory gets the file; one that has it keeps its own.
    assert service_catalog.seed(second, shared) == [name]
    assert (second / name).read_bytes() == b"index bytes"
    (second / name).write_bytes(b"its own")
    assert service_catalog.seed(second, shared) == []
    assert (second / name).read_bytes() == b"its own"
    assert built == [str(first / name)]


def test_localstack_loads_the_seeded_index(tmp_path: Path) -> None:
    """The kept file is what LocalStack's loader reads: the same catalog as a build."""
    from localstack.aws import spec

    shared = tmp_path / "shared"
    path = tmp_path / "ls1" / "service-catalog-test.dill"
    path.parent.mkdir()
    built = service_catalog._keeping(spec.build_service_index_cache, shared)(str(path))
    loaded = spec.load_service_index_cache(str(shared / path.name))
    assert loaded.service_names == built.service_names
    assert loaded.operations_index == built.operations_index
    assert loaded.target_prefix_index == built.target_prefix_index


def test_the_code_url_is_the_one_localstack_signs() -> None:
    """Same URL as LocalStack's own method, but for the signing time (frozen here)."""
    from unittest import mock

    from localstack.services.lambda_.invocation import lambda_models

    from sfn_patterns_localstack.emulation.fixes import lambda_code_url

    original = lambda_models.S3Code.generate_presigned_url
    original = getattr(original, "__wrapped__", original)
    assert lambda_code_url.apply() is True
    patched = lambda_models.S3Code.generate_presigned_url
    code = mock.Mock(
        s3_bucket="awslambda-us-east-1-tasks", s3_key="snapshots/f-1", s3_object_version=None
    )
    versioned = mock.Mock(s3_bucket="b", s3_key="k", s3_object_version="v3")
    # Both clocks a signature reads: SigV4's datetime, and the epoch seconds S3's
    # query-string ``Expires`` is counted from (a second boundary crossed between the
    # two calls once made them differ by one).
    with mock.patch("botocore.auth.datetime") as clock, mock.patch("botocore.auth.time") as epoch:
        import datetime as real
        import time as real_time

        epoch.time.return_value = 1795690000.0
        epoch.gmtime.side_effect = real_time.gmtime
        epoch.strftime.side_effect = real_time.strftime
        clock.datetime.utcnow.return_value = real.datetime(2026, 11, 26, 4, 0, 0)
        clock.datetime.now.return_value = real.datetime(2026, 11, 26, 4, 0, 0)
        for target in (code, versioned):
            for endpoint in ("http://127.0.0.1:4566", "http://localhost:9999"):
                expected = original(target, endpoint)
                assert patched(target, endpoint) == expected
                assert patched(target, endpoint) == expected  # the kept client, again
    client = lambda_code_url.s3_client("http://127.0.0.1:4566")
    assert lambda_code_url.s3_client("http://127.0.0.1:4566") is client


def test_the_gateway_s_requests_parse_no_form_body_and_log_no_access_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io
    from types import SimpleNamespace

    from rolo.serving.twisted import TwistedGateway, TwistedRequestAdapter

    from sfn_patterns_localstack.emulation.fixes import http_server

    class DummyChannel:
        """What a Twisted request asks of its channel before it is processed."""

        site = SimpleNamespace(_parsePOSTFormSubmission=True)  # Twisted's default
        transport = None

        def getPeer(self) -> None:
            return None

        def getHost(self) -> None:
            return None

    monkeypatch.setattr(TwistedRequestAdapter, "__init__", TwistedRequestAdapter.__init__)
    monkeypatch.setattr(TwistedGateway, "log", TwistedGateway.log)
    # Twisted's default, before the fix: a POST's form body is parsed into request.args.
    assert TwistedRequestAdapter(DummyChannel())._parsePOSTFormSubmission is True
    monkeypatch.setenv("SFNP_REQUEST_LOG", "0")
    assert http_server.apply() is True
    request = TwistedRequestAdapter(DummyChannel())
    assert request._parsePOSTFormSubmission is False
    body = b"Action=CreateTopic&Name=t&Version=2010-03-31"
    request.content = io.BytesIO(body)
    request.method = b"POST"
    request.requestHeaders.setRawHeaders(b"content-type", [b"application/x-www-form-urlencoded"])
    request.requestHeaders.setRawHeaders(b"content-length", [str(len(body)).encode()])
    monkeypatch.setattr(request, "process", lambda: None)
    request.requestReceived(b"POST", b"/", b"HTTP/1.1")
    # The gateway reads the body through WSGI: untouched, and nothing parsed twice.
    assert request.args == {}
    assert request.content.read() == body
    site = TwistedGateway.__new__(TwistedGateway)
    written = io.StringIO()
    site._logFile = written
    site.log(request)
    assert written.getvalue() == ""


class _Reactor:
    """Runs what a WSGI response hands the reactor at once, and counts both kinds."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def callFromThread(self, f, *args) -> None:
        self.calls.append("call")
        f(*args)


class _Request:
    """What a WSGI response writes to: its status, headers, body and finish."""

    def __init__(self) -> None:
        from rolo.serving.twisted import TwistedHeaderAdapter

        self.responseHeaders = TwistedHeaderAdapter()
        self.events: list[object] = []

    def setResponseCode(self, code: int, message: bytes = b"") -> None:
        self.events.append(code)

    def write(self, data: bytes) -> None:
        self.events.append(data)

    def finish(self) -> None:
        self.events.append("finish")


def _respond(monkeypatch: pytest.MonkeyPatch, headers: list, chunks: list[bytes]):
    from rolo.serving.twisted import HeaderPreservingWSGIResponse
    from twisted.web import wsgi

    from sfn_patterns_localstack.emulation.fixes import http_server

    monkeypatch.setattr(HeaderPreservingWSGIResponse, "run", HeaderPreservingWSGIResponse.run)
    http_server.apply()
    assert HeaderPreservingWSGIResponse.run is http_server.run_wsgi_response
    reactor = _Reactor()

    def blocking(_, f, *args):  # twisted.internet.threads.blockingCallFromThread
        reactor.calls.append("blocking")
        return f(*args)

    monkeypatch.setattr(wsgi, "blockingCallFromThread", blocking)
    response = HeaderPreservingWSGIResponse.__new__(HeaderPreservingWSGIResponse)
    response.reactor, response.request = reactor, _Request()
    response.environ, response.started, response._requestFinished = {}, False, False

    def application(environ, start_response):
        start_response("200 OK", headers)
        return iter(chunks)

    response.application = application
    response.run()
    return reactor.calls, response.request.events


def test_a_one_chunk_response_is_written_and_finished_in_one_reactor_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body = b'{"TableNames": []}'
    calls, events = _respond(monkeypatch, [("Content-Length", str(len(body)))], [body])
    assert calls == ["call"]
    assert events == [200, body, "finish"]


def test_a_streamed_response_is_written_chunk_by_chunk_as_twisted_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No length: each chunk goes out (and is waited for) before the next is produced.
    calls, events = _respond(monkeypatch, [("Content-Type", "text/plain")], [b"a", b"", b"b"])
    assert calls == ["blocking", "blocking", "call"]
    assert events == [200, b"a", b"b", "finish"]
    # A length that is not the first chunk's: streamed too, in order.
    calls, events = _respond(monkeypatch, [("Content-Length", "2")], [b"a", b"b"])
    assert calls == ["blocking", "blocking", "call"]
    assert events == [200, b"a", b"b", "finish"]


def test_moto_finds_the_same_handler_methods_once_per_class() -> None:
    """The kept answer is moto's own listing: every function of the class, nothing else."""
    import inspect

    from moto.core import responses
    from moto.dynamodb.responses import DynamoHandler
    from moto.iam.responses import IamResponse

    from sfn_patterns_localstack.emulation.fixes import moto_dispatch

    assert moto_dispatch.apply() is True
    assert moto_dispatch.apply() is True  # idempotent: patched once
    for clazz in (DynamoHandler, IamResponse):
        own = {name for name, _ in inspect.getmembers(clazz, predicate=inspect.isfunction)}
        kept = responses.method_names_from_class(clazz)
        assert set(kept) == own
        assert "get_item" in own or "create_role" in own
        assert responses.method_names_from_class(clazz) is kept  # not listed again


@pytest.mark.parametrize(
    ("protocol", "headers"),
    [
        ("json", {"Accept": "application/json"}),
        ("json", {"Accept": "*/*", "Content-Type": "application/x-amz-json-1.0"}),
        ("json", {"Content-Type": "application/cbor"}),
        ("json", {"Accept": "application/cbor"}),
        ("json", {}),
        ("json", None),
        ("query", {"Accept": "application/json"}),
        ("query", {"Content-Type": "application/x-www-form-urlencoded"}),
        ("query", {"Accept": "text/xml"}),
        ("rest-json", {"Accept": "application/json"}),
        ("rest-xml", {"Accept": "*/*"}),
    ],
)
def test_the_kept_content_type_is_the_one_localstack_negotiates(
    protocol: str, headers: dict | None
) -> None:
    from localstack.aws.protocol import serializer as module

    from sfn_patterns_localstack.emulation.fixes import serializer_mime

    assert serializer_mime.apply() is True
    patched = module.ResponseSerializer._get_mime_type
    own = patched.__wrapped__  # LocalStack's body, negotiating every time
    instance = module.create_serializer(_service_with(protocol))
    expected = own(instance, headers)
    assert patched(instance, headers) == expected
    assert patched(instance, headers) == expected  # the kept answer


def _service_with(protocol: str):
    """A service model of the given protocol (one LocalStack serves)."""
    from localstack.aws.spec import load_service

    if protocol == "query":
        return load_service("sqs", protocol="query")
    return load_service({"json": "dynamodb", "rest-json": "lambda", "rest-xml": "s3"}[protocol])


def test_json_and_cbor_requests_keep_different_content_types() -> None:
    from localstack.aws.protocol import serializer as module

    from sfn_patterns_localstack.emulation.fixes import serializer_mime

    assert serializer_mime.apply() is True
    instance = module.create_serializer(_service_with("json"))
    cbor = instance._get_mime_type({"Content-Type": "application/cbor"})
    json_ = instance._get_mime_type({"Content-Type": "application/x-amz-json-1.0"})
    assert "cbor" in cbor and "json" in json_


def test_a_response_is_logged_exactly_when_a_request_logger_passes_info(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """request_log: quiet loggers get no record built; a logger turned up gets its line."""
    import logging
    from types import SimpleNamespace

    from localstack.aws.handlers import logging as module
    from localstack.aws.handlers.logging import ResponseLogger
    from rolo import Request
    from werkzeug.datastructures import Headers

    from sfn_patterns_localstack.emulation.fixes import request_log

    monkeypatch.setenv("SFNP_REQUEST_LOG", "0")
    quiet = logging.getLogger("localstack.request")
    monkeypatch.setattr(quiet, "level", quiet.level)  # restored after the test
    assert request_log.apply() is True
    built: list[object] = []
    own = module.restore_payload
    monkeypatch.setattr(module, "restore_payload", lambda r: built.append(r) or own(r))
    context = SimpleNamespace(
        is_internal_call=False, operation=None, request=Request("GET", "/probe")
    )
    response = SimpleNamespace(status_code=200, is_streamed=False, data=b"", headers=Headers())
    logger = ResponseLogger()
    with caplog.at_level(logging.INFO, logger="localstack.request.http"):
        quiet.setLevel(logging.WARNING)
        logging.getLogger("localstack.request.http").setLevel(logging.NOTSET)
        logger._log(context, response)
        assert not built and "/probe" not in caplog.text
        logging.getLogger("localstack.request.http").setLevel(logging.INFO)
        try:
            logger._log(context, response)
        finally:
            logging.getLogger("localstack.request.http").setLevel(logging.NOTSET)
    assert "GET /probe => 200" in caplog.text


def test_a_failed_sns_delivery_to_sqs_is_retried_as_aws_does() -> None:
    """sns_sqs_retry: three immediate attempts, then back-off; a missing queue is final."""
    from sfn_patterns_localstack.emulation.fixes import sns_sqs_retry

    assert sns_sqs_retry.apply() is True
    pauses: list[float] = []
    calls: list[int] = []

    def flaky() -> None:
        calls.append(1)
        if len(calls) < 5:
            raise RuntimeError("Read timeout on endpoint URL")

    sns_sqs_retry.send_with_retries(flaky, pause=pauses.append)
    assert len(calls) == 5 and pauses == [1.0, 2.0]  # three at once, then 1 s and 2 s apart

    def gone() -> None:
        calls.append(1)
        raise RuntimeError("AWS.SimpleQueueService.NonExistentQueue")

    calls.clear()
    with pytest.raises(RuntimeError, match="NonExistentQueue"):
        sns_sqs_retry.send_with_retries(gone, pause=pauses.append)
    assert len(calls) == 1

    def down() -> None:
        calls.append(1)
        raise RuntimeError("connection refused")

    calls.clear()
    pauses.clear()
    with pytest.raises(RuntimeError, match="refused"):
        sns_sqs_retry.send_with_retries(down, pause=pauses.append)
    assert len(calls) == len(sns_sqs_retry.attempts())
    assert pauses == list(sns_sqs_retry.BACKOFF)
