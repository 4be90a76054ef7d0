"""Everything that touches the user's system or the disk during a run.

The runner, one case, the one sandbox routine shared by cases and replays,
timeouts, the run context evaluators see, replays and their cache, artifact
observation and the run store.
"""
