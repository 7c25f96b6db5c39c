class <lambda>(torch.nn.Module):
    def forward(
        self,
        arg0_1: "Sym(s77)",  # PlainAOTInput(idx=0)
        arg1_1: "Sym(s27)",  # PlainAOTInput(idx=1)
        arg2_1: "f32[s77, s27][s27, 1]cpu",  # PlainAOTInput(idx=2)
        arg3_1: "f32[s77, s27][s27, 1]cpu",  # PlainAOTInput(idx=3)
    ):
        # File: /home/user/torchgen/models.py:15 in pointwise_chain, code: return torch.relu(x * 2 + y).sigmoid() - torch.tanh(y) * 0.5
        mul: "f32[s77, s27][s27, 1]cpu" = torch.ops.aten.mul.Tensor(arg2_1, 2);  arg2_1 = None
        add_3: "f32[s77, s27][s27, 1]cpu" = torch.ops.aten.add.Tensor(mul, arg3_1);  mul = None
        relu: "f32[s77, s27][s27, 1]cpu" = torch.ops.aten.relu.default(add_3);  add_3 = None
        sigmoid: "f32[s77, s27][s27, 1]cpu" = torch.ops.aten.sigmoid.default(relu);  relu = None
        tanh: "f32[s77, s27][s27, 1]cpu" = torch.ops.aten.tanh.default(arg3_1);  arg3_1 = None
        mul_11: "f32[s77, s27][s27, 1]cpu" = torch.ops.aten.mul.Tensor(tanh, 0.5);  tanh = None
        sub_12: "f32[s77, s27][s27, 1]cpu" = torch.ops.aten.sub.Tensor(sigmoid, mul_11);  sigmoid = mul_11 = None
        return (
            sub_12,  # PlainAOTOutput(idx=0)
        )
