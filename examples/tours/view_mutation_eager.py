class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[8, 8][8, 1]cpu"):
        # File: models.py:59 in view_mutation, code: v = x.view(-1)
        view: "f32[64][1]cpu" = torch.ops.aten.view.default(arg0_1, [-1])

        # File: models.py:60 in view_mutation, code: v[0:4].mul_(3)
        slice_1: "f32[4][1]cpu" = torch.ops.aten.slice.Tensor(view, 0, 0, 4)
        mul_: "f32[4][1]cpu" = torch.ops.aten.mul_.Tensor(slice_1, 3)

        # File: models.py:62 in view_mutation, code: t[0].add_(1)
        permute: "f32[8, 8][1, 8]cpu" = torch.ops.aten.permute.default(arg0_1, [1, 0])
        select: "f32[8][8]cpu" = torch.ops.aten.select.int(permute, 0, 0)
        add_: "f32[8][8]cpu" = torch.ops.aten.add_.Tensor(select, 1)

        # File: models.py:63 in view_mutation, code: return x + 1
        add: "f32[8, 8][8, 1]cpu" = torch.ops.aten.add.Tensor(arg0_1, 1)
        return (add,)
