class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[4096, 4096][4096, 1]cpu"):
        # File: bench/graphs/seed_example.py (tests/fixtures/torch-cases/cpu/seed_example scaled to 4096x4096), code: return x.permute(1, 0) + x[2, :]
        permute: "f32[4096, 4096][1, 4096]cpu" = torch.ops.aten.permute.default(arg0_1, [1, 0])
        select: "f32[4096][1]cpu" = torch.ops.aten.select.int(arg0_1, 0, 2);  arg0_1 = None
        add: "f32[4096, 4096][1, 4096]cpu" = torch.ops.aten.add.Tensor(permute, select);  permute = select = None
        return (add,)
