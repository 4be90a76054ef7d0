"""Label files: ``labels/<transform>.jsonl``, one judgement per line, errors naming the file and line."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from .._core.labels import parse_judgement
from ..errors import LabelFileError, parse_problem, quote
from .files import KeyTwice, UnreadableFile, keys_once, lone_surrogate, read_regular

__all__ = ["MAX_LABEL_BYTES", "load_labels"]

#: Largest label file read (it is read whole): 64 MiB, some 500,000 judgements.
MAX_LABEL_BYTES = 64 << 20


def load_labels(path: str | Path, known_ids: Collection[str] | None = None, transform: str | None = None,
                copy_digest: Callable[[str], str] | None = None) -> list[dict[str, Any]]:
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
        (``case_id``, ``labeler``) judgement of a named labeler, or gives a ``digest`` other than the copy's
        now (``copy_digest``: the labeler read another text); a path that is not a regular
        file (a directory, a named pipe, a device) or holds more than :data:`MAX_LABEL_BYTES`.
    """
    path = Path(path)
    try:
        text = read_regular(path, MAX_LABEL_BYTES).decode("utf-8-sig")  # a leading byte-order mark is not content
    except UnreadableFile as exc:
        message = str(exc)
        raise LabelFileError(path, None, "label file not found" if message == "file not found"
                             else f"cannot read the label file: {message}") from None
    except UnicodeDecodeError as exc:
        raise LabelFileError(path, None, f"not UTF-8 text ({exc.reason})") from None
    out: list[dict[str, Any]] = []
    seen: dict[tuple[str, str], int] = {}
    # JSONL lines end at \n only, as in the case file: a CR before it is JSON whitespace, a lone CR or U+2028 text
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line, object_pairs_hook=keys_once)
        except KeyTwice as exc:  # {"valid": false, "valid": true} read as valid, the last one winning
            raise LabelFileError(path, lineno, f"key {quote(exc.args[0])} appears twice; give each key once") from None
        except (ValueError, RecursionError) as exc:  # also a number too long to convert
            raise LabelFileError(path, lineno, f"not valid JSON ({parse_problem(exc)}); each line must be one JSON "
                                 'object {"case_id": ..., "valid": true|false, "labeler": ..., "note": ...}') from None
        bad = lone_surrogate(obj) if "\\u" in line else None  # only an escape can make one in UTF-8 text
        if bad is not None:  # JSON, but no text: it was reported as "not valid JSON (utf-8 codec can't encode …)"
            char = next(c for c in bad if 0xD800 <= ord(c) <= 0xDFFF)  # worded as the case file words it
            raise LabelFileError(path, lineno, f"a string holds {quote(char)}, a lone surrogate escape that is not "
                                 "Unicode text")
        try:
            judgement = parse_judgement(obj, known_ids, transform)
        except ValueError as exc:
            raise LabelFileError(path, lineno, str(exc)) from None
        judged = judgement.get("digest")
        if judged is not None and copy_digest is not None:
            now = copy_digest(judgement["case_id"])
            if now != judged:  # matched by id alone, it would judge a copy nobody read
                raise LabelFileError(path, lineno, f"{quote(judgement['case_id'])} was judged as the copy of digest "
                                     f"{judged[:12]}…, which is now {now[:12]}… (the transform's template or the "
                                     "source case changed since): read the copy again and judge it anew, with its "
                                     "digest as run.cases shows it")
        key = (judgement["case_id"], judgement["labeler"])
        if judgement["labeler"] and key in seen:
            raise LabelFileError(path, lineno, f"labeler {quote(key[1])} already judged {quote(key[0])} at line "
                                 f"{seen[key]}; one judgement per labeler and pair")
        seen[key] = lineno
        out.append(judgement)
    return out

