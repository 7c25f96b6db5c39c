class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[8, 16][16, 1]cpu", arg1_1: "f32[16, 4][4, 1]cpu", arg2_1: "f32[4][1]cpu"):
        # File: tour.py:3 in forward, code: s = x.sum(1)
        sum_1: "f32[8][1]cpu" = torch.ops.aten.sum.dim_IntList(arg0_1, [1])
        # File: tour.py:4 in forward, code: h = x.view(-1).relu().view(8, 16)
        view: "f32[128][1]cpu" = torch.ops.aten.view.default(arg0_1, [-1]);  arg0_1 = None
        relu: "f32[128][1]cpu" = torch.ops.aten.relu.default(view);  view = None
        view_1: "f32[8, 16][16, 1]cpu" = torch.ops.aten.view.default(relu, [8, 16]);  relu = None
        # File: tour.py:5 in forward, code: h = h[:, :]
        slice_1: "f32[8, 16][16, 1]cpu" = torch.ops.aten.slice.Tensor(view_1, 1, 0, 9223372036854775807);  view_1 = None
        # File: tour.py:6 in forward, code: y = h @ w + b
        mm: "f32[8, 4][4, 1]cpu" = torch.ops.aten.mm.default(slice_1, arg1_1);  slice_1 = arg1_1 = None
        add: "f32[8, 4][4, 1]cpu" = torch.ops.aten.add.Tensor(mm, arg2_1);  mm = arg2_1 = None
        # File: tour.py:7 in forward, code: return y, s * 2
        mul: "f32[8][1]cpu" = torch.ops.aten.mul.Tensor(sum_1, 2);  sum_1 = None
        return (add, mul)
