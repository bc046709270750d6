"""The PyTorch eager anchor of bench/train_step.cpp: the same MLP train step (mean squared error,
plain gradient descent, float32, batch 64), on 1 thread, timed per step. Debian's python3-torch:
    /usr/bin/python3 bench/train_step_pytorch.py"""
import time
import torch

torch.set_num_threads(1)
torch.manual_seed(3)


def step_time(inputs, hidden, outputs, seconds=2.0):
    w1 = (torch.randn(inputs, hidden) * 0.1).requires_grad_(True)
    b1 = (torch.randn(hidden) * 0.1).requires_grad_(True)
    w2 = (torch.randn(hidden, outputs) * 0.1).requires_grad_(True)
    b2 = (torch.randn(outputs) * 0.1).requires_grad_(True)
    x, t = torch.randn(64, inputs), torch.randn(64, outputs)
    params = (w1, b1, w2, b2)

    def step():
        h = torch.relu(x @ w1 + b1)
        loss = torch.mean((h @ w2 + b2 - t) ** 2)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= 1e-3 * g
        return loss

    for _ in range(20):
        step()
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        count += 1
    return (time.perf_counter() - start) / count * 1e9


for n, (i, h, o) in {2: (2, 16, 1), 256: (256, 512, 10)}.items():
    print(f"  n = {n:<10} pytorch_eager ({step_time(i, h, o):.0f} ns)")
