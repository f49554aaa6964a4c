"""The command line as an attacker and a careless user meet it (issue 30): option values, files
that are not regular files, a closed stdout, a parent killed outright.

The option values and the special files are each one group of cases run one after another in
one child process with a time limit (``tests.support.commands_in_child``): per case the exit
code and the last line of stderr, which must be the whole message (``ortpool CMD: error: ...``,
no traceback).
"""

from __future__ import annotations

import os
import signal
import stat
import sys
import time
import uuid
from pathlib import Path

from tests.support import CHILD_ENV, ROOT, commands_in_child, processes_marked, run_child

MODEL = str(ROOT / "models" / "maxpool-12.onnx")
TIMEOUT = 120
ENV = {**CHILD_ENV, "ORTPOOL_KERNELS": "numpy"}


def _run(cases: list[list[str]]) -> list[tuple[int, str]]:
    return commands_in_child(cases, timeout=TIMEOUT, env=ENV)


def test_every_option_value_is_checked_in_one_line(tmp_path):
    out = str(tmp_path / "out.onnx")
    most = 4 * (os.cpu_count() or 1)
    limit = 2**64 - 1
    cases = {
        # unicode digits, which int() reads ('٣') or not ('²'): refused either way
        ("validate", MODEL, "--shape", "x:²,3,8,8"): "ortpool validate: error: --shape "
        "'x:²,3,8,8' must be NAME:D1,D2,... with integer sizes >= 0 (digits 0-9), e.g. "
        "image:1,3,224,224",
        ("fix", MODEL, out, "--shape", "X:٣,3,8,8"): "ortpool fix: error: --shape 'X:٣,3,8,8' "
        "must be NAME:D1,D2,... with integer sizes >= 0 (digits 0-9), e.g. image:1,3,224,224",
        ("fix", MODEL, out, "--shape", "X:0,3,1099511627776,1099511627776"): "ortpool fix: "
        "error: --shape 'X:0,3,1099511627776,1099511627776': its sizes multiply to more than "
        "576460752303423488 elements (2**59), more than any array can hold",
        ("validate", MODEL, "--timeout", "inf"): "ortpool validate: error: --timeout=inf must "
        "be a finite number of seconds >= 0 and <= 1000000 (0: no limit)",
        ("validate", MODEL, "--timeout", "1e300"): "ortpool validate: error: --timeout=1e+300 "
        "must be a finite number of seconds >= 0 and <= 1000000 (0: no limit)",
        ("validate", MODEL, "--reference-timeout", "inf"): "ortpool validate: error: "
        "--reference-timeout=inf must be a finite number of seconds > 0 and <= 1000000",
        ("bench", "--reference-timeout", "1e10"): "ortpool bench: error: "
        "--reference-timeout=10000000000.0 must be a finite number of seconds >= 0 and <= 1000000 "
        "(0: skipped)",
        ("fix", MODEL, out, "--seed", "-1"): f"ortpool fix: error: --seed=-1 must be from 0 to "
        f"{limit}",
        ("bench", "--seed", "-1"): f"ortpool bench: error: --seed=-1 must be from 0 to {limit}",
        ("conformance", "--seed", "-1"): f"ortpool conformance: error: --seed=-1 must be from 0 "
        f"to {limit}",
        ("validate", MODEL, "--seed", "-1"): f"ortpool validate: error: --seed=-1 must be from 0 "
        f"to {limit}",
        ("validate", MODEL, "--seed", "٣"): "ortpool validate: error: argument --seed: '٣' is "
        "not an integer (ASCII digits 0-9)",
        ("validate", MODEL, "-j", "１"): "ortpool validate: error: argument -j/--jobs: '１' is "
        "not an integer (ASCII digits 0-9)",
        ("bench", "--min-sample-ms", "nan"): "ortpool bench: error: --min-sample-ms=nan must be "
        "a finite number >= 0 and <= 1000",
        ("bench", "--min-sample-ms", "-5"): "ortpool bench: error: --min-sample-ms=-5.0 must be "
        "a finite number >= 0 and <= 1000",
        ("validate", MODEL, "--atol", "nan"): "ortpool validate: error: --atol=nan must be a "
        "finite number >= 0",
        ("conformance", "--rtol", "inf"): "ortpool conformance: error: --rtol=inf must be a "
        "finite number >= 0",
        ("validate", MODEL, "--half-ulps", "٣"): "ortpool validate: error: argument "
        "--half-ulps: '٣' is not a number (ASCII, e.g. 1e-5)",
        ("validate", MODEL, "--providers", ""): "ortpool validate: error: --providers '' names "
        "no provider; name at least one (e.g. cpu)",
        ("fix", MODEL, out, "--providers", ","): "ortpool fix: error: --providers ',' names no "
        "provider; name at least one (e.g. cpu)",
        ("validate", MODEL, "--providers", "cpu,CPUExecutionProvider"): "ortpool validate: "
        "error: --providers 'cpu,CPUExecutionProvider' names CPUExecutionProvider twice",
        ("validate", MODEL, "--intra-op-threads", "10000"): "ortpool validate: error: "
        f"--intra-op-threads=10000 must be at most {most} (4 per CPU of this machine: more "
        "threads only take turns on the cores, and each costs a stack)",
        ("bench", "--inter-op-threads", str(most + 1)): "ortpool bench: error: "
        f"--inter-op-threads={most + 1} must be at most {most} (4 per CPU of this machine: more "
        "threads only take turns on the cores, and each costs a stack)",
        ("conformance", "--ops", ""): "ortpool conformance: error: --ops '' names nothing; "
        "leave the option out for every one",
        ("conformance", "--ranks", ","): "ortpool conformance: error: --ranks ',' names "
        "nothing; leave the option out for every one",
        ("warmup", "--dtypes", "complex"): "ortpool warmup: error: element type 'complex' is not "
        "one of float, double, float16, bfloat16, int8, uint8, int16, uint16, int32, uint32, "
        "int64, uint64, bool (ONNX names; numpy's spellings are read too: float32=float, "
        "float64=double, bool_=bool)",
        ("warmup", "--kernels", "Nope"): "ortpool warmup: error: kernel 'Nope' is not one of the "
        "compiled kernels: AveragePool, MaxPool, MaxPool with Indices, MaxUnpool, LpPool, "
        "GlobalAveragePool/GlobalLpPool, MaxRoiPool",
        ("warmup", "--kernels", ","): "ortpool warmup: error: name at least one element type and "
        "one kernel to compile",
        # an option the command does not have was refused in the top parser's words
        ("fix", MODEL, out, "-o", "x"): "ortpool fix: error: unrecognized arguments: -o x",
        ("validate", MODEL, "--bogus"): "ortpool validate: error: unrecognized arguments: --bogus",
        # an empty report name was taken for no report: the run wrote no report, said nothing
        ("rewrite", MODEL, out, "--json", ""): "ortpool rewrite: error: argument --json: '' names "
        "no file; leave the option out for no report",
        ("validate", MODEL, "--html", ""): "ortpool validate: error: argument --html: '' names no "
        "file; leave the option out for no report",
        # an empty --inputs was a TypeError's traceback (a path of the wrong kind), as --inputs=''
        ("validate", MODEL, "--inputs", ""): "ortpool validate: error: --inputs='' must name a "
        "file",
        ("bench", "--inputs", ""): "ortpool bench: error: --inputs='' must name a file",
        # an empty path was the current folder: "error: . is a directory, not a model file"
        ("rewrite", "", out): "ortpool rewrite: error: argument IN.onnx: '' names no file",
        ("fix", MODEL, ""): "ortpool fix: error: argument OUT.onnx: '' names no file",
        ("validate", MODEL, ""): "ortpool validate: error: argument MODEL: '' names no file",
        ("bench", ""): "ortpool bench: error: argument MODEL: '' names no file",
        # an empty filter (an empty shell variable) selected no node and wrote the model as it
        # was (exit 0), or every bundled case (minutes of timing)
        ("fix", MODEL, out, "--nodes", ""): "ortpool fix: error: --nodes=[] names nothing; leave "
        "it out for every one",
        ("bench", "--cases", ""): "ortpool bench: error: --cases=[''] names nothing; leave it "
        "out for every one",
    }
    found = _run([list(argv) for argv in cases])
    for (argv, message), (code, stderr) in zip(cases.items(), found, strict=True):
        assert (argv, code, stderr.splitlines()[-1]) == (argv, 2, message)
        assert "Traceback" not in stderr
    assert not Path(out).exists()


