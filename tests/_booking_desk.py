"""A booking desk of one tool and a dict state, as source text (the README's calendar desk, cut down): written into
a suite folder as its system, or executed as a notebook cell's class."""

from __future__ import annotations

_SOURCE = '''
import oloproof_nb as op


class Desk(op.RecordedAgent):
    {version}

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def book(self, slot):
        self.state["bookings"][slot] = "ann"
        return {{"ok": True}}

    def act(self, input, rec):
        out = rec.tool("book", self.book, slot=input["slot"])
        {after_book}
        return "booked" if out.get("ok") else "no room"
'''


def booking_desk(version: str = 'version = "desk-1"', after_book: str = "pass") -> str:
    """The desk's source, its class body starting with ``version`` (``"pass"``: a desk without a version), and
    ``act`` running ``after_book`` (one line of ``act``'s body) after its tool call."""
    return _SOURCE.format(version=version, after_book=after_book)
