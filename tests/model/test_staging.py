"""ortpool.staging: files written together or not at all, in process (a failing move is
simulated by making ``os.replace`` fail for one destination)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import ortpool
from ortpool import OrtpoolError
from ortpool.staging import StagedFiles, same_file
from tests.support.rewrite import vi


def listing(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def fail_moving_to(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    """Make the move onto ``target`` fail as a full disk would; other moves still work."""
    real = os.replace

    def replace(src, dst, *args, **kwargs):
        if Path(dst) == target:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)


def test_a_failed_move_puts_everything_back(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a.txt").write_text("old a")
    fail_moving_to(monkeypatch, tmp_path / "c.txt")
    with pytest.raises(OSError, match="No space left on device"), StagedFiles() as files:
        files.add(tmp_path / "a.txt", "a").write(b"new a")
        files.add_below(tmp_path / "deep" / "er" / "b.txt", tmp_path, "b").write(b"new b")
        files.add(tmp_path / "c.txt", "c").write(b"new c")
        files.commit()
    # a restored, b and the folders made for it removed, c never there, no temporaries
    assert listing(tmp_path) == {"a.txt"}
    assert (tmp_path / "a.txt").read_text() == "old a"


def test_an_error_before_commit_leaves_only_what_was_there(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old a")
    with pytest.raises(RuntimeError, match="interrupted"), StagedFiles() as files:
        files.add(tmp_path / "a.txt", "a").write(b"new a")
        files.reserve()
        assert len(listing(tmp_path)) == 3  # a.txt, the temporary folder and the staged file
        raise RuntimeError("interrupted")
    assert listing(tmp_path) == {"a.txt"}
    assert (tmp_path / "a.txt").read_text() == "old a"


def test_commit_refuses_a_destination_never_staged(tmp_path: Path) -> None:
    with pytest.raises(OrtpoolError) as err, StagedFiles() as files:
        files.add(tmp_path / "a.txt", "the first file").write(b"a")
        files.add(tmp_path / "b.txt", "the second file")
        files.commit()
    assert str(err.value) == f"the second file {tmp_path / 'b.txt'} was never staged"
    assert listing(tmp_path) == set()


def test_a_new_only_destination_that_appears_meanwhile_is_not_overwritten(tmp_path: Path) -> None:
    target = tmp_path / "data" / "w.bin"
    with pytest.raises(OrtpoolError) as err, StagedFiles() as files:
        files.add(tmp_path / "m.onnx", "the output").write(b"model")
        files.add_below(target, tmp_path, "external data file 'data/w.bin'").write(b"weights")
        target.parent.mkdir()
        target.write_bytes(b"someone else's")
        files.commit()
    assert str(err.value) == (
        f"external data file 'data/w.bin' {target} appeared while writing; refusing to "
        "overwrite it"
    )
    assert listing(tmp_path) == {"data", "data/w.bin"}
    assert target.read_bytes() == b"someone else's"


def test_same_file_sees_through_dotdot_links_and_missing_folders(tmp_path: Path) -> None:
    (tmp_path / "in.onnx").write_bytes(b"x")
    (tmp_path / "link.onnx").symlink_to("in.onnx")
    os.link(tmp_path / "in.onnx", tmp_path / "hard.onnx")
    (tmp_path / "copy.onnx").write_bytes(b"x")
    assert same_file(tmp_path / "nosuch" / ".." / "in.onnx", tmp_path / "in.onnx")
    assert same_file(tmp_path / "link.onnx", tmp_path / "in.onnx")
    assert same_file(tmp_path / "hard.onnx", tmp_path / "in.onnx")
    assert not same_file(tmp_path / "copy.onnx", tmp_path / "in.onnx")
    assert not same_file(tmp_path / "nosuch" / "in.onnx", tmp_path / "in.onnx")


def test_rewrite_file_writes_model_and_report_together_or_neither(
    tmp_path: Path, monkeypatch
) -> None:
    graph = h.make_graph(
        [h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2])],
        "g",
        [vi("x", T.FLOAT, [1, 1, 4, 4])],
        [vi("y")],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 12)])
    model.ir_version = 10
    onnx.save(model, tmp_path / "in.onnx")
    (tmp_path / "out.onnx").write_bytes(b"the previous output")
    fail_moving_to(monkeypatch, tmp_path / "r.json")
    with pytest.raises(OSError, match="No space left on device"):
        ortpool.rewrite.rewrite_file(
            tmp_path / "in.onnx", tmp_path / "out.onnx", json_report=tmp_path / "r.json"
        )
    assert listing(tmp_path) == {"in.onnx", "out.onnx"}
    assert (tmp_path / "out.onnx").read_bytes() == b"the previous output"
    monkeypatch.undo()
    report = ortpool.rewrite.rewrite_file(
        tmp_path / "in.onnx", tmp_path / "out.onnx", json_report=tmp_path / "r.json"
    )
    assert listing(tmp_path) == {"in.onnx", "out.onnx", "r.json"}
    assert (tmp_path / "r.json").read_text() == report.to_json()
    assert onnx.load(tmp_path / "out.onnx").graph.node[0].op_type == "MaxPool_12"


def test_an_unwritable_report_folder_stops_validate_before_it_runs(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """(As root no folder is unwritable, so the refusal of the folder is simulated.)"""
    import tempfile

    from ortpool.cli import main

    real = tempfile.mkdtemp
    locked = tmp_path / "locked"
    locked.mkdir()

    def mkdtemp(*args, dir=None, **kwargs):
        if dir is not None and Path(dir) == locked:
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    model = tmp_path / "m.onnx"
    model.write_bytes(b"")  # never read: the destinations are checked first
    code = main(["validate", str(model), "--no-progress", "--html", str(locked / "r.html")])
    out, err = capsys.readouterr()
    assert (code, out, err) == (
        2,
        "",
        f"ortpool validate: error: the HTML report {locked / 'r.html'}: cannot write in {locked} "
        "(Permission denied)\n",
    )
    assert listing(tmp_path) == {"locked", "m.onnx"}


def external_model(source: Path, location: str) -> None:
    """source/m.onnx: x + w -> MaxPool, w in the external data file ``location``."""
    weights = numpy_helper.from_array(np.ones((1, 1, 4, 4), np.float32), "w")
    (source / location).write_bytes(weights.raw_data)
    weights.ClearField("raw_data")
    weights.data_location = T.EXTERNAL
    weights.external_data.add(key="location", value=location)
    graph = h.make_graph(
        [h.make_node("Add", ["x", "w"], ["a"], name="add"),
         h.make_node("MaxPool", ["a"], ["y"], name="p", kernel_shape=[2, 2])],
        "g", [vi("x", T.FLOAT, [1, 1, 4, 4])], [vi("y")], [weights])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 12)])
    model.ir_version = 10
    onnx.save(model, source / "m.onnx")


def test_names_as_long_as_the_folder_allows_are_written_and_replaced(tmp_path: Path) -> None:
    """An output, a report and an external data file whose names take the filesystem's whole
    NAME_MAX (255 bytes here) are staged and moved into place, also over an earlier file of
    that name: the staged copy and the backup are named by index, not after the destination."""
    longest = os.pathconf(tmp_path, "PC_NAME_MAX")
    source, out = tmp_path / "src", tmp_path / "out"
    source.mkdir()
    out.mkdir()
    location = "w" * longest
    external_model(source, location)
    target, report = out / ("o" * (longest - 5) + ".onnx"), out / ("r" * (longest - 5) + ".json")
    for _ in range(2):  # the second time over the first one's files
        ortpool.rewrite.rewrite_file(source / "m.onnx", target, json_report=report)
        assert listing(out) == {target.name, report.name, location}
    assert onnx.load(target, load_external_data=False).graph.node[1].op_type == "MaxPool_12"
    assert (out / location).read_bytes() == (source / location).read_bytes()


def test_a_full_disk_names_the_file_it_could_not_write(tmp_path: Path, monkeypatch) -> None:
    """A write that fails (a full disk: the staged file opened on /dev/full, the data copy
    refused) is an error naming the destination, not "[Errno 28] No space left on device"
    (or that errno with the staging folder's path); nothing is left in the output's folder."""
    import shutil

    source, out = tmp_path / "src", tmp_path / "out"
    source.mkdir()
    out.mkdir()
    external_model(source, "w.bin")

    def copyfile(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    real_open = Path.open

    def full(path, mode="r", *args, **kwargs):
        if mode == "xb" and path.name == "1":  # the staged report (the model is the first)
            return open("/dev/full", "wb")  # closed by its caller
        return real_open(path, mode, *args, **kwargs)

    calls = ((shutil, "copyfile", copyfile, "external data file 'w.bin'", out / "w.bin"),
             (Path, "open", full, "the JSON report", out / "r.json"))
    for owner, name, replacement, what, path in calls:
        with monkeypatch.context() as patch:
            patch.setattr(owner, name, replacement)
            with pytest.raises(OrtpoolError) as err:
                ortpool.rewrite.rewrite_file(source / "m.onnx", out / "o.onnx",
                                             json_report=out / "r.json")
        assert str(err.value) == f"{what} {path}: cannot write (No space left on device)"
        assert listing(out) == set()


def test_a_link_s_file_is_replaced_as_a_file_and_put_back_on_a_failure(
    tmp_path: Path, monkeypatch
) -> None:
    """A destination that is a symbolic link to a file: the file is staged beside itself and
    replaced (the link kept), so a failure elsewhere in the commit leaves it as it was; it was
    once opened for writing, and so emptied, before anything moved."""
    (tmp_path / "old.json").write_text("the previous report")
    (tmp_path / "link.json").symlink_to("old.json")
    fail_moving_to(monkeypatch, tmp_path / "c.txt")
    with pytest.raises(OSError, match="No space left on device"), StagedFiles() as files:
        files.add(tmp_path / "link.json", "the report").write(b"new report")
        files.add(tmp_path / "c.txt", "c").write(b"new c")
        files.commit()
    assert listing(tmp_path) == {"old.json", "link.json"}
    assert (tmp_path / "old.json").read_text() == "the previous report"
    monkeypatch.undo()
    with StagedFiles() as files:
        files.add(tmp_path / "link.json", "the report").write(b"new report")
        files.commit()
    assert os.readlink(tmp_path / "link.json") == "old.json"
    assert (tmp_path / "old.json").read_text() == "new report"


def save_refusals(folder: str) -> None:
    """In the child: each refused call of ``FixResult.save`` / ``ortpool.model.save``, printed
    as JSON ["ExceptionType: message", ...]."""
    import json

    os.chdir(folder)
    external_model(Path(folder), "w.bin")
    result = ortpool.fix("m.onnx")
    calls = (
        lambda: result.save("o.onnx", link_data="no"),
        lambda: result.save("o.onnx", link_data=1),
        lambda: result.save(b"o.onnx"),
        lambda: result.save(""),
        lambda: ortpool.model.save("m.onnx", "o.onnx"),
        lambda: ortpool.model.save(result.model, "o.onnx", 5),
        lambda: result.save("o\0.onnx"),
        lambda: ortpool.rewrite.rewrite_file("m.onnx", "o\0.onnx"),
        lambda: ortpool.fix.fix_file("m.onnx", "o.onnx", json_report="r\0.json"),
    )
    found = []
    for call in calls:
        try:
            call()
            found.append("no error")
        except Exception as err:  # the test names what was raised
            found.append(f"{type(err).__name__}: {err}")
    print(json.dumps(found))


def test_save_refuses_what_is_not_a_path_or_a_flag(tmp_path: Path) -> None:
    """``ortpool.fix(m).save(path, link_data='no')`` hard-linked the weights ('no' is a true
    value); bytes for the path said "a bytes-like object is required, not 'str'"; a str for
    the model died of an AttributeError; a NUL in a path said "embedded null byte", naming no
    parameter. Nothing is written."""
    import json

    from tests.support import run_child

    done = run_child(__name__, "save_refusals", str(tmp_path), timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        "TypeError: link_data='no' must be True or False, not str",
        "TypeError: link_data=1 must be True or False, not int",
        "TypeError: path=b'o.onnx' must be a path (str or os.PathLike), not bytes",
        "OrtpoolError: path='' must name a file",
        "TypeError: model='m.onnx' must be an onnx.ModelProto, not str",
        "TypeError: source_dir=5 must be a path (str or os.PathLike), not int",
        "OrtpoolError: path='o\\x00.onnx' holds a NUL character, which no file name can hold",
        "OrtpoolError: target='o\\x00.onnx' holds a NUL character, which no file name can hold",
        "OrtpoolError: json_report='r\\x00.json' holds a NUL character, which no file name can "
        "hold",
    ]
    assert listing(tmp_path) == {"m.onnx", "w.bin"}


def test_save_checks_its_arguments_with_the_one_checker_of_each_kind(monkeypatch) -> None:
    """``path``, ``source_dir`` and ``link_data`` are checked by :mod:`ortpool.values`, as every
    option is (the model layer, below ``options/``, had its own copy of the path check)."""
    from ortpool import values
    from ortpool.model import files

    seen = []
    for kind in ("path", "flag"):
        check = getattr(values, kind)
        monkeypatch.setattr(values, kind, lambda label, value, check=check: (
            seen.append(label), check(label, value))[1])
    with pytest.raises(TypeError, match=r"^link_data='no' must be True or False, not str$"):
        files.save(onnx.ModelProto(), "o.onnx", "folder", link_data="no")
    assert seen == ["path", "source_dir", "link_data"]


def test_a_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    """An existing output (or a link's file) replaced keeps its permissions, as ``cp`` onto it
    would: a private 0600 output became 0644 (the umask's mode of a new file)."""
    (tmp_path / "private.onnx").write_bytes(b"old")
    (tmp_path / "private.onnx").chmod(0o600)
    (tmp_path / "shared.json").write_bytes(b"old")
    (tmp_path / "shared.json").chmod(0o640)
    (tmp_path / "link.json").symlink_to("shared.json")
    with StagedFiles() as files:
        files.add(tmp_path / "private.onnx", "the output").write(b"new")
        files.add(tmp_path / "link.json", "the report").write(b"new")
        files.commit()
    modes = {name: (tmp_path / name).stat().st_mode & 0o777
             for name in ("private.onnx", "shared.json")}
    assert modes == {"private.onnx": 0o600, "shared.json": 0o640}
    assert (tmp_path / "private.onnx").read_bytes() == (tmp_path / "shared.json").read_bytes()


def save_after_chdir(folder: str) -> None:
    """In the child: fix folder/sub/m.onnx by a relative path, move to folder/elsewhere (whose
    sub/ holds other weights of the same name) and save there; prints what was saved."""
    import json

    os.chdir(folder)
    result = ortpool.fix(os.path.join("sub", "m.onnx"))
    os.chdir("elsewhere")
    result.save("o.onnx")
    print(json.dumps((Path("w.bin").read_bytes() == Path("../sub/w.bin").read_bytes(),
                      sorted(os.listdir(".")))))


def test_save_reads_the_data_from_the_model_s_folder_wherever_it_runs(tmp_path: Path) -> None:
    """``ortpool.fix('sub/m.onnx')`` kept the folder as given, relative: ``.save()`` after a
    change of directory read the data from another 'sub' (here: other weights of that name,
    copied silently as the model's)."""
    import json

    from tests.support import run_child

    (tmp_path / "sub").mkdir()
    external_model(tmp_path / "sub", "w.bin")
    (tmp_path / "elsewhere" / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere" / "sub" / "w.bin").write_bytes(b"other weights" * 5)
    done = run_child(__name__, "save_after_chdir", str(tmp_path), timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [True, ["o.onnx", "sub", "w.bin"]]
