"""The Python anchors of bench/compare.cpp: the same two programs (`2*x + 1` and the tanh form of
GELU) on the same float32 inputs, in numpy (op by op, one thread) and in PyTorch eager (op by
op, on 1 and 2 threads), timed per call with the result allocated as Python allocates it.

Writes Google Benchmark's JSON layout, names <variant>/<program>/<threads>t/<size>, so that
bench/plot_speedup.py reads it beside the C++ results:
    /usr/bin/python3 bench/compare_python.py build/bench/python.json
A library that is not installed is left out."""
import json
import sys
import time

SIZES = [16, 256, 4096, 1 << 16, 1 << 20, 1 << 24]


def gelu_input(module, n):
    # bench/gelu_reference.hpp's input: (i % 1000) * 0.006 - 3.
    i = module.arange(n) % 1000
    i = i.astype("float32") if module.__name__ == "numpy" else i.to(module.float32)
    return i * 0.006 - 3.0


def time_per_call(fn, seconds=0.3):
    fn()
    count, start = 0, time.perf_counter()
    while True:
        fn()
        count += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and count >= 3:
            return elapsed / count * 1e9


def programs(module):
    tanh = module.tanh
    return {
        "affine": lambda x: 2.0 * x + 1.0,
        "gelu": lambda x: 0.5 * x * (1.0 + tanh(0.7978845608 * (x + 0.044715 * x * x * x))),
    }


def run(variant, module, threads, results):
    for name, body in programs(module).items():
        for n in SIZES:
            x = gelu_input(module, n)
            ns = time_per_call(lambda: body(x))
            results.append({"name": f"{variant}/{name}/{threads}t/{n}", "run_type": "iteration",
                            "real_time": ns, "time_unit": "ns"})
            print(f"  {variant}/{name}/{threads}t/{n}: {ns:.0f} ns", file=sys.stderr)


def main():
    results = []
    try:
        import numpy
        run("numpy", numpy, 1, results)
    except ImportError:
        print("numpy is not installed: left out", file=sys.stderr)
    try:
        import torch
        for threads in (1, 2):
            torch.set_num_threads(threads)
            with torch.no_grad():
                run("torch_eager", torch, threads, results)
    except ImportError:
        print("torch is not installed: left out", file=sys.stderr)
    with open(sys.argv[1], "w") as out:
        json.dump({"benchmarks": results}, out, indent=1)


if __name__ == "__main__":
    main()
