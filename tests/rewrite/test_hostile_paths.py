"""Attacks on what ortpool writes (issue 9, "lost or half-written data"), each through the command
line in a child process: the exit code, the whole message, exactly which files exist afterwards
and that the inputs' bytes are unchanged.

1. an output that is the input under another name (``sub/../in.onnx``, a symlink, a hard link, one
   of its external data files) is refused, and no folder is created (by ``ortpool fix`` too);
2. a failing write leaves nothing behind (an output that is a directory, a conflicting second
   external data file): data files are not linked before the model write fails;
3. a file that is not an ONNX model (empty, no graph, an empty graph, no IR version, corrupt
   bytes, a directory) is refused by rewrite, restore and validate;
4. ``--json`` that cannot be written stops the run before the model is written;
5. validate handles a scalar graph output, and checks its ``--json``/``--html`` destinations
   before running anything (so do conformance and bench).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from ortpool.bench.cases import CASES as BENCH_CASES
from tests.support import CHILD_ENV, commands_in_child, run_child, run_cli
from tests.support.rewrite import vi

IR_VERSION = 10
TIMEOUT = 120


def ortpool(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd, timeout=TIMEOUT)


def tree(root: Path) -> set[str]:
    """Every file and folder under ``root`` (folders end in '/'), symlinks not followed."""
    found = set()
    for folder, dirs, files in os.walk(root):
        rel = Path(folder).relative_to(root)
        found.update(f"{(rel / d).as_posix()}/" for d in dirs)
        found.update((rel / f).as_posix() for f in files)
    return found


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def hashes(root: Path, names: list[str]) -> dict[str, str]:
    return {name: sha(root / name) for name in names}


def _stamp(model: onnx.ModelProto) -> onnx.ModelProto:
    model.ir_version = IR_VERSION  # onnx 1.23 writes IR 14, onnxruntime 1.31 reads at most 13
    return model


def pool_model() -> onnx.ModelProto:
    graph = h.make_graph(
        [h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2])],
        "g",
        [vi("x", T.FLOAT, [1, 1, 4, 4])],
        [vi("y")],
    )
    return _stamp(h.make_model(graph, opset_imports=[h.make_opsetid("", 12)]))


def save_external(folder: Path, locations: tuple[str, str]) -> None:
    """folder/m.onnx: x + w1 + w2 -> MaxPool, w1 and w2 in the external files ``locations``."""
    weights = [
        numpy_helper.from_array(np.full((1, 1, 4, 4), k, np.float32), f"w{k}") for k in (1, 2)
    ]
    for tensor, location in zip(weights, locations, strict=True):
        raw = tensor.raw_data
        (folder / location).parent.mkdir(parents=True, exist_ok=True)
        (folder / location).write_bytes(raw)
        tensor.ClearField("raw_data")
        tensor.data_location = T.EXTERNAL
        tensor.external_data.add(key="location", value=location)
        tensor.external_data.add(key="length", value=str(len(raw)))
    graph = h.make_graph(
        [
            h.make_node("Add", ["x", "w1"], ["a"], name="add1"),
            h.make_node("Add", ["a", "w2"], ["b"], name="add2"),
            h.make_node("MaxPool", ["b"], ["y"], name="p", kernel_shape=[2, 2]),
        ],
        "g",
        [vi("x", T.FLOAT, [1, 1, 4, 4])],
        [vi("y")],
        weights,
    )
    model = _stamp(h.make_model(graph, opset_imports=[h.make_opsetid("", 12)]))
    onnx.save(model, folder / "m.onnx")


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """in.onnx; ext/m.onnx with ext/w1, ext/w2; sub/m.onnx with sub/data/w1, sub/data/w2."""
    onnx.save(pool_model(), tmp_path / "in.onnx")
    (tmp_path / "ext").mkdir()
    save_external(tmp_path / "ext", ("w1", "w2"))
    (tmp_path / "sub").mkdir()
    save_external(tmp_path / "sub", ("data/w1", "data/w2"))
    return tmp_path


BASE = {
    "in.onnx",
    "ext/",
    "ext/m.onnx",
    "ext/w1",
    "ext/w2",
    "sub/",
    "sub/m.onnx",
    "sub/data/",
    "sub/data/w1",
    "sub/data/w2",
}
INPUTS = ["in.onnx", "ext/m.onnx", "ext/w1", "ext/w2", "sub/m.onnx", "sub/data/w1", "sub/data/w2"]


# 1. the output is the input under another name -------------------------------------------------


@pytest.mark.parametrize(
    ("prepare", "args", "message", "extra"),
    [
        (
            None,
            ["in.onnx", "./nosuch/../in.onnx"],
            "the output nosuch/../in.onnx is the input model; write to another path",
            set(),
        ),
        (
            "symlink",
            ["in.onnx", "link.onnx"],
            "the output link.onnx is the input model; write to another path",
            {"link.onnx"},
        ),
        (
            "hardlink",
            ["in.onnx", "hard.onnx"],
            "the output hard.onnx is the input model; write to another path",
            {"hard.onnx"},
        ),
        (
            None,
            ["ext/m.onnx", "ext/w1"],
            "the output ext/w1 is the input model's external data file 'w1'; "
            "write to another path",
            set(),
        ),
        (
            None,
            ["sub/m.onnx", "sub/../sub/data/w2"],
            "the output sub/../sub/data/w2 is the input model's external data file 'data/w2'; "
            "write to another path",
            set(),
        ),
        (
            None,
            ["in.onnx", "nosuch/../out.onnx"],
            "the output nosuch/../out.onnx: its folder nosuch/.. does not exist; create it first",
            set(),
        ),
        (
            None,
            ["ext/m.onnx", "new/out.onnx"],
            "the output new/out.onnx: its folder new does not exist; create it first",
            set(),
        ),
        (None, ["in.onnx", "new/"], "the output new/ names a directory; name a file", set()),
    ],
    ids=["dotdot-through-missing-folder", "symlink", "hard-link", "data-file", "data-file-dotdot",
         "missing-folder-dotdot", "missing-folder", "trailing-slash"],
)
def test_output_that_is_the_input_or_needs_a_folder_is_refused(
    work: Path, prepare: str | None, args: list[str], message: str, extra: set[str]
) -> None:
    check_refused(work, "rewrite", prepare, args, message, extra)


def test_restore_refuses_the_input_under_another_name(work: Path) -> None:
    """restore writes through the same code; one case shows it."""
    message = "the output nosuch/../in.onnx is the input model; write to another path"
    check_refused(work, "restore", None, ["in.onnx", "./nosuch/../in.onnx"], message, set())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["in.onnx", "./nosuch/../in.onnx"],
         "the output nosuch/../in.onnx is the input model; write to another path"),
        (["sub/m.onnx", "sub/../sub/data/w2"],
         "the output sub/../sub/data/w2 is the input model's external data file 'data/w2'; "
         "write to another path"),
        (["in.onnx", "out.onnx", "--json", "nodir/r.json"],
         "the JSON report nodir/r.json: its folder nodir does not exist; create it first"),
        (["in.onnx", "out.onnx", "--json", "out.onnx"],
         "the JSON report out.onnx and the output out.onnx are the same file"),
        (["in.onnx", "out.onnx", "--json", "ext"],
         "the JSON report ext is a directory; name a file"),
    ],
    ids=["dotdot", "data-file", "json-missing-folder", "json-is-the-output", "json-directory"],
)
def test_fix_refuses_what_rewrite_refuses(work: Path, args: list[str], message: str) -> None:
    """ortpool fix writes through the same code: the same refusals, before any proof runs."""
    check_refused(work, "fix", None, args, message, set())


def check_refused(
    work: Path, verb: str, prepare: str | None, args: list[str], message: str, extra: set[str]
) -> None:
    if prepare == "symlink":
        (work / "link.onnx").symlink_to("in.onnx")
    elif prepare == "hardlink":
        os.link(work / "in.onnx", work / "hard.onnx")
    before = hashes(work, INPUTS)
    done = ortpool(verb, *args, cwd=work)
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"ortpool {verb}: error: {message}\n",
    )
    assert tree(work) == BASE | extra  # no folder created, nothing staged left behind
    assert hashes(work, INPUTS) == before


# 2. nothing is written unless all of it is --------------------------------------------------


def test_output_that_is_a_directory_links_no_weights(work: Path) -> None:
    (work / "out" / "o.onnx").mkdir(parents=True)
    before = hashes(work, INPUTS)
    done = ortpool("rewrite", "sub/m.onnx", "out/o.onnx", cwd=work)
    assert (done.returncode, done.stderr) == (
        2,
        "ortpool rewrite: error: the output out/o.onnx is a directory; name a file\n",
    )
    assert tree(work) == BASE | {"out/", "out/o.onnx/"}  # no out/data/ with linked weights
    assert hashes(work, INPUTS) == before


def test_a_conflicting_second_data_file_links_nothing(work: Path) -> None:
    (work / "out").mkdir()
    (work / "out" / "w2").write_bytes(b"somebody else's file")
    before = hashes(work, INPUTS)
    done = ortpool("rewrite", "ext/m.onnx", "out/o.onnx", "--json", "out/r.json", cwd=work)
    assert (done.returncode, done.stderr) == (
        2,
        "ortpool rewrite: error: out/w2 exists and differs from the model's external data "
        "ext/w2; refusing to overwrite it (choose another output directory)\n",
    )
    assert tree(work) == BASE | {"out/", "out/w2"}  # w1 was not linked first
    assert (work / "out" / "w2").read_bytes() == b"somebody else's file"
    assert hashes(work, INPUTS) == before


def test_a_data_folder_in_the_way_is_refused(work: Path) -> None:
    (work / "out").mkdir()
    (work / "out" / "data").write_bytes(b"a file, not a folder")
    done = ortpool("rewrite", "sub/m.onnx", "out/o.onnx", cwd=work)
    assert (done.returncode, done.stderr) == (
        2,
        "ortpool rewrite: error: external data file 'data/w1' out/data/w1: out/data exists and "
        "is not a directory\n",
    )
    assert tree(work) == BASE | {"out/", "out/data"}


def test_an_output_named_like_a_data_folder_is_refused(work: Path) -> None:
    (work / "out").mkdir()
    done = ortpool("rewrite", "sub/m.onnx", "out/data", cwd=work)
    assert (done.returncode, done.stderr) == (
        2,
        "ortpool rewrite: error: the output out/data is the folder external data file 'data/w1' "
        "out/data/w1 needs; write to another path\n",
    )
    assert tree(work) == BASE | {"out/"}


def test_a_successful_write_is_complete_and_leaves_no_temporaries(work: Path) -> None:
    (work / "out").mkdir()
    (work / "out" / "o.onnx").write_bytes(b"an older output, replaced")
    before = hashes(work, INPUTS)
    done = ortpool("rewrite", "sub/m.onnx", "out/o.onnx", "--json", "out/r.json", "--link-data",
                   cwd=work)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-3:] == [
        "note: external data data/w1: hard-linked next to the output",
        "note: external data data/w2: hard-linked next to the output",
        "wrote out/o.onnx",
    ]
    assert tree(work) == BASE | {
        "out/",
        "out/o.onnx",
        "out/r.json",
        "out/data/",
        "out/data/w1",
        "out/data/w2",
    }
    assert os.path.samefile(work / "sub" / "data" / "w1", work / "out" / "data" / "w1")
    written = onnx.load(work / "out" / "o.onnx", load_external_data=False)
    assert [n.op_type for n in written.graph.node] == [
        "Add",
        "Add",
        "MaxPool_12",
    ]
    report = json.loads((work / "out" / "r.json").read_text())
    assert report["notes"] == [
        "external data data/w1: hard-linked next to the output",
        "external data data/w2: hard-linked next to the output",
    ]
    assert hashes(work, INPUTS) == before


def test_a_symlinked_output_is_written_through_not_replaced(work: Path) -> None:
    (work / "target.onnx").write_bytes(b"an older output")
    (work / "link.onnx").symlink_to("target.onnx")
    done = ortpool("rewrite", "in.onnx", "link.onnx", "-q", cwd=work)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert tree(work) == BASE | {"target.onnx", "link.onnx"}
    assert os.readlink(work / "link.onnx") == "target.onnx"
    assert onnx.load(work / "target.onnx").graph.node[0].op_type == "MaxPool_12"


def test_no_file_written_is_the_inputs_file(work: Path) -> None:
    """``--inputs x.npz`` with ``--json x.npz`` (validate, fix, bench) or ``fix in.onnx x.npz``:
    the inputs file was overwritten with the report or the model. Refused before the run, as
    by ``fix_file(inputs=..., json_report=...)``."""
    np.savez(work / "x.npz", x=np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
    before = sha(work / "x.npz")
    cases = {
        ("validate", "in.onnx", "--no-progress", "--inputs", "x.npz", "--json", "x.npz"):
            "the JSON report x.npz",
        ("fix", "in.onnx", "out.onnx", "--inputs", "x.npz", "--json", "./x.npz"):
            "the JSON report x.npz",
        ("fix", "in.onnx", "x.npz", "--inputs", "x.npz"): "the output x.npz",
        ("bench", "in.onnx", "--inputs", "x.npz", "--json", "x.npz"): "the JSON report x.npz",
    }
    found = commands_in_child([list(argv) for argv in cases], cwd=work, timeout=TIMEOUT)
    assert [(argv, code, text) for argv, (code, text) in zip(cases, found, strict=True)] == [
        (argv, 2, f"ortpool {argv[0]}: error: {what} is the inputs file; write to another path\n")
        for argv, what in cases.items()
    ]
    done = run_child(__name__, "fix_file_onto_inputs", str(work), timeout=TIMEOUT)
    assert done.stdout == "the JSON report x.npz is the inputs file; write to another path\n"
    assert tree(work) == BASE | {"x.npz"}
    assert sha(work / "x.npz") == before


def fix_file_onto_inputs(folder: str) -> None:
    """In the child: ``fix_file`` with ``json_report`` the ``inputs`` file; prints the error."""
    import ortpool

    os.chdir(folder)
    try:
        ortpool.fix.fix_file("in.onnx", "out.onnx", inputs="x.npz", json_report="x.npz")
    except ortpool.OrtpoolError as err:
        print(err)


def test_a_link_that_leads_nowhere_writable_is_refused_before_the_run(work: Path) -> None:
    """An output or report that is a dangling link into a missing folder, or a loop of links,
    is refused at once, naming it (it once failed after the run with "[Errno 2] No such file or
    directory: 'dangling.onnx'")."""
    (work / "dangling.onnx").symlink_to("nosuch/o.onnx")
    (work / "a.json").symlink_to("b.json")
    (work / "b.json").symlink_to("a.json")
    cases = {
        ("fix", "in.onnx", "dangling.onnx"): "the output dangling.onnx: the folder its link leads "
        f"to, {work.resolve() / 'nosuch'} does not exist; create it first",
        ("rewrite", "in.onnx", "out.onnx", "--json", "a.json"): "the JSON report a.json: Too "
        "many levels of symbolic links",
    }
    found = commands_in_child([list(argv) for argv in cases], cwd=work, timeout=TIMEOUT)
    assert [(argv, code, text) for argv, (code, text) in zip(cases, found, strict=True)] == [
        (argv, 2, f"ortpool {argv[0]}: error: {message}\n") for argv, message in cases.items()
    ]
    assert tree(work) == BASE | {"dangling.onnx", "a.json", "b.json"}


def test_a_report_to_dev_stdout_goes_to_the_stream(work: Path) -> None:
    """/dev/stdout (a symlink to the child's pipe) is written through, never renamed onto: as
    root a rename would replace /dev/stdout itself."""
    done = ortpool("rewrite", "in.onnx", "out.onnx", "--json", "/dev/stdout", "-q", cwd=work)
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["summary"]["per_op_version"] == {"MaxPool-12": 1}
    assert tree(work) == BASE | {"out.onnx"}
    assert os.path.islink("/dev/stdout")


def test_an_output_that_is_a_device_gets_no_data_files_beside_it(tmp_path: Path) -> None:
    """``ortpool rewrite m.onnx /dev/null`` (or /dev/stdout) with external data wrote the data
    files "next to the output", into /dev. They are now left out, each with a note."""
    import uuid

    names = (f"w-{uuid.uuid4().hex[:12]}", f"w-{uuid.uuid4().hex[:12]}")  # a line each
    save_external(tmp_path, names)
    before = _snapshot(tmp_path)
    try:
        for output in ("/dev/null", "/dev/stdout"):
            done = ortpool("rewrite", "m.onnx", output, "-v", cwd=tmp_path)
            assert done.returncode == 0, done.stderr
            notes = [f"note: external data {name}: not written (the output {output} is not a "
                     "file)" for name in names]
            assert [line for line in done.stdout.splitlines() if line.startswith("note:")] == notes
            assert [Path("/dev", name).exists() for name in names] == [False, False]
    finally:
        for name in names:
            if Path("/dev", name).is_file():
                Path("/dev", name).unlink()
    assert _snapshot(tmp_path) == before


def stdout_to_file(path: str, cwd: str, argv: list[str]) -> None:
    """In the child: ``ortpool ARGV`` with stdout redirected to the file ``path`` (``> path``)."""
    import sys

    from ortpool import cli

    os.chdir(cwd)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - the child's whole life
    code = cli.main(argv)
    sys.stdout.flush()
    raise SystemExit(code)


def test_a_report_to_dev_stdout_redirected_to_a_file_follows_what_was_printed(
    work: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """``ortpool validate m.onnx --json /dev/stdout > out.txt`` (and rewrite): the report is
    written where the stream is, after the lines printed before it. /dev/stdout was reopened,
    which emptied the file and wrote the report over the lines printed, and the lines printed
    after it over the report."""
    out = tmp_path_factory.mktemp("stdout") / "out.txt"
    for argv, before, after in (
        (["validate", "in.onnx", "--no-progress"],
         "1 model agrees; 0 graph output(s) differ end to end", []),
        (["rewrite", "in.onnx", "out.onnx"], None,
         ["retargeted 1 of 1 pooling nodes (MaxPool-12: 1)", "wrote out.onnx"]),
    ):
        done = run_child(__name__, "stdout_to_file", str(out), str(work),
                         [*argv, "--json", "/dev/stdout"], timeout=TIMEOUT)
        assert done.returncode == 0, done.stderr
        text = out.read_text()
        start = text.index("{\n")
        lines = text[start:].splitlines()
        end = lines.index("}") + 1
        assert json.loads("\n".join(lines[:end]))  # whole
        assert (text[:start].splitlines()[-1:], lines[end:]) == ([before] if before else [], after)
    assert tree(work) == BASE | {"out.onnx"}


# 3. files that are not ONNX models ----------------------------------------------------------

NOT_MODELS = {
    "empty": (b"", "is not an ONNX model: the file is empty (0 bytes)"),
    "no-graph": (b"\x08\x07", "is not an ONNX model: it has no graph"),  # ir_version 7 alone
    "empty-graph": (b"\x08\x07\x3a\x00", "is not an ONNX model: its graph is empty (no nodes, "
                    "no outputs)"),
    "no-ir-version": (None, "is not an ONNX model: its ir_version is 0 (unset)"),
    "corrupt": (
        b"\xff\xff\xff\xff",
        "is not a readable ONNX model (DecodeError: Error parsing message with type "
        "'onnx.ModelProto': Wire format was corrupt)",
    ),
}


def _write_not_model(folder: Path, kind: str) -> str:
    data, _ = NOT_MODELS[kind]
    if data is None:
        model = pool_model()
        model.ir_version = 0
        data = model.SerializeToString()
    (folder / "bad.onnx").write_bytes(data)
    return "bad.onnx"


@pytest.mark.parametrize("kind", list(NOT_MODELS))
@pytest.mark.parametrize("verb", ["rewrite", "restore"])
def test_not_a_model_is_refused_by_rewrite_and_restore(work: Path, verb: str, kind: str) -> None:
    name = _write_not_model(work, kind)
    before = sha(work / name)
    done = ortpool(verb, name, "out.onnx", "--json", "r.json", cwd=work)
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"ortpool {verb}: error: {name} {NOT_MODELS[kind][1]}\n",
    )
    assert tree(work) == BASE | {name}
    assert sha(work / name) == before


@pytest.mark.parametrize("kind", ["empty", "no-graph", "no-ir-version"])
def test_not_a_model_is_refused_by_validate(work: Path, kind: str) -> None:
    name = _write_not_model(work, kind)
    done = ortpool("validate", name, "--no-progress", "--json", "r.json", cwd=work)
    # the model's own status, not the run's end: the report and the JSON are still complete
    why = f"{name} {NOT_MODELS[kind][1]}"
    assert (done.returncode, done.stderr) == (
        2,
        f"ortpool validate: error: {why}\nJSON report: r.json\n",
    )
    assert done.stdout.splitlines()[0] == f"COULD NOT RUN  {why}"  # the reason names the model
    assert tree(work) == BASE | {name, "r.json"}
    (model,) = json.loads((work / "r.json").read_text())["models"]
    assert (model["model"], model["status"], model["error"]) == (name, "could-not-run", why)


@pytest.mark.parametrize("verb", ["rewrite", "validate"])
def test_a_directory_as_the_model_is_refused(work: Path, verb: str) -> None:
    args = ["ext", "out.onnx"] if verb == "rewrite" else ["ext", "--no-progress"]
    done = ortpool(verb, *args, cwd=work)
    assert (done.returncode, done.stderr) == (
        2,
        f"ortpool {verb}: error: ext is a directory, not a model file\n",
    )
    assert tree(work) == BASE


def test_a_name_the_system_refuses_is_named_as_what_it_is(work: Path) -> None:
    """A path the system refuses to look up (a name over 255 bytes; as well a folder the user
    may not search): pathlib's is_dir() raised the OSError itself, printed as "[Errno 36] File
    name too long: '...'" without saying which file it was, and raised as an OSError by the
    Python API. Now each is named as the model, the output or the report it is."""
    long = "n" * 300 + ".onnx"
    cases = {
        ("rewrite", long, "out.onnx"): f"the model {long}: File name too long",
        ("rewrite", "in.onnx", long): f"the output {long}: File name too long",
        ("fix", "in.onnx", "out.onnx", "--json", long): f"the JSON report {long}: File name "
        "too long",
        ("validate", "in.onnx", "--html", long, "--no-progress"): f"the HTML report {long}: "
        "File name too long",
        ("bench", long): f"the model {long}: File name too long",
    }
    found = commands_in_child([list(argv) for argv in cases], cwd=work, timeout=TIMEOUT)
    assert found == [(2, f"ortpool {argv[0]}: error: {message}\n")
                     for argv, message in cases.items()]
    done = run_child(__name__, "long_names_from_python", str(work), long, timeout=TIMEOUT)
    assert json.loads(done.stdout) == [f"OrtpoolError: the model {long}: File name too long",
                                       f"OrtpoolError: the output {long}: File name too long"]
    assert tree(work) == BASE


def long_names_from_python(folder: str, long: str) -> None:
    """In the child: ``ortpool.fix(long)`` and ``FixResult.save(long)``, what each raised."""
    import ortpool

    os.chdir(folder)
    found = []
    for call in (lambda: ortpool.fix(long), lambda: ortpool.fix("in.onnx").save(long)):
        try:
            call()
        except Exception as err:  # the test names what was raised
            found.append(f"{type(err).__name__}: {err}")
    print(json.dumps(found))


def test_a_file_larger_than_any_model_is_refused_unread(work: Path) -> None:
    """A file over protobuf's 2 GiB limit (here sparse: no disk) is no ONNX model; it was read
    whole into memory (2 GiB, or all of a 50 GB file given by mistake) before protobuf said
    "Wire format was corrupt". The child's address space is capped at 1 GiB above its own."""
    with (work / "huge.onnx").open("wb") as stream:
        stream.truncate(2**31)
    cases = [["rewrite", "huge.onnx", "out.onnx"], ["fix", "huge.onnx", "out.onnx"],
             ["bench", "huge.onnx"]]
    found = run_child(__name__, "capped_commands", cases, str(work), timeout=TIMEOUT)
    assert found.returncode == 0, found.stderr
    message = ("huge.onnx is not an ONNX model: it holds 2147483648 bytes, over protobuf's limit "
               "of 2147483647 for one message (a larger model keeps its weights in external data "
               "files)")
    assert json.loads(found.stdout) == [
        [2, f"ortpool {argv[0]}: error: {message}\n"] for argv in cases
    ]
    assert tree(work) == BASE | {"huge.onnx"}


def capped_commands(cases: list[list[str]], cwd: str) -> None:
    """In the child: :func:`tests.support._commands` with 1 GiB more address space than now."""
    import resource

    from tests.support import _commands

    with open("/proc/self/statm") as statm:
        used = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (used + 2**30, resource.RLIM_INFINITY))
    _commands(cases, cwd)


