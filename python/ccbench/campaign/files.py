"""Writing a campaign's outputs: each file whole (a kill leaves the old file or the new one),
through the shared file layer (:mod:`ccbench.files`), which never writes through a link planted
at the target."""

from __future__ import annotations

from ccbench.files import staged_folder, write_csv, write_json, write_parquet, write_text

__all__ = ["staged_folder", "write_csv", "write_json", "write_parquet", "write_text"]
