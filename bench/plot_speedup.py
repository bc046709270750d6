"""Draws docs/speedup.png from one run of scripts/bench.sh: for each program of bench/compare.cpp,
how many times faster a traced call is than each alternative, against the number of elements.
Above 1 tracing pays; the shaded sizes are where the best serial alternative that writes into an
existing array (xtensor's lazy assignment, either configuration) is as fast as a traced call
into the caller's array (within 5 %) or faster.

    python3 bench/plot_speedup.py --default build/bench/compare.json \\
        --xsimd build/bench/compare_xsimd.json [--python build/bench/python.json] \\
        -o docs/speedup.png
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def load(path):
    """name -> nanoseconds, for every iteration run in a Google Benchmark JSON file."""
    if not path:
        return {}
    with open(path) as f:
        runs = json.load(f)["benchmarks"]
    return {r["name"].removesuffix("/real_time"): r["real_time"] * UNIT[r.get("time_unit", "ns")]
            for r in runs if r.get("run_type", "iteration") == "iteration"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--default", required=True)
    parser.add_argument("--xsimd", required=True)
    parser.add_argument("--python")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    plain, xsimd, python = load(args.default), load(args.xsimd), load(args.python)

    # (label, traced time, other time, style): speed-up = other / traced.
    curves = [
        ("over xtrace eager, op by op", ("traced", plain), ("eager", plain), "o-"),
        ("over xtensor lazy", ("traced_into", plain), ("xtensor_lazy", plain), "s-"),
        ("over xtensor lazy, XTENSOR_USE_XSIMD", ("traced_into", xsimd), ("xtensor_lazy", xsimd),
         "s--"),
        ("over numpy", ("traced", plain), ("numpy", python), "^-"),
        ("over PyTorch eager", ("traced", plain), ("torch_eager", python), "v-"),
        ("over Eigen Tensor", ("traced_into", plain), ("eigen_tensor", plain), "d-"),
        ("2 threads: over Eigen Tensor, 2 threads", ("traced_into", plain),
         ("eigen_tensor", plain), "d:"),
    ]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    for ax, (program, title) in zip(axes, [("affine", "2*x + 1 (2 ops)"),
                                           ("gelu", "GELU, tanh form (16 nodes)")]):
        sizes = sorted({int(name.rsplit("/", 1)[1]) for name in plain
                        if name.startswith(f"traced/{program}/1t/")})
        for label, (mine, mine_times), (other, other_times), style in curves:
            threads = 2 if label.startswith("2 threads") else 1
            points = []
            for n in sizes:
                key = f"{program}/{threads}t/{n}"
                if f"{mine}/{key}" in mine_times and f"{other}/{key}" in other_times:
                    points.append((n, other_times[f"{other}/{key}"] / mine_times[f"{mine}/{key}"]))
            if points:
                ax.plot(*zip(*points), style, label=label, markersize=4)
        # Where writing into an existing array with xtensor beats the traced call into one.
        for n in sizes:
            key = f"{program}/1t/{n}"
            traced = min(t[f"traced_into/{key}"] for t in (plain, xsimd) if f"traced_into/{key}" in t)
            lazy = min(t[f"xtensor_lazy/{key}"] for t in (plain, xsimd)
                       if f"xtensor_lazy/{key}" in t)
            if lazy < traced * 1.05:  # within 5 %: run-to-run noise on a shared machine
                ax.axvspan(n / 2 ** 0.5, n * 2 ** 0.5, color="0.88", zorder=0)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("float32 elements")
        ax.set_title(title)
        ax.grid(True, which="major", alpha=0.3)
    axes[0].set_ylabel("times faster than the alternative (traced call, 1 thread)")
    axes[1].legend(fontsize=8, loc="upper left")
    fig.suptitle("Should I trace it? Above 1 the traced call wins; shaded: xtensor's lazy "
                 "assignment is as fast (within 5 %) or faster")
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)


if __name__ == "__main__":
    main()
