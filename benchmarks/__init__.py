"""Benchmarks: django-pgmq beside pgmq's SQL and a bare table (``python -m benchmarks``)."""
