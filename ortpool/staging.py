"""Writing several files as one: nothing reaches its destination until all of it is ready (the
rules, for users: docs/rewrite.md, "What is written, and when").

Every destination is checked first (an :class:`~ortpool.errors.OrtpoolError` naming the path),
staged in a private folder *inside its destination's folder* and renamed into place once all are
complete; a failure removes the temporaries or puts back what was replaced (a killed process can
leave a ``.ortpool-*`` folder, never a half-written file). A symlink to a file is kept: the file
it leads to is replaced. A device or pipe (``/dev/stdout``) is written through, not replaced:
opened before anything moves, written last.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import stat
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from ortpool.errors import OrtpoolError

_PREFIX = ".ortpool-"


def inside(path: str | os.PathLike, root: str | os.PathLike) -> bool:
    """Whether ``path`` is ``root`` or below it, as written (resolve both first)."""
    path, root = os.fspath(path), os.fspath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def through_link(path: str | os.PathLike, root: str | os.PathLike) -> Path | None:
    """The first symbolic link from ``root`` (excluded) down to ``path`` (included), or None."""
    path, root = Path(path), Path(root)
    steps = itertools.takewhile(lambda p: p != root, (path, *path.parents))
    for step in reversed(list(steps)):
        if os.path.islink(step):
            return step
        if not os.path.lexists(step):
            return None
    return None


def _special_allowed(path: Path) -> bool:
    """Whether ``path`` (not a regular file) is ``/dev/null`` or this process's stdout or stderr."""
    try:
        found = os.stat(path)
    except OSError:
        return False
    allowed = [os.stat(os.devnull)]
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            allowed.append(os.fstat(fd))
    return any((found.st_dev, found.st_ino) == (a.st_dev, a.st_ino) for a in allowed)


