"""Load speed and peak memory of ``mcptrace.load``, against a plain orjson loop, in one run.

    python benchmarks/bench_load.py [--messages 1000000] [--seed 0] [--repeat 3] [--streaming]

Measurements, each in a fresh subprocess so that peak RSS belongs to one measurement:

(a) baseline: ``for line in open(path, "rb"): orjson.loads(line)`` -- the floor any
    loader of this file pays just to parse it;
(b) ``mcptrace.load(path)`` -- the messages table only;
(b') the same with ``MCPTRACE_PURE_PYTHON=1``: the pure-Python path a machine without
    a C compiler gets (worker processes, orjson per line);
(c) ``mcptrace.load(path)`` plus ``trace.calls`` and ``trace.sessions``.

Times cover the operation only (interpreter start-up and imports are reported
apart). Each also gets its CPU time (user and system, every thread and worker process):
on a shared machine it moves far less than wall time with other tenants' load, and over
wall time it says how many cores were kept busy. Peak RSS is the child's own high-water
mark (``VmHWM``), so it includes the interpreter and imported libraries. ``ru_maxrss``
(``getrusage``, ``wait4``) is not used on Linux: it keeps the high-water mark of the
address space replaced by ``exec``, which after ``fork``/``vfork`` is the parent's, so a
small child of a big parent would report the parent's size. Runs are interleaved
(a, b, c, a, b, c, ...) so that drifting machine load hits every measurement alike.

With ``--streaming``, and if ``mcptrace.streaming.write_messages(source, destination, "parquet")``
exists, the peak RSS of streaming the capture to Parquet is measured at N and 2N
messages: flat memory across the two sizes is the point of streaming.

This script reports; it never fails on a missed target. Captures are cached in
``benchmarks/out/`` (git-ignored), keyed by size, seed and generator version.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from generate import VERSION, generate_capture
from results import publish

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
MODES = ("baseline", "load", "pure", "derived")
LABELS = {
    "baseline": "(a) orjson loop (baseline)",
    "load": "(b) mcptrace.load",
    "pure": "(b') load, C scanner off",
    "derived": "(c) load + calls + sessions",
    "stream": "streaming.write_messages -> Parquet",
}
#: the streaming converter measured by --streaming, when mcptrace has it
GIB = 1 << 30
MIB = 1 << 20
#: the stated targets: (b) no slower than the baseline, peak RSS <= 1 GiB at 10^6 messages
RATIO_TARGET = 1.0
RSS_TARGET = GIB
RSS_TARGET_MESSAGES = 1_000_000


# ---------------------------------------------------------------------------
# Child side: one measurement, reported as one JSON line on stdout
# ---------------------------------------------------------------------------


def _own_peak_rss() -> int:
    """This process's peak resident set size in bytes, since its ``exec``."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024  # reported in kB
    except OSError:
        pass
    # elsewhere, fall back on ru_maxrss (may include the parent's size, see above)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # macOS: bytes, else KiB