def test_files_that_are_not_regular_files_are_refused_before_they_are_opened(tmp_path):
    """A FIFO as the model, --inputs, the output or --json (nobody at its other end: opening it
    would block), a device as the output; /dev/null is still taken."""
    fifo = tmp_path / "p.fifo"
    os.mkfifo(fifo)
    model = tmp_path / "in.onnx"
    model.write_bytes(Path(MODEL).read_bytes())
    out = tmp_path / "out.onnx"
    f = str(fifo)
    regular = "is a FIFO (named pipe), not a regular file; ortpool reads only regular files"
    written = "is a FIFO (named pipe); name a regular file (or /dev/null, /dev/stdout)"
    cases = {
        ("rewrite", f, str(out)): f"ortpool rewrite: error: the model {f} {regular}",
        ("validate", MODEL, "--inputs", f): f"ortpool validate: error: --inputs {f} {regular}",
        ("fix", MODEL, str(out), "--inputs", f): f"ortpool fix: error: --inputs {f} {regular}",
        ("rewrite", str(model), f): f"ortpool rewrite: error: the output {f} {written}",
        ("restore", str(model), f): f"ortpool restore: error: the output {f} {written}",
        ("fix", str(model), f): f"ortpool fix: error: the output {f} {written}",
        ("fix", str(model), str(out), "--json", f): f"ortpool fix: error: the JSON report {f} "
        f"{written}",
        ("validate", MODEL, "--json", f): f"ortpool validate: error: the JSON report {f} "
        f"{written}",
        ("rewrite", str(model), "/dev/zero"): "ortpool rewrite: error: the output /dev/zero is "
        "a character device; name a regular file (or /dev/null, /dev/stdout)",
        ("rewrite", "/dev/zero", str(out)): "ortpool rewrite: error: the model /dev/zero is a "
        "character device, not a regular file; ortpool reads only regular files",
    }
    found = _run([list(argv) for argv in cases] + [["rewrite", str(model), "/dev/null", "-q"]])
    for (argv, message), (code, stderr) in zip(cases.items(), found[:-1], strict=True):
        assert (argv, code, stderr) == (argv, 2, message + "\n")
    assert found[-1] == (0, "")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.onnx", "p.fifo"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def strict_streams(cases: list[list[str]], cwd: str) -> None:
    """In the child: each ``ortpool ARGV`` with stdout and stderr that take UTF-8 only (a
    ``PYTHONIOENCODING=utf-8`` or ``en_US.UTF-8`` terminal); prints a JSON list of (code,
    stdout, stderr)."""
    import io
    import json

    from ortpool import cli

    os.chdir(cwd)
    found = []
    for argv in cases:
        out, err = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
                    for _ in range(2))
        sys.stdout, sys.stderr = out, err
        try:
            code = cli.main(argv)
        except BaseException as stop:  # the test names what escaped
            code = repr(stop)
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        out.flush()
        err.flush()
        found.append([code, out.buffer.getvalue().decode(), err.buffer.getvalue().decode()])
    print(json.dumps(found))


