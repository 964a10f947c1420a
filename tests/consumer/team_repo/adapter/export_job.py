"""The team's export job adapter: the job-poller's generic Lambdas invoke it by ARN.

A stand-in for a real service's start/status API: "start" returns a handle with the
time the job will be done; "status" says RUNNING until then, then SUCCEEDED.
"""

import time


def handler(event, context):
    if event["action"] == "start":
        seconds = float((event.get("input") or {}).get("seconds", 2))
        return {"export_id": f"exp-{int(time.time() * 1000)}", "done_at": time.time() + seconds}
    job = event.get("job") or {}
    return {"status": "SUCCEEDED" if time.time() >= job["done_at"] else "RUNNING"}