def _cpu_seconds() -> float:
    """CPU time so far, user and system: every thread of this process, and the worker
    processes it has waited for (the pure-Python load parses on one per extra core)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def _child(mode: str, path: str, dest: str | None) -> dict[str, Any]:
    if mode == "pure":
        # the pure-Python path, as on a machine where the C scanner could not be built
        os.environ["MCPTRACE_PURE_PYTHON"] = "1"
    started = time.perf_counter()
    if mode != "baseline":
        import mcptrace
    import_s = time.perf_counter() - started
    rss_ready = _own_peak_rss()
    extra: dict[str, float] = {}
    cpu0 = _cpu_seconds()
    t0 = time.perf_counter()
    if mode == "baseline":
        loads = orjson.loads
        rows = 0
        with open(path, "rb") as f:
            for line in f:
                loads(line)
                rows += 1
    elif mode in ("load", "pure"):
        rows = mcptrace.load(path).messages.height
    elif mode == "derived":
        trace = mcptrace.load(path)
        rows = trace.messages.height
        t1 = time.perf_counter()
        calls = trace.calls.height
        t2 = time.perf_counter()
        sessions = trace.sessions.height
        t3 = time.perf_counter()
        extra = {
            "load_s": t1 - t0,
            "calls_s": t2 - t1,
            "sessions_s": t3 - t2,
            "calls": calls,
            "sessions": sessions,
        }
    elif mode == "stream":
        if dest is None:
            raise SystemExit("stream mode needs --dest")
        from mcptrace.streaming import write_messages

        write_messages([path], dest, "parquet")
        rows = _parquet_rows(dest)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    seconds = time.perf_counter() - t0
    return {
        "mode": mode,
        "seconds": seconds,
        "cpu_s": _cpu_seconds() - cpu0,
        "rows": rows,
        "import_s": import_s,
        "rss_after_import": rss_ready,
        **extra,
    }


def _parquet_rows(path: str) -> int:
    import polars as pl

    return int(pl.scan_parquet(path).select(pl.len()).collect().item())


# ---------------------------------------------------------------------------
# Parent side
# ---------------------------------------------------------------------------


@dataclass
class Run:
    mode: str
    seconds: float
    rows: int
    peak_rss: int
    detail: dict[str, Any]


def _measure(mode: str, path: Path, dest: Path | None = None) -> Run | str:
    """Run one measurement in a fresh interpreter; a string is the reason it failed."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", mode, str(path)]
    if dest is not None:
        cmd += ["--dest", str(dest)]
    proc = subprocess.run(cmd, capture_output=True, check=False)
    out, err = proc.stdout, proc.stderr
    if proc.returncode != 0:
        tail = err.decode(errors="replace").strip().splitlines()[-3:]
        return f"exit {proc.returncode}: {' | '.join(tail)}"
    report = orjson.loads(out.strip().splitlines()[-1])
    return Run(mode, report["seconds"], report["rows"], report["peak_rss"], report)


def _child_main(mode: str, path: str, dest: str | None) -> int:
    report = _child(mode, path, dest)
    # taken last, so the figure covers the whole measurement
    report["peak_rss"] = _own_peak_rss()
    sys.stdout.buffer.write(orjson.dumps(report) + b"\n")
    return 0


