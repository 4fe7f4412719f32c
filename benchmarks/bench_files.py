"""What a directory of many small capture files costs, against the same messages in one file.

    python benchmarks/bench_files.py [--messages 20000] [--files 1000] [--seed 0] [--repeat 3]

A CI job that records one capture per test ends up with a directory of many small files.
This script generates one capture of ``--messages`` lines and ``--files`` sessions with
the seeded generator, writes each session to a file of its own, and times the
``mcptrace lint`` command (wall time, interpreter start-up included; each run a fresh
subprocess, the two inputs interleaved) on:

(a) the one file (the baseline);
(b) the directory of per-session files.

It reports the best time of each, (b) over (a), and the cost each extra file adds,
((b) - (a)) / files. Both must give the same findings, which is checked. This script
reports; it never fails on a figure. Inputs are cached in ``benchmarks/out/`` (``--out``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import orjson
from bench_load import compile_package
from generate import VERSION, generate_capture
from results import publish

OUT = Path(__file__).resolve().parent / "out"


def _inputs(out: Path, messages: int, files: int, seed: int) -> tuple[Path, Path]:
    """The one capture and the folder of its sessions, one file each (made once)."""
    stem = f"files-{messages}-{files}-seed{seed}-v{VERSION}"
    whole, folder = out / f"{stem}.jsonl", out / stem
    if whole.exists() and folder.is_dir():
        return whole, folder
    out.mkdir(parents=True, exist_ok=True)
    generate_capture(whole, messages=messages, seed=seed, sessions=files)
    by_session: dict[str, list[bytes]] = {}
    with open(whole, "rb") as f:
        for line in f:
            by_session.setdefault(orjson.loads(line)["session"], []).append(line)
    folder.mkdir(exist_ok=True)
    for i, lines in enumerate(by_session.values()):
        (folder / f"session-{i:05d}.jsonl").write_bytes(b"".join(lines))
    return whole, folder


def _lint(path: Path) -> tuple[float, int]:
    """Wall seconds of ``mcptrace lint PATH --format json`` and its finding count."""
    command = [sys.executable, "-m", "mcptrace", "lint", str(path), "--format", "json"]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"mcptrace lint {path} failed: {done.stderr.decode()[-500:]}")
    return seconds, len(orjson.loads(done.stdout))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--files", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT, help="where inputs and report go")
    args = parser.parse_args(argv)
    whole, folder = _inputs(args.out, args.messages, args.files, args.seed)
    compile_package()
    files = len(list(folder.glob("*.jsonl")))
    times: dict[str, list[float]] = {"one": [], "many": []}
    counts: dict[str, set[int]] = {"one": set(), "many": set()}
    for run in range(args.repeat):
        for key, path in (("one", whole), ("many", folder)):
            seconds, found = _lint(path)
            times[key].append(seconds)
            counts[key].add(found)
            print(f"run {run + 1}/{args.repeat}: {key:>4} {seconds:6.2f} s, {found} findings")
    one, many = min(times["one"]), min(times["many"])
    same = counts["one"] == counts["many"] and len(counts["one"]) == 1
    report = {
        "messages": args.messages,
        "files": files,
        "one_file_s": one,
        "directory_s": many,
        "ratio": many / one,
        "ms_per_extra_file": (many - one) / max(files - 1, 1) * 1000,
        "same_findings": same,
    }
    summary = (
        f"\n{args.messages:,} messages: one file {one:.2f} s, {files:,} files {many:.2f} s "
        f"({many / one:.2f}x; {report['ms_per_extra_file']:.1f} ms per extra file); "
        f"same findings: {'yes' if same else 'NO'}"
    )
    return publish(args.out / "bench_files.json", report, summary)


if __name__ == "__main__":
    sys.exit(main())
