"""shopbench: a small retail benchmark written without oloproof_nb in mind (it stands for a third-party one)."""