def _open_through(path: Path) -> BinaryIO:
    """``path`` opened to be written through: this process's stdout or stderr (``/dev/stdout``,
    whatever it is) as a copy of its descriptor, which writes where the stream is (a file it
    was redirected to is neither emptied nor overwritten from its start); else the path."""
    found = os.stat(path)
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            own = os.fstat(fd)
            if (found.st_dev, found.st_ino) == (own.st_dev, own.st_ino):
                return open(os.dup(fd), "wb")  # closed by the commit
    return path.open("wb")


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether ``a`` and ``b`` name one file: the same inode, else the same resolved path."""
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


class Destination:
    """One file to be written, staged by :meth:`write` or :meth:`place`."""

    def __init__(self, files: StagedFiles, path: Path, what: str, root: Path | None,
                 target: Path | None = None) -> None:
        self.path = path  # as named (in messages)
        #: the file replaced on commit: ``path``, or the file the symbolic link ``path`` leads to
        self.target = target or path
        self.what = what
        self.folder = root if root is not None else self.target.parent  # where it is staged
        self.missing = _missing_folders(path.parent, self.folder)
        self.must_be_new = root is not None
        #: a pipe, device or terminal, or a link to this process's stdout or stderr (whatever
        #: it is: ``--json /dev/stdout > file``): written through on commit, never replaced
        self.in_place = os.path.exists(path) and (
            not stat.S_ISREG(os.stat(path).st_mode)
            or (os.path.islink(path) and _special_allowed(path)))
        self._files = files
        self.staged: Path | None = None
        self.pending: bytes | None = None
        self.number = 0  # set by StagedFiles

    def write(self, data: bytes) -> None:
        if self.in_place:
            self.pending = data
            return
        staged = self._files._stage_path(self)
        with self.naming(), staged.open("xb") as stream:  # with the mode a new file gets (umask)
            stream.write(data)
        self.staged = staged

    def place(self, source: Path, link: bool) -> str:
        """Stage ``source``'s content: a copy-on-write clone where the filesystem can, else a
        streamed copy; with ``link``, a hard link when possible (opt-in: onnx 1.23 refuses to load
        external data with more than one link). Returns "cloned", "copied" or "hard-linked"."""
        staged = self._files._stage_path(self)
        self.staged = staged
        if link:
            # another filesystem, or links not supported: copy instead
            with contextlib.suppress(OSError):
                os.link(source, staged)
                return "hard-linked"
        with self.naming():
            if _clone(source, staged):
                return "cloned"
            shutil.copyfile(source, staged)  # streams in chunks (sendfile), never the whole file
        return "copied"

    @contextlib.contextmanager
    def naming(self):
        """An OSError while writing (a full disk, a quota) as an error naming this file."""
        try:
            yield
        except BrokenPipeError:
            raise  # --json /dev/stdout whose reader is gone: not an error (exit 141)
        except OSError as err:
            raise OrtpoolError(f"{self.what} {self.path}: cannot write "
                               f"({err.strerror or err})") from None


_FICLONE = 0x40049409  # Linux's ioctl for a copy-on-write clone (btrfs, XFS, bcachefs...)


def _clone(source: Path, target: Path) -> bool:
    """Clone ``source`` into a new file ``target``; False (nothing left) where it cannot."""
    try:
        import fcntl
    except ImportError:  # not a POSIX system
        return False
    with open(source, "rb") as src, open(target, "xb") as dst, contextlib.suppress(OSError):
        fcntl.ioctl(dst.fileno(), _FICLONE, src.fileno())
        return True
    os.remove(target)
    return False


class StagedFiles(contextlib.AbstractContextManager):
    """Files written together or not at all: a context manager; :meth:`commit` writes them.
    ``sources``: ``(path, description)`` of the files being read, which no destination may be."""

    def __init__(self, sources: Iterable[tuple[str | os.PathLike, str]] = ()) -> None:
        self._sources = [(Path(p), what) for p, what in sources]
        self._destinations: list[Destination] = []
        self._temp: dict[str, Path] = {}
        self._numbers = itertools.count()  # each destination's staged name, never reused

    def __exit__(self, *exc: object) -> None:
        self._discard()

    def add(self, path: str | os.PathLike, what: str) -> Destination:
        """A destination whose folder must exist; ``what`` names it in messages."""
        if os.fspath(path).endswith(("/", os.sep)):  # Path() would drop the slash: a file "out"
            raise OrtpoolError(f"{what} {os.fspath(path)} names a directory; name a file")
        path = Path(path)
        self._check(path, what)
        if os.path.exists(path):
            mode = os.stat(path).st_mode
            if not stat.S_ISREG(mode) and not _special_allowed(path):
                from ortpool.modelfile import kind  # (it imports onnx: ortpool.cli imports this)

                raise OrtpoolError(f"{what} {path} is {kind(mode)}; name a regular file (or "
                                   "/dev/null, /dev/stdout)")
        # a link to a file (or to none yet): that file is replaced, the link kept
        target = _link_target(path, what) if os.path.islink(path) else path
        folder = target.parent
        if not folder.is_dir():
            state = "is not a directory" if folder.exists() else "does not exist"
            whose = "its folder" if target == path else "the folder its link leads to,"
            raise OrtpoolError(f"{what} {path}: {whose} {folder} {state}; create it first")
        return self._keep(Destination(self, path, what, None, target))

    def add_below(self, path: str | os.PathLike, root: str | os.PathLike, what: str) -> Destination:
        """A new destination inside the folder ``root`` (its missing subfolders made on commit)."""
        path, root = Path(path), Path(root)
        link = through_link(path, root)
        if link is not None:
            raise OrtpoolError(f"{what} {path}: {link} is a symbolic link; files are written only "
                               f"inside {root}, never through a link")
        self._check(path, what)
        if os.path.lexists(path):
            raise OrtpoolError(f"{what} {path} exists; refusing to overwrite it")
        blocking = next(p for p in path.parents if p == root or os.path.lexists(p))
        if not blocking.is_dir():
            raise OrtpoolError(f"{what} {path}: {blocking} exists and is not a directory")
        return self._keep(Destination(self, path, what, root))

    def drop(self, destination: Destination) -> None:
        """Leave ``destination`` out (its path was still checked)."""
        self._destinations.remove(destination)

    def reserve(self) -> None:
        """Create the temporary folders now: every destination folder proven writable before
        long work whose result would have nowhere to go."""
        for destination in self._destinations:
            if not destination.in_place:
                self._temp_folder(destination)

    def commit(self) -> None:
        """Move every staged file into place; on a failure restore the previous state."""
        unstaged = [d for d in self._destinations if d.staged is None and d.pending is None]
        if unstaged:
            raise OrtpoolError(f"{unstaged[0].what} {unstaged[0].path} was never staged")
        moved: list[tuple[Path, Path | None]] = []
        made: list[Path] = []
        files = [d for d in self._destinations if not d.in_place]
        through = [d for d in self._destinations if d.in_place]
        streams = []
        try:
            # Opened first: a destination that cannot be opened fails before anything is moved.
            for destination in through:
                with destination.naming():
                    streams.append((destination, _open_through(destination.path)))
            for destination in files:
                for folder in destination.missing:
                    if not folder.is_dir():
                        folder.mkdir()
                        made.append(folder)
                if destination.must_be_new and os.path.lexists(destination.target):
                    raise OrtpoolError(f"{destination.what} {destination.path} appeared while "
                                       "writing; refusing to overwrite it")
                _keep_mode(destination.target, destination.staged)
                moved.append((destination.target, self._backup(destination)))
                os.replace(destination.staged, destination.target)
            for destination, stream in streams:
                with destination.naming():
                    for own in (sys.stdout, sys.stderr):  # what was printed comes first
                        with contextlib.suppress(AttributeError, ValueError):
                            own.flush()
                    stream.write(destination.pending)
                    stream.close()
        except BaseException:
            for path, backup in reversed(moved):
                with contextlib.suppress(OSError):
                    if backup is None:
                        path.unlink()
                    else:
                        os.replace(backup, path)
            for folder in reversed(made):
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise
        finally:
            for _, stream in streams:
                with contextlib.suppress(OSError):
                    stream.close()
            self._discard()

    def _check(self, path: Path, what: str) -> None:
        for source, description in self._sources:
            if same_file(path, source):
                raise OrtpoolError(f"{what} {path} is {description}; write to another path")
        for other in self._destinations:
            if same_file(path, other.path):
                raise OrtpoolError(f"{what} {path} and {other.what} {other.path} are the same file")
        try:
            if path.is_dir():
                raise OrtpoolError(f"{what} {path} is a directory; name a file")
        except OSError as err:  # a name the system refuses (too long, in a folder not searchable)
            raise OrtpoolError(f"{what} {path}: {err.strerror}") from None

    def _keep(self, destination: Destination) -> Destination:
        for other in self._destinations:
            for folder, needer, file in (*((f, destination, other) for f in destination.missing),
                                         *((f, other, destination) for f in other.missing)):
                if same_file(folder, file.path):
                    raise OrtpoolError(f"{file.what} {file.path} is the folder {needer.what} "
                                       f"{needer.path} needs; write to another path")
        destination.number = next(self._numbers)
        self._destinations.append(destination)
        return destination

    def _temp_folder(self, destination: Destination) -> Path:
        folder = destination.folder
        key = os.path.realpath(folder)
        if key not in self._temp:
            try:
                with signals_held():  # made and recorded, so removed on the way out
                    self._temp[key] = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=folder))
            except OSError as err:
                raise OrtpoolError(f"{destination.what} {destination.path}: cannot write in "
                                   f"{folder} ({err.strerror})") from None
        return self._temp[key]

    def _stage_path(self, destination: Destination) -> Path:
        # its number alone: the destination's own name may be as long as a name can be
        return self._temp_folder(destination) / str(destination.number)

    def _backup(self, destination: Destination) -> Path | None:
        """The file a destination replaces, kept so that a failed commit can put it back."""
        if not os.path.lexists(destination.target):
            return None
        backup = self._temp_folder(destination) / f"backup-{destination.staged.name}"
        try:
            os.link(destination.target, backup, follow_symlinks=False)
        except OSError:
            os.replace(destination.target, backup)  # no hard links here: move it aside instead
        return backup

    def _discard(self) -> None:
        for temp in self._temp.values():
            shutil.rmtree(temp, ignore_errors=True)
        self._temp.clear()


#: the signals that end a command through its cleanup (:func:`ortpool.cli.main`): Ctrl-C, a
#: supervisor's stop, a closed terminal (SIGHUP, absent on Windows)
ENDING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                       if hasattr(signal, name))


@contextlib.contextmanager
def signals_held():
    """:data:`ENDING_SIGNALS` held back (delivered when it ends): something made (a folder, a
    child) must not be lost before it is recorded for removal."""
    held = set(ENDING_SIGNALS)
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    except (AttributeError, OSError, ValueError):  # no POSIX signal masks here
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _keep_mode(target: Path, staged: Path) -> None:
    """Give ``staged`` the mode (and, where allowed, the owner) of the file ``target`` it
    replaces, as ``cp`` onto an existing file keeps them: a private output stays private."""
    try:
        kept = os.stat(target)
    except FileNotFoundError:
        return
    os.chmod(staged, stat.S_IMODE(kept.st_mode))
    with contextlib.suppress(OSError):  # another owner: only root may give it
        os.chown(staged, kept.st_uid, kept.st_gid)


def _link_target(path: Path, what: str) -> Path:
    """The file the symbolic link ``path`` leads to, every link resolved (it may not exist)."""
    try:
        return Path(os.path.realpath(path, strict=True))
    except FileNotFoundError:  # dangling: the file it names is written
        return Path(os.path.realpath(path))
    except OSError as err:  # a loop
        raise OrtpoolError(f"{what} {path}: {err.strerror}") from None


def _missing_folders(folder: Path, root: Path) -> list[Path]:
    """The missing folders from ``root`` (excluded) down to ``folder``, outermost first."""
    below = itertools.takewhile(lambda f: f != root and not f.exists(), (folder, *folder.parents))
    return list(below)[::-1]