def test_paths_that_are_not_utf8_or_hold_controls_are_printed_escaped(tmp_path):
    """A path with a byte that is not UTF-8, a newline and an escape sequence (clear the
    screen) is printed as its escapes in "wrote", "JSON report:" and error lines: one line,
    no control reaching the terminal, no UnicodeEncodeError on a UTF-8-only stream (rewrite's
    "wrote" once raised one after the model was written)."""
    import json

    model = tmp_path / "in.onnx"
    model.write_bytes(Path(MODEL).read_bytes())
    bad = os.fsdecode(b"d\xff\n\x1b[2J")
    shown = "d\\udcff\\n\\x1b[2J"
    (tmp_path / bad).mkdir()
    cases = [
        ["rewrite", "in.onnx", bad + ".onnx", "--json", bad + ".json"],
        ["restore", bad + ".onnx", "back.onnx", "-q"],
        ["validate", "in.onnx", "--no-progress", "--json", bad + ".v.json"],
        ["rewrite", "in.onnx", bad],
        ["fix", "in.onnx", "o.onnx", "--json", bad + "/x/r.json"],
    ]
    done = run_child(__name__, "strict_streams", cases, str(tmp_path), timeout=TIMEOUT, env=ENV)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert [(code, out.splitlines()[-1:], err) for code, out, err in found] == [
        (0, [f"wrote {shown}.onnx"], ""),
        (0, [], ""),
        (0, ["1 model agrees; 0 graph output(s) differ end to end"],
         f"JSON report: {shown}.v.json\n"),
        (2, [], f"ortpool rewrite: error: the output {shown} is a directory; name a file\n"),
        (2, [], f"ortpool fix: error: the JSON report {shown}/x/r.json: its folder {shown}/x "
         "does not exist; create it first\n"),
    ]
    assert sorted(os.listdir(tmp_path)) == sorted(
        [bad, "back.onnx", "in.onnx", *(bad + end for end in (".onnx", ".json", ".v.json"))])


