"""An async view for tests/integration/test_async_api.py: the async API from an ASGI request."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.urls import path

import django_pgmq as pgmq
from tests import task_funcs


async def send_and_read(request: HttpRequest, queue: str) -> JsonResponse:
    """Send a message, read it back, enqueue a Django task: all awaited in the view."""
    msg_id = await pgmq.asend(queue, {"from": "view"})
    [message] = await pgmq.aread(queue, vt=30, qty=1)
    await pgmq.aarchive(queue, message.msg_id)
    result = await task_funcs.echo.aenqueue("from a view")
    fetched = await task_funcs.echo.aget_result(result.id)
    return JsonResponse({"sent": msg_id, "read": message.msg_id, "task": fetched.status})


urlpatterns = [path("send/<str:queue>/", send_and_read)]
