"""The Spark job on a standalone cluster (issue 43): a master and two workers, each its own JVM
on loopback, started by pyspark's own launcher (``bin/spark-class``); the package shipped to the
executors as docs/crawl.md ("A standalone cluster") tells a user to: noisecbr's wheel in a
virtualenv of its own, packed by venv-pack and given to ``spark-submit --archives``. The
workers and the executors they start see neither this Python nor its path.

About 1.5 minutes: the wheel, the virtualenv (from pip's cache or the package registry), the
archive and five JVMs (master, two workers, two executors) beside the driver's."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from click.testing import CliRunner
from warchelpers import DAMAGED_RECORDS, damaged_archive, make_crawl

from noisecbr_apps.cli import main

pyspark = pytest.importorskip("pyspark", reason="the Spark job needs the [spark] extra")
pq = pytest.importorskip("pyarrow.parquet", reason="the Spark job needs the [warc] extra")
pytest.importorskip("venv_pack", reason="packing the executors' Python needs venv-pack "
                                        "(the [dev] extra)")
if shutil.which("java") is None:
    pytest.skip("a Spark cluster needs Java (17) on the machine", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
SPARK_HOME = Path(pyspark.__file__).resolve().parent
WORKERS = 2
#: Caps of the waits, in seconds (each wait polls; a 2-core machine starts a JVM in seconds).
WORKERS_CAP, JOB_CAP, LOG_CAP = 120, 300, 30
#: The line :func:`noisecbr_apps.crawl.spark._announce_python` writes once per Python worker.
ANNOUNCED = re.compile(r"noisecbr spark: Python worker \d+ runs (\S+) with noisecbr (\S+); "
                       r"site-packages (\[.*\])")


def _clean_environment(**extra: str) -> dict[str, str]:
    """This process's environment less its Python: no PYTHONPATH, no virtualenv (neither in
    ``VIRTUAL_ENV`` nor on ``PATH``), no Spark or PySpark settings; plus Spark's home, the
    loopback address for every socket Spark opens, and ``extra``."""
    dropped = {"PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONSTARTUP", "VIRTUAL_ENV",
               "CONDA_PREFIX", "__PYVENV_LAUNCHER__"}
    env = {key: value for key, value in os.environ.items()
           if key not in dropped and not key.startswith(("SPARK_", "PYSPARK_"))}
    if sys.prefix != sys.base_prefix:  # a virtualenv: its bin/ leaves PATH
        venv = Path(sys.prefix).resolve()
        env["PATH"] = os.pathsep.join(
            entry for entry in env.get("PATH", "").split(os.pathsep)
            if entry and not Path(entry).resolve().is_relative_to(venv))
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1", **extra)
    return env


def _run(command: list[str], timeout: float, **kwargs) -> subprocess.CompletedProcess:
    """``command`` in a process group of its own, killed whole past ``timeout`` seconds."""
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, **kwargs)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{command[:3]}… still running after {timeout} s:\n{err[-3000:]}")
    finally:
        _kill_group(proc, signal.SIGKILL)  # what it left running (a driver's Python, a JVM)
    return subprocess.CompletedProcess(command, proc.returncode, out, err)


def _check(command: list[str], timeout: float = 300, **kwargs) -> None:
    proc = _run(command, timeout, **kwargs)
    assert proc.returncode == 0, f"{command}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"


def _kill_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _build_isolation() -> list[str]:
    """``--no-build-isolation`` when this Python has the build requirements of pyproject.toml's
    ``[build-system]`` (nothing to download, and the kernel's objects in build/ are reused),
    else nothing: pip builds in an isolated environment."""
    wanted = {"setuptools": 77, "Cython": 3, "lxml": 5}
    try:
        ok = all(int(version(name).split(".")[0]) >= major for name, major in wanted.items())
    except (PackageNotFoundError, ValueError):
        ok = False
    return ["--no-build-isolation"] if ok else []


@pytest.fixture(scope="module")
def packed_env(tmp_path_factory) -> Path:
    """noisecbr's wheel with its ``[warc]`` extra in a new virtualenv (made by the base Python,
    not this one), packed by venv-pack: what the executors run. pyspark is not in it: Spark puts
    its own ``python/lib/pyspark.zip`` on the executors' Python path."""
    folder = tmp_path_factory.mktemp("packed")
    _check([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q",
            *_build_isolation(), "-w", str(folder / "wheels")])
    wheel = next((folder / "wheels").glob("noisecbr-*.whl"))
    env, clean = folder / "env", _clean_environment()
    _check([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip",
            str(env)], env=clean)
    _check([sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install",
            "-q", "--no-compile", f"{wheel}[warc]"], env=clean)
    archive = folder / "noisecbr-env.tar.gz"
    _check([sys.executable, "-m", "venv_pack", "-p", str(env), "-o", str(archive),
            "--compress-level", "1", "-q"])
    return archive


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


