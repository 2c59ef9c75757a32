"""Driving the real agent CLIs offline: a loopback mock model server per API, and the
resume check that reports what a client sends when it resumes a file."""
