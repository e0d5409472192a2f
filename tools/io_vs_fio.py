#!/usr/bin/env python3
"""Validate `hwcal io` against fio: the four jobs of issue 6 on the same 1 GiB
file, hwcal and fio alternated (so drift hits both), each run under the shared
bench lock; prints per-run figures and a median table. fio is not a dependency
of hwcal: install it from the distribution (apt-get install fio) to run this.

usage: tools/io_vs_fio.py [--hwcal target/release/hwcal] [--dir .] [--rounds 3] [--time 5]
                          [--jobs randread-4k-qd1,...]

Like with like: both direct (O_DIRECT, no page cache), fio pinned to the CPU
hwcal pins to (the highest allowed; pinning alone moves QD1 IOPS by ~15% on a
VM), fio's write buffers not rescrambled on every write (`scramble_buffers=0`:
fio's default costs ~30 us of CPU per 1 MiB write; hwcal stamps each sector
instead, ~1 us), latency percentiles on fio's total latency (`lat`, not `clat`).
"""
import argparse
import json
import os
import statistics
import subprocess

# hwcal's random offsets are uniform with repeats, so fio runs its random
# jobs with --norandommap (no per-pass map of visited blocks, whose
# bookkeeping costs fio ~10% of its IOPS at queue depth 1 here).
LOCK = ["flock", "/tmp/hwcal-bench.lock"]
JOBS = {
    "randread-4k-qd1": ("--rw randread --bs 4k --direct --engine io_uring --iodepth 1",
                        "--rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth=1 --norandommap"),
    "randread-4k-qd32": ("--rw randread --bs 4k --direct --engine io_uring --iodepth 32",
                         "--rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth=32 --norandommap"),
    "read-1m": ("--rw read --bs 1M --direct --engine psync",
                "--rw=read --bs=1M --direct=1 --ioengine=psync"),
    "write-1m": ("--rw write --bs 1M --direct --engine psync --force",
                 "--rw=write --bs=1M --direct=1 --ioengine=psync --scramble_buffers=0"),
}


def highest_cpu():
    return max(os.sched_getaffinity(0))


def run_hwcal(hwcal, path, args, t):
    out = subprocess.run(LOCK + [hwcal, "io", path, "--size", "1G", "-t", str(t), "-q", "--json", "-"]
                         + args.split(), capture_output=True, text=True, check=True).stdout
    j = json.loads(out)["io"]
    return j["iops"], j["bytes_per_sec"], j["lat_p50_us"], j["lat_p99_us"], j["lat_p999_us"]


def run_fio(path, args, t, cpu):
    out = subprocess.run(LOCK + ["fio", "--name=job", f"--filename={path}", "--size=1G", "--time_based",
                                 f"--runtime={t}", "--lat_percentiles=1", f"--cpus_allowed={cpu}",
                                 "--output-format=json"] + args.split(),
                         capture_output=True, text=True, check=True).stdout
    j = json.loads(out)["jobs"][0]
    d = j["read"] if j["read"]["io_bytes"] > 0 else j["write"]
    p = d["lat_ns"]["percentile"]
    return d["iops"], d["bw_bytes"], p["50.000000"] / 1e3, p["99.000000"] / 1e3, p["99.900000"] / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hwcal", default="target/release/hwcal")
    ap.add_argument("--dir", default=".")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--time", type=float, default=5)
    ap.add_argument("--jobs", default=",".join(JOBS))
    a = ap.parse_args()
    hwcal = os.path.abspath(a.hwcal)
    path = os.path.join(a.dir, f".io_vs_fio-{os.getpid()}.dat")
    cpu = highest_cpu()
    subprocess.run(["fio", "--name=layout", f"--filename={path}", "--size=1G", "--rw=write", "--bs=1M",
                    "--direct=1", "--output=/dev/null"], check=True)
    rows = []
    try:
        for name in a.jobs.split(","):
            h_args, f_args = JOBS[name]
            hs, fs = [], []
            for r in range(a.rounds):
                if r % 2 == 0:
                    hs.append(run_hwcal(hwcal, path, h_args, a.time))
                    fs.append(run_fio(path, f_args, a.time, cpu))
                else:
                    fs.append(run_fio(path, f_args, a.time, cpu))
                    hs.append(run_hwcal(hwcal, path, h_args, a.time))
                print(f"  {name} round {r}: hwcal {hs[-1][0]:9.0f} IOPS  fio {fs[-1][0]:9.0f} IOPS  "
                      f"ratio {hs[-1][0] / fs[-1][0]:.3f}", flush=True)
            med = [[statistics.median(x[i] for x in runs) for i in range(5)] for runs in (hs, fs)]
            rows.append((name, med[0], med[1]))
    finally:
        os.remove(path)
    print(f"\n| job | hwcal IOPS | hwcal MB/s | fio IOPS | fio MB/s | ratio | hwcal p50/p99/p99.9 us | fio p50/p99/p99.9 us |")
    print("|---|---|---|---|---|---|---|---|")
    for name, h, f in rows:
        print(f"| {name} | {h[0]:.0f} | {h[1] / 1e6:.1f} | {f[0]:.0f} | {f[1] / 1e6:.1f} | {h[0] / f[0]:.3f} | "
              f"{h[2]:.1f}/{h[3]:.1f}/{h[4]:.1f} | {f[2]:.1f}/{f[3]:.1f}/{f[4]:.1f} |")


if __name__ == "__main__":
    main()