# 4. --json that cannot be written: neither file is written -----------------------------------


@pytest.mark.parametrize(
    ("report", "message"),
    [
        ("nodir/r.json", "the JSON report nodir/r.json: its folder nodir does not exist; "
         "create it first"),
        ("ext", "the JSON report ext is a directory; name a file"),
        ("out.onnx", "the JSON report out.onnx and the output out.onnx are the same file"),
        ("in.onnx", "the JSON report in.onnx is the input model; write to another path"),
        ("ext/w2", "the JSON report ext/w2 is the input model's external data file 'w2'; "
         "write to another path"),
    ],
    ids=["missing-folder", "directory", "the-output", "the-input", "input-data-file"],
)
def test_unwritable_json_report_writes_no_model(work: Path, report: str, message: str) -> None:
    source = "ext/m.onnx" if report == "ext/w2" else "in.onnx"
    before = hashes(work, INPUTS)
    done = ortpool("rewrite", source, "out.onnx", "--json", report, cwd=work)
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"ortpool rewrite: error: {message}\n",
    )
    assert tree(work) == BASE
    assert hashes(work, INPUTS) == before


# 5. validate: scalar graph outputs; report destinations checked before the run ------------------


def test_validate_compares_a_scalar_graph_output(tmp_path: Path) -> None:
    graph = h.make_graph(
        [
            h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2]),
            h.make_node("ReduceMax", ["y"], ["s"], name="r", keepdims=0),
        ],
        "g",
        [vi("x", T.FLOAT, [1, 1, 4, 4])],
        [vi("s", T.FLOAT, [])],
    )
    model = _stamp(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]))
    onnx.save(model, tmp_path / "scalar.onnx")
    done = ortpool("validate", "scalar.onnx", "--no-progress", "--no-guard-cost", "--json",
                   "r.json", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "JSON report: r.json\n")
    assert done.stdout.splitlines() == [
        # ruling 20: onnxruntime's MaxPool drops NaN, information outside the finite domain
        "agree    scalar.onnx  opset 13, 1 node: 1 agree; its output agrees; on NaN/inf only 1 "
        "differ",
        "",
        "information: 1 node differs on NaN/inf inputs only, not counted (the finite domain, "
        "ruling 20;",
        "    --nonfinite judges them)",
        "1 pooling node: 1 agree",
        "1 model agrees; 0 graph output(s) differ end to end",
    ]
    (output,) = json.loads((tmp_path / "r.json").read_text())["models"][0]["end_to_end"]["outputs"]
    assert {k: output[k] for k in ("builtin_shape", "ortpool_shape", "compared", "differing")} == {
        "builtin_shape": [],
        "ortpool_shape": [],
        "compared": 1,
        "differing": 0,
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--json", "nodir/r.json"], "the JSON report nodir/r.json: its folder nodir does not "
         "exist; create it first"),
        (["--html", "ext"], "the HTML report ext is a directory; name a file"),
        (["--html", "in.onnx"], "the HTML report in.onnx is a model being validated; write to "
         "another path"),
        (["--json", "r.html", "--html", "r.html"], "the HTML report r.html and the JSON report "
         "r.html are the same file"),
    ],
    ids=["missing-folder", "directory", "the-model", "json-is-html"],
)
def test_validate_checks_report_destinations_before_running(
    work: Path, args: list[str], message: str
) -> None:
    before = hashes(work, INPUTS)
    done = ortpool("validate", "in.onnx", "--no-progress", *args, cwd=work)
    # nothing ran: no model report on stdout
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"ortpool validate: error: {message}\n",
    )
    assert tree(work) == BASE
    assert hashes(work, INPUTS) == before


