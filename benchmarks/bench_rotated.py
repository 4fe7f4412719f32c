"""What a rotated log costs ``mcptrace lint``, against the same messages in one file.

    python benchmarks/bench_rotated.py [--messages 1000000] [--files 4] [--seed 0]
                                       [--repeat 2] [--partitions N]

A proxy that writes one capture for all its sessions rotates it: the sessions then cross
from one file into the next, and logrotate compresses the older files. This script takes
the seeded generator's capture (``bench_load.py``'s, cached; under ``--out`` when given),
cuts it into ``--files`` files of about equal lines named as logrotate names them
(``capture.jsonl``, ``capture.jsonl.1.gz``, ...), gzips every file but the newest (level
1), and times the ``mcptrace lint`` command (wall time and peak RSS from ``getrusage`` of
its process; each run a fresh subprocess, the inputs interleaved) on:

(a) the one uncompressed file (the baseline);
(b) the folder of rotated files, as the command lints it by default: the files that
    share sessions form one group, decompressed into ``TMPDIR`` and linted a share of
    its sessions at a time across the files;
(c) the same folder with ``--partitions 1``: loaded whole, which is what the command
    did with such a folder before groups were shared.

The files are read oldest first (:func:`mcptrace.trace.rotation_order`): by name the
newest comes first, and a session crossing a rotation would read backwards.

``--partitions N`` is passed to (b) (a small capture is not shared by default). All
three must give the same findings (their place in the files aside, and the line
numbers their messages quote), which is checked.
This script reports; it never fails on a figure. Inputs are cached in
``benchmarks/out/`` (``--out``), and the report is written to ``bench_rotated.json``.
"""

from __future__ import annotations

import argparse
import gzip
import re
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import orjson
from bench_load import MIB, _capture, _warm, compile_package
from generate import generate_capture
from results import publish

OUT = Path(__file__).resolve().parent / "out"
_LINE = re.compile(r"\blines? \d+(?:(?:, | and )\d+)*")


def _rotated(capture: Path, out: Path, files: int) -> Path:
    """The capture cut into ``files`` files of about equal lines, all but the last gzipped
    (made once)."""
    folder = out / f"{capture.stem}-rotated-{files}"
    done = folder / ".complete"
    if done.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    lines = capture.read_bytes().splitlines(keepends=True)
    for i in range(files):
        part = b"".join(lines[i * len(lines) // files : (i + 1) * len(lines) // files])
        # numbered as logrotate numbers them: the newest file has no number
        name = folder / (f"capture.jsonl.{files - 1 - i}" if i < files - 1 else "capture.jsonl")
        if i < files - 1:
            Path(f"{name}.gz").write_bytes(gzip.compress(part, compresslevel=1))
        else:
            name.write_bytes(part)
    done.touch()
    return folder


def _lint(path: Path, *extra: str) -> tuple[float, int, list[list[str]]]:
    """Wall seconds and peak RSS of ``mcptrace lint PATH --format json``, and its findings
    without their place (file, line, ordinal), sorted: the rotated files number lines
    anew, and the whole load reads them in name order, newest first."""
    command = [sys.executable, "-m", "mcptrace", "lint", str(path), "--format", "json", *extra]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"mcptrace lint {path} failed: {done.stderr.decode()[-500:]}")
    # the only child waited for: its peak is the children's
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = int(usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024))
    # a message that names another message's line names it in that message's file
    found = sorted(
        [
            *[str(f[k]) for k in ("code", "session", "ts", "revision")],
            _LINE.sub("line", f["message"]),
        ]
        for f in orjson.loads(done.stdout)
    )
    return seconds, peak, found


def _measure(path: Path, extra: list[str]) -> tuple[float, int, list[list[str]]]:
    """:func:`_lint` in a fresh interpreter of this script: the peak RSS is then this
    measurement's alone (RUSAGE_CHILDREN keeps the largest of every child so far)."""
    code = (
        "import sys, json; sys.path.insert(0, sys.argv[1]); from bench_rotated import _lint; "
        "from pathlib import Path; print(json.dumps(_lint(Path(sys.argv[2]), *sys.argv[3:])))"
    )
    here = str(Path(__file__).resolve().parent)
    done = subprocess.run(
        [sys.executable, "-c", code, here, str(path), *extra], capture_output=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"measuring {path} failed: {done.stderr.decode()[-500:]}")
    seconds, peak, found = orjson.loads(done.stdout.splitlines()[-1])
    return float(seconds), int(peak), found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--partitions", type=int, default=None, help="passed to (b)")
    parser.add_argument("--out", type=Path, default=OUT, help="where inputs and report go")
    args = parser.parse_args(argv)
    if args.out == OUT:
        capture, _ = _capture(args.messages, args.seed)  # shared with the other benchmarks
    else:
        capture = args.out / f"capture-{args.messages}-seed{args.seed}.jsonl"
        if not capture.exists():
            args.out.mkdir(parents=True, exist_ok=True)
            generate_capture(capture, messages=args.messages, seed=args.seed)
    folder = _rotated(capture, args.out, args.files)
    _warm(capture)
    compile_package()
    shared = ["--partitions", str(args.partitions)] if args.partitions else []
    runs = {
        "one": (capture, []),
        "rotated": (folder, shared),
        "whole": (folder, ["--partitions", "1"]),
    }
    times: dict[str, list[float]] = {key: [] for key in runs}
    peaks: dict[str, int] = {}
    found: dict[str, list[list[str]]] = {}
    same = True
    for run in range(args.repeat):
        for key, (path, extra) in runs.items():
            seconds, peak, findings = _measure(path, extra)
            times[key].append(seconds)
            peaks[key] = min(peaks.get(key, peak), peak)
            same = same and found.setdefault(key, findings) == findings
            print(f"run {run + 1}/{args.repeat}: {key:>7} {seconds:6.2f} s, {peak / MIB:,.0f} MiB")
    same = same and found["one"] == found["rotated"] == found["whole"]
    count = len(found["one"])
    best = {key: min(values) for key, values in times.items()}
    report_json = {
        "messages": args.messages,
        "files": args.files,
        "compressed_files": args.files - 1,
        "one_file_s": best["one"],
        "rotated_s": best["rotated"],
        "rotated_whole_s": best["whole"],
        "one_file_peak_mib": peaks["one"] / MIB,
        "rotated_peak_mib": peaks["rotated"] / MIB,
        "rotated_whole_peak_mib": peaks["whole"] / MIB,
        "findings": count,
        "same_findings": same,
    }
    summary = (
        f"\n{args.messages:,} messages: one file {best['one']:.2f} s "
        f"({peaks['one'] / MIB:,.0f} MiB); rotated into {args.files} files "
        f"({args.files - 1} gzipped) {best['rotated']:.2f} s ({peaks['rotated'] / MIB:,.0f} MiB, "
        f"{best['rotated'] / best['one']:.2f}x); loaded whole {best['whole']:.2f} s "
        f"({peaks['whole'] / MIB:,.0f} MiB); same findings: {'yes' if same else 'NO'}"
    )
    return publish(args.out / "bench_rotated.json", report_json, summary)


if __name__ == "__main__":
    sys.exit(main())
