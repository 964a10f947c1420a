"""Every interleaving explored: a deterministic scheduler over the runtime's real code.

Several actors run a protocol's real runtime classes (the ones the Lambdas use, from
``sfn_patterns``) against one in-memory store, moto's DynamoDB, a Step Functions stand-in
and, for a protocol that reads one, moto's SQS. Exactly one actor runs at a time, and each
pauses at every AWS request it makes; a schedule says who goes next and what happens to
the request (sent, answer lost, throttled, or the actor crashes there), and when the
clock moves on. Invariants are checked after every step, and every failure prints its
schedule and the one command that replays it.

Laid out by job:

* :mod:`.steps` - schedule steps and their compact text form;
* :mod:`.scheduler` - the actor threads, the pause points, the events of a run;
* :mod:`.gateway` - the botocore ``before-send`` hook: pause point and fault injection;
* :mod:`.store` - moto's DynamoDB in-process: apply, snapshot, save and restore;
* :mod:`.sfn` - a Step Functions stand-in: executions, task tokens, stops, listings;
* :mod:`.sqs` - moto's SQS in-process on the run's clock: a protocol's queue;
* :mod:`.clock` - the fake clock and the runtime's time pointed at it;
* :mod:`.strategies` - random walk, depth-first search with sleep sets, replay;
* :mod:`.explorer` - runs, checks, failures and reports;
* :mod:`.protocol` and :mod:`.protocols` - what a protocol provides, and the protocols;
* :mod:`.cli` - ``python -m sfn_patterns_localstack.interleavings explore|replay|mutants``.

Nothing here imports LocalStack.
"""
