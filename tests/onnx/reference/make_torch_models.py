"""Exports small PyTorch models with torch.onnx.export into tests/onnx/data/, with inputs and
PyTorch's outputs in torch_models.inc, for tests/onnx/pytorch_models_test.cpp. Run once with
Debian's python3-torch:
    /usr/bin/python3 tests/onnx/reference/make_torch_models.py
CI reads the files; it needs no Python."""
import os
import torch

torch.manual_seed(20261203)
here = os.path.dirname(os.path.abspath(__file__))
data = os.path.join(here, "..", "data")


class Mlp(torch.nn.Module):
    """Linear-ReLU-Linear-Tanh: Gemm (or MatMul + Add) with a dynamic batch."""

    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(4, 16)
        self.l2 = torch.nn.Linear(16, 3)

    def forward(self, x):
        return torch.tanh(self.l2(torch.relu(self.l1(x))))


class NormSoftmax(torch.nn.Module):
    """Flatten by x.view(x.size(0), -1) (Shape/Gather/Unsqueeze/Concat/Reshape), Linear,
    LayerNorm, sigmoid gate, Linear, softmax; a second output of log-probabilities."""

    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(8, 8)
        self.norm = torch.nn.LayerNorm(8)
        self.l2 = torch.nn.Linear(8, 5)

    def forward(self, x):
        h = x.view(x.size(0), -1)
        h = self.norm(self.l1(h))
        h = h * torch.sigmoid(h)
        logits = self.l2(h)
        return torch.softmax(logits, dim=-1), torch.log_softmax(logits, dim=-1)


class GeluMlp(torch.nn.Module):
    """Linear, exact GELU (Erf), Linear: a transformer's feed-forward block, batched 3-D."""

    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(6, 12)
        self.l2 = torch.nn.Linear(12, 6)

    def forward(self, x):
        return self.l2(torch.nn.functional.gelu(self.l1(x)))


def export(model, name, x, opset, outputs):
    path = os.path.join(data, name + ".onnx")
    dynamic = {"x": {0: "batch"}}
    for o in outputs:
        dynamic[o] = {0: "batch"}
    torch.onnx.export(model, (x,), path, input_names=["x"], output_names=outputs,
                      dynamic_axes=dynamic, opset_version=opset)
    return path


def array(name, t):
    t = t.detach().double().contiguous()
    dims = ", ".join(str(d) for d in t.shape)
    values = ", ".join(repr(float(v)) for v in t.flatten())
    return f'    {{"{name}", {{{dims}}}, {{{values}}}}},\n'


cases = []
mlp = Mlp().eval()
norm = NormSoftmax().eval()
gelu = GeluMlp().eval()
with torch.no_grad():
    for batch in (1, 5):
        x = torch.rand(batch, 4) * 2 - 1
        cases.append(("mlp_opset13", x, [mlp(x)]))
        cases.append(("mlp_opset17", x, [mlp(x)]))
        xn = torch.rand(batch, 2, 4) * 4 - 2
        cases.append(("norm_softmax_opset13", xn, list(norm(xn))))
        cases.append(("norm_softmax_opset17", xn, list(norm(xn))))
        xg = torch.rand(batch, 3, 6) * 4 - 2
        cases.append(("gelu_mlp_opset14", xg, [gelu(xg)]))
    export(mlp, "mlp_opset13", torch.rand(2, 4), 13, ["y"])
    export(mlp, "mlp_opset17", torch.rand(2, 4), 17, ["y"])
    export(norm, "norm_softmax_opset13", torch.rand(2, 2, 4), 13, ["probs", "logp"])
    export(norm, "norm_softmax_opset17", torch.rand(2, 2, 4), 17, ["probs", "logp"])
    export(gelu, "gelu_mlp_opset14", torch.rand(2, 3, 6), 14, ["y"])

with open(os.path.join(data, "torch_models.inc"), "w") as f:
    f.write("// Written by tests/onnx/reference/make_torch_models.py (PyTorch "
            + torch.__version__ + "): each model's input and PyTorch's outputs.\n")
    for name, x, outs in cases:
        f.write(f'{{"{name}",\n{{\n')
        f.write(array("x", x))
        f.write("},\n{\n")
        for k, o in enumerate(outs):
            f.write(array(f"output {k}", o))
        f.write("}},\n")
