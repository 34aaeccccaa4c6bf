"""Running the engine over many files: reading, writing, parallel workers.

Worker processes only analyse; every file is written by the main process, with
Ctrl-C held for the length of one write, so that a file is written whole or not at
all. Workers ignore Ctrl-C (the terminal sends it to them too): the main process
stops them at once and exits. A worker whose main process is gone (killed with
SIGKILL, say) ends itself within a fraction of a second.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import gc
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from .cache import Cache, CacheStore
from .config import Settings, too_large
from .files import (
    FileProblem,
    checked_roots,
    discover,
    outside_roots,
    read_source,
    source_digest,
    write_atomic,
)
from .findings import FileError, FixResult
from .notebook import code_size, is_notebook
from .rules import rules_with_codes


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
    #: Why the file was not analysed (over ``max-file-size``): a warning, not an error.
    skipped: str | None = None

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
    cache: Cache | None = None,
) -> list[FileOutcome]:
    """Process every Python file under ``paths``; one outcome per file or failed path.

    With a ``cache``, files whose result is cached are answered first, here,
    without parsing; only the others go to the worker processes, and what they
    compute is stored here (only this process opens the cache).
    """
    files, errors = discover(paths, settings)
    roots = checked_roots(paths)
    if cache is None:
        outcomes = _process_all(files, settings, mode, jobs, with_edits, progress, None, None,
                                roots)
    else:
        with cache.open() as store:
            outcomes = _process_all(files, settings, mode, jobs, with_edits, progress, cache,
                                    store, roots)
    return [FileOutcome(e.filename, error=e) for e in errors] + outcomes


def _process_all(files: list[str], settings: Settings, mode: Mode, jobs: int | None,
                 with_edits: bool, progress: Callable[[int, int], None] | None,
                 cache: Cache | None, store: CacheStore | None,
                 roots: tuple[str, ...]) -> list[FileOutcome]:
    # A file that resolves outside the checked paths (a symbolic link out of the tree) is
    # never written: it is checked instead, and its findings reported with an error.
    modes = [Mode.CHECK if mode is Mode.FIX and outside_roots(f, roots) else mode
             for f in files]
    outcomes: list[FileOutcome | None] = [None] * len(files)
    pending: list[int] = []
    for index, filename in enumerate(files):
        skipped = _too_large(filename, settings)
        if skipped is not None:
            outcomes[index] = skipped
            continue
        cached = _from_cache(filename, settings, modes[index], with_edits, cache, store)
        if cached is None:
            pending.append(index)
        else:
            outcomes[index] = cached
    done = len(files) - len(pending)
    if progress and done:
        progress(done, len(files))
    if pending:
        # Here, before the workers start, so that they inherit it: the engine, the rules
        # and LibCST, which a run answered from the cache does without.
        from . import engine  # noqa: F401
    workers = min(max(1, jobs or os.cpu_count() or 1), len(pending))
    if workers > 1:
        # The largest files first, so that the workers end together on small ones
        # instead of one waiting for the other's last big file.
        pending.sort(key=lambda i: -_size(files[i]))
    todo = [files[i] for i in pending]
    todo_modes = [modes[i] for i in pending]
    if workers <= 1 or len(todo) < _PARALLEL_THRESHOLD:
        results: Iterable[tuple[FileOutcome, str | None, bytes | None]] = (
            _work(f, settings, m, with_edits, cache, True)
            for f, m in zip(todo, todo_modes, strict=True))
        pool = None
    else:
        pool = ProcessPoolExecutor(max_workers=workers, initializer=_start_worker)
        # Small chunks keep both workers busy to the end: a few files cost a hundred
        # times more than the rest, and they come in clusters (one package at a time).
        chunk = max(1, min(8, len(todo) // (workers * 16)))
        # Futures of our own rather than pool.map's: map cancels its futures when its
        # iterator is dropped, and Python 3.11's pool then fails with InvalidStateError
        # in a thread when the workers are stopped (Ctrl-C).
        futures = [pool.submit(_work_many, todo[i:i + chunk], todo_modes[i:i + chunk],
                               settings, with_edits, cache)
                   for i in range(0, len(todo), chunk)]
        results = (answer for future in futures for answer in future.result())
    try:
        for index, (outcome, key, digest) in zip(pending, results, strict=False):
            _remember(store, key, outcome)
            outcomes[index] = _write(outcome, digest, settings, with_edits)
            done += 1
            if progress:
                progress(done, len(files))
    except BrokenProcessPool:
        # A worker died (a crash in native code, the kernel's OOM killer): the files
        # without an answer are retried one process each, so that only the culprit fails.
        for index in pending:
            if outcomes[index] is None:
                outcome, key, digest = _isolated(files[index], settings, modes[index],
                                                 with_edits, cache)
                _remember(store, key, outcome)
                outcomes[index] = _write(outcome, digest, settings, with_edits)
                done += 1
                if progress:
                    progress(done, len(files))
    except KeyboardInterrupt:
        if pool is not None:  # stop now: the files being analysed are not written
            _stop(pool)
            pool = None
        raise
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return [_not_written_outside(o, roots) if modes[i] is not mode else o
            for i, o in enumerate(outcomes) if o is not None]


def _not_written_outside(outcome: FileOutcome, roots: tuple[str, ...]) -> FileOutcome:
    """The outcome of a file checked instead of fixed because it leads outside ``roots``."""
    if outcome.error is not None:
        return outcome
    target = os.path.realpath(outcome.filename)
    return FileOutcome(outcome.filename, result=outcome.result, error=FileError(
        outcome.filename, f"is a symbolic link to {target}, outside the checked paths; "
        "not written (its findings are listed)", "io"))


def _size(filename: str) -> int:
    try:
        return os.stat(filename).st_size
    except OSError:
        return 0


def _remember(store: CacheStore | None, key: str | None, outcome: FileOutcome) -> None:
    result = outcome.result
    if store is None or key is None or result is None:
        return
    if result.error is not None and result.error.kind == "internal":
        return  # a bug: not remembered, so that it shows every time
    store.put(key, result)


def _isolated(filename: str, settings: Settings, mode: Mode, with_edits: bool,
              cache: Cache | None) -> tuple[FileOutcome, str | None, bytes | None]:
    """Process one file in a process of its own; a crash there is this file's error."""
    pool = ProcessPoolExecutor(max_workers=1, initializer=_start_worker)
    try:
        answer = pool.submit(_work, filename, settings, mode, with_edits, cache,
                             True).result()
    except BrokenProcessPool:
        answer = FileOutcome(filename, error=FileError(
            filename, "the analysis crashed (its process died); file left unchanged",
            "internal")), None, None
    except KeyboardInterrupt:
        _stop(pool)
        raise
    pool.shutdown()
    return answer


