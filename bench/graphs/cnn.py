class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[16, 3, 3, 3][27, 9, 3, 1]cpu", arg1_1: "f32[16][1]cpu", arg2_1: "f32[64, 3, 32, 32][3072, 1024, 32, 1]cpu", arg3_1: "f32[16][1]cpu", arg4_1: "f32[16][1]cpu", arg5_1: "f32[16][1]cpu", arg6_1: "f32[16][1]cpu", arg7_1: "f32[32, 16, 3, 3][144, 9, 3, 1]cpu", arg8_1: "f32[32][1]cpu", arg9_1: "f32[32][1]cpu", arg10_1: "f32[32][1]cpu", arg11_1: "f32[32][1]cpu", arg12_1: "f32[32][1]cpu", arg13_1: "f32[10, 32][32, 1]cpu", arg14_1: "f32[10][1]cpu"):
        # File: bench/graphs/cnn.py (tests/fixtures/torch-cases/cpu/cnn scaled to batch 64), models.py:191, code: x = F.relu(self.b1(self.c1(x)))
        convolution: "f32[64, 16, 32, 32][16384, 1024, 32, 1]cpu" = torch.ops.aten.convolution.default(arg2_1, arg0_1, arg1_1, [1, 1], [1, 1], [1, 1], False, [0, 0], 1);  arg2_1 = arg0_1 = arg1_1 = None
        unsqueeze: "f32[16, 1][1, 1]cpu" = torch.ops.aten.unsqueeze.default(arg3_1, -1);  arg3_1 = None
        unsqueeze_1: "f32[16, 1, 1][1, 1, 1]cpu" = torch.ops.aten.unsqueeze.default(unsqueeze, -1);  unsqueeze = None
        sub: "f32[64, 16, 32, 32][16384, 1024, 32, 1]cpu" = torch.ops.aten.sub.Tensor(convolution, unsqueeze_1);  convolution = unsqueeze_1 = None
        add: "f32[16][1]cpu" = torch.ops.aten.add.Tensor(arg4_1, 1e-05);  arg4_1 = None
        sqrt: "f32[16][1]cpu" = torch.ops.aten.sqrt.default(add);  add = None
        reciprocal: "f32[16][1]cpu" = torch.ops.aten.reciprocal.default(sqrt);  sqrt = None
        mul: "f32[16][1]cpu" = torch.ops.aten.mul.Tensor(reciprocal, 1);  reciprocal = None
        unsqueeze_2: "f32[16, 1][1, 1]cpu" = torch.ops.aten.unsqueeze.default(mul, -1);  mul = None
        unsqueeze_3: "f32[16, 1, 1][1, 1, 1]cpu" = torch.ops.aten.unsqueeze.default(unsqueeze_2, -1);  unsqueeze_2 = None
        mul_1: "f32[64, 16, 32, 32][16384, 1024, 32, 1]cpu" = torch.ops.aten.mul.Tensor(sub, unsqueeze_3);  sub = unsqueeze_3 = None
        unsqueeze_4: "f32[16, 1][1, 1]cpu" = torch.ops.aten.unsqueeze.default(arg5_1, -1);  arg5_1 = None
        unsqueeze_5: "f32[16, 1, 1][1, 1, 1]cpu" = torch.ops.aten.unsqueeze.default(unsqueeze_4, -1);  unsqueeze_4 = None
        mul_2: "f32[64, 16, 32, 32][16384, 1024, 32, 1]cpu" = torch.ops.aten.mul.Tensor(mul_1, unsqueeze_5);  mul_1 = unsqueeze_5 = None
        unsqueeze_6: "f32[16, 1][1, 1]cpu" = torch.ops.aten.unsqueeze.default(arg6_1, -1);  arg6_1 = None
        unsqueeze_7: "f32[16, 1, 1][1, 1, 1]cpu" = torch.ops.aten.unsqueeze.default(unsqueeze_6, -1);  unsqueeze_6 = None
        add_1: "f32[64, 16, 32, 32][16384, 1024, 32, 1]cpu" = torch.ops.aten.add.Tensor(mul_2, unsqueeze_7);  mul_2 = unsqueeze_7 = None
        relu: "f32[64, 16, 32, 32][16384, 1024, 32, 1]cpu" = torch.ops.aten.relu.default(add_1);  add_1 = None

        # File: /home/user/torchgen/models.py:192 in forward, code: x = F.max_pool2d(x, 2)
        _low_memory_max_pool_with_offsets = torch.ops.prims._low_memory_max_pool_with_offsets.default(relu, [2, 2], [2, 2], [0, 0], [1, 1], False);  relu = None
        getitem: "f32[64, 16, 16, 16][4096, 256, 16, 1]cpu" = _low_memory_max_pool_with_offsets[0];  _low_memory_max_pool_with_offsets = None

        # File: /home/user/torchgen/models.py:193 in forward, code: x = F.relu(self.b2(self.c2(x)))
        convolution_1: "f32[64, 32, 8, 8][2048, 64, 8, 1]cpu" = torch.ops.aten.convolution.default(getitem, arg7_1, arg8_1, [2, 2], [1, 1], [1, 1], False, [0, 0], 1);  getitem = arg7_1 = arg8_1 = None
        unsqueeze_8: "f32[32, 1][1, 1]cpu" = torch.ops.aten.unsqueeze.default(arg9_1, -1);  arg9_1 = None
        unsqueeze_9: "f32[32, 1, 1][1, 1, 1]cpu" = torch.ops.aten.unsqueeze.default(unsqueeze_8, -1);  unsqueeze_8 = None
        sub_1: "f32[64, 32, 8, 8][2048, 64, 8, 1]cpu" = torch.ops.aten.sub.Tensor(convolution_1, unsqueeze_9);  convolution_1 = unsqueeze_9 = None
        add_2: "f32[32][1]cpu" = torch.ops.aten.add.Tensor(arg10_1, 1e-05);  arg10_1 = None
        sqrt_1: "f32[32][1]cpu" = torch.ops.aten.sqrt.default(add_2);  add_2 = None
        reciprocal_1: "f32[32][1]cpu" = torch.ops.aten.reciprocal.default(sqrt_1);  sqrt_1 = None
        mul_3: "f32[32][1]cpu" = torch.ops.aten.mul.Tensor(reciprocal_1, 1);  reciprocal_1 = None
        unsqueeze_10: "f32[32, 1][1, 1]cpu" = torch.ops.aten.unsqueeze.default(mul_3, -1);  mul_3 = None
        unsqueeze_11: "f32[32, 1, 1][1, 1, 1]cpu" = torch.ops.aten.unsqueeze.default(unsqueeze_10, -1);  unsqueeze_10 = None
        mul_4: "f32[64, 32, 8, 8][2048, 64, 8, 1]cpu" = torch.ops.aten.mul.Tensor(sub_1, unsqueeze_11);  sub_1 = unsqueeze_11 = None
        unsqueeze_12: "f32[32, 1][1, 1]cpu" = torch.ops.aten.unsqueeze.default(arg11_1, -1);  arg11_1 = None
        unsqueeze_13: "f32[32, 1, 1][1, 1, 1]cpu" = torch.ops.aten.unsqueeze.default(unsqueeze_12, -1);  unsqueeze_12 = None
        mul_5: "f32[64, 32, 8, 8][2048, 64, 8, 1]cpu" = torch.ops.aten.mul.Tensor(mul_4, unsqueeze_13);  mul_4 = unsqueeze_13 = None
        unsqueeze_14: "f32[32, 1][1, 1]cpu" = torch.ops.aten.unsqueeze.default(arg12_1, -1);  arg12_1 = None
        unsqueeze_15: "f32[32, 1, 1][1, 1, 1]cpu" = torch.ops.aten.unsqueeze.default(unsqueeze_14, -1);  unsqueeze_14 = None
        add_3: "f32[64, 32, 8, 8][2048, 64, 8, 1]cpu" = torch.ops.aten.add.Tensor(mul_5, unsqueeze_15);  mul_5 = unsqueeze_15 = None
        relu_1: "f32[64, 32, 8, 8][2048, 64, 8, 1]cpu" = torch.ops.aten.relu.default(add_3);  add_3 = None

        # File: /home/user/torchgen/models.py:194 in forward, code: return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))
        mean: "f32[64, 32, 1, 1][32, 1, 1, 1]cpu" = torch.ops.aten.mean.dim(relu_1, [-1, -2], True);  relu_1 = None
        view: "f32[64, 32][32, 1]cpu" = torch.ops.aten.reshape.default(mean, [64, 32]);  mean = None
        permute: "f32[32, 10][1, 32]cpu" = torch.ops.aten.permute.default(arg13_1, [1, 0]);  arg13_1 = None
        addmm: "f32[64, 10][10, 1]cpu" = torch.ops.aten.addmm.default(arg14_1, view, permute);  arg14_1 = view = permute = None
        return (addmm,)
