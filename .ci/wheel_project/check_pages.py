"""The admin dashboard and the metrics endpoint render from the installed wheel."""

import django

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.test import Client  # noqa: E402

User.objects.filter(username="wheel").delete()
client = Client()
client.force_login(User.objects.create_superuser("wheel", "wheel@example.com", "x"))
page = client.get("/admin/django_pgmq/queue/")
assert page.status_code == 200, page.status_code
assert b"wheel_smoke" in page.content, "the dashboard does not list the queue"
page = client.get("/admin/django_pgmq/queue/wheel_smoke/change/")
assert page.status_code == 200, page.status_code
metrics = client.get("/pgmq/metrics")
assert metrics.status_code == 200 and b"wheel_smoke" in metrics.content, metrics.status_code
print("dashboard, queue page and metrics render")
