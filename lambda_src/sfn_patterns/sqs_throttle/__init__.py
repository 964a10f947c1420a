"""sqs-throttle: a scheduled starter keeps at most max_concurrency executions running.

``producer.enqueue`` puts a request on the FIFO queue; ``starter.handler`` is the
scheduled Lambda. Standard library and boto3 only (the Lambda bundle packs this
package alone).
"""

from .naming import execution_arn, execution_name
from .producer import build_message, enqueue

__all__ = ["build_message", "enqueue", "execution_arn", "execution_name"]