@dataclass
class Cluster:
    """A running standalone cluster: its master's URL and each worker's work directory."""

    url: str
    work_dirs: list[Path]


def _alive_workers(ui_port: int) -> int:
    """The workers the master's web UI lists as alive (0 while it does not answer)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, no proxy
    try:
        with opener.open(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as answer:
            state = json.load(answer)
    except (OSError, ValueError):
        return 0
    return sum(worker.get("state") == "ALIVE" for worker in state.get("workers", []))


def _tails(logs: list[Path]) -> str:
    return "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-2000:]}"
                     for log in logs if log.exists())


@pytest.fixture
def cluster(tmp_path):
    """A master and :data:`WORKERS` workers of one core each, each JVM in its own process group
    (killed, with the executors it started, at the end), on free loopback ports; yields once
    the master's web UI lists every worker alive."""
    master_port, master_ui, *worker_uis = _free_ports(2 + WORKERS)
    env = _clean_environment(SPARK_LOCAL_DIRS=str(tmp_path / "spark-local"))
    url = f"spark://127.0.0.1:{master_port}"
    procs: list[subprocess.Popen] = []
    logs: list[Path] = []

    def start(name: str, *args: str) -> None:
        logs.append(tmp_path / f"{name}.log")
        with logs[-1].open("wb") as log:
            procs.append(subprocess.Popen(
                [str(SPARK_HOME / "bin" / "spark-class"), *args], env=env, cwd=tmp_path,
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True))

    work_dirs = [tmp_path / f"worker-{n}" for n in range(WORKERS)]
    try:
        start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
              "--port", str(master_port), "--webui-port", str(master_ui))
        for n, (work, ui) in enumerate(zip(work_dirs, worker_uis)):
            work.mkdir()
            start(f"worker-{n}", "org.apache.spark.deploy.worker.Worker", url,
                  "--host", "127.0.0.1", "--cores", "1", "--memory", "1g",
                  "--work-dir", str(work), "--webui-port", str(ui))
        deadline = time.monotonic() + WORKERS_CAP
        while _alive_workers(master_ui) < WORKERS:
            if any(proc.poll() is not None for proc in procs):
                pytest.fail(f"a Spark JVM exited:\n{_tails(logs)}")
            if time.monotonic() > deadline:
                pytest.fail(f"{WORKERS} workers not registered in {WORKERS_CAP} s:\n"
                            f"{_tails(logs)}")
            time.sleep(0.5)
        yield Cluster(url=url, work_dirs=work_dirs)
    finally:
        for proc in procs:
            _kill_group(proc, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                _kill_group(proc, signal.SIGKILL)
                proc.wait()
            _kill_group(proc, signal.SIGKILL)  # an executor the worker left behind


def _expected_rows(tmp_path: Path, *warcs_and_codes: tuple[Path, int]) -> dict[str, dict]:
    """The rows of ``noisecbr clean`` of each WARC (which must exit with its code), by URL."""
    rows: dict[str, dict] = {}
    for warc, code in warcs_and_codes:
        jsonl = tmp_path / f"{warc.name}.jsonl"
        result = CliRunner().invoke(main, ["clean", str(warc), "-o", str(jsonl)])
        assert result.exit_code == code, result.output
        for line in jsonl.read_text().splitlines():
            row = json.loads(line)
            assert row["url"] not in rows
            rows[row["url"]] = row
    return rows


def _announcements(work_dirs: list[Path]) -> dict[Path, list[tuple[str, str, str]]]:
    """Each executor's log (``work/app-*/<executor>/stderr``) and the Python workers' lines in
    it; polled until every log has one (the worker copies an executor's stderr as it comes)."""
    deadline = time.monotonic() + LOG_CAP
    while True:
        logs = sorted(log for work in work_dirs for log in work.glob("app-*/*/stderr"))
        found = {log: ANNOUNCED.findall(log.read_text(errors="replace")) for log in logs}
        if (len(found) >= WORKERS and all(found.values())) or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def test_the_job_on_a_standalone_cluster_ships_its_packed_environment(tmp_path, packed_env,
                                                                      cluster):
    crawl = make_crawl(tmp_path)
    damaged, missing = tmp_path / "damaged.warc.gz", tmp_path / "missing.warc.gz"
    offset = damaged_archive(damaged)
    expected = _expected_rows(tmp_path, (crawl.warc, 0), (damaged, 1))
    assert len(expected) == crawl.cleaned + DAMAGED_RECORDS - 1
    job = tmp_path / "noisecbr_job.py"  # the driver script of docs/crawl.md
    job.write_text("from noisecbr_apps.crawl.spark import spark; spark()\n")
    out = tmp_path / "parquet"
    # The driver runs this Python (noisecbr and pyspark installed); the executors run the
    # archive's, unpacked as ./env in their working directories.
    env = _clean_environment(PYSPARK_DRIVER_PYTHON=sys.executable,
                             PYSPARK_PYTHON="./env/bin/python")
    command = [str(SPARK_HOME / "bin" / "spark-submit"), "--master", cluster.url,
               "--archives", f"{packed_env}#env",
               "--conf", "spark.executor.memory=512m", "--conf", "spark.ui.enabled=false",
               # Both executors up before the first task: each gets one of the first two.
               "--conf", "spark.scheduler.minRegisteredResourcesRatio=1.0",
               "--conf", "spark.scheduler.maxRegisteredResourcesWaitingTime=120s",
               str(job), str(crawl.warc), str(missing), str(damaged), "-o", str(out)]
    proc = _run(command, JOB_CAP, env=env, cwd=tmp_path)
    # spark-submit passes the driver's stderr on to its stdout; its own log goes to stderr.
    (tmp_path / "spark-submit.log").write_text(proc.stderr)
    (tmp_path / "spark-submit.out").write_text(proc.stdout)
    said = proc.stdout
    assert proc.returncode == 1, f"{said[-3000:]}\n{proc.stderr[-3000:]}"
    read, cleaned = crawl.records + DAMAGED_RECORDS - 1, crawl.cleaned + DAMAGED_RECORDS - 1
    assert (f"3 WARC files: {read} records read, {cleaned} pages cleaned; "
            "skipped: HTTP status not 2xx 1, WARC file unreadable 1, damaged archive part 1, "
            "not HTML 1, truncated 2, unreadable HTTP response 1") in said, said
    assert "2 of 3 WARC files failed:" in said
    assert f"  {missing}: " in said
    assert f"  {damaged}: damaged at byte {offset} (" in said

    # Every page exactly once, as noisecbr clean gives it.
    rows = pq.read_table(out).to_pylist()
    assert sorted(row["url"] for row in rows) == sorted(expected)
    assert {row["url"]: row for row in rows} == expected

    # Each worker's executor ran the packed Python, imported noisecbr from the archive and had
    # no site-packages but the archive's on its path.
    found = _announcements(cluster.work_dirs)
    assert len(found) == WORKERS and all(found.values()), (found, proc.stderr[-3000:])
    for log, lines in found.items():
        env_dir = (log.parent / "env").resolve()
        for python, package, sites in lines:
            assert Path(python).parent.resolve() == env_dir / "bin", lines
            assert Path(package).resolve().is_relative_to(env_dir), lines
            assert [Path(site).resolve() for site in ast.literal_eval(sites)] == [
                env_dir / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
                / "site-packages"], lines
