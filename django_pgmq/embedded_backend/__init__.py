"""Django's PostgreSQL backend on the embedded server, started on the first connection.

``ENGINE: "django_pgmq.embedded_backend"`` with ``EMBEDDED_DIR`` (the data folder) in
the ``DATABASES`` entry; ``django_pgmq.embedded.django_database()`` writes one.
"""
