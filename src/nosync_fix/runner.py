"""Running the engine over many files: reading, writing, parallel workers."""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from .config import Settings
from .engine import process_source
from .files import FileProblem, discover, read_source, write_atomic
from .findings import FileError, FixResult


class Mode(enum.Enum):
    FIX = "fix"  #: apply fixes and write the files
    DIFF = "diff"  #: compute the fixes, write nothing
    CHECK = "check"  #: report findings, fix nothing


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one file."""

    filename: str
    result: FixResult | None = None
    error: FileError | None = None
    #: The fixed text was written back to the file.
    written: bool = False

    @property
    def changed(self) -> bool:
        return self.result is not None and self.result.changed


#: Below this many files a process pool costs more than it saves.
_PARALLEL_THRESHOLD = 4


def run(
    paths: Sequence[str],
    settings: Settings,
    mode: Mode,
    *,
    jobs: int | None = None,
    with_edits: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> list[FileOutcome]:
    """Process every Python file under ``paths``; one outcome per file or failed path."""
    files, errors = discover(paths, settings)
    outcomes = [FileOutcome(e.filename, error=e) for e in errors]
    workers = max(1, jobs or os.cpu_count() or 1)
    done = 0
    if workers == 1 or len(files) < _PARALLEL_THRESHOLD:
        for filename in files:
            outcomes.append(process_file(filename, settings, mode, with_edits))
            done += 1
            if progress:
                progress(done, len(files))
    else:
        with ProcessPoolExecutor(max_workers=min(workers, len(files))) as pool:
            chunk = max(1, min(16, len(files) // (workers * 8) or 1))
            results = pool.map(process_file, files, [settings] * len(files),
                               [mode] * len(files), [with_edits] * len(files), chunksize=chunk)
            for outcome in results:
                outcomes.append(outcome)
                done += 1
                if progress:
                    progress(done, len(files))
    return outcomes


def process_file(filename: str, settings: Settings, mode: Mode,
                 with_edits: bool = False) -> FileOutcome:
    """Check or fix one file on disk; write it back in FIX mode when it changed."""
    try:
        source = read_source(filename)
    except FileProblem as problem:
        return FileOutcome(filename, error=FileError(filename, str(problem), "io"))
    result = process_source(source, filename, settings, fix=mode is not Mode.CHECK,
                            with_edits=with_edits)
    if result.error is not None:
        return FileOutcome(filename, result=result, error=result.error)
    if mode is Mode.FIX and result.changed:
        try:
            write_atomic(filename, result.fixed_bytes, source)
        except FileProblem as problem:
            return FileOutcome(filename, result=result,
                               error=FileError(filename, str(problem), "io"))
        return FileOutcome(filename, result=result, written=True)
    return FileOutcome(filename, result=result)
