"""The installed SQL API answers through the queue manager."""

import django_pgmq as pgmq


def test_send_read_archive_round_trip(queue):
    msg_id = pgmq.send(queue, {"hello": "world"})
    [message] = pgmq.read(queue, vt=30, qty=5)
    assert message.msg_id == msg_id
    assert message.message == {"hello": "world"}
    assert message.read_ct == 1
    assert pgmq.archive(queue, msg_id) is True
    assert pgmq.read(queue, vt=30, qty=5) == []
    assert pgmq.metrics(queue).total_messages == 1
