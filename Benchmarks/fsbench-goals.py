#!/usr/bin/env python3
"""The goals of issue 18 from one fsbench-peers.sh run: reads the JSONs in the run's folder
(asicfs.json and the peers') and prints a markdown table with each goal, the measured medians,
the ratio and PASS/FAIL, and the machine load of the run."""
import json
import os
import sys

out = sys.argv[1]


def load(name):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def median(res, wl, item, key):
    if res is None:
        return None
    e = res.get("workloads", {}).get(wl, {}).get("items", {}).get(item)
    if not e or e.get("status") in ("n/a", "error"):
        return None
    s = e.get("summary", {}).get(key)
    return s["median"] if s else None


def loads(res):
    vals = []
    for wl in (res or {}).get("workloads", {}).values():
        for e in wl.get("items", {}).values():
            for r in e.get("reps", []):
                if "loadavg_1m_after" in r:
                    vals.append(r["loadavg_1m_after"])
    return vals


asicfs, fz, rat, plain, pyz = (load(n) for n in ("asicfs", "fuse-zip", "ratarmount", "plain", "pyzipfile"))
rows = []


def row(what, ours, goal_text, target, lower_is_better, unit, fmt="{:.3f}", peer=None):
    if ours is None or target is None:
        rows.append(f"| {what} | {fmt.format(ours) if ours is not None else '–'} {unit} | {goal_text} | – | n/a |")
        return
    ok = ours <= target if lower_is_better else ours >= target
    ratio = (ours / peer) if peer else None
    ratio_text = f"{ratio:.2f}x {peer_name}" if ratio is not None else ""
    rows.append(f"| {what} | {fmt.format(ours)} {unit} | {goal_text} ({fmt.format(target)}) | {ratio_text} | "
                f"{'PASS' if ok else 'FAIL'} |")


peer_name = "fuse-zip"
fz_ready = median(fz, "W1", "small10k", "mount_ready_s")
row("W1 10k files: mount ready", median(asicfs, "W1", "small10k", "mount_ready_s"), "≤ fuse-zip", fz_ready, True, "s",
    peer=fz_ready)
fz_ls = median(fz, "W1", "small10k", "ls_s")
row("W1 first `ls -l`", median(asicfs, "W1", "small10k", "ls_s"), "≤ 0.5× fuse-zip",
    fz_ls * 0.5 if fz_ls else None, True, "s", peer=fz_ls)
cat_cold = median(plain, "W2", "stored", "cold_mbps")
peer_name = "plain cat"
row("W2 stored 1 GiB cold", median(asicfs, "W2", "stored", "cold_mbps"), "≥ 0.9× plain `cat` cold",
    cat_cold * 0.9 if cat_cold else None, False, "MB/s", "{:.0f}", peer=cat_cold)
best = max([v for v in (median(rat, "W2", "deflated", "cold_mbps"), median(pyz, "W2", "deflated", "cold_mbps"),
                        median(fz, "W2", "deflated", "cold_mbps")) if v] or [0]) or None
peer_name = "best peer"
row("W2 deflated 1 GiB cold", median(asicfs, "W2", "deflated", "cold_mbps"), "≥ 2.5× best peer",
    best * 2.5 if best else None, False, "MB/s", "{:.0f}", peer=best)
row("W4 256 MiB copy-in + unmount", median(asicfs, "W4", "cp-large", "total_s"), "≤ 1.2 s", 1.2, True, "s", "{:.2f}")
fz_w6 = median(fz, "W6", "cp-many-small", "total_s")
peer_name = "fuse-zip"
row("W6 1,000 small files in + unmount", median(asicfs, "W6", "cp-many-small", "total_s"), "≤ 0.8× fuse-zip",
    fz_w6 * 0.8 if fz_w6 else None, True, "s", "{:.2f}", peer=fz_w6)
row("W3 random 4 KiB deflated p99", median(asicfs, "W3", "deflated", "p99_ms"), "keep ≤ 2.7 ms", 2.7, True, "ms", "{:.1f}")
rss = [median(asicfs, wl, item, "peak_rss_kb") for wl, item in
       (("W1", "small10k"), ("W2", "stored"), ("W2", "deflated"), ("W3", "deflated"), ("W4", "cp-large"),
        ("W6", "cp-many-small"))]
rss = [r / 1024 for r in rss if r is not None]
row("W5 peak RSS (largest of W1–W4, W6)", max(rss) if rss else None, "keep ≤ 40 MiB", 40, True, "MiB", "{:.0f}")

print("| goal | asicfs (median of reps) | goal | ratio | result |")
print("|---|---|---|---|---|")
print("\n".join(rows))
all_loads = [v for r in (asicfs, fz, rat, plain, pyz) for v in loads(r)]
if all_loads:
    print(f"\nMachine load (1-minute average after each rep, all systems): min {min(all_loads):.2f}, "
          f"median {sorted(all_loads)[len(all_loads) // 2]:.2f}, max {max(all_loads):.2f} on "
          f"{(asicfs or fz or {}).get('machine', {}).get('nproc', '?')} cores.")
for name in ("load-before.txt", "load-after.txt"):
    p = os.path.join(out, name)
    if os.path.exists(p):
        print(f"{name[:-4]}: {open(p).read().strip()}")
