"""Build a workflow's steps from three shapes: ``chain``, ``group`` and ``chord``.

A `Flow` is a step or a composition of flows; ``flow.steps()`` gives the spec that
``pgmq.create_workflow`` takes (``[{"step", "queue", "message", "headers", "after"}]``,
with ``after`` filled in), and any flow can be passed to
``django_pgmq.create_workflow`` directly::

    from django_pgmq.workflows import chain, chord, group, step

    flow = chain(
        step("fetch", "crawl", {"url": url}),
        chord([step(f"parse-{i}", "parse", {"part": i}) for i in range(4)],
              step("merge", "merge", {})),
    )
    workflow_id = django_pgmq.create_workflow(flow)

The shapes compose freely: a chord or a group inside a chain, a chain inside a group.
Step names must be unique in the workflow; the database checks the whole spec
(docs/guide/workflows.md). Standard library only, so any layer may import it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .errors import InvalidArgument

__all__ = ["Flow", "Step", "as_steps", "chain", "chord", "group", "step"]


class Flow:
    """A part of a workflow: a step, or a chain, group or chord of flows."""

    def steps(self) -> list[dict[str, Any]]:
        """The spec of this flow alone, as ``pgmq.create_workflow`` takes it."""
        specs, _ = self._build([])
        return specs

    def _build(self, after: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
        """This flow's step specs, its first steps running after ``after``; and the
        names of its last steps (what a flow chained after it waits for)."""
        raise NotImplementedError


class Step(Flow):
    """One step: a message sent to a queue once the steps before it are done."""

    def __init__(
        self, name: str, queue: str, message: Any, headers: dict[str, Any] | None = None
    ) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidArgument(f"a workflow step's name must be a non-empty string: {name!r}")
        if not isinstance(queue, str) or not queue:
            raise InvalidArgument(f'workflow step "{name}": queue must be a name, got {queue!r}')
        if headers is not None and not isinstance(headers, dict):
            raise InvalidArgument(f'workflow step "{name}": headers must be a dict or None')
        self.name = name
        self.queue = queue
        self.message = message
        self.headers = headers

    def _build(self, after: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
        spec: dict[str, Any] = {"step": self.name, "queue": self.queue, "message": self.message}
        if self.headers is not None:
            spec["headers"] = self.headers
        if after:
            spec["after"] = list(after)
        return [spec], [self.name]

    def __repr__(self) -> str:
        return f"step({self.name!r}, {self.queue!r})"


class _Chain(Flow):
    """Flows one after another: each starts when the one before has finished."""

    def __init__(self, parts: list[Flow]) -> None:
        self.parts = parts

    def _build(self, after: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
        specs: list[dict[str, Any]] = []
        for part in self.parts:
            built, after = part._build(after)
            specs += built
        return specs, after


class _Group(Flow):
    """Flows side by side: all start together; what follows waits for every one."""

    def __init__(self, parts: list[Flow]) -> None:
        self.parts = parts

    def _build(self, after: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
        specs: list[dict[str, Any]] = []
        last: list[str] = []
        for part in self.parts:
            built, ends = part._build(after)
            specs += built
            last += ends
        return specs, last


def _flows(what: str, parts: Iterable[Any]) -> list[Flow]:
    """``parts`` as a list of flows, or InvalidArgument naming the shape."""
    if isinstance(parts, Flow | str | bytes | dict) or not isinstance(parts, Iterable):
        raise InvalidArgument(f"{what} takes a list of steps or flows, got {parts!r}")
    flows = list(parts)
    if not flows:
        raise InvalidArgument(f"{what} needs at least one step")
    for part in flows:
        if not isinstance(part, Flow):
            raise InvalidArgument(f"{what}: {part!r} is not a step or a flow (use step(...))")
    return flows


def step(name: str, queue: str, message: Any, headers: dict[str, Any] | None = None) -> Step:
    """A step named ``name`` that sends ``message`` (with ``headers``) to ``queue``."""
    return Step(name, queue, message, headers)


def chain(*flows: Flow) -> Flow:
    """``flows`` one after another: each one's first steps wait for the last steps before."""
    return _Chain(_flows("chain", flows))


def group(flows: Iterable[Flow]) -> Flow:
    """``flows`` in parallel; a flow chained after the group waits for all of them."""
    return _Group(_flows("group", flows))


def chord(flows: Iterable[Flow], callback: Flow) -> Flow:
    """``flows`` in parallel, then ``callback``, which gets all their results."""
    if not isinstance(callback, Flow):
        raise InvalidArgument(f"chord: the callback {callback!r} is not a step or a flow")
    return _Chain([_Group(_flows("chord", flows)), callback])


def as_steps(steps: Flow | Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """A workflow spec from a flow or from a list of step dicts (checked by the database)."""
    if isinstance(steps, Flow):
        return steps.steps()
    if isinstance(steps, str | bytes | dict) or not isinstance(steps, Iterable):
        raise InvalidArgument(
            f"a workflow is a flow (step, chain, group, chord) or a list of step dicts: {steps!r}"
        )
    return list(steps)
