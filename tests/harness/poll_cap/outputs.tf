output "queue_urls" {
  description = "URL of each queue, by suffix."
  value       = { for k, q in aws_sqs_queue.this : k => q.url }
}