@pytest.mark.parametrize(
    "args",
    [
        ["conformance", "--ops", "MaxPool", "--versions", "12", "--no-progress"],
        ["bench", "--cases", BENCH_CASES[0].name, "--repeat", "1"],
    ],
    ids=["conformance", "bench"],
)
def test_other_reports_are_checked_before_running(tmp_path: Path, args: list[str]) -> None:
    done = ortpool(*args, "--json", "nodir/r.json", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"ortpool {args[0]}: error: the JSON report nodir/r.json: its folder nodir does not "
        "exist; create it first\n",
    )
    assert tree(tmp_path) == set()


def test_a_report_is_never_a_model_read_nor_its_external_data(work: Path) -> None:
    """validate's --json/--html and bench's --json are refused when they name a model the
    command reads or one of its external data files (bench once overwrote MODEL, validate a
    data file, with the report after the run); checked before anything runs."""
    cases = {
        ("validate", "ext/m.onnx", "--json", "ext/w1"): "the JSON report ext/w1 is the external "
        "data file 'w1' of the model ext/m.onnx",
        ("validate", "in.onnx", "sub/m.onnx", "--html", "ext/../sub/data/w2"): "the HTML report "
        "ext/../sub/data/w2 is the external data file 'data/w2' of the model sub/m.onnx",
        ("bench", "ext/m.onnx", "--json", "ext/m.onnx"): "the JSON report ext/m.onnx is the model",
        ("bench", "in.onnx", "ext/m.onnx", "--json", "ext/w2"): "the JSON report ext/w2 is the "
        "external data file 'w2' of the model ext/m.onnx",
        ("bench", "in.onnx", "ext/m.onnx", "--json", "./ext/m.onnx"): "the JSON report "
        "ext/m.onnx is the fixed model",
    }
    before = hashes(work, INPUTS)
    found = commands_in_child([[*argv, "--no-progress"] if argv[0] == "validate" else list(argv)
                               for argv in cases], cwd=work, timeout=TIMEOUT)
    assert [(argv, code, text) for argv, (code, text) in zip(cases, found, strict=True)] == [
        (argv, 2, f"ortpool {argv[0]}: error: {message}; write to another path\n")
        for argv, message in cases.items()
    ]
    assert tree(work) == BASE
    assert hashes(work, INPUTS) == before



