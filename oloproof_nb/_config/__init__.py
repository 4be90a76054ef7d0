"""User files to validated models: cases, oloproof.yaml, release.yaml, labels, contract files.

One reader per format and one error formatter; importing the user's system and
validators from a suite folder lives here too (``imports``).
"""
