"""A removal (``{"$absent": true}``) asked of something ``initial_state`` never held, beside something it
holds that reads like it, is named at ``load_suite``.

Before: a ``by_key`` cart ``[{"sku": "B"}]`` and the removal ``{"sku": "B ", "$absent": true}`` (a
trailing space), or a dict removal of ``"ord-8"`` where the state holds ``"ord-7"``: an idle desk passed
``state_matches`` 3 of 3 without a word. A look-alike that reads the same (spaces, invisible characters, accent
encoding) is refused with its line, as ``respelt_key`` refuses one of a dict; a key one edit (or letter case, or a
number written as text) away is warned of (``VacuousCheckWarning``), and a removal of something with no look-alike —
"the agent must not create this" — is not named.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from _removal_suites import GONE, removal_suite, state_case

import oloproof_nb as op
from oloproof_nb.cli import main
from oloproof_nb.errors import CaseFileError
from oloproof_nb.evaluators import StateMatches


def _found(folder: Path) -> list[str]:
    """The removal warnings ``load_suite`` gives (no other warning is expected of these suites)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        suite = op.load_suite(folder)
    assert suite.vacuous == {}  # a case's finding, never its criterion's: the gate does not mark it vacuous
    messages = [str(w.message) for w in caught]
    assert all(issubclass(w.category, op.VacuousCheckWarning) for w in caught), messages
    return messages


CART = "{type: state_matches, lists: {cart: {by_key: sku}}}"


def _carts(sku: str) -> list[dict[str, Any]]:
    """The reproduction: three cases that each ask for the removal of the cart's one element, written ``sku``."""
    return [state_case({"cart": [{"sku": "B", "qty": 1}]}, {"cart": [{"sku": sku, "$absent": True}]}) for _ in range(3)]


def test_the_idle_desk_passes_a_removal_written_with_a_trailing_space() -> None:
    """What the refusal stops (an outside count: the idle desk leaves the cart as it was, and the check says pass)."""
    for mode in ("subset", "changes"):
        check = StateMatches(type="state_matches", mode=mode, lists={"cart": {"by_key": "sku"}})
        initial = {"cart": [{"sku": "B", "qty": 1}]}
        idle = check.judge({"cart": [{"sku": "B ", "$absent": True}]}, initial, "c1", initial=initial)
        assert idle.verdicts[0]["verdict"] == "pass"
        right = check.judge({"cart": [{"sku": "B", "$absent": True}]}, initial, "c1", initial=initial)
        assert right.verdicts[0]["verdict"] == "fail"  # written as the state holds it, the idle desk fails


@pytest.mark.parametrize("mode", ["subset", "changes"])
def test_a_by_key_removal_that_reads_as_a_held_element_is_refused_naming_the_line(tmp_path: Path, mode: str) -> None:
    folder = removal_suite(tmp_path / "s", _carts("B "),
                           f"{{type: state_matches, mode: {mode}, lists: {{cart: {{by_key: sku}}}}}}")
    before = (folder / "cases.jsonl").read_bytes()
    with pytest.raises(CaseFileError) as caught:
        op.load_suite(folder)
    message = str(caught.value)
    assert f"{folder / 'cases.jsonl'}: line 1:" in message
    assert "cart.<sku=B >" in message and "'sku' value 'B '" in message and "reads as 'B'" in message
    assert "surrounding spaces" in message and "write it as initial_state does" in message
    assert (folder / "cases.jsonl").read_bytes() == before