def closed_stdout(argv: list[str]) -> None:
    """In the child: ``ortpool ARGV`` with a stdout whose reader is gone (``| head``)."""
    from ortpool import cli

    read, write = os.pipe()
    os.close(read)
    os.dup2(write, 1)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - the child's whole life
    raise SystemExit(cli.main(argv))


def test_a_closed_stdout_ends_validate_quietly_and_profiles_leave_no_file(tmp_path):
    """``ortpool validate m.onnx | head``: exit 141 without a word (not "error: [Errno 32]
    Broken pipe", exit 2). With two providers every session is profiled (which provider ran each
    node), in the model's child process: its profile folders are gone too, and so is the log of
    the worker that runs the providers, whose process ends without closing it. The temporary
    folder is longer than multiprocessing's sockets allow, whatever pytest's own path: there
    the run's children write into it, not into the run's own folder."""
    tmp = tmp_path / ("t" * 80)
    tmp.mkdir()
    env = {**ENV, "TMPDIR": str(tmp)}
    argv = ["validate", MODEL, "--providers", "AzureExecutionProvider,cpu"]
    done = run_child(__name__, "closed_stdout", argv, timeout=TIMEOUT, env=env)
    assert (done.returncode, done.stderr) == (128 + signal.SIGPIPE, "")
    # nor onnxruntime's telemetry's ".ses" (ortpool.ort turns it off)
    assert list(tmp.iterdir()) == []


def without_streams(argv: list[str]) -> None:
    """In the child: ``ortpool ARGV`` started as ``>&- 2>&-`` starts it: no descriptor 1 or 2,
    and Python's sys.stdout and sys.stderr None."""
    from ortpool import cli

    os.close(1)
    os.close(2)
    sys.stdout = sys.stderr = None
    raise SystemExit(cli.main(argv))


