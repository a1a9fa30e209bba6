"""Integrations with other frameworks (Celery); each imports its framework only when used."""
