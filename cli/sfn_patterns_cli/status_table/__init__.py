"""status-table command line: ``sfn-patterns status``."""
