"""Records to tidy frames and decisions: column specs, frames, Run/load_run, gate, slices, validity, receipts."""
