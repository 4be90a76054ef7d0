"""Pure computation: no files, no environment, no display.

Paths into nested states, canonical digests and timestamps, statistics, the
trajectory types and protocols, the Recorder, outcome receipts, the evaluator
interface and the pure verdict rules (state, pair and fault-replay comparison),
label rules and slice specs. Everything above imports from here; nothing here
imports from above.
"""
