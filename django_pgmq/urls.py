"""URLs django-pgmq offers outside the admin: the Prometheus endpoint.

    path("pgmq/metrics", django_pgmq.urls.prometheus_metrics, name="pgmq_metrics")
or  path("pgmq/", include("django_pgmq.urls"))   # serves pgmq/metrics

``metrics`` is the deprecated name of ``prometheus_metrics`` (it warns when imported).
"""

from typing import Any

from django.urls import path

from .dashboard.prometheus import deprecated_metrics, prometheus_metrics

app_name = "django_pgmq"
urlpatterns = [path("metrics", prometheus_metrics, name="metrics")]

__all__ = ["prometheus_metrics", "urlpatterns"]


def __getattr__(name: str) -> Any:
    """``metrics``: the deprecated name of `prometheus_metrics` (it warns)."""
    if name == "metrics":
        return deprecated_metrics()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
