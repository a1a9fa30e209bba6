"""The Django admin dashboard of django-pgmq: overview, queue pages, actions, charts, metrics."""
