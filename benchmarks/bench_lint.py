"""Speed and peak memory of ``mcptrace lint``, against an orjson loop and a naive linter.

    python benchmarks/bench_lint.py [--messages 1000000] [--seed 0] [--repeat 3]

Measurements, each in a fresh subprocess so that peak RSS belongs to one measurement
(see ``bench_load.py`` for how time and peak RSS are taken):

(a) baseline: ``for line in open(path, "rb"): orjson.loads(line)``, one process;
(a') the same loop as a command (``python -c ...``): wall time of the whole process,
    interpreter start-up included, to set the command (e) against;
(b) a naive pure-Python linter, written as a reader would: ``json.loads`` per line,
    then two checks per session: null request ids (JR004) and request ids reused
    while in flight (PR002);
(c) ``mcptrace.load(path)`` then ``mcptrace.linter.lint(trace)`` with every rule;
(d) ``mcptrace.lint_file(path)``: the same findings, the file linted a share of its
    sessions at a time (two shares for the 540 MB capture; see
    ``mcptrace/linter/shares.py``), which is what the command does by default;
(e) the ``mcptrace lint PATH`` command: wall time of the whole command (interpreter
    start-up, imports and the text report included; the package's bytecode is written
    first, as installing it would, so no run compiles a module), as a ratio to (a');
    its peak RSS comes from ``wait4``, which is reliable here because the parent is far
    smaller than the child.

Each measurement also reports its CPU time (user and system, every thread; for (e) the
whole command's, from ``wait4``). On a shared machine wall time swings with the load of
other tenants while CPU time moves far less, so comparisons across runs are best made on
it; CPU over wall time says how many cores a measurement kept busy.

Targets for (c) and (d): no slower than (a), at least 2.5x faster than (b), peak RSS
<= 1 GiB at 10^6 messages. A last subprocess times every rule family on one loaded trace:
the frames all rules share are prepared first (reported apart), then each rule runs
as the engine runs it, and its time is added to its family. This script reports; it
never fails on a missed target. The capture is cached in ``benchmarks/out/``, keyed
like ``bench_load.py``'s, and the report is written to ``bench_lint.json`` there (or
in ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from bench_load import (
    GIB,
    MIB,
    OUT,
    _capture,
    _cpu_seconds,
    _own_peak_rss,
    _versions,
    _warm,
    compile_package,
)
from results import publish

MODES = ("baseline", "baseline_cmd", "naive", "lint", "shares", "cli")
LABELS = {
    "baseline": "(a) orjson loop (baseline)",
    "baseline_cmd": "(a') orjson loop, a command",
    "naive": "(b) naive pure-Python linter",
    "lint": "(c) mcptrace load + lint",
    "shares": "(d) mcptrace.lint_file (shares)",
    "cli": "(e) mcptrace lint CLI (wall)",
}
#: the measurements the targets apply to
TARGETED = ("lint", "shares")
RATIO_TARGET = 1.0
SPEEDUP_TARGET = 2.5
RSS_TARGET = GIB
RSS_TARGET_MESSAGES = 1_000_000


# ---------------------------------------------------------------------------
# (b) the naive linter
# ---------------------------------------------------------------------------


def naive_lint(path: str) -> list[tuple[int, str, str]]:
    """Null request ids and ids reused in flight, the obvious way: (line, code, session)."""
    problems = []
    in_flight = {}  # (session, sender, id) -> line of the request still waiting
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            record = json.loads(line)
            msg = record.get("msg")
            if not isinstance(msg, dict):
                continue
            session = record.get("session")
            sender = record.get("dir")
            if "method" in msg and "id" in msg:
                if msg["id"] is None:
                    problems.append((number, "JR004", session))
                    continue
                key = (session, sender, repr(msg["id"]))  # repr keeps 5 and "5" apart
                if key in in_flight:
                    problems.append((number, "PR002", session))
                in_flight[key] = number
            elif "id" in msg and ("result" in msg or "error" in msg):
                requester = "s2c" if sender == "c2s" else "c2s"
                in_flight.pop((session, requester, repr(msg["id"])), None)
    return problems


# ---------------------------------------------------------------------------
# Child side: one measurement, reported as one JSON line on stdout
# ---------------------------------------------------------------------------


def _child(mode: str, path: str) -> dict[str, Any]:
    started = time.perf_counter()
    if mode in ("lint", "shares", "families"):
        import mcptrace
        from mcptrace.linter import lint
    if mode == "shares":
        from mcptrace.linter.shares import lint_in_shares
    import_s = time.perf_counter() - started
    rss_ready = _own_peak_rss()
    extra: dict[str, Any] = {}
    cpu0 = _cpu_seconds()
    t0 = time.perf_counter()
    if mode == "baseline":
        loads = orjson.loads
        rows = 0
        with open(path, "rb") as f:
            for line in f:
                loads(line)
                rows += 1
    elif mode == "naive":
        with open(path, "rb") as f:
            rows = sum(1 for _ in f)
        cpu0 = _cpu_seconds()
        t0 = time.perf_counter()  # the line count above is not part of the linter
        extra["findings"] = len(naive_lint(path))
    elif mode == "lint":
        trace = mcptrace.load(path)
        t1 = time.perf_counter()
        findings = lint(trace)
        t2 = time.perf_counter()
        rows = trace.messages.height
        severities = findings["severity"].cast(str).value_counts().rows()
        extra = {
            "load_s": t1 - t0,
            "lint_s": t2 - t1,
            "findings": findings.height,
            "severities": dict(sorted(severities)),
        }
    elif mode == "shares":
        done = lint_in_shares(path)
        # a capture too small to share is loaded whole, as the command does
        findings = done.findings if done is not None else lint(mcptrace.load(path))
        rows = 0  # not loaded whole: the row count is (c)'s
        severities = findings["severity"].cast(str).value_counts().rows()
        extra = {
            "shares": done.shares if done is not None else 1,
            "findings": findings.height,
            "severities": dict(sorted(severities)),
        }
    elif mode == "families":
        trace = mcptrace.load(path)
        rows = trace.messages.height
        cpu0 = _cpu_seconds()
        t0 = time.perf_counter()
        extra = _families(trace)
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


def _families(trace: Any) -> dict[str, Any]:
    """Seconds per rule family on one trace, after the frames every rule shares."""
    from mcptrace.linter import RULES
    from mcptrace.linter.context import LintContext
    from mcptrace.linter.engine import _run

    ctx = LintContext(trace)
    t0 = time.perf_counter()
    # what lint() builds before its rules run (identity and calls included)
    ctx.prepare()
    _ = ctx.session_revisions
    shared = time.perf_counter() - t0
    families: dict[str, dict[str, Any]] = {}
    for rule in RULES.values():
        t = time.perf_counter()
        found = _run(rule, ctx).height
        dt = time.perf_counter() - t
        fam = families.setdefault(
            rule.family, {"rules": 0, "seconds": 0.0, "findings": 0, "slowest": ("", 0.0)}
        )
        fam["rules"] += 1
        fam["seconds"] += dt
        fam["findings"] += found
        if dt > fam["slowest"][1]:
            fam["slowest"] = (rule.code, dt)
    return {"shared_s": shared, "families": dict(sorted(families.items()))}


def _child_main(mode: str, path: str) -> int:
    report = _child(mode, path)
    report["peak_rss"] = _own_peak_rss()
    sys.stdout.buffer.write(orjson.dumps(report) + b"\n")
    return 0


# ---------------------------------------------------------------------------
# Parent side
# ---------------------------------------------------------------------------


@dataclass
class Run:
    mode: str
    seconds: float
    peak_rss: int
    detail: dict[str, Any]


def _measure(mode: str, path: Path) -> Run | str:
    """Run one measurement in a fresh interpreter; a string is the reason it failed."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", mode, str(path)]
    proc = subprocess.run(cmd, capture_output=True, check=False)
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-3:]
        return f"exit {proc.returncode}: {' | '.join(tail)}"
    report = orjson.loads(proc.stdout.strip().splitlines()[-1])
    return Run(mode, report["seconds"], report["peak_rss"], report)