# 6. external data through links (issue 30) -----------------------------------------------------

#: how the model's data file, or its folder, is provided
SOURCES = (
    "file", "link-in-rel", "link-in-abs", "link-out-rel", "link-out-abs", "chain-in", "chain-out",
    "loop", "dangling", "hardlink-in", "fifo", "dir-link-in", "dir-link-out",
)
#: what is already at the data file's place below the output's folder
TARGETS = ("none", "same", "differs", "link-same", "dir-link-in", "dir-link-out")
SECRET = b"OUTSIDE: bytes that must not leave their folder"
WEIGHTS = np.arange(16, dtype=np.float32).tobytes()


def _link(path: Path, target: Path, relative: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(os.path.relpath(target, path.parent) if relative else target)


def _make_tree(root: Path, location: str, source: str, target: str) -> None:
    """root/model/m.onnx with its data at ``location`` provided as ``source`` says, root/out/
    prepared as ``target`` says, root/outside/ with files of another owner."""
    model, out, outside = root / "model", root / "out", root / "outside"
    for folder in (model / "real", out / "real", outside / "dir", outside / "dir2"):
        folder.mkdir(parents=True)
    for name in ("secret", "dir/w.bin", "dir2/keep"):
        (outside / name).write_bytes(SECRET)
    (outside / "same").write_bytes(WEIGHTS)
    save_external(model, (location, "other.bin"))
    place = model / location
    (model / "real" / "w.bin").write_bytes(place.read_bytes())
    (model / "real" / "data").mkdir()
    (model / "real" / "data" / "w.bin").write_bytes(place.read_bytes())
    if source != "file":
        place.unlink()
    if source.startswith("dir-link"):
        if location.count("/") == 0:  # no folder to link: the file itself then
            source = source.replace("dir-", "")
        else:
            place.parent.rmdir()
            goal = model / "real" / "data" if source == "dir-link-in" else outside / "dir"
            _link(place.parent, goal, relative=True)
    inside, secret = model / "real" / "w.bin", outside / "secret"
    if source in ("link-in-rel", "link-in-abs", "link-out-rel", "link-out-abs"):
        _link(place, inside if "-in-" in source else secret, source.endswith("rel"))
    elif source.startswith("chain"):
        _link(model / "hop", inside if source == "chain-in" else secret, relative=False)
        _link(place, model / "hop", relative=True)
    elif source == "loop":
        _link(model / "a", model / "b", relative=True)
        _link(model / "b", model / "a", relative=True)
        _link(place, model / "a", relative=True)
    elif source == "dangling":
        _link(place, model / "nowhere", relative=True)
    elif source == "hardlink-in":
        os.link(inside, place)
    elif source == "fifo":
        os.mkfifo(place)
    spot = out / location
    if target in ("same", "differs"):
        spot.parent.mkdir(parents=True, exist_ok=True)
        spot.write_bytes(WEIGHTS if target == "same" else SECRET)
    elif target == "link-same":
        _link(spot, outside / "same", relative=False)
    elif target.startswith("dir-link") and "/" in location:
        goal = out / "real" if target == "dir-link-in" else outside / "dir2"
        _link(spot.parent, goal, relative=True)


def _snapshot(root: Path) -> dict[str, str]:
    """Every entry under ``root``, links not followed: a file's hash, a link's target."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            rel = str(path.relative_to(root))
            if path.is_symlink():
                found[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                found[rel] = sha(path)
            else:
                found[rel] = "dir" if path.is_dir() else "special"
    return found


def _expected(root: Path, location: str) -> tuple[bool, bool]:
    """(whether the rules let the data be read, whether they let it be written): read when,
    links resolved, it is a regular file inside the model's folder; written when no link lies
    below the output's folder and nothing different is already there."""
    model, out = root / "model", root / "out"
    real = os.path.realpath(model / location)
    home = os.path.realpath(model)
    try:
        readable = real.startswith(home + os.sep) and stat.S_ISREG(os.stat(real).st_mode)
    except OSError:
        readable = False
    steps = [out / location, *(out / location).parents]
    steps = steps[: steps.index(out)]
    if any(step.is_symlink() for step in steps):
        return readable, False
    spot = out / location
    if not readable:  # (and not opened: it may be a FIFO)
        return readable, True
    return readable, not spot.exists() or spot.read_bytes() == Path(real).read_bytes()


def path_rules_hold(folder: str, examples: int) -> None:
    """In the child: ``examples`` random trees, each through one writing command (rewrite,
    restore, fix --allow-unproven), with or without --link-data."""
    import contextlib
    import io

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ortpool import cli

    counter = iter(range(10**6))

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True)
    @given(
        st.sampled_from(["w.bin", "data/w.bin", "data/deep/w.bin"]),
        st.sampled_from(SOURCES),
        st.sampled_from(TARGETS),
        st.sampled_from(["rewrite", "restore", "fix"]),
        st.booleans(),
    )
    def check(location: str, source: str, target: str, command: str, link: bool) -> None:
        root = Path(folder, str(next(counter)))
        try:
            _make_tree(root, location, source, target)
            readable, writable = _expected(root, location)
            before = _snapshot(root)
            argv = [command, str(root / "model" / "m.onnx"), str(root / "out" / "o.onnx")]
            argv += ["--allow-unproven"] if command == "fix" else []
            argv += ["--link-data"] if link else []
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = cli.main(argv)
            after = _snapshot(root)
            changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
            if readable and writable:
                assert code == 0, err.getvalue()
                spot = root / "out" / location
                assert not spot.is_symlink() and spot.is_file()
                real = os.path.realpath(root / "model" / location)
                assert spot.read_bytes() == Path(real).read_bytes()
                assert all(k.startswith("out" + os.sep) for k in changed), changed
                if link:  # whatever was linked, no outside file changes with it
                    with spot.open("ab") as stream:
                        stream.write(b"appended")
                    assert _snapshot(root / "outside") == {
                        k.removeprefix("outside" + os.sep): v
                        for k, v in before.items() if k.startswith("outside" + os.sep)
                    }
            else:
                lines = err.getvalue().splitlines()
                assert code == 2 and len(lines) == 1, err.getvalue()
                assert lines[0].startswith(f"ortpool {command}: error: ")
                assert "external data" in lines[0] or "exists and differs" in lines[0], lines
                assert changed == set(), changed
        finally:
            shutil.rmtree(root, ignore_errors=True)

    check()


