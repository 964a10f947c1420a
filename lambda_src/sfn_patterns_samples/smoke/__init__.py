"""The smoke Lambda: proves a state machine reaches real handler code under LocalStack."""