def _capture(messages: int, seed: int) -> tuple[Path, dict[str, Any]]:
    """A cached capture for (messages, seed, generator version), generated when absent."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"capture-{messages}-seed{seed}-v{VERSION}.jsonl"
    meta = path.with_suffix(".stats.json")
    if path.exists() and meta.exists():
        stats: dict[str, Any] = orjson.loads(meta.read_bytes())
        if stats.get("bytes") == path.stat().st_size:
            print(f"reusing {path.relative_to(HERE.parent)}")
            return path, stats
    print(f"generating {messages:,} messages (seed {seed}) ...", end=" ", flush=True)
    started = time.perf_counter()
    stats = generate_capture(path, messages=messages, seed=seed).as_dict()
    elapsed = time.perf_counter() - started
    stats["generation_s"] = elapsed
    print(f"{elapsed:.1f} s ({messages / elapsed:,.0f} lines/s)")
    meta.write_bytes(orjson.dumps(stats, option=orjson.OPT_INDENT_2))
    return path, stats


def compile_package() -> None:
    """Write the bytecode of every mcptrace module that lacks an up-to-date one, as
    installing a package does: a command timed from a fresh process then pays no
    compilation, even where bytecode is not written on import (``PYTHONDONTWRITEBYTECODE``,
    or a module edited since its last import)."""
    import compileall

    import mcptrace

    compileall.compile_dir(Path(mcptrace.__file__).parent, quiet=1)


def _warm(path: Path) -> None:
    """Read the file once so every measurement starts with it in the page cache."""
    with path.open("rb") as f:
        while f.read(16 * MIB):
            pass


def _summary(runs: list[Run], nbytes: int, base_best: float | None) -> dict[str, Any]:
    times = [r.seconds for r in runs]
    best = min(times)
    median = statistics.median(times)
    rows = runs[0].rows
    out: dict[str, Any] = {
        "runs_s": times,
        "best_s": best,
        "median_s": median,
        "rows": rows,
        "rows_per_s": rows / best,
        "mb_per_s": nbytes / 1e6 / best,
        "peak_rss_bytes": max(r.peak_rss for r in runs),
        "cpu_s_best": min(r.detail["cpu_s"] for r in runs),
        "import_s": min(r.detail["import_s"] for r in runs),
        "rss_after_import_bytes": min(r.detail["rss_after_import"] for r in runs),
    }
    if base_best:
        out["ratio_best"] = best / base_best
        out["ratio_median"] = median / base_best
    phases = [k for k in ("load_s", "calls_s", "sessions_s") if k in runs[0].detail]
    if phases:
        out["phases_best_s"] = {k: min(r.detail[k] for r in runs) for k in phases}
        out["calls"] = runs[0].detail["calls"]
        out["sessions"] = runs[0].detail["sessions"]
    return out


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _table(results: dict[str, Any], messages: int) -> str:
    header = (
        f"{'measurement':<29} {'best s':>8} {'median s':>9} {'CPU s':>7} {'x base':>7} "
        f"{'rows/s':>11} {'MB/s':>7} {'peak RSS MiB':>13}  target"
    )
    lines = [header, "-" * len(header)]
    for mode in MODES:
        res = results.get(mode)
        if res is None:
            continue
        if "error" in res:
            lines.append(f"{LABELS[mode]:<29} failed: {res['error']}")
            continue
        ratio = res.get("ratio_best", 1.0)
        rss_mib = res["peak_rss_bytes"] / MIB
        notes = []
        if mode in ("load", "pure"):
            notes.append(f"x<={RATIO_TARGET:.1f} {_verdict(ratio <= RATIO_TARGET)}")
        if mode != "baseline":
            if messages >= RSS_TARGET_MESSAGES:
                notes.append(f"RSS<=1GiB {_verdict(res['peak_rss_bytes'] <= RSS_TARGET)}")
            else:
                notes.append("RSS target n/a below 10^6 msgs")
        lines.append(
            f"{LABELS[mode]:<29} {res['best_s']:>8.2f} {res['median_s']:>9.2f} "
            f"{res['cpu_s_best']:>7.2f} {ratio:>6.2f}x "
            f"{res['rows_per_s']:>11,.0f} {res['mb_per_s']:>7.1f} {rss_mib:>13,.0f}  "
            + "; ".join(notes)
        )
    derived = results.get("derived", {})
    if "phases_best_s" in derived:
        p = derived["phases_best_s"]
        lines.append(
            f"    (c) phases, best: load {p['load_s']:.2f} s, calls {p['calls_s']:.2f} s, "
            f"sessions {p['sessions_s']:.2f} s -> {derived['calls']:,} calls, "
            f"{derived['sessions']:,} sessions"
        )
    imports = [
        f"{m} {results[m]['import_s']:.2f} s / {results[m]['rss_after_import_bytes'] / MIB:.0f} MiB"
        for m in MODES
        if m in results and "import_s" in results[m]
    ]
    lines.append("    import time / RSS after imports: " + ", ".join(imports))
    return "\n".join(lines)


def _versions() -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "orjson": orjson.__version__,
    }
    try:
        from mcptrace.loaders import accel

        info["c_scanner"] = accel.available()
    except ImportError:  # pragma: no cover - mcptrace not importable
        info["c_scanner"] = None
    try:
        import psutil

        info["memory_bytes"] = psutil.virtual_memory().total
    except ImportError:  # pragma: no cover - psutil is a dev dependency
        pass
    try:
        from importlib.metadata import version

        info["polars"] = version("polars")
        info["mcptrace"] = version("mcptrace")
    except Exception:  # pragma: no cover - metadata missing in odd installs
        pass
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=HERE,
            capture_output=True,
            text=True,
            check=True,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=HERE,
            capture_output=True,
            text=True,
            check=True,
        )
        info["git"] = rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        info["git"] = None
    return info


def _streaming(messages: int, seed: int, repeat: int) -> dict[str, Any]:
    print(f"\nstreaming to Parquet at {messages:,} and {2 * messages:,} messages:")
    out: dict[str, Any] = {}
    for n in (messages, 2 * messages):
        path, stats = _capture(n, seed)
        _warm(path)
        dest = OUT / f"stream-{n}-seed{seed}.parquet"
        runs: list[Run] = []
        for _ in range(repeat):
            run = _measure("stream", path, dest)
            if isinstance(run, str):
                out[str(n)] = {"error": run}
                print(f"  {n:>12,} messages: failed: {run}")
                break
            runs.append(run)
        dest.unlink(missing_ok=True)
        if runs:
            res = _summary(runs, stats["bytes"], None)
            out[str(n)] = res
            print(
                f"  {n:>12,} messages: best {res['best_s']:.2f} s, "
                f"{res['rows_per_s']:,.0f} rows/s, peak RSS {res['peak_rss_bytes'] / MIB:,.0f} MiB"
            )
    small, large = out.get(str(messages), {}), out.get(str(2 * messages), {})
    if "peak_rss_bytes" in small and "peak_rss_bytes" in large:
        growth = large["peak_rss_bytes"] / small["peak_rss_bytes"]
        out["rss_growth_2x"] = growth
        print(f"  peak RSS at 2N / at N: {growth:.2f} (flat is ~1.0; in-memory would be ~2.0)")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=1_000_000, help="capture size in lines")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement")
    parser.add_argument(
        "--streaming", action="store_true", help="also measure streaming to Parquet at N and 2N"
    )
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--dest", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child_main(args.child[0], args.child[1], args.dest)
    if args.messages < 1 or args.repeat < 1:
        parser.error("--messages and --repeat must be >= 1")

    path, stats = _capture(args.messages, args.seed)
    _warm(path)
    nbytes = int(stats["bytes"])
    runs: dict[str, list[Run]] = {m: [] for m in MODES}
    failures: dict[str, str] = {}
    for i in range(args.repeat):
        for mode in MODES:
            if mode in failures:
                continue
            print(f"run {i + 1}/{args.repeat}: {LABELS[mode]} ...", end=" ", flush=True)
            run = _measure(mode, path)
            if isinstance(run, str):
                failures[mode] = run
                print(f"failed ({run})")
                continue
            runs[mode].append(run)
            print(f"{run.seconds:.2f} s, peak RSS {run.peak_rss / MIB:,.0f} MiB")

    results: dict[str, Any] = {}
    base = _summary(runs["baseline"], nbytes, None) if runs["baseline"] else None
    for mode in MODES:
        if mode in failures:
            results[mode] = {"error": failures[mode]}
        elif runs[mode]:
            results[mode] = _summary(runs[mode], nbytes, base["best_s"] if base else None)
    env = _versions()
    print()
    print(
        f"capture: {stats['lines']:,} lines, {nbytes / 1e6:,.1f} MB "
        f"({nbytes / max(stats['lines'], 1):.0f} B/line), {stats['sessions']:,} sessions, "
        f"seed {args.seed}"
    )
    print(
        f"machine: {env['cpus']} CPUs, {env.get('memory_bytes', 0) / GIB:.0f} GiB; "
        f"python {env['python']}, polars {env.get('polars')}, orjson {env['orjson']}, "
        f"mcptrace {env.get('mcptrace')} ({env.get('git')}), C scanner "
        f"{'built' if env.get('c_scanner') else 'NOT built'}; best of {args.repeat}"
    )
    print(_table(results, args.messages))

    report: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "capture": {"path": str(path), **stats},
        "environment": env,
        "repeat": args.repeat,
        "targets": {
            "load_ratio_max": RATIO_TARGET,
            "peak_rss_max_bytes": RSS_TARGET,
            "peak_rss_target_messages": RSS_TARGET_MESSAGES,
        },
        "measurements": results,
    }
    if args.streaming:
        report["streaming"] = _streaming(args.messages, args.seed, args.repeat)
    dest = OUT / "bench_load.json"
    return publish(dest, report, f"\nwrote {dest.relative_to(HERE.parent)}")


if __name__ == "__main__":
    sys.exit(main())
