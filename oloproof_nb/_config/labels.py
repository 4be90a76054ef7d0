"""Label files: ``labels/<transform>.jsonl``, one judgement per line, errors naming the file and line."""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from .._core.labels import parse_judgement, unknown_copy
from ..errors import LabelFileError, decode_line, lone_cr_hint, parse_problem, quote, wide_text
from .cases import id_look
from .files import KeyTwice, UnreadableFile, keys_once, lone_surrogate, read_regular

__all__ = ["MAX_LABEL_BYTES", "load_labels", "read_labels", "same_name"]

#: Largest label file read (it is read whole): 64 MiB, some 500,000 judgements.
MAX_LABEL_BYTES = 64 << 20


def load_labels(path: str | Path, known_ids: Collection[str] | None = None, transform: str | None = None,
                copy_digest: Callable[[str], str] | None = None,
                case_of: Callable[[str], str | None] | None = None) -> list[dict[str, Any]]:
    """Read a label file: one judgement per line, empty lines skipped.

    Parameters
    ----------
    path : str or Path
        The JSONL label file.
    known_ids : collection of str, optional
        The derived case ids of the transform (see :func:`parse_judgement`).
    transform : str, optional
        The transform's name, for messages.
    copy_digest : callable, optional
        The digest of a derived case now (its id in, ``Case.digest`` out), asked only of judgements that give a
        ``digest``; None checks no digest.
    case_of : callable, optional
        The id of the suite's case (a source case, another copy of the transform or a copy of another one) whose
        digest a judgement gives instead of its copy's (a digest in, an id or None out), asked only of such a
        judgement: its refusal then names the row it was copied from, not a change nobody made.

    Returns
    -------
    list of dict
        The judgements in file order, each ``{case_id, valid, labeler, note}`` and ``digest`` when given.
        An empty file gives an empty list (every pair unlabeled).

    Raises
    ------
    LabelFileError
        Naming the file and the line: a line that is not JSON, not an object,
        has an unknown key, lacks ``case_id``/``valid``, has a non-boolean
        ``valid``, names a case id the suite does not derive, or repeats a
        (``case_id``, ``labeler``) judgement of a named labeler (names compared by :func:`same_name`: ``"Ana "``
        is ``"ana"``), or gives a ``digest`` other than the copy's
        now (``copy_digest``: the labeler read another text; or the digest of another case, ``case_of``, named so);
        a path that is not a regular
        file (a directory, a named pipe, a device) or holds more than :data:`MAX_LABEL_BYTES`.
    """
    return read_labels(path, known_ids, transform, copy_digest, case_of)[0]


