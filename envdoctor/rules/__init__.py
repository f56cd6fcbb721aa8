"""The rules database: `rules/*.json` at the top level, loaded by `registry`, evaluated by `engine`."""
