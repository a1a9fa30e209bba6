"""The workflow graph's SVG (no database): columns by depth, an arrow per edge, escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from django_pgmq.dashboard.workflow_graph import GraphStep, columns, graph

NS = "{http://www.w3.org/2000/svg}"


def names(laid: list[list[GraphStep]]) -> list[list[str]]:
    return [[s.name for s in column] for column in laid]


def test_a_chord_inside_a_chain_stands_in_columns_by_depth():
    steps = [
        GraphStep("fetch", "done"),
        GraphStep("a", "done", ["fetch"]),
        GraphStep("b", "sent", ["fetch"]),
        GraphStep("total", "waiting", ["a", "b"]),
        GraphStep("mail", "waiting", ["total"]),
        GraphStep("alone", "sent"),
    ]
    assert names(columns(steps)) == [["fetch", "alone"], ["a", "b"], ["total"], ["mail"]]


def test_a_step_goes_one_past_its_deepest_parent_whatever_the_order_given():
    steps = [
        GraphStep("late", "waiting", ["deep", "root"]),
        GraphStep("deep", "waiting", ["mid"]),
        GraphStep("mid", "waiting", ["root"]),
        GraphStep("root", "sent"),
    ]
    assert names(columns(steps)) == [["root"], ["mid"], ["deep"], ["late"]]


def test_a_long_chain_needs_no_recursion():
    steps = [GraphStep("0", "done")] + [
        GraphStep(str(i), "waiting", [str(i - 1)]) for i in range(1, 5000)
    ]
    assert len(columns(steps)) == 5000


def test_the_svg_is_well_formed_with_a_box_per_step_and_an_arrow_per_edge():
    steps = [
        GraphStep("a<b>", "done"),
        GraphStep("c", "failed", ["a<b>"]),
        GraphStep("d", "cancelled", ["a<b>", "c"]),
    ]
    markup = graph(steps, 'workflow "1"', {"done": "erledigt", "failed": "fehlgeschlagen"})
    root = ET.fromstring(markup)
    assert root.find(NS + "title").text == 'workflow "1"'
    boxes = root.findall(f"{NS}g")
    assert [b.get("data-step") for b in boxes] == ["a<b>", "c", "d"]
    assert [b.get("data-status") for b in boxes] == ["done", "failed", "cancelled"]
    assert boxes[1].find(NS + "title").text == "c: fehlgeschlagen"
    assert len(root.findall(f"{NS}line")) == 3
    assert "<b>" not in markup
