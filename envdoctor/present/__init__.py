"""Presenters: turn snapshots, findings and plans into text, JSON and markdown. They only read the core."""
