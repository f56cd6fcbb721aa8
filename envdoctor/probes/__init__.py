"""Probes: one small module per source of facts. `runner.run_probes` runs them all."""
