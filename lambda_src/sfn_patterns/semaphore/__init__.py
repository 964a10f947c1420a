"""semaphore: executions wait for a slot (DynamoDB counter) before a critical section."""
