"""Benchmarks: django-pgmq side by side with pgmq's SQL and a bare table (``python -m benchmarks``)."""