def read_labels(path: str | Path, known_ids: Collection[str] | None = None, transform: str | None = None,
                copy_digest: Callable[[str], str] | None = None,
                case_of: Callable[[str], str | None] | None = None) -> tuple[list[dict[str, Any]], str]:
    """:func:`load_labels`, with the SHA-256 hex of the bytes the judgements were read from (as
    :func:`~.imports.file_digest` gives it): a suite records each label file's digest, which a second read of
    the file took, and a file saved between the two reads was stored with the digest of other judgements than
    those read."""
    path = Path(path)
    try:
        raw = read_regular(path, MAX_LABEL_BYTES)
        text = raw.decode("utf-8-sig")  # a leading byte-order mark is not content
    except UnreadableFile as exc:
        message = str(exc)
        raise LabelFileError(path, None, "label file not found" if message == "file not found"
                             else f"cannot read the label file: {message}") from None
    except UnicodeDecodeError as exc:  # the line of the byte, as the case file names it (after a BOM, if any)
        if wide := wide_text(raw):
            raise LabelFileError(path, 1, wide) from None
        upto = bytes(exc.object[: exc.end]).rsplit(b"\n", 1)[-1]  # its line, up to the byte and with it
        raise LabelFileError(path, decode_line(exc), f"not UTF-8 text ({exc.reason}){lone_cr_hint(upto)}") from None
    out: list[dict[str, Any]] = []
    seen: dict[tuple[str, str], tuple[int, str]] = {}  # (case id, labeler as same_name reads it) -> (line, as written)
    # JSONL lines end at \n only, as in the case file: a CR before it is JSON whitespace, a lone CR or U+2028 text
    lines = text.split("\n")
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line, object_pairs_hook=keys_once)
        except KeyTwice as exc:  # {"valid": false, "valid": true} read as valid, the last one winning
            raise LabelFileError(path, lineno, f"key {quote(exc.args[0])} appears twice; give each key once") from None
        except (ValueError, RecursionError) as exc:  # also a number too long to convert
            if not out and _csv_header(line):  # a spreadsheet's export: "not valid JSON" at line 1 said no more
                raise LabelFileError(path, lineno, f"looks like a CSV header ({quote(line.strip())}), not JSON; "
                                     "a label file is JSON Lines, one object a line: "
                                     '{"case_id": ..., "valid": true|false}') from None
            raise LabelFileError(path, lineno, f"not valid JSON ({parse_problem(exc)}); each line must be one JSON "
                                 'object {"case_id": ..., "valid": true|false, "labeler": ..., "note": ...}'
                                 + lone_cr_hint(line)) from None
        bad = lone_surrogate(obj) if "\\u" in line else None  # only an escape can make one in UTF-8 text
        if bad is not None:  # JSON, but no text: it was reported as "not valid JSON (utf-8 codec can't encode …)"
            char = next(c for c in bad if 0xD800 <= ord(c) <= 0xDFFF)  # worded as the case file words it
            raise LabelFileError(path, lineno, f"a string holds {quote(char)}, a lone surrogate escape that is not "
                                 "Unicode text")
        try:
            judgement = parse_judgement(obj, known_ids, transform)
        except ValueError as exc:
            alike = _lookalike_hint(obj, known_ids)
            # an id that reads as a copy's is that copy written otherwise: what it reads as, and not a guess at what
            # else it names ("C1~t": "no case 'C1' … take its line out", then "copy the id as run.cases shows it")
            said = unknown_copy(obj["case_id"], transform) if alike else str(exc)
            raise LabelFileError(path, lineno, said + alike) from None
        judged = judgement.get("digest")
        if judged is not None and copy_digest is not None:
            now = copy_digest(judgement["case_id"])
            owner = case_of(judged) if case_of is not None and now != judged else None
            if owner is not None:  # nothing changed: the digest of another row of run.cases was given
                copy_id = quote(judgement["case_id"])
                whose = " (its source case)" if judgement["case_id"] == f"{owner}~{transform}" else ""
                raise LabelFileError(path, lineno, f"{copy_id} is given the digest {judged[:12]}… of {quote(owner)}"
                                     f"{whose}, not its own ({now[:12]}…): give each judgement the digest of the row "
                                     f"of its copy in run.cases, the row whose case_id is {copy_id}")
            if now != judged:  # matched by id alone, it would judge a copy nobody read
                copy_id, later = quote(judgement["case_id"]), _later_stale(lines, lineno, known_ids, copy_digest)
                take = "those lines out (their pairs are" if later else "the line out (its pair is"
                raise LabelFileError(path, lineno, f"{copy_id} was judged as the copy of digest {judged[:12]}…, which "
                                     f"is now {now[:12]}… (the transform's template or the source case changed since)"
                                     f"{later}: read the copy again and judge it anew: take {take} then unlabeled), "
                                     f"run the suite, read the copy in run.panel({copy_id}) and write the judgement "
                                     "with its digest as run.cases shows it")
        labeler = judgement["labeler"]
        key = (judgement["case_id"], same_name(labeler))
        if key[1] and key in seen:  # a name of blank space alone is no name: anonymous, as "" is
            first, written = seen[key]
            spelt = f" (written {quote(written)} there)" if written != labeler else ""
            raise LabelFileError(path, lineno, f"labeler {quote(labeler)} already judged {quote(key[0])} at line "
                                 f"{first}{spelt}; one judgement per labeler and pair (names are compared without "
                                 "case, width, extra blank space or invisible characters)")
        seen[key] = (lineno, labeler)
        out.append(judgement)
    return out, hashlib.sha256(raw).hexdigest()