def _cli_command() -> list[str]:
    script = Path(sys.executable).with_name("mcptrace")
    return [str(script)] if script.exists() else [sys.executable, "-m", "mcptrace"]


#: (a') the baseline loop as a command of its own
_LOOP = "import sys, orjson\nfor line in open(sys.argv[1], 'rb'):\n    orjson.loads(line)\n"


def _measure_cli(path: Path) -> Run | str:
    """Wall time and peak RSS (``wait4``) of ``mcptrace lint PATH``, report discarded."""
    return _measure_command("cli", [*_cli_command(), "lint", str(path)], ok=(0, 1))


def _measure_loop_command(path: Path) -> Run | str:
    """Wall time and peak RSS of the baseline loop run as a command: ``python -c``."""
    return _measure_command("baseline_cmd", [sys.executable, "-c", _LOOP, str(path)], ok=(0,))


def _measure_command(mode: str, cmd: list[str], ok: tuple[int, ...]) -> Run | str:
    with tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as cwd:
        # an empty working directory: no project configuration changes what runs
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        if code not in ok:  # lint: 1 is findings at or above the fail level
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-3:]
            return f"exit {code}: {' | '.join(tail)}"
    peak = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    cpu = usage.ru_utime + usage.ru_stime
    return Run(mode, seconds, peak, {"exit_status": code, "cpu_s": cpu})