def test_a_command_started_without_stdout_and_stderr_runs_as_usual(tmp_path):
    """``ortpool validate a.onnx b.onnx --json r.json >&- 2>&-`` (a cron job, a daemon): the
    output is discarded and the run is as usual (every model's worker died on sys.stdout being
    None, each model CRASHED; with stdout alone closed, a traceback and exit 1 at the end);
    ``fix`` writes its model (exit 0, not 1)."""
    import json

    report, fixed = tmp_path / "r.json", tmp_path / "fixed.onnx"
    argv = ["validate", MODEL, str(ROOT / "models" / "maxpool-11.onnx"), "--json", str(report),
            "--no-progress"]
    done = run_child(__name__, "without_streams", argv, timeout=TIMEOUT, env=ENV)
    assert done.returncode == 0
    assert [m["status"] for m in json.loads(report.read_text())["models"]] == ["agree"] * 2
    argv = ["fix", str(ROOT / "models" / "fix" / "fix-valid-ceil.onnx"), str(fixed)]
    done = run_child(__name__, "without_streams", argv, timeout=TIMEOUT, env=ENV)
    assert done.returncode == 0 and fixed.is_file()


def killed_while_a_model_hangs(marker: str) -> None:
    """In the child: validate the stand-in model "hang" (it sleeps 600 s), and SIGKILL this
    process once its child reports the node it hangs at: nothing is left to kill the child."""
    from ortpool.validate import batch
    from tests.support import batch_stand_in

    def progress(done: int, total: int, label: str) -> None:
        if label == "pool_1":
            os.kill(os.getpid(), signal.SIGKILL)

    os.environ["ORTPOOL_HANG_MARK"] = marker  # in the run's environment, which the child takes
    batch.run_models(["hang"], 12, timeout=60, progress=progress, work=batch_stand_in.work)


def test_a_parent_killed_outright_takes_its_children_along():
    marker = uuid.uuid4().hex
    done = run_child(__name__, "killed_while_a_model_hangs", marker, timeout=TIMEOUT, env=ENV)
    assert done.returncode == -signal.SIGKILL
    assert processes_marked(marker) == []


