"""Event completion: resume executions parked on a task token when a job's end is announced.

A task that waits for a job parks on a task token (``.waitForTaskToken``) and
registers the token in a small DynamoDB table keyed by the job's id
(:class:`tokens.TokenTable`). When the job's completion event arrives (an
EventBridge rule on, say, "Redshift Data Statement Status Change"), the handler
records the job's final status under the same key and sends the token back with
SendTaskSuccess. Either side may come first; both are single-item atomic updates,
so whichever runs second sees the other's write and completes the task.

Events are best effort, so the waiting state also times out every
``fallback_seconds`` and checks the job itself: a lost event delays completion by
at most that long and never loses it. Used by the job-poller (``completion =
"event"``) and by dag-aggregate tasks (``WithEvent`` statements).
"""
