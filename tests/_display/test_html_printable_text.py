"""html_text on text with no character to show as an escape (most values): still escaped, and markup."""

from __future__ import annotations

import html

from markupsafe import Markup

from oloproof_nb._display.html import html_text


def test_printable_text_is_escaped_and_returned_as_markup() -> None:
    """A case id of printable characters only (no escape to mark): ``<>&"'`` escaped, the result markup, so a
    caller that joins or formats it (``Markup.join``, ``Markup.format``) does not escape it a second time."""
    value = "<img src=x onerror=alert(1)> & \"q\" 'a'"
    out = html_text(value)
    assert isinstance(out, Markup)
    assert html.unescape(str(out)) == value
    assert not set("<>\"'") & set(str(out))
    # html.escape writes the same five characters; markupsafe spells the quotes as numeric references
    assert html.unescape(html.escape(value)) == html.unescape(str(out))
    assert str(Markup("<code>{}</code>").format(out)) == "<code>" + str(out) + "</code>"  # escaped once
