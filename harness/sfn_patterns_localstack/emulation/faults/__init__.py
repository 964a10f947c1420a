"""Fault injection: AWS's own failure modes, on LocalStack, from a reproducible plan.

A pattern's promises (never over-admit, never lose or double-run work) only mean
something under the failures AWS really has: throttling, 5xx, latency, Lambda
environments dying, at-least-once deliveries, eventually consistent listings. This
subpackage injects them into a running LocalStack from a plan, and logs each one.

The plan (a JSON document; ``SFNP_FAULTS=/path/plan.json`` at start, or
``POST /_sfnp/faults`` / ``sfn-patterns localstack faults set PLAN.json`` at run time)::

    {
      "seed": 42,                       # int or string: same seed, same decisions
      "faults": [
        {
          "service": "dynamodb",        # botocore's service name (stepfunctions, lambda, ...)
          "operation": "PutItem",       # the API operation, or "*"
          "kind": "throttle",           # what happens (below)
          "caller_role": "arn:aws:iam::*:role/sfnp-*",  # optional, glob on the role ARN
          "resource": "sfnp-*",         # optional, glob on the call's resource (below)
          "probability": 0.2,           # optional: fire on this share of matching calls
          "first": 3,                   # optional: only the first n matching calls
          "after_seconds": 5,           # optional window, from the plan's load...
          "for_seconds": 30,            # ...for this long (default: forever)
          "seconds": 1.5,               # latency, stale_list age, event_delay
          "code": "X", "status": 500,   # kind "error" only
          "message": "..."              # optional error message
        }
      ]
    }

Kinds, by where they act:

* at the gateway, before the service (any service and operation):
  ``throttle`` (the service's own throttling error: DynamoDB item operations
  ``ProvisionedThroughputExceededException`` 400, Step Functions ``ThrottlingException``
  400, Lambda ``TooManyRequestsException`` 429, SQS ``RequestThrottled`` 400, ... see
  :mod:`.errors`), ``internal_error`` (the service's 500: Lambda ``ServiceException``,
  DynamoDB ``InternalServerError``, otherwise ``InternalFailure``), ``unavailable``
  (``ServiceUnavailable`` 503), ``error`` (``code`` and ``status`` given), ``latency``
  (sleep ``seconds``, then the call proceeds);
* on the answer: ``stale_list`` (stepfunctions ListExecutions only: the list as it was
  ``seconds`` ago, see :mod:`.stale_list`), ``duplicate_delivery`` (sqs ReceiveMessage
  only: the received messages become visible again at once, so they are delivered
  a second time), ``answer_lost`` (any service and operation: the call takes effect,
  then its answer is replaced by the service's 500, as when a response is lost on the
  way back; the caller's SDK sends the call again);
* on EventBridge's delivery to a rule's targets (service ``events``, operation
  ``PutEvents``, resource = rule name): ``event_duplicate``, ``event_delay``
  (``seconds``), ``event_drop`` (:mod:`.deliveries`);
* in the Lambda executor (service ``lambda``, operation ``Invoke``, resource =
  function name): ``kill`` (the handler's process killed ``seconds``, default 0,
  after the invoke started), ``timeout`` (the handler finishes, its answer is lost, the
  invoke times out) (:mod:`.invocation`);
* as an execution enters a state (service ``stepfunctions``, operation
  ``StateTransition``, resource = state machine ARN): ``transition_throttle`` (the
  transition waits ``seconds``, as one over the account's state-transition quota
  waits for its bucket to refill; listeners, the metrics emulation's
  ``ExecutionThrottled``, are told) (:mod:`.transitions`).

A call's resource is its first string parameter among TableName, FunctionName,
stateMachineArn, executionArn, QueueUrl, EventBusName, Name, WorkgroupName.

When: a matching call in the fault's window counts; past ``first`` it does not fire;
with ``probability`` it draws from the fault's own ``random.Random(f"{seed}:{index}")``.
Faults are tried in plan order: latencies add up, the first other fault that fires
decides the call. Calls between services (a task's ``lambda:invoke``, a Lambda's SDK
calls) are matched too, with the calling role resolved from the access key
(:mod:`..callers`).

Every injected fault is logged (time, seconds since load, service, operation, caller,
resource, kind, fault index, the fault's call number): ``GET /_sfnp/faults``,
``sfn-patterns localstack faults log``, and ``SFNP_FAULTS_LOG`` (JSON lines).

Modules: :mod:`.plan` (parse and check), :mod:`.injector` (decide and log),
:mod:`.journal` (the log), :mod:`.errors` (each service's errors), :mod:`.gateway`
(the handlers), :mod:`.stale_list`, :mod:`.deliveries`, :mod:`.invocation`,
:mod:`.transitions`,
:mod:`.routes` (the HTTP route), :mod:`.client` (the route's client),
:mod:`.install` (wiring at LocalStack's start).
"""
