output "table_name" {
  description = "The status table's name."
  value       = module.status_table.table_name
}