def test_external_data_paths_never_leave_the_model_or_output_folder(tmp_path: Path) -> None:
    """A property of the path rules over random trees of files, folders, links (relative,
    absolute, chained, looping, dangling), hard links and FIFOs around a model with external
    data and in its output's folder, through rewrite, restore and fix: the command succeeds
    exactly when the data resolves to a regular file inside the model's folder and its place
    below the output's folder is reached through no link; then the output's copy has those
    bytes and only the output's folder changed (with --link-data, appending to the copy changes
    no outside file); otherwise one line, exit 2, nothing changed anywhere."""
    done = run_child(__name__, "path_rules_hold", str(tmp_path), 24, timeout=TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_locations_no_file_can_have_are_refused_in_one_line(tmp_path: Path) -> None:
    """External data locations that are absolute, leave the folder, are empty, hold a NUL
    character (once a ValueError traceback, "embedded null byte", exit 1) or are not UTF-8
    (once a TypeError traceback): rewrite, fix, validate and bench refuse them in the same line
    (validate and bench once said "not a readable ONNX model (ValidationError: ...)"), as they
    do a data file that is missing; validate with a report beside such a model still runs it
    and reports it as a model that could not run."""
    cases, messages = [], []
    rule = "is absolute or leaves the model's directory; onnx and onnxruntime read external " \
           "data only from inside the model's folder"
    commands = {"rewrite": [str(tmp_path / "o.onnx")], "fix": [str(tmp_path / "o.onnx")],
                "validate": ["--no-progress"], "bench": ["--repeat", "1"]}
    for name, location, why in (
        ("nul", "w\x001", "holds a NUL character, which no file name can hold"),
        ("absolute", str(tmp_path / "w1"), rule),
        ("up", "../w1", rule),
        ("empty", "", rule),
        ("missing", "w3", f"is missing from {tmp_path / 'missing'}"),
    ):
        folder = tmp_path / name
        folder.mkdir()
        save_external(folder, ("w1", "w2"))
        model = onnx.load(folder / "m.onnx", load_external_data=False)
        model.graph.initializer[0].external_data[0].value = location
        onnx.save(model, folder / "m.onnx")
        for command, extra in commands.items():
            cases.append([command, str(folder / "m.onnx"), *extra])
            what = "file" if name == "missing" else "location"
            messages.append((2, f"ortpool {command}: error: {folder / 'm.onnx'}: external data "
                                f"{what} {location!r} {why}\n"))
    # not UTF-8 (protobuf then gives bytes: once a TypeError traceback)
    folder = tmp_path / "bytes"
    folder.mkdir()
    save_external(folder, ("wABCD", "w2"))  # as long as the bytes put in its place
    data = (folder / "m.onnx").read_bytes()
    (folder / "m.onnx").write_bytes(data.replace(b"wABCD", b"w\xff\xfeAA"))
    for command, extra in commands.items():
        cases.append([command, str(folder / "m.onnx"), *extra])
        messages.append((2, f"ortpool {command}: error: {folder / 'm.onnx'}: external data "
                            "location b'w\\xff\\xfeAA' is not UTF-8 text, which onnx and "
                            "onnxruntime require of a location\n"))
    (tmp_path / "nul" / "r.json").write_bytes(b"an earlier report")
    cases.append(["validate", str(tmp_path / "nul" / "m.onnx"), "--no-progress", "--json",
                  str(tmp_path / "nul" / "r.json")])
    found = commands_in_child(cases, env={**CHILD_ENV, "ORTPOOL_KERNELS": "numpy"})
    assert list(zip(cases[:-1], found[:-1], strict=True)) == list(
        zip(cases[:-1], messages, strict=True))
    assert found[-1][0] == 2 and "Traceback" not in found[-1][1]
    assert json.loads((tmp_path / "nul" / "r.json").read_text())["models"][0]["error"]
    assert not (tmp_path / "o.onnx").exists()


def test_the_python_api_says_what_the_commands_say_of_a_missing_data_file(tmp_path: Path) -> None:
    """ortpool.fix(path) said 'unproven' (onnxruntime could not load the written model),
    ortpool.rewrite(path) returned a model whose data was missing, validate and bench said
    'not a readable ONNX model (ValidationError: ...)': now every call, the commands' message."""
    import ortpool

    save_external(tmp_path, ("w1", "w2"))
    (tmp_path / "w2").unlink()
    model = str(tmp_path / "m.onnx")
    message = f"{model}: external data file 'w2' is missing from {tmp_path}"
    for call in (ortpool.fix, ortpool.rewrite, lambda m: ortpool.bench(m, repeat=1),
                 lambda m: ortpool.fix.fix_file(m, str(tmp_path / "o.onnx"))):
        with pytest.raises(ortpool.OrtpoolError) as err:
            call(model)
        assert str(err.value) == message
    found = json.loads(ortpool.validate(model).to_json())["models"][0]  # the model named apart
    assert f"{found['model']}: {found['error']}" == message
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "w1"]


