"""URLs of the example project: the Django admin (with the queues dashboard) and metrics."""

from django.contrib import admin
from django.urls import path

from django_pgmq.urls import prometheus_metrics

urlpatterns = [
    path("admin/", admin.site.urls),
    path("pgmq/metrics", prometheus_metrics, name="pgmq_metrics"),
]
