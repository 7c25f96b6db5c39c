class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[4096, 4096][4096, 1]cpu", arg1_1: "f32[4096, 4096][4096, 1]cpu"):
        # File: bench/graphs/pointwise_chain.py (tests/fixtures/torch-cases/cpu/pointwise_chain scaled to 4096x4096), code: return torch.relu(x * 2 + y).sigmoid() - torch.tanh(y) * 0.5
        mul: "f32[4096, 4096][4096, 1]cpu" = torch.ops.aten.mul.Tensor(arg0_1, 2);  arg0_1 = None
        add: "f32[4096, 4096][4096, 1]cpu" = torch.ops.aten.add.Tensor(mul, arg1_1);  mul = None
        relu: "f32[4096, 4096][4096, 1]cpu" = torch.ops.aten.relu.default(add);  add = None
        sigmoid: "f32[4096, 4096][4096, 1]cpu" = torch.ops.aten.sigmoid.default(relu);  relu = None
        tanh: "f32[4096, 4096][4096, 1]cpu" = torch.ops.aten.tanh.default(arg1_1);  arg1_1 = None
        mul_1: "f32[4096, 4096][4096, 1]cpu" = torch.ops.aten.mul.Tensor(tanh, 0.5);  tanh = None
        sub: "f32[4096, 4096][4096, 1]cpu" = torch.ops.aten.sub.Tensor(sigmoid, mul_1);  sigmoid = mul_1 = None
        return (sub,)