def test_a_report_is_never_the_data_file_of_a_model_missing_another(tmp_path: Path) -> None:
    """The data file a model has stays protected when another of its files is missing (the
    reader refuses the model, yet the report must not be written over its data file)."""
    save_external(tmp_path, ("w1", "w2"))
    (tmp_path / "w2").unlink()
    found = commands_in_child([["validate", str(tmp_path / "m.onnx"), "--no-progress", "--json",
                                str(tmp_path / "w1")]], timeout=TIMEOUT)
    assert found == [(2, f"ortpool validate: error: the JSON report {tmp_path / 'w1'} is the "
                         f"external data file 'w1' of the model {tmp_path / 'm.onnx'}; write to "
                         "another path\n")]
    assert (tmp_path / "w1").read_bytes() == np.full(16, 1, np.float32).tobytes()


def test_each_escape_of_the_issue_is_refused_in_one_line(tmp_path: Path) -> None:
    """Issue 30's escapes, each a command in one child process: data files that are links to
    a file outside (absolute, relative), a data folder that is a link outside (with
    --link-data: it once hard-linked the outside file), an output subfolder that is a link to
    another folder; by rewrite, restore and fix --allow-unproven. Nothing is written anywhere
    and the outside files keep their bytes and their single link."""
    secret = tmp_path / "outside" / "data" / "w1"
    secret.parent.mkdir(parents=True)
    secret.write_bytes(SECRET)
    trees = {}
    for name, location, how in (
        ("abs", "w1", lambda place: place.symlink_to(secret)),
        ("rel", "w1", lambda place: place.symlink_to(os.path.relpath(secret, place.parent))),
        ("folder", "data/w1", lambda place: place.parent.symlink_to(secret.parent)),
    ):
        folder = tmp_path / name
        folder.mkdir()
        save_external(folder, (location, "w2"))
        shutil.rmtree(folder / "data") if name == "folder" else (folder / location).unlink()
        how(folder / location)
        trees[name] = (folder, location)
    clean = tmp_path / "clean"
    clean.mkdir()
    save_external(clean, ("data/w1", "w2"))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "data").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir()
    before = _snapshot(tmp_path)
    out = str(tmp_path / "out" / "r.onnx")
    model = {name: str(folder / "m.onnx") for name, (folder, _) in trees.items()}
    cases, messages = [], []
    for command in ("rewrite", "restore", "fix"):
        extra = ["--allow-unproven"] if command == "fix" else []
        for name, (folder, location) in trees.items():
            link = ["--link-data"] if name == "folder" else []
            cases.append([command, model[name], str(tmp_path / "o.onnx"), *extra, *link])
            messages.append(
                f"ortpool {command}: error: {model[name]}: external data {location!r} resolves "
                "through a "
                f"symbolic link to {secret}, outside the model's folder {folder}; external data "
                "is read only from inside the model's folder (as onnx and onnxruntime require)\n"
            )
        cases.append([command, str(clean / "m.onnx"), out, *extra])
        messages.append(
            f"ortpool {command}: error: external data 'data/w1': {tmp_path / 'out' / 'data'} is a "
            "symbolic link; external data is written only inside the output's folder "
            f"{tmp_path / 'out'}, never through a link\n"
        )
    found = commands_in_child(cases, env={**CHILD_ENV, "ORTPOOL_KERNELS": "numpy"})
    assert [(c, (code, text)) for c, (code, text) in zip(cases, found, strict=True)] == [
        (c, (2, m)) for c, m in zip(cases, messages, strict=True)
    ]
    assert _snapshot(tmp_path) == before
    assert secret.stat().st_nlink == 1
