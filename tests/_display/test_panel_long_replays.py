"""oloproof_nb._display.panel: a fault replay whose state differs from the recorded one in thousands of paths shows
a bounded panel."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import oloproof_nb as op

WIDE = '''
import oloproof_nb as op


class Desk(op.RecordedAgent):
    version = "wide-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def book(self, slot):
        return {"ok": True}

    def act(self, input, rec):
        out = rec.tool("book", self.book, slot="s1")
        word = "ok" if out.get("ok") else "failed"
        self.state["rows"] = {f"r{i:04d}": word for i in range(700)}
        return "booked"
'''


def test_a_fault_replay_shows_at_most_so_many_state_paths_and_says_how_many_more(make_suite: Callable[..., Path],
                                                                                  tmp_path: Path) -> None:
    """The recorded run writes ``ok`` into 700 rows and the faulted one ``failed``: the replay's state differs in
    700 paths, each a row of the panel's replay section (a state of 100,000 rows was as many). It shows the first
    500 and how many more ``replay_views()`` (which keeps them all) holds."""
    folder = make_suite([{"id": "c1", "input": {}, "initial_state": {}, "expected": {"answer": "booked"}}],
                        evaluators=[{"type": "answer_matches"},
                                    {"type": "fault_recovery", "tool": "book", "fault": "error"}],
                        system="sysmod:Desk", system_code=WIDE)
    panel = op.run(op.load_suite(folder), out=tmp_path / "out", progress=False).panel("c1")
    (view,) = panel.replay_views()
    assert len(view["state_diff"]) == 700
    html, text = panel._repr_html_(), repr(panel)
    for shown in (html, text):
        assert "… and 200 more changed state paths: see panel.replay_views()" in shown
    states = re.findall(r"^      state rows\.r(\d{4}): recorded \"ok\" \| faulted \"failed\"$", text,
                        flags=re.MULTILINE)
    assert states == [f"{i:04d}" for i in range(500)]
    assert len(re.findall(r"<tr><td><i>state</i> <code>rows\.r\d{4}</code>", html)) == 500


LONG = '''
import oloproof_nb as op


class Desk(op.RecordedAgent):
    version = "long-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def note(self, i):
        return {"noted": i}

    def book(self, slot):
        return {"ok": True}

    def act(self, input, rec):
        for i in range(700):
            rec.tool("note", self.note, i=i)
        out = rec.tool("book", self.book, slot="s1")
        return "booked" if out.get("ok") else "no room"
'''


def test_a_fault_replay_shows_at_most_so_many_steps_the_faulted_one_among_them(make_suite: Callable[..., Path],
                                                                               tmp_path: Path) -> None:
    """700 calls both sides make alike, then the faulted one: every step pair was a row of the replay section. It
    shows 500, those that differ (the faulted call, from step 700 on) first, and how many more there are."""
    folder = make_suite([{"id": "c1", "input": {}, "initial_state": {}, "expected": {"answer": "booked"}}],
                        evaluators=[{"type": "answer_matches"},
                                    {"type": "fault_recovery", "tool": "book", "fault": "error"}],
                        system="sysmod:Desk", system_code=LONG)
    panel = op.run(op.load_suite(folder), out=tmp_path / "out", progress=False).panel("c1")
    (view,) = panel.replay_views()
    assert view["row"]["checkpoint"] == 700
    more = f"… and {len(view['pairs']) - 500} more replay steps: see panel.replay_views()"
    html, text = panel._repr_html_(), repr(panel)
    assert more in html and more in text
    replay = text.split("  fault replays:")[1]
    shown = [int(i) for i in re.findall(r"^      \[(\d+)\]", replay, flags=re.MULTILINE)]
    assert len(shown) == 500 and shown == sorted(shown) and 700 in shown
    assert "<- fault" in replay
    assert len(re.findall(r"<tr[^>]*><td>\d+", html.split("<h5>Fault replays</h5>")[1])) == 500
    assert "&larr;&nbsp;fault" in html


EVERY = '''
import oloproof_nb as op


class Desk(op.RecordedAgent):
    version = "every-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def book(self, slot):
        return {"ok": True}

    def act(self, input, rec):
        booked = 0
        for i in range(60):
            out = rec.tool("book", self.book, slot=f"s{i}")
            if not out.get("ok") and i < 59:  # tries again, but not after the last call
                out = rec.tool("book", self.book, slot=f"s{i}")
            booked += bool(out.get("ok"))
        return f"booked {booked}"
'''


def test_the_replays_of_calls_every_share_one_cut_the_failed_replay_first(make_suite: Callable[..., Path],
                                                                          tmp_path: Path) -> None:
    """60 calls of the tool under ``calls: every`` make 60 fault replays, each of some 60 steps: cut for each replay
    alone, the panel showed every one of their 3,600 step pairs (a tool called 200 times: 40,000 rows, 7.9 MB of
    HTML). All the replays together show 500. Hand count: the replay at the last call (step 59) fails, with 60
    steps (no retry after it), and is shown whole first; each replay that passes has 61 steps (the faulted call and
    its retry), so the 440 rows left show 7 of them whole (427), 13 steps of the eighth (48 more), and none of the
    51 after it (61 more each)."""
    folder = make_suite([{"id": "c1", "input": {}, "initial_state": {}, "expected": {"answer": "booked 60"}}],
                        evaluators=[{"type": "answer_matches"},
                                    {"type": "fault_recovery", "tool": "book", "fault": "error", "calls": "every"}],
                        system="sysmod:Desk", system_code=EVERY)
    panel = op.run(op.load_suite(folder), out=tmp_path / "out", progress=False).panel("c1")
    views = panel.replay_views()
    assert [v["row"]["checkpoint"] for v in views] == list(range(60))
    assert [v["row"]["verdict"] for v in views] == ["pass"] * 59 + ["fail"]
    assert [len(v["pairs"]) for v in views] == [61] * 59 + [60]
    assert [len(v["shown_pairs"]) for v in views] == [61] * 7 + [13] + [0] * 51 + [60]
    assert [v["more_pairs"] for v in views] == (
        [""] * 7 + ["… and 48 more replay steps: see panel.replay_views()"]
        + ["… and 61 more replay steps: see panel.replay_views()"] * 51 + [""])
    html, text = panel._repr_html_(), repr(panel)
    assert len(re.findall(r"<tr[^>]*><td>\d+", html.split("<h5>Fault replays</h5>")[1])) == 500
    replay = text.split("  fault replays:")[1]
    assert len(re.findall(r"^      \[\d+\]", replay, flags=re.MULTILINE)) == 500
    assert replay.count("… and 61 more replay steps: see panel.replay_views()") == 51


THRICE = '''
import oloproof_nb as op


class Desk(op.RecordedAgent):
    version = "thrice-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def book(self, slot):
        return {"ok": True}

    def act(self, input, rec):
        outs = [rec.tool("book", self.book, slot=f"s{k}") for k in range(3)]
        word = "ok" if all(out.get("ok") for out in outs) else "failed"
        self.state["rows"] = {f"r{i:03d}": word for i in range(300)}
        return "booked"
'''


def test_the_replays_of_calls_every_share_one_cut_of_changed_state_paths(make_suite: Callable[..., Path],
                                                                         tmp_path: Path) -> None:
    """Three calls under ``calls: every``: each fault replay leaves 300 rows "failed" where the recorded run wrote
    "ok", 300 changed state paths each (900 in all). Hand count: the panel shows 500 of them for the three replays
    together, in their order (they share one verdict): 300, then 200 of the second, none of the third."""
    folder = make_suite([{"id": "c1", "input": {}, "initial_state": {}, "expected": {"answer": "booked"}}],
                        evaluators=[{"type": "answer_matches"},
                                    {"type": "fault_recovery", "tool": "book", "fault": "error", "calls": "every"}],
                        system="sysmod:Desk", system_code=THRICE)
    views = op.run(op.load_suite(folder), out=tmp_path / "out", progress=False).panel("c1").replay_views()
    assert len({v["row"]["verdict"] for v in views}) == 1
    assert [len(v["state_diff"]) for v in views] == [300] * 3
    assert [len(v["shown_state_diff"]) for v in views] == [300, 200, 0]
    assert [v["more_state_diff"] for v in views] == [
        "", "… and 100 more changed state paths: see panel.replay_views()",
        "… and 300 more changed state paths: see panel.replay_views()"]


def test_a_replay_with_no_faulted_run_recorded_takes_none_of_the_steps_shown() -> None:
    """Two replays of a case, by hand: the first (verdict ``missing``, so shown first) recorded no faulted run, and
    its 600 recorded steps have nothing to be compared with; the second failed, its faulted run recorded, 10 steps
    that differ. The panel shows no step pairs of a replay without a faulted run, so the 500 shown are all left for
    the second: its 10 steps are shown, nothing is said to be left out of the first."""
    from oloproof_nb._display.panel import _share_out

    step = {"kind": "tool_call", "tool": "note"}
    unrun = {"row": {"verdict": "missing"}, "has_fault": False, "state_diff": [],
             "pairs": [(i, step, None) for i in range(600)]}
    failed = {"row": {"verdict": "fail"}, "has_fault": True, "state_diff": [],
              "pairs": [(i, step, {"kind": "tool_call", "tool": "book"}) for i in range(10)]}
    _share_out([unrun, failed])
    assert (unrun["shown_pairs"], unrun["more_pairs"]) == ([], "")
    assert (failed["shown_pairs"], failed["more_pairs"]) == (failed["pairs"], "")