def test_the_command_line_refuses_it_in_one_line_with_exit_2(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    folder = removal_suite(tmp_path / "s", _carts("B\u200b"), CART)  # a zero-width space: invisible in every table
    code = main(["run", str(folder)])
    out, err = capsys.readouterr()
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "line 1:" in lines[0] and "reads as 'B'" in lines[0], err
    assert "Traceback" not in err + out


def test_a_key_inside_a_list_element_that_reads_as_a_held_key_is_refused(tmp_path: Path) -> None:
    """``respelt_key`` follows dicts only; a dict below a ``by_key`` element is followed here."""
    cases = [state_case({"cart": [{"sku": "B", "opts": {"gift": True}}]},
                   {"cart": [{"sku": "B", "opts": {"gift ": GONE}}]})]
    with pytest.raises(CaseFileError, match=r"line 1: .*cart\.0\.opts\.gift .*whose key 'gift ' reads as 'gift'"):
        op.load_suite(removal_suite(tmp_path / "s", cases, CART))


def test_a_typo_of_a_held_key_is_warned_of_with_line_case_and_the_key_held(tmp_path: Path) -> None:
    cases = [state_case({"orders": {"ord-7": {"status": "open"}}}, {"orders": {"ord-8": GONE}}),
             state_case({"cart": [{"sku": "SKU-17"}]}, {"cart": [{"sku": "SKU-71", "$absent": True}]}),
             state_case({"cart": [{"sku": "sku-b"}]}, {"cart": [{"sku": "SKU-B", "$absent": True}]}),
             state_case({"cart": [{"sku": 1007}]}, {"cart": [{"sku": "1007", "$absent": True}]})]
    folder = removal_suite(tmp_path / "s", cases, CART)
    [message] = _found(folder)
    assert message.startswith(f"{folder / 'cases.jsonl'}: 4 removal(s)")
    assert "line 1, case 'c1': orders.ord-8 (its key 'ord-8' is one character apart from 'ord-7'" in message
    assert "line 2, case 'c2': cart.<sku=SKU-71> (its 'sku' value 'SKU-71' swaps two neighbouring characters of " \
           "'SKU-17'" in message
    assert "line 3, case 'c3': cart.<sku=SKU-B> (its 'sku' value 'SKU-B' differs only in letter case from 'sku-b'" \
           in message
    assert "line 4, case 'c4': cart.<sku=1007> (its 'sku' value '1007' is the text of the number 1007" in message
    assert "passes such a removal in state_matches" in message


def test_the_idle_desk_passes_those_cases_under_the_suite_s_own_check(tmp_path: Path) -> None:
    """The warning's claim, run: the idle desk scores 2 of 2 (hand count: each case asks one removal of a key the
    state never held, and nothing else)."""
    cases = [state_case({"orders": {"ord-7": {}}}, {"orders": {"ord-8": GONE}}),
             state_case({"orders": {"ord-1": {}}}, {"orders": {"ord-2": GONE}})]
    with pytest.warns(op.VacuousCheckWarning, match="2 removal"):
        suite = op.load_suite(removal_suite(tmp_path / "s", cases, "{type: state_matches, mode: changes}"))
    run = op.run(suite, progress=False)
    assert list(run.verdicts["verdict"]) == ["pass", "pass"]


@pytest.mark.parametrize(("held", "named", "warned"), [
    ("ord-7", "ord-8", True),     # one character replaced
    ("ord-7", "ord-79", True),    # one inserted
    ("ord-79", "ord-7", True),    # one deleted
    ("ord-17", "ord-71", True),   # two neighbours swapped: one typo
    ("ord-9", "ord-09", True),    # the README's typo of a key no case held
    ("ord-7", "ord-799", False),  # two inserted
    ("ord-8", "ord-79", False),   # one replaced, one inserted
    ("ord-127", "ord-721", False),  # two apart, swapped
    ("o-7", "o-8", True),         # three characters: compared
    ("o7", "o8", False),          # two: every such key is one character from every other
    ("B", "C", False),
])
def test_one_edit_is_a_look_alike_and_two_are_not(tmp_path: Path, held: str, named: str, warned: bool) -> None:
    folder = removal_suite(tmp_path / "s", [state_case({"orders": {held: {}}}, {"orders": {named: GONE}})])
    found = _found(folder)
    assert len(found) == int(warned), found
    if warned:
        assert f"orders.{named} (its key {named!r}" in found[0] and repr(held) in found[0]


def test_a_genuine_must_not_create_case_is_not_named(tmp_path: Path) -> None:
    """The legitimate use: a removal of a key the state never held, with nothing that reads like it there (an
    empty refunds book; a new order id far from the held ones); and one whose look-alike the case names too."""
    cases = [state_case({"refunds": {}}, {"refunds": {"r-1": GONE}}),
             state_case({"orders": {"ord-7": {}}}, {"orders": {"ord-999": GONE}}),
             state_case({"orders": {"ord-7": {"status": "open"}}},
                   {"orders": {"ord-7": {"status": "open"}, "ord-8": GONE}}),
             state_case({"cart": [{"sku": "SKU-B"}]}, {"cart": [{"sku": "SKU-B"}, {"sku": "SKU-C", "$absent": True}]}),
             state_case({"cart": [{"sku": "SKU-B"}]}, {"cart": [{"sku": "SKU-B", "$absent": True}]})]
    assert _found(removal_suite(tmp_path / "s", cases, CART)) == []


def test_in_changes_mode_the_removal_a_deliberate_case_would_drop_was_checked_already() -> None:
    """What the warning and the README offer a "must not create ord-8" case in changes mode: leave the removal out.
    A desk that creates ord-8 fails either way, and one that does nothing passes either way."""
    check = StateMatches(type="state_matches", mode="changes")
    initial = {"orders": {"ord-7": {"status": "open"}}}
    created = {"orders": {"ord-7": {"status": "open"}, "ord-8": {"status": "open"}}}
    for expected in ({"orders": {"ord-8": GONE}}, {}):
        assert check.judge(expected, created, "c1", initial=initial).verdicts[0]["verdict"] == "fail"
        assert check.judge(expected, initial, "c1", initial=initial).verdicts[0]["verdict"] == "pass"


def test_a_mode_that_compares_the_look_alike_itself_is_not_named(tmp_path: Path) -> None:
    """``whole`` mode, and ``paths`` mode at a path above the removal, compare ``ord-7`` too: the idle desk fails
    (an outside count below), so the typo costs nothing and is not named; ``paths`` at the removal is named."""
    initial, expected = {"orders": {"ord-7": {}}}, {"orders": {"ord-8": GONE}}
    for mode, paths in (("whole", []), ("paths", ["orders"])):
        idle = StateMatches(type="state_matches", mode=mode, paths=paths).judge(expected, initial, "c1",
                                                                                initial=initial)
        assert idle.verdicts[0]["verdict"] == "fail"
    whole = "{type: state_matches, mode: whole}"
    assert _found(removal_suite(tmp_path / "w", [state_case(initial, expected)], whole)) == []
    assert _found(removal_suite(tmp_path / "p", [state_case(initial, expected)],
                                "{type: state_matches, mode: paths, paths: [orders]}")) == []
    held = state_case({"orders": {"ord-8": {}}}, {"orders": {"ord-8": GONE}})  # a case that holds the path: not vacuous
    [message] = _found(removal_suite(tmp_path / "q", [state_case(initial, expected), held],
                                     "{type: state_matches, mode: paths, paths: [orders.ord-8]}"))
    assert "1 removal(s)" in message and "line 1, case 'c1': orders.ord-8 (its key 'ord-8'" in message


def test_an_unordered_list_and_a_path_changes_mode_ignores_are_not_named(tmp_path: Path) -> None:
    cases = [state_case({"cart": [{"sku": "SKU-B", "opts": {"gift": 1}}], "log": {"e-1": 1}},
                   {"cart": [{"sku": "SKU-B", "opts": {"gfit": GONE}}], "log": {"e-2": GONE}})]
    assert _found(removal_suite(tmp_path / "u", cases, "{type: state_matches, lists: {cart: unordered}, ignore: [log], "
                                                       "mode: changes}")) == []


def test_many_findings_are_counted_and_the_message_stays_short(tmp_path: Path) -> None:
    cases = [state_case({"orders": {f"ord-{i}7": {}}}, {"orders": {f"ord-{i}8": GONE}}) for i in range(40)]
    [message] = _found(removal_suite(tmp_path / "s", cases))
    assert "40 removal(s)" in message and "; and 35 more." in message
    assert message.count("line ") == 5 and len(message) < 2000


def test_the_command_line_prints_the_warning_as_one_line_and_runs(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    cases = [state_case({"orders": {"ord-7": {}}}, {"orders": {"ord-8": GONE}}),
             state_case({"orders": {"ord-7": {}}}, {"orders": {"ord-7": GONE}})]
    code = main(["run", str(removal_suite(tmp_path / "s", cases))])
    out, err = capsys.readouterr()
    warned = [line for line in err.splitlines() if "removal(s)" in line]
    assert len(warned) == 1 and warned[0].startswith("oloproof: warning: vacuous check: ") and "line 1," in warned[0]
    assert code == 1 and "Traceback" not in err + out  # the idle desk fails the held removal of case c2: BLOCK


def test_a_paths_entry_no_case_holds_is_never_offered_as_its_own_nearest_path(tmp_path: Path) -> None:
    """Its removal written in expected.state made the path a candidate: "did you mean orders.ord-8?" of orders.ord-8
    (before), where the state holds orders.ord-7."""
    cases = [state_case({"orders": {"ord-7": {}}}, {"orders": {"ord-8": GONE}})]
    folder = removal_suite(tmp_path / "s", cases, "{type: state_matches, mode: paths, paths: [orders.ord-8]}")
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        suite = op.load_suite(folder)
    [finding] = suite.vacuous["state_matches"]
    assert "path 'orders.ord-8' is in no case's" in finding and "did you mean orders.ord-7?" in finding


def _osa_distance(a: str, b: str) -> int:
    """The textbook optimal-string-alignment distance (Levenshtein with adjacent transpositions), a dynamic
    programme written out here as the outside reference for the one-edit rule."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def test_one_edit_agrees_with_the_optimal_string_alignment_distance_on_every_short_pair() -> None:
    """Every pair of strings of up to 5 letters of "ab" and up to 4 of "abc" (11,628 pairs): one edit exactly where
    the dynamic programme gives distance 1 (before the slices were compared, a swap at the first character — "ab" and
    "ba" — was missed)."""
    from itertools import product

    from oloproof_nb._config.removals import _one_edit

    words = sorted({"".join(w) for alphabet, top in (("ab", 5), ("abc", 4)) for n in range(top + 1)
                    for w in product(alphabet, repeat=n)})
    pairs = [(a, b) for i, a in enumerate(words) for b in words[i + 1:]]
    assert len(words) == 121 + 32 and len(pairs) == 11_628  # 3^0 + ... + 3^4 words, and 2^5 of five letters
    wrong = [(a, b) for a, b in pairs if bool(_one_edit(a, b)) != (_osa_distance(a, b) == 1)]
    assert wrong == []
    assert sum(_osa_distance(a, b) == 1 for a, b in pairs) > 1_000  # pairs one edit apart were met, not only others