def _csv_header(line: str) -> bool:
    """Whether ``line`` reads as the header of a CSV (or tab-separated) table of judgements: ``case_id,valid``.

    Examples
    --------
    >>> _csv_header("case_id,valid,labeler"), _csv_header('"case_id";"valid"'), _csv_header("case_id valid")
    (True, True, False)
    """
    for sep in (",", "\t", ";"):
        fields = [field.strip().strip('"').strip() for field in line.split(sep)]
        if len(fields) > 1 and "case_id" in fields:
            return True
    return False


def _later_stale(lines: list[str], lineno: int, known_ids: Collection[str] | None,
                 copy_digest: Callable[[str], str]) -> str:
    """The clause naming the lines after ``lineno`` whose judgement gives a digest other than its copy's now
    (``; 5 later lines are too (8, 9, 10, 11, 12)``), or empty: a template edited after labeling makes every
    bound judgement stale, and a refusal naming one line at a time took a run per line to find the rest.
    Lines that are not such a judgement are left to the line-by-line reading, which names them."""
    stale: list[int] = []
    for later, line in enumerate(lines[lineno:], start=lineno + 1):
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(obj, dict):
            continue
        case_id, judged = obj.get("case_id"), obj.get("digest")
        if not isinstance(case_id, str) or not isinstance(judged, str):
            continue
        if known_ids is not None and case_id not in known_ids:
            continue
        try:
            if copy_digest(case_id) != judged:
                stale.append(later)
        except KeyError:  # no copy of that id: its own line says so
            continue
    if not stale:
        return ""
    shown = ", ".join(str(n) for n in stale[:5]) + (", …" if len(stale) > 5 else "")
    return f"; {len(stale)} later line{'s are' if len(stale) > 1 else ' is'} too ({shown})"


def same_name(text: str) -> str:
    """How a labeler's name (or a case id, for a hint) reads: :func:`~oloproof_nb._config.cases.id_look` (no
    invisible or control characters, accents composed) without any other format character either (a zero-width
    joiner or non-joiner, an Arabic letter mark: ``"bob\u200d"`` was another labeler than ``"bob"``), then
    compatibility-folded (a no-break space is a space, a full-width letter its letter), without case, its runs of
    blank space one space, none around it.

    Two judgements of one pair by ``"bob"`` and ``"Bob "`` are one labeler's: counted as two people's, a labeler
    who judged a pair twice (a correction appended, a name typed otherwise) outvoted a colleague, or made a tie,
    which is ``invalid``, of one valid and one invalid judgement of their own.

    Examples
    --------
    >>> same_name("Bob "), same_name("ana\u00a0\u200b"), same_name(" Ana  Lu"), same_name("  ")
    ('bob', 'ana', 'ana lu', '')
    """
    shown = "".join(ch for ch in id_look(text) if unicodedata.category(ch) != "Cf")
    return " ".join(unicodedata.normalize("NFKC", shown).casefold().split())


def _lookalike_hint(obj: Any, known_ids: Collection[str] | None) -> str:
    """For a judgement whose ``case_id`` is no derived case of the suite but reads as one (:func:`same_name`:
    ``"cafe\u0301~t"`` for ``"café~t"``, ``"C1~t "`` for ``"c1~t"``), the clause naming it; else empty. The
    error shows both ids alike where they differ only in invisible characters or how an accent is encoded."""
    case_id = obj.get("case_id") if isinstance(obj, dict) else None
    if known_ids is None or not isinstance(case_id, str) or not case_id or case_id in known_ids:
        return ""
    try:  # the id is the line's only fault: another one (an unknown key, "valid": "yes") is the error alone
        parse_judgement(obj)
    except ValueError:
        return ""
    look = same_name(case_id)
    match = next((known for known in known_ids if same_name(known) == look), None)  # on this error only: one pass
    if match is None:
        return ""
    return (f"; it reads as {quote(match)}, a derived case of this suite, but differs from it only in case, width, "
            "blank space, invisible characters or how an accent is encoded: copy the id as run.cases shows it")