#: How long a stopped pool's manager thread may take to wind up (seconds).
_MANAGER_JOIN_TIMEOUT = 2.0

#: How often a worker checks that the main process is still there (seconds).
_PARENT_CHECK_INTERVAL = 0.2


def _start_worker() -> None:
    """Set up a worker process: Ctrl-C is the main process's to handle (it stops the
    workers), and a worker whose main process is gone ends itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_with_parent, args=(os.getppid(),), daemon=True,
                     name="nosync-fix-parent-watch").start()


def _end_with_parent(parent: int) -> None:
    """End this process once its parent is gone: the parent's id changes when it dies
    (POSIX: the worker is adopted), and multiprocessing's sentinel of the parent is
    signalled (Windows, and start methods with a server in between)."""
    process = multiprocessing.parent_process()
    while True:
        time.sleep(_PARENT_CHECK_INTERVAL)
        if os.getppid() != parent or (process is not None and not process.is_alive()):
            os._exit(1)  # nothing of this process's work is written, nor wanted


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop the workers now, abandoning the files they are analysing (they write none)."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14
    if terminate is not None:
        terminate()
    else:
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            with contextlib.suppress(OSError, ValueError):
                process.terminate()
        pool.shutdown(wait=False)  # the pool sees its workers gone and fails their futures
    # Let the pool's manager thread finish closing its wakeup pipe before the program
    # exits: Python 3.11's exit hook writes to that pipe and, racing the close, printed
    # a traceback ("Bad file descriptor") after "interrupted".
    manager = getattr(pool, "_executor_manager_thread", None)
    if manager is not None:
        manager.join(timeout=_MANAGER_JOIN_TIMEOUT)


def process_file(filename: str, settings: Settings, mode: Mode,
                 with_edits: bool = False) -> FileOutcome:
    """Check or fix one file on disk; write it back in FIX mode when it changed
    (never through a symbolic link that leads out of the file's folder)."""
    roots = checked_roots([filename])
    if mode is Mode.FIX and outside_roots(filename, roots):
        return _not_written_outside(_work(filename, settings, Mode.CHECK, with_edits, None)[0],
                                    roots)
    outcome, _, digest = _work(filename, settings, mode, with_edits, None)
    return _write(outcome, digest, settings, with_edits)


def _work(filename: str, settings: Settings, mode: Mode, with_edits: bool,
          cache: Cache | None,
          lean: bool = False) -> tuple[FileOutcome, str | None, bytes | None]:
    """Analyse one file (in a worker, or here): its outcome, with nothing written yet;
    the cache key of the bytes it read; and, when the fixed text is to be written, the
    digest of those bytes, for :func:`_write` in the main process.

    With ``lean`` (a run over many files), a check's result comes back without the
    file's text: a worker would otherwise send every file's text (twice: decoded and
    raw) to the main process, which would hold them all to the end of the run."""
    skipped = _too_large(filename, settings)
    if skipped is not None:
        return skipped, None, None
    try:
        source = read_source(filename)
    except FileProblem as problem:
        return FileOutcome(filename, error=FileError(filename, str(problem), "io")), None, None
    skipped = _too_large(filename, settings, source) if is_notebook(filename) else None
    if skipped is not None:
        return skipped, None, None
    from .engine import process_source

    fix = mode is not Mode.CHECK
    codes = settings.codes_for(filename)
    with _collecting_garbage_once():
        result = process_source(source, filename, settings, fix=fix, with_edits=with_edits,
                                rules=rules_with_codes(codes))
    key = cache.key(filename, source, codes, fix, with_edits) if cache else None
    outcome, digest = _unwritten(filename, source, result, mode)
    if lean and mode is Mode.CHECK and outcome.result is not None:
        outcome = dataclasses.replace(outcome, result=without_text(outcome.result))
    return outcome, key, digest


def without_text(result: FixResult) -> FixResult:
    """``result`` without the file's text (a check's: unchanged, nothing to write)."""
    return dataclasses.replace(result, original="", fixed="", fixed_bytes=b"", diff="")


def _too_large(filename: str, settings: Settings, source: bytes | None = None
               ) -> FileOutcome | None:
    """The outcome of a file over ``max-file-size``: skipped, with the reason. A notebook
    over it is measured again by its code once read (``source``): its outputs (plots,
    tables) are no part of the analysis, and often weigh more than the limit. (Its code,
    escaped in JSON, is never more than its file: one under the limit needs no look.)"""
    size = len(source) if source is not None else _size(filename)
    if size <= settings.max_file_size:
        return None
    if is_notebook(filename):
        code = code_size(source) if source is not None else None
        if code is None or code <= settings.max_file_size:
            return None
        size = code
    return FileOutcome(filename, skipped=too_large(size, settings.max_file_size))


def _work_many(filenames: list[str], modes: list[Mode], settings: Settings, with_edits: bool,
               cache: Cache | None) -> list[tuple[FileOutcome, str | None, bytes | None]]:
    """:func:`_work` on a few files (one task for a worker; its checks come back lean)."""
    return [_work(filename, settings, mode, with_edits, cache, True)
            for filename, mode in zip(filenames, modes, strict=True)]


def _unwritten(filename: str, source: bytes, result: FixResult,
               mode: Mode) -> tuple[FileOutcome, bytes | None]:
    """The outcome of ``result``, and the digest of ``source`` when it is to be written."""
    if result.error is not None:
        return FileOutcome(filename, result=result, error=result.error), None
    if mode is Mode.FIX and result.changed:
        return FileOutcome(filename, result=result), source_digest(source)
    return FileOutcome(filename, result=result), None


def _write(outcome: FileOutcome, digest: bytes | None, settings: Settings,
           with_edits: bool) -> FileOutcome:
    """Write a fixed file (when ``digest`` says it is to be written): in the main process
    only, whole or not at all."""
    result = outcome.result
    if digest is None or result is None:
        return outcome
    filename = outcome.filename
    try:
        with _interrupt_held():
            write_atomic(filename, result.fixed_bytes, digest)
    except FileProblem as problem:
        # The file stays as it was: report its findings there, as a check would (the
        # fixed text's positions mean nothing in the file on disk).
        return FileOutcome(filename, result=_checked(filename, result.original, settings,
                                                     with_edits) or result,
                           error=FileError(filename, str(problem), "io"))
    return FileOutcome(filename, result=result, written=True)


@contextlib.contextmanager
def _interrupt_held() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) until the block has run, then act on it as the handler in
    place would have (in the main thread; elsewhere signals do not arrive anyway)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: caught.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        if callable(previous):
            previous(signal.SIGINT, None)
        elif previous == signal.SIG_DFL:
            raise KeyboardInterrupt