def _summary(runs: list[Run], base: float | None, naive: float | None) -> dict[str, Any]:
    times = [r.seconds for r in runs]
    best = min(times)
    out: dict[str, Any] = {
        "runs_s": times,
        "best_s": best,
        "median_s": statistics.median(times),
        "peak_rss_bytes": max(r.peak_rss for r in runs),
    }
    if base:
        out["ratio_best"] = best / base
    if naive:
        out["speedup_vs_naive"] = naive / best
    first = runs[0].detail
    for key in ("import_s", "rss_after_import"):
        if key in first:
            out[key] = min(r.detail[key] for r in runs)
    if "cpu_s" in first:
        # CPU time moves far less than wall time when the machine is busy, and over wall
        # time it says how many cores the measurement kept busy
        out["cpu_s_best"] = min(r.detail["cpu_s"] for r in runs)
    for key in ("load_s", "lint_s"):
        if key in first:
            out[key + "_best"] = min(r.detail[key] for r in runs)
    for key in ("rows", "findings", "severities", "exit_status", "shares"):
        if key in first:
            out[key] = first[key]
    return out


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _table(results: dict[str, Any], messages: int) -> str:
    header = (
        f"{'measurement':<30} {'best s':>8} {'median s':>9} {'CPU s':>7} {'x (a)':>7} "
        f"{'vs (b)':>7} {'peak RSS MiB':>13}  target"
    )
    lines = [header, "-" * len(header)]
    for mode in MODES:
        res = results.get(mode)
        if res is None:
            continue
        if "error" in res:
            lines.append(f"{LABELS[mode]:<30} failed: {res['error']}")
            continue
        ratio = res.get("ratio_best", 1.0)
        speedup = res.get("speedup_vs_naive")
        notes = []
        if mode in TARGETED:
            notes.append(f"x<={RATIO_TARGET:.1f} {_verdict(ratio <= RATIO_TARGET)}")
            if speedup is not None:
                notes.append(f">={SPEEDUP_TARGET}x naive {_verdict(speedup >= SPEEDUP_TARGET)}")
            if messages >= RSS_TARGET_MESSAGES:
                ok = res["peak_rss_bytes"] <= RSS_TARGET
                notes.append(f"RSS<=1GiB {_verdict(ok)}")
            else:
                notes.append("RSS target n/a below 10^6 msgs")
        if mode == "cli" and "ratio_best" in res:
            notes.append("x against (a')")
        vs_naive = f"{speedup:>6.2f}x" if speedup is not None else f"{'':>7}"
        cpu = f"{res['cpu_s_best']:>7.2f}" if "cpu_s_best" in res else f"{'':>7}"
        lines.append(
            f"{LABELS[mode]:<30} {res['best_s']:>8.2f} {res['median_s']:>9.2f} {cpu} "
            f"{ratio:>6.2f}x {vs_naive} {res['peak_rss_bytes'] / MIB:>13,.0f}  " + "; ".join(notes)
        )
    lint_res = results.get("lint", {})
    if "load_s_best" in lint_res:
        sev = ", ".join(f"{n:,} {s}" for s, n in lint_res.get("severities", {}).items())
        lines.append(
            f"    (c) phases, best: load {lint_res['load_s_best']:.2f} s, "
            f"lint {lint_res['lint_s_best']:.2f} s; {lint_res['findings']:,} findings ({sev})"
        )
    shares = results.get("shares", {})
    if "findings" in shares:
        same = shares["findings"] == lint_res.get("findings")
        lines.append(
            f"    (d) {shares['shares']} shares, {shares['findings']:,} findings "
            f"({'the same count as' if same else 'NOT the count of'} (c))"
        )
    naive = results.get("naive", {})
    if "findings" in naive:
        lines.append(f"    (b) found {naive['findings']:,} problems (JR004, PR002)")
    imports = [
        f"{m} {results[m]['import_s']:.2f} s / {results[m]['rss_after_import'] / MIB:.0f} MiB"
        for m in ("baseline", "naive", "lint")
        if "import_s" in results.get(m, {})
    ]
    lines.append("    import time / RSS after imports: " + ", ".join(imports))
    return "\n".join(lines)