def killed_mid_run(argv: list[str]) -> None:
    """In the child: ``ortpool ARGV``, this process SIGKILLed once a model's child reported a
    node (mid-run), after printing what its temporary folder then held."""
    import tempfile

    from ortpool import cli
    from ortpool.validate import batch

    drain = batch._Child.drain

    def wrapper(child: batch._Child) -> None:
        drain(child)
        if child.progress[1]:
            print(*sorted(os.listdir(tempfile.gettempdir())), flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

    batch._Child.drain = wrapper
    raise SystemExit(cli.main(argv))


def test_a_parent_killed_outright_leaves_no_temporary_file():
    """``ortpool validate a.onnx b.onnx c.onnx`` killed outright (SIGKILL) mid-run: its run
    folder (``ortpool-validate-*``) and multiprocessing's (``pymp-*``, the forkserver's socket)
    are removed by the processes that outlive it (they were left behind). The temporary folder
    is short, whatever pytest's own path: multiprocessing's socket fits in it (a forkserver)."""
    import shutil
    import tempfile

    temp = Path(tempfile.mkdtemp(dir="/tmp"))
    marker = uuid.uuid4().hex
    env = {**ENV, "TMPDIR": str(temp), "ORTPOOL_TEST_MARK": marker}
    models = [MODEL, *(str(ROOT / "models" / f"{m}.onnx") for m in ("maxpool-11", "lppool-18"))]
    try:
        done = run_child(__name__, "killed_mid_run", ["validate", *models, "--no-progress"],
                         timeout=TIMEOUT, env=env)
        assert done.returncode == -signal.SIGKILL, done.stderr
        held = done.stdout.split()  # mid-run: both folders were there
        assert [any(n.startswith(p) for n in held) for p in ("ortpool-validate-", "pymp-")] == [
            True, True], held
        assert processes_marked(marker) == []
        # nor onnxruntime's telemetry's ".ses" (ortpool.ort turns it off)
        assert list(temp.iterdir()) == []
    finally:
        shutil.rmtree(temp)


def bound_child(parent_leaves: bool) -> None:
    """In the child: be a model's child process (``batch._bound_to_parent``) with a 1 s
    time limit and no grace, then hang; with ``parent_leaves``, its parent's end of the pipe
    closes at once."""
    from multiprocessing.connection import Connection

    from ortpool.validate import batch

    batch._ALARM_GRACE = 0
    read, write = os.pipe()
    conn = Connection(write, readable=False)  # held: the watch ends when our end closes
    batch._bound_to_parent(conn, 0.5 if not parent_leaves else 60)
    if parent_leaves:
        os.close(read)
    time.sleep(60)
    conn.close()


def test_a_hanging_child_ends_itself_at_its_time_limit_or_with_its_parent():
    """What holds when no parent is left to enforce --timeout: the child's own alarm (SIGALRM,
    whose default action ends a process even inside native code), and its watch of the pipe to
    the parent (SIGKILL once no reader is left)."""
    started = time.monotonic()
    alarmed = run_child(__name__, "bound_child", False, timeout=TIMEOUT, env=ENV)
    gone = run_child(__name__, "bound_child", True, timeout=TIMEOUT, env=ENV)
    assert (alarmed.returncode, gone.returncode) == (-signal.SIGALRM, -signal.SIGKILL)
    assert time.monotonic() - started < 30  # neither slept its 60 s


def _help(*argv: str) -> str:
    import contextlib
    import io

    from ortpool import cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        cli.main([*argv, "--help"])
    return " ".join(out.getvalue().split())  # argparse wraps to the terminal's width


def test_what_a_user_reads_in_the_help():
    """The commands a user runs first are listed first; validate's help gives the inputs and
    the runtime before the tolerances and says why its level is disable (and what fix and bench
    default to); one spelling per metavar: --json FILE, --timeout/--reference-timeout SECONDS."""
    from ortpool import cli

    top = _help()
    first = ("validate", "fix", "bench", "conformance", "rewrite", "restore")
    places = [top.index(f" {c} {cli.SUMMARIES[c]}") for c in first]
    assert places == sorted(places)
    validate = _help("validate")
    assert validate.index("--shape NAME") < validate.index("--opt-level {") < validate.index(
        "--atol TOL")
    assert "disable judges each node as written, not fused into its neighbours" in validate
    assert "(fix and bench default to all, the level a deployed model runs at)" in validate
    for command in cli.COMMANDS:
        text = _help(command)
        assert "--json REPORT" not in text and " S " not in text, command
        for flag in ("--json", "--timeout", "--reference-timeout"):
            if f"[{flag} " in text:
                metavar = {"--json": "FILE"}.get(flag, "SECONDS")
                assert f"[{flag} {metavar}]" in text, (command, flag)


def test_the_lines_naming_the_files_written_print_no_escape_sequence(tmp_path):
    """'JSON report: PATH' (validate, conformance) and 'wrote PATH' (rewrite) printed the path
    raw: a name holding ESC [2J cleared the terminal. Every other line was already safe."""
    from tests.support import run_cli

    name = "m\x1b[2J\x07"
    (tmp_path / f"{name}.onnx").write_bytes(Path(MODEL).read_bytes())
    runs = [
        ["validate", f"{name}.onnx", "--json", f"{name}.json"],
        ["rewrite", f"{name}.onnx", f"r{name}.onnx"],
        ["conformance", "--ops", "MaxPool", "--versions", "12", "--ranks", "1", "--json",
         f"c{name}.json"],
    ]
    for argv in runs:
        done = run_cli(*argv, cwd=tmp_path, env=ENV, timeout=TIMEOUT)
        assert done.returncode in (0, 1), (argv, done.stderr)
        assert not any(c in done.stdout + done.stderr for c in "\x1b\x07"), argv
        assert "m\\x1b[2J\\x07" in done.stdout + done.stderr, argv