def _checked(filename: str, source: bytes | str, settings: Settings,
             with_edits: bool) -> FixResult | None:
    """The findings of ``source`` unfixed (for a file whose fixes could not be written)."""
    from .engine import process_source

    result = process_source(source, filename, settings, fix=False, with_edits=with_edits,
                            rules=rules_with_codes(settings.codes_for(filename)))
    return result if result.error is None else None


@contextlib.contextmanager
def _collecting_garbage_once() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for one file, then collect once.

    LibCST's scopes hold a file's whole tree in reference cycles, so only the
    collector frees it. On its own schedule the collector walks the young objects
    of the trees being built again and again (about a tenth of a check's time);
    one collection of the youngest generation after the file frees the same
    garbage and walks each object once.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(0)


def _from_cache(filename: str, settings: Settings, mode: Mode, with_edits: bool,
                cache: Cache | None, store: CacheStore | None) -> FileOutcome | None:
    if cache is None or store is None:
        return None
    try:
        source = read_source(filename)
    except FileProblem:
        return None  # reported when the file is processed
    fix = mode is not Mode.CHECK
    codes = settings.codes_for(filename)
    result = store.get(cache.key(filename, source, codes, fix, with_edits), filename, source)
    if result is None:
        # The output format decides only whether fixes carry their edits (JSON, SARIF):
        # the entry of a run in another format serves when it has what this one needs.
        other = store.get(cache.key(filename, source, codes, fix, not with_edits), filename,
                          source)
        result = None if other is None else _edits_as_asked(other, with_edits)
        if result is None:
            return None
    if mode is Mode.CHECK:
        return FileOutcome(filename, result=without_text(result), error=result.error)
    return _write(*_unwritten(filename, source, result, mode), settings, with_edits)


def _edits_as_asked(result: FixResult, with_edits: bool) -> FixResult | None:
    """``result``, computed with edits or without, as the other mode would give it; None
    when it lacks edits that are asked for (a finding with a fix, found without edits)."""
    if with_edits:
        return None if any(f.fix is not None for f in result.findings) else result
    return dataclasses.replace(result, findings=tuple(
        f if f.fix is None or not f.fix.edits else dataclasses.replace(
            f, fix=dataclasses.replace(f.fix, edits=())) for f in result.findings))
