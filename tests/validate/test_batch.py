"""Every model of an ``ortpool validate`` run, each in a child process of its own.

A model that cannot be read, makes the validator raise, kills its process (std::terminate's
SIGABRT, the system's SIGKILL) or hangs is that model's status with its reason; the models after
it are still validated and reported, in the order given; the JSON and HTML are complete; the exit
code is the worst. The runner's own cases run with a stand-in work function
(tests/support/batch_stand_in.py, which the children import); the command's runs real models.
Each run has a time limit.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import onnx
import pytest

from ortpool.cli import main
from ortpool.errors import OrtpoolError
from ortpool.options import timing
from ortpool.report import record as results
from ortpool.validate import batch
from tests.support import CHILD_ENV, batch_stand_in, cnn_builders, processes_marked

#: The command's runs on real models depend on onnxruntime's behaviour: those two are also run on
#: the lowest release; the stand-in's runs (no model, no session) are not.
onnxruntime_dependent = pytest.mark.onnxruntime


def test_each_model_gets_its_status_in_the_order_given():
    names = ["slow0", "abort", "hang", "refused", "bug", "ok5", "note6"]
    given: list[str] = []
    stream = _Stream()
    t0 = time.monotonic()
    found = batch.run_models(
        names,
        17,
        jobs=3,
        timeout=3.0,
        on_result=lambda r: given.append(r.path),
        stderr=stream,
        work=batch_stand_in.work,
    )
    assert time.monotonic() - t0 < 30
    assert [r.path for r in found] == given == names
    statuses = [r.status for r in found]
    # the stand-in's results compare nothing: not compared, never agree
    assert statuses == [
        "not-compared",
        "crashed",
        "timed-out",
        "could-not-run",
        "crashed",
        "not-compared",
        "not-compared",
    ]
    assert found[0].opset == found[5].opset == 17  # a result comes back whole
    abort, hang, refused, bug = (found[i].error for i in (1, 2, 3, 4))
    assert abort == (
        "the process validating it died of SIGABRT (Aborted); its last words: what():  boom"
    )
    assert hang == "no result within 3 s (--timeout); killed while at node 'pool_1' (2 of 3)"
    assert refused == "input 'x' has a symbolic dim and no --shape"  # the path said once
    assert bug.startswith("internal error: TypeError: unsupported operand (at ")
    assert bug.endswith(f"{batch_stand_in.__file__}:{_line_of('raise TypeError')})")
    # each child's own output, passed on in the models' order
    assert stream.text.index("chatter of slow0") < stream.text.index(batch_stand_in.LAST_WORDS)
    assert stream.text.index(batch_stand_in.LAST_WORDS) < stream.text.index("chatter of ok5")
    assert results.run_status(found) == results.CRASHED
    # the command's stderr is a terminal: a compile note is passed on as it happens, not with
    # the model's output
    note = "ortpool: note6: compiling a kernel (stand-in)\n"
    assert stream.text.count(note) == 1
    assert stream.text.index(note) < stream.text.index("chatter of note6")


def test_a_python_caller_s_time_limit_is_named_as_its_argument():
    """ortpool.validate(paths, timeout=...) said "no result within 2 s (--timeout)", a flag of
    the command line: from Python the limit is named timeout."""
    (found,) = batch.run_models(["hang"], 12, timeout=2.0, stderr=_Stream(),
                                work=batch_stand_in.work, style="python")
    assert found.error == "no result within 2 s (timeout); killed while at node 'pool_1' (2 of 3)"


def test_a_worker_validates_model_after_model_until_one_ends_it():
    """One worker child takes the models one after the other (its first-time costs paid once),
    a refusal ortpool names included; after a model that ended it (SIGABRT), failed in a way
    that may have left it in any state (a defect of the validator) or made it hold more than
    ``batch._RETIRE_BYTES``, a fresh worker takes the next model. Every model gets its status."""
    names = ["ok0", "refused", "ok2", "bug", "ok4", "abort", "ok6", "big7", "ok8"]
    stream = _Stream()
    found = batch.run_models(names, 3, jobs=1, timeout=30.0, stderr=stream,
                             work=batch_stand_in.work)
    assert [r.status for r in found] == [
        "not-compared", "could-not-run", "not-compared", "crashed", "not-compared", "crashed",
        "not-compared", "not-compared", "not-compared"]
    pid = {name: int(p) for name, p in re.findall(r"chatter of (\w+) in process (\d+)",
                                                   stream.text)}
    assert sorted(pid) == ["big7", "ok0", "ok2", "ok4", "ok6", "ok8"]
    assert pid["ok0"] == pid["ok2"] != pid["ok4"]  # the refusal kept it, the defect retired it
    assert pid["ok4"] != pid["ok6"] == pid["big7"]  # the abort ended the second
    assert pid["big7"] != pid["ok8"]  # the large model retired the third
    assert os.getpid() not in pid.values()


def test_a_worker_killed_while_idle_costs_no_model_its_result():
    """A worker killed from outside between two models (as the out-of-memory killer may pick
    an idle one): the next model goes to a fresh worker and is validated, whether the dead one
    had been given it (killed, not yet gone: the model was sent but never read) or not (gone:
    the model could not be sent); no model is reported as crashed."""
    stream = _Stream()
    killed: list[int] = []

    def kill_the_worker(result: results.ModelResult) -> None:
        # called before the next model is given: the worker that ran this one is idle
        if result.path in ("ok0", "ok1"):
            pid = int(re.findall(rf"chatter of {result.path} in process (\d+)", stream.text)[0])
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            while result.path == "ok1" and _state(pid) not in ("Z", ""):  # until it is gone
                time.sleep(0.01)

    found = batch.run_models(["ok0", "ok1", "ok2", "ok3"], 3, jobs=1, timeout=30.0,
                             stderr=stream, on_result=kill_the_worker, work=batch_stand_in.work)
    assert [r.status for r in found] == ["not-compared"] * 4
    pid = {k: int(v) for k, v in re.findall(r"chatter of (\w+) in process (\d+)", stream.text)}
    assert [pid["ok0"], pid["ok1"]] == killed
    assert len({pid["ok0"], pid["ok1"], pid["ok2"]}) == 3 and pid["ok2"] == pid["ok3"]


def test_a_timing_loop_runs_while_no_other_worker_validates_a_model():
    """The guard's price is a timing loop: with two workers, one that reaches its loop waits
    until the other has finished its model, and no model is given while it times (a model
    validated beside it would slow some samples and not others). The wait is no time of its
    model: it waits 2.5 s and times at least 1.6 s within a 4 s --timeout, and is not killed."""
    stream = _Stream()
    found = batch.run_models(["busy0", "timed1", "ok2", "ok3"], 3, jobs=2, timeout=4.0,
                             stderr=stream, work=batch_stand_in.work)
    assert [r.status for r in found] == ["not-compared"] * 4
    (busy_from, busy_to), = [(float(a), float(b)) for a, b in re.findall(
        r"busy0 busy from ([\d.]+) to ([\d.]+)", stream.text)]
    (timed_from, timed_to), = [(float(a), float(b)) for a, b in re.findall(
        r"timed1 timed from ([\d.]+) to ([\d.]+)", stream.text)]
    assert busy_from < timed_from and busy_to <= timed_from  # it waited for busy0
    # waiting and timing together: longer than --timeout (each at least its sleeps)
    assert timed_to - busy_from > 4.0
    pid = {k: int(v) for k, v in re.findall(r"chatter of (\w+) in process (\d+)", stream.text)}
    assert pid["busy0"] != pid["timed1"]  # two workers, the two models at once
    # ok2 went to busy0's worker only once timed1 was done timing
    assert "ok2" in pid and stream.text.index("timed1 timed") < stream.text.index("chatter of ok2")


def test_a_model_that_waited_to_time_says_its_own_timeout():
    """The wait for quiet moves a model's deadline on, not its --timeout: one that hangs after
    timing is reported with the limit given ("no result within 6.37585 s" was the wait added)."""
    found = batch.run_models(["busy0", "timedhang"], 3, jobs=2, timeout=3.0, stderr=_Stream(),
                             work=batch_stand_in.work)
    assert [r.status for r in found] == ["not-compared", "timed-out"]
    assert found[1].error == (
        "no result within 3 s (--timeout); killed while at node 'pool_1' (2 of 3)")


def test_a_workers_start_is_no_time_of_its_first_model():
    """A fresh worker's imports (2 s here; a spawned one's of the validator and onnxruntime) come
    before it takes its model: a --timeout of 1 s counts from there (every model was TIMED OUT
    where workers are spawned, and validated where they are forked from the server)."""
    from tests.support import batch_slow_start

    found = batch.run_models(["ok0", "ok1"], 3, jobs=1, timeout=1.0, stderr=_Stream(),
                             work=batch_slow_start.work)
    assert [r.status for r in found] == ["not-compared"] * 2, [r.error for r in found]


def test_a_run_folder_removed_from_outside_costs_no_model_its_result(tmp_path, monkeypatch):
    """A cleaner of the temporary folder (tmpreaper, systemd-tmpfiles) removes the run's folder
    between two models: it is made again for the next, which is validated (each model after
    it was CRASHED, 'exited with code 1 and no result': its child could not open its output)."""
    import shutil

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))

    def clean(result: results.ModelResult) -> None:
        if result.path == "ok0":
            for folder in tmp_path.glob("ortpool-validate-*"):
                shutil.rmtree(folder)

    found = batch.run_models(["ok0", "ok1", "ok2"], 3, jobs=1, timeout=30.0, stderr=_Stream(),
                             on_result=clean, work=batch_stand_in.work)
    assert [r.status for r in found] == ["not-compared"] * 3, [r.error for r in found]
    assert not list(tmp_path.glob("ortpool-validate-*"))


def test_a_server_killed_as_it_forks_a_worker_costs_no_model_its_result():
    """The forkserver killed from outside (the out-of-memory killer may pick it: it holds
    onnxruntime) while a worker is being forked from it: the start is made again from a fresh
    server and the model validated (the EOFError ended the whole run in a traceback). Here the
    server is stopped once "bug" is reported (its worker retires, so "ok1" needs a fresh one)
    and killed a second later, while the fork waits on it."""
    from multiprocessing import forkserver

    def stop_the_server(result: results.ModelResult) -> None:
        if result.path == "bug":
            pid = forkserver._forkserver._forkserver_pid
            os.kill(pid, signal.SIGSTOP)
            threading.Timer(1.0, os.kill, (pid, signal.SIGKILL)).start()

    found = batch.run_models(["bug", "ok1", "ok2"], 3, jobs=1, timeout=30.0, stderr=_Stream(),
                             on_result=stop_the_server, work=batch_stand_in.work)
    assert [r.status for r in found] == ["crashed", "not-compared", "not-compared"], [
        r.error for r in found]


def test_a_server_killed_mid_model_costs_no_model_its_result():
    """The forkserver killed from outside while two workers forked from it validate their
    models: the workers, which do not need it, finish them; the next model goes to a worker
    forked from a fresh server (each model of the two workers was CRASHED, "exited with code
    255": multiprocessing reads a worker's end from its server, and took the server's death for
    theirs)."""
    from multiprocessing import forkserver

    killed: list[int] = []

    def kill_the_server(done: int, total: int, label: str) -> None:
        if "/" in label and not killed:  # a worker is at a node of its model
            killed.append(forkserver._forkserver._forkserver_pid)
            os.kill(killed[0], signal.SIGKILL)

    found = batch.run_models(["busy0", "busy1", "ok2"], 3, jobs=2, timeout=30.0,
                             stderr=_Stream(), progress=kill_the_server, work=batch_stand_in.work)
    assert killed
    assert [(r.status, r.error) for r in found] == [("not-compared", "")] * 3


def test_a_worker_its_server_cannot_report_is_killed_even_with_a_message_unread():
    """Its forkserver dead, multiprocessing says a live worker has ended: kill() read its pipe
    to tell, and took one holding an unread message (sent as it was killed at its --timeout)
    for dead. Unsignalled, the worker then saw its pipe close, took its parent for gone and
    removed the run's folder mid-run. Its pipe's writer still open is what says it lives."""
    import multiprocessing
    import subprocess

    class Reported:  # what multiprocessing says of a worker forked from a dead server
        def __init__(self, pid: int) -> None:
            self.pid, self.exitcode = pid, 255

        def is_alive(self) -> bool:
            return False

        def join(self, timeout: float | None = None) -> None:
            pass

    worker = subprocess.Popen(["sleep", "60"])
    receive, send = multiprocessing.Pipe(duplex=False)
    tasks, _ = multiprocessing.Pipe(duplex=False)
    try:
        send.send(("progress", (1, 3, "a node")))  # unread as the parent kills it
        batch._Child(Reported(worker.pid), tasks, receive).kill()
        assert worker.wait(timeout=10) == -signal.SIGKILL
    finally:
        worker.kill()
        send.close()
    # its writer closed (dead), nothing of the pid is touched (it may be another's by now)
    other = subprocess.Popen(["sleep", "60"])
    receive, send = multiprocessing.Pipe(duplex=False)
    send.send(("result", None))
    send.close()
    try:
        batch._Child(Reported(other.pid), tasks, receive).kill()
        time.sleep(0.2)
        assert other.poll() is None
    finally:
        other.kill()


def options_past_the_memory(nbytes: int) -> None:
    """In the child: one stand-in model whose options hold an array of ``nbytes``, the address
    space limited to what is in use and 1.5 times that: room for the array, not for the copies
    a worker's start makes (multiprocessing pickles its arguments: the array's bytes, the
    pickle); prints each model's status and error."""
    import resource

    used = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (used + nbytes * 3 // 2, resource.RLIM_INFINITY))
    found = batch.run_models(["ok0"], batch_stand_in.Held(nbytes), timeout=30.0,
                             stderr=_Stream(), work=batch_stand_in.work)
    print(json.dumps([[r.status, r.error] for r in found]))


def test_options_a_workers_start_cannot_copy_are_each_models_reason():
    """``ortpool validate m.onnx --inputs big.npz``: the arrays fit the memory when read, not
    their copies for the model's process: the model COULD NOT RUN, naming the bytes (the run
    ended in a MemoryError traceback; under a cgroup's limit, the out-of-memory killer ended the
    command)."""
    from tests.support import run_child

    nbytes = 256 << 20
    done = run_child(__name__, "options_past_the_memory", nbytes, timeout=120, env=CHILD_ENV)
    assert done.returncode == 0, done.stderr
    [(status, error)] = json.loads(done.stdout)
    assert status == "could-not-run"
    what = ("could not start a process for it: the model's options (the --inputs arrays among "
            "them), copied for its process and twice while they are handed over")
    need, free = map(int, re.fullmatch(
        re.escape(what) + r" would take (\d+) bytes of address space; the process can allocate "
        r"(\d+) more \(address-space limit \d+ bytes \(RLIMIT_AS\), \d+ in use\)", error).groups())
    assert nbytes * 3 <= need < nbytes * 3 + (1 << 20) and free < need


def test_a_worker_waiting_to_time_has_its_alarm_paused():
    """A worker's own alarm (its --timeout plus 5 s, for a hang inside native code) must not fire
    while it waits for quiet: paused while it waits, the rest armed again once told to go."""
    import multiprocessing

    tasks_in, tasks_out = multiprocessing.Pipe(duplex=False)
    sent: list[tuple] = []
    hold = batch._quiet_hold(tasks_in, sent.append)
    previous = signal.signal(signal.SIGALRM, lambda *_: None)
    try:
        signal.alarm(100)
        seen: list[int] = []

        def parent() -> None:  # answers once it has seen the request, checking the alarm
            while not sent:
                time.sleep(0.01)
            seen.append(signal.alarm(0))  # 0: paused (alarm(0) returns what was left)
            tasks_out.send(batch._GO)

        helper = threading.Thread(target=parent)
        helper.start()
        with hold():
            helper.join()
            assert sent == [(batch._QUIET, None)]
            left = signal.alarm(0)
        assert seen == [0] and 95 <= left <= 100  # armed again with what was left
        assert sent == [(batch._QUIET, None), (batch._LOUD, None)]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _state(pid: int) -> str:
    """A process's state letter (R, S, Z...), "" once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[1].split()[0]


def test_an_idle_worker_ends_once_nothing_is_left_to_give_it():
    """Two workers, two models: the one that finished first is ended while the other model still
    runs (its memory back for that model), not at the end of the run."""
    stream = _Stream()
    states: list[str] = []

    def look(result: results.ModelResult) -> None:
        if result.path == "ok1":  # handed out after slow0, which ran 0.5 s longer
            pid = int(re.findall(r"chatter of ok1 in process (\d+)", stream.text)[0])
            states.append(_state(pid))

    found = batch.run_models(["slow0", "ok1"], 3, jobs=2, timeout=30.0, stderr=stream,
                             on_result=look, work=batch_stand_in.work)
    assert [r.status for r in found] == ["not-compared"] * 2
    assert states == [""]  # gone (ended and reaped) before the run's end


def test_a_refused_command_line_leaves_no_process_behind():
    """``ortpool validate`` starts its models' server before it reads its options (the two
    overlap); a refused command line ends that server at once, not after its warm-up."""
    marker = uuid.uuid4().hex
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "ortpool", "validate", "--jobs", "x"],
                          env={**CHILD_ENV, "ORTPOOL_TEST_MARK": marker}, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "ortpool validate: error: argument -j/--jobs: 'x' is not an integer (ASCII digits 0-9)")
    assert processes_marked(marker, wait=0.0) == []
    assert time.monotonic() - started < 60


def test_jobs_and_timeout_options():
    import ortpool.validate

    assert ortpool.validate.validate_models is batch.run_models  # the API's name for it
    assert batch.jobs_from(4, ["a", "b"]) == 2 and batch.jobs_from(1, ["m"] * 9) == 1
    assert batch.jobs_from(0, ["m"] * 64) == len(os.sched_getaffinity(0))
    assert timing.jobs(None) is None and timing.jobs(3) == 3
    assert timing.timeout(0) is None and timing.timeout(2.5) == 2.5
    with pytest.raises(OrtpoolError, match=r"^--jobs=-1 must be from 0 to 4096 \(0: one per "):
        timing.jobs(-1)
    with pytest.raises(OrtpoolError, match=r"^--timeout=nan must be a finite number of seconds"):
        timing.timeout(float("nan"))


def test_the_default_jobs_are_one_per_core_for_a_small_run_only(tmp_path, monkeypatch):
    """No --jobs: one worker per core (no more than the memory this process may still take holds
    at 1 GiB each, nor than the models) while the models' files hold at most 256 MiB in all and
    none names an external data file; otherwise one model at a time. A FIFO is not opened (it
    would block). The cores and the memory are the kernels' readings (a cgroup's limit counted:
    tests/ort/test_hook_failures.py)."""
    from ortpool import kernels

    assert (batch.usable_cores, batch.memory_room) == (kernels.usable_cores, kernels.memory_room)
    monkeypatch.setattr(batch, "usable_cores", lambda: 8)
    monkeypatch.setattr(batch, "memory_room", lambda: 3 * batch._RETIRE_BYTES + 5)
    small = [_bundled("maxpool-12"), _bundled("cnn"), _bundled("lppool-2"),
             _bundled("averagepool-7")]
    assert all(os.path.isfile(path) for path in small)
    assert batch.jobs_from(None, small) == 3  # the memory of three workers
    assert batch.jobs_from(None, small[:2]) == 2  # the models
    assert batch.jobs_from(None, [*small, str(tmp_path / "missing.onnx")]) == 3
    # weights in another file: a large model, whatever its .onnx holds
    model = _small_network()
    onnx.save(model, str(tmp_path / "ext.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True, location="ext.data", size_threshold=0)
    assert (tmp_path / "ext.data").stat().st_size > 0
    assert batch.jobs_from(None, [*small, str(tmp_path / "ext.onnx")]) == 1
    # over 256 MiB in all (a sparse file: nothing written), or a FIFO: one at a time
    big = tmp_path / "big.onnx"
    with open(big, "wb") as file:
        file.truncate(batch.SMALL_RUN_BYTES - 1000)
    assert batch.jobs_from(None, [str(big), *small[:1]]) == 2
    assert batch.jobs_from(None, [str(big), *small]) == 1
    fifo = tmp_path / "fifo.onnx"
    os.mkfifo(fifo)
    assert batch.jobs_from(None, [*small, str(fifo)]) == 1
    # an explicit N is taken as given
    assert batch.jobs_from(1, small) == 1 and batch.jobs_from(0, small) == 4
    # no memory limit known: one per core
    monkeypatch.setattr(batch, "memory_room", lambda: None)
    assert batch.jobs_from(None, small) == 4


@onnxruntime_dependent
def test_the_report_is_the_same_for_any_number_of_jobs(tmp_path, capsys):
    small = tmp_path / "small.onnx"
    onnx.save(_small_network(), str(small))
    models = [str(small), _bundled("ort-defect-valid-ceil"), _bundled("maxpool-12")]
    docs, outs = [], []
    for jobs in ("1", "3"):
        report = tmp_path / f"r{jobs}.json"
        # without the guard's timing, the one figure of the report that is measured, not computed
        code = main(["validate", *models, "-j", jobs, "--no-progress", "--no-guard-cost",
                     "--json", str(report)])
        docs.append((code, json.loads(report.read_text())))
        outs.append(capsys.readouterr().out)
    assert docs[0] == docs[1] and outs[0] == outs[1]
    assert [m["model"] for m in docs[0][1]["models"]] == models


@onnxruntime_dependent
def test_a_model_that_cannot_load_and_one_whose_process_is_killed_leave_the_rest_reported(
    tmp_path,
):
    """The command end to end: the first model is missing, the second's process is killed
    (SIGKILL, as the system's out-of-memory killer does) while it runs, the third is reported;
    the JSON and HTML are complete and the exit code is 2."""
    heavy, small = tmp_path / "heavy.onnx", tmp_path / "small.onnx"
    onnx.save(cnn_builders.resnet_like(opset=17, size=768), str(heavy))
    onnx.save(_small_network(), str(small))
    argv = ["missing.onnx", "heavy.onnx", "small.onnx", "-j", "1", "--no-progress"]
    argv += ["--json", "r.json", "--html", "r.html"]
    cli = subprocess.Popen(
        [sys.executable, "-m", "ortpool", "validate", *argv],
        cwd=tmp_path,
        env=CHILD_ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    killed = threading.Thread(target=_kill_first_model_process, args=(cli.pid,))
    killed.start()
    try:
        out, err = cli.communicate(timeout=120)
    finally:
        cli.kill()
        killed.join()
    assert cli.returncode == 2, err
    lines = out.splitlines()
    assert lines[:2] == [
        "COULD NOT RUN  missing.onnx: no such model file",
        "CRASHED  heavy.onnx: the process validating it died of SIGKILL (Killed)",
    ]
    # (then the stem MaxPool's NaN, ruling 20's information, and its guard's measured price)
    assert lines[2].startswith("agree    small.onnx  opset 17, 6 nodes: 6 agree; its output agrees")
    assert lines[-2:] == [
        "6 pooling nodes: 6 agree",
        "2 of 3 models not validated (1 crashed, 1 could not run); 0 graph output(s) differ end "
        "to end",
    ]
    assert err.splitlines()[:2] == [
        "ortpool validate: error: missing.onnx: no such model file",
        "ortpool validate: error: heavy.onnx: the process validating it died of SIGKILL (Killed)",
    ]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["status"] == "crashed" and doc["settings"]["timeout"] == batch.DEFAULT_TIMEOUT
    assert [(m["model"], m["status"], len(m["nodes"])) for m in doc["models"]] == [
        ("missing.onnx", "could-not-run", 0),
        ("heavy.onnx", "crashed", 0),
        ("small.onnx", "agree", 6),
    ]
    page = (tmp_path / "r.html").read_text()
    # the models that did not run open, in the order given, before the one that agrees
    sections = [
        page.index(f'data-status="{s}"><h2>{m} ')
        for m, s in (("missing.onnx", "could-not-run"), ("heavy.onnx", "crashed"))
    ]
    agreeing = page.index('<details class="model" id="model-3" data-status="agree"><summary>'
                          "small.onnx ")
    assert sections == sorted(sections) < [agreeing]


# --- helpers -------------------------------------------------------------------------------------


class _Stream:
    """A terminal's stderr, kept."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


def _line_of(text: str) -> int:
    lines = Path(batch_stand_in.__file__).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def _bundled(name: str) -> str:
    from ortpool.validate.validator import bundled_models_dir

    return str(bundled_models_dir() / f"{name}.onnx")


def _small_network() -> onnx.ModelProto:
    return cnn_builders.resnet_like(opset=17, size=32, widths=(8, 8, 8, 8), blocks=1, classes=10)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def _kill_first_model_process(cli: int) -> None:
    """SIGKILL the first model process of the command (a child of its forkserver) that runs
    for 0.4 s: the heavy model's (about 2 s; the missing model's ends in milliseconds)."""
    seen: dict[int, float] = {}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        now = time.monotonic()
        for server in _children(cli):
            if "forkserver" in _cmdline(server):
                for model in _children(server):
                    if now - seen.setdefault(model, now) >= 0.4:
                        os.kill(model, signal.SIGKILL)
                        return
        time.sleep(0.01)