def _family_table(runs: list[Run]) -> tuple[str, dict[str, Any]]:
    """Best time per family over the runs, as a table and as data."""
    shared = min(r.detail["shared_s"] for r in runs)
    fams: dict[str, dict[str, Any]] = {}
    for run in runs:
        for name, fam in run.detail["families"].items():
            best = fams.get(name)
            if best is None or fam["seconds"] < best["seconds"]:
                fams[name] = fam
    total = shared + sum(f["seconds"] for f in fams.values())
    header = (
        f"{'family':<16} {'rules':>5} {'seconds':>8} {'share':>6} {'findings':>9}  slowest rule"
    )
    lines = [header, "-" * len(header)]
    lines.append(f"{'shared frames':<16} {'':>5} {shared:>8.2f} {shared / total:>6.1%}")
    for name, fam in sorted(fams.items(), key=lambda kv: -kv[1]["seconds"]):
        code, slowest = fam["slowest"]
        lines.append(
            f"{name:<16} {fam['rules']:>5} {fam['seconds']:>8.2f} {fam['seconds'] / total:>6.1%} "
            f"{fam['findings']:>9,}  {code} {slowest:.2f} s"
        )
    lines.append(f"{'total':<16} {sum(f['rules'] for f in fams.values()):>5} {total:>8.2f}")
    return "\n".join(lines), {"shared_s": shared, "total_s": total, "families": fams}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=1_000_000, help="capture size in lines")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement")
    parser.add_argument(
        "--out", type=Path, default=OUT, help="folder for bench_lint.json (default: %(default)s)"
    )
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child_main(args.child[0], args.child[1])
    if args.messages < 1 or args.repeat < 1:
        parser.error("--messages and --repeat must be >= 1")

    path, stats = _capture(args.messages, args.seed)
    _warm(path)
    compile_package()
    load_before = os.getloadavg()
    runs: dict[str, list[Run]] = {m: [] for m in (*MODES, "families")}
    failures: dict[str, str] = {}
    for i in range(args.repeat):
        # interleaved, so that drifting machine load hits every measurement alike
        for mode in (*MODES, "families"):
            if mode in failures:
                continue
            label = LABELS.get(mode, "per-family timings")
            print(f"run {i + 1}/{args.repeat}: {label} ...", end=" ", flush=True)
            command = {"cli": _measure_cli, "baseline_cmd": _measure_loop_command}.get(mode)
            run = command(path) if command is not None else _measure(mode, path)
            if isinstance(run, str):
                failures[mode] = run
                print(f"failed ({run})")
                continue
            runs[mode].append(run)
            print(f"{run.seconds:.2f} s, peak RSS {run.peak_rss / MIB:,.0f} MiB")
    load_after = os.getloadavg()

    results: dict[str, Any] = {}
    base = min(r.seconds for r in runs["baseline"]) if runs["baseline"] else None
    base_cmd = min(r.seconds for r in runs["baseline_cmd"]) if runs["baseline_cmd"] else None
    naive = min(r.seconds for r in runs["naive"]) if runs["naive"] else None
    # each against its kind: the command (e) against the loop as a command (a')
    against = {"baseline": None, "baseline_cmd": None, "cli": base_cmd}
    for mode in MODES:
        if mode in failures:
            results[mode] = {"error": failures[mode]}
        elif runs[mode]:
            results[mode] = _summary(
                runs[mode],
                against.get(mode, base),
                naive if mode in TARGETED else None,
            )
    env = _versions()
    nbytes = int(stats["bytes"])
    print()
    print(
        f"capture: {stats['lines']:,} lines, {nbytes / 1e6:,.1f} MB, "
        f"{stats['sessions']:,} sessions, seed {args.seed}"
    )
    print(
        f"machine: {env['cpus']} CPUs, {env.get('memory_bytes', 0) / GIB:.0f} GiB; "
        f"python {env['python']}, polars {env.get('polars')}, orjson {env['orjson']}, "
        f"mcptrace {env.get('mcptrace')} ({env.get('git')}); best of {args.repeat}; "
        "load average before {:.2f} {:.2f} {:.2f}, after {:.2f} {:.2f} {:.2f}".format(
            *load_before, *load_after
        )
    )
    print(_table(results, args.messages))
    families: dict[str, Any] = {}
    if runs["families"]:
        text, families = _family_table(runs["families"])
        print("\nseconds per rule family (one loaded trace, best of runs):")
        print(text)
    elif "families" in failures:
        print(f"\nper-family timings failed: {failures['families']}")
        families = {"error": failures["families"]}

    report: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "capture": {"path": str(path), **stats},
        "environment": {**env, "loadavg_before": load_before, "loadavg_after": load_after},
        "repeat": args.repeat,
        "targets": {
            "lint_ratio_max": RATIO_TARGET,
            "speedup_vs_naive_min": SPEEDUP_TARGET,
            "peak_rss_max_bytes": RSS_TARGET,
            "peak_rss_target_messages": RSS_TARGET_MESSAGES,
        },
        "measurements": results,
        "families": families,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    dest = args.out / "bench_lint.json"
    return publish(dest, report, f"\nwrote {dest}")


if __name__ == "__main__":
    sys.exit(main())
