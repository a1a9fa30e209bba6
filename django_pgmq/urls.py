"""URLs django-pgmq offers outside the admin: the Prometheus endpoint.

    path("pgmq/metrics", django_pgmq.urls.metrics, name="pgmq_metrics")
or  path("pgmq/", include("django_pgmq.urls"))   # serves pgmq/metrics
"""

from django.urls import path

from .dashboard.prometheus import metrics

app_name = "django_pgmq"
urlpatterns = [path("metrics", metrics, name="metrics")]

__all__ = ["metrics", "urlpatterns"]
