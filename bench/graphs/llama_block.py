class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[8, 256, 128][32768, 128, 1]cpu", arg1_1: "f32[128][1]cpu", arg2_1: "f32[128, 128][128, 1]cpu", arg3_1: "f32[128, 128][128, 1]cpu", arg4_1: "f32[128, 128][128, 1]cpu", arg5_1: "f32[128, 128][128, 1]cpu", arg6_1: "f32[128][1]cpu", arg7_1: "f32[344, 128][128, 1]cpu", arg8_1: "f32[344, 128][128, 1]cpu", arg9_1: "f32[128, 344][344, 1]cpu"):
        # File: bench/graphs/llama_block.py (tests/fixtures/torch-cases/cpu/llama_block scaled to batch 8 x 256 tokens), models.py:141, code: return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight
        pow_2: "f32[8, 256, 128][32768, 128, 1]cpu" = torch.ops.aten.pow.Tensor_Scalar(arg0_1, 2)
        mean: "f32[8, 256, 1][256, 1, 1]cpu" = torch.ops.aten.mean.dim(pow_2, [-1], True);  pow_2 = None
        add_2: "f32[8, 256, 1][256, 1, 1]cpu" = torch.ops.aten.add.Tensor(mean, 1e-06);  mean = None
        rsqrt: "f32[8, 256, 1][256, 1, 1]cpu" = torch.ops.aten.rsqrt.default(add_2);  add_2 = None
        mul_4: "f32[8, 256, 128][32768, 128, 1]cpu" = torch.ops.aten.mul.Tensor(arg0_1, rsqrt);  rsqrt = None
        mul_5: "f32[8, 256, 128][32768, 128, 1]cpu" = torch.ops.aten.mul.Tensor(mul_4, arg1_1);  mul_4 = arg1_1 = None

        # File: /home/user/torchgen/models.py:172 in forward, code: q = rope(self.wq(hx).view(B, T, self.h, hd).transpose(1, 2), cos, sin)
        view: "f32[2048, 128][128, 1]cpu" = torch.ops.aten.reshape.default(mul_5, [2048, 128])
        permute: "f32[128, 128][1, 128]cpu" = torch.ops.aten.permute.default(arg2_1, [1, 0]);  arg2_1 = None
        mm: "f32[2048, 128][128, 1]cpu" = torch.ops.aten.mm.default(view, permute);  view = permute = None
        view_1: "f32[8, 256, 128][32768, 128, 1]cpu" = torch.ops.aten.reshape.default(mm, [8, 256, 128]);  mm = None
        view_2: "f32[8, 256, 4, 32][32768, 128, 32, 1]cpu" = torch.ops.aten.reshape.default(view_1, [8, 256, 4, 32]);  view_1 = None
        permute_1: "f32[8, 4, 256, 32][32768, 32, 128, 1]cpu" = torch.ops.aten.permute.default(view_2, [0, 2, 1, 3]);  view_2 = None

        # File: /home/user/torchgen/models.py:145 in rope, code: x1, x2 = x.chunk(2, dim=-1)
        split = torch.ops.aten.split.Tensor(permute_1, 16, -1);  permute_1 = None
        getitem: "f32[8, 4, 256, 16][32768, 32, 128, 1]cpu" = split[0]
        getitem_1: "f32[8, 4, 256, 16][32768, 32, 128, 1]cpu" = split[1];  split = None

        # File: /home/user/torchgen/models.py:173 in forward, code: k = rope(self.wk(hx).view(B, T, self.h, hd).transpose(1, 2), cos, sin)
        view_3: "f32[2048, 128][128, 1]cpu" = torch.ops.aten.reshape.default(mul_5, [2048, 128])
        permute_2: "f32[128, 128][1, 128]cpu" = torch.ops.aten.permute.default(arg3_1, [1, 0]);  arg3_1 = None
        mm_1: "f32[2048, 128][128, 1]cpu" = torch.ops.aten.mm.default(view_3, permute_2);  view_3 = permute_2 = None
        view_4: "f32[8, 256, 128][32768, 128, 1]cpu" = torch.ops.aten.reshape.default(mm_1, [8, 256, 128]);  mm_1 = None
        view_5: "f32[8, 256, 4, 32][32768, 128, 32, 1]cpu" = torch.ops.aten.reshape.default(view_4, [8, 256, 4, 32]);  view_4 = None
        permute_3: "f32[8, 4, 256, 32][32768, 32, 128, 1]cpu" = torch.ops.aten.permute.default(view_5, [0, 2, 1, 3]);  view_5 = None

        # File: /home/user/torchgen/models.py:145 in rope, code: x1, x2 = x.chunk(2, dim=-1)
        split_1 = torch.ops.aten.split.Tensor(permute_3, 16, -1);  permute_3 = None
        getitem_2: "f32[8, 4, 256, 16][32768, 32, 128, 1]cpu" = split_1[0]
        getitem_3: "f32[8, 4, 256, 16][32768, 32, 128, 1]cpu" = split_1[1];  split_1 = None

        # File: /home/user/torchgen/models.py:167 in forward, code: pos = torch.arange(T, device=x.device, dtype=torch.float32)
        iota: "i64[256][1]cpu" = torch.ops.prims.iota.default(256, start = 0, step = 1, dtype = torch.int64, device = device(type='cpu'), requires_grad = False)
        mul: "i64[256][1]cpu" = torch.ops.aten.mul.Tensor(iota, 1);  iota = None
        add: "i64[256][1]cpu" = torch.ops.aten.add.Tensor(mul, 0);  mul = None
        convert_element_type: "f32[256][1]cpu" = torch.ops.prims.convert_element_type.default(add, torch.float32);  add = None

        # File: /home/user/torchgen/models.py:169 in forward, code: ang = pos[:, None] * inv[None, :]
        unsqueeze: "f32[256, 1][1, 1]cpu" = torch.ops.aten.unsqueeze.default(convert_element_type, 1);  convert_element_type = None

        # File: /home/user/torchgen/models.py:168 in forward, code: inv = 1.0 / (10000 ** (torch.arange(0, hd // 2, device=x.device, dtype=torch.float32) / (hd // 2)))
        iota_1: "i64[16][1]cpu" = torch.ops.prims.iota.default(16, start = 0, step = 1, dtype = torch.int64, device = device(type='cpu'), requires_grad = False)
        mul_1: "i64[16][1]cpu" = torch.ops.aten.mul.Tensor(iota_1, 1);  iota_1 = None
        add_1: "i64[16][1]cpu" = torch.ops.aten.add.Tensor(mul_1, 0);  mul_1 = None
        convert_element_type_1: "f32[16][1]cpu" = torch.ops.prims.convert_element_type.default(add_1, torch.float32);  add_1 = None
        div: "f32[16][1]cpu" = torch.ops.aten.div.Tensor(convert_element_type_1, 16);  convert_element_type_1 = None
        pow_1: "f32[16][1]cpu" = torch.ops.aten.pow.Scalar(10000, div);  div = None
        reciprocal: "f32[16][1]cpu" = torch.ops.aten.reciprocal.default(pow_1);  pow_1 = None
        mul_2: "f32[16][1]cpu" = torch.ops.aten.mul.Tensor(reciprocal, 1.0);  reciprocal = None

        # File: /home/user/torchgen/models.py:169 in forward, code: ang = pos[:, None] * inv[None, :]
        unsqueeze_1: "f32[1, 16][16, 1]cpu" = torch.ops.aten.unsqueeze.default(mul_2, 0);  mul_2 = None
        mul_3: "f32[256, 16][16, 1]cpu" = torch.ops.aten.mul.Tensor(unsqueeze, unsqueeze_1);  unsqueeze = unsqueeze_1 = None

        # File: /home/user/torchgen/models.py:170 in forward, code: cos, sin = ang.cos(), ang.sin()
        cos: "f32[256, 16][16, 1]cpu" = torch.ops.aten.cos.default(mul_3)

        # File: /home/user/torchgen/models.py:146 in rope, code: return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
        mul_6: "f32[8, 4, 256, 16][16384, 16, 64, 1]cpu" = torch.ops.aten.mul.Tensor(getitem, cos)

        # File: /home/user/torchgen/models.py:170 in forward, code: cos, sin = ang.cos(), ang.sin()
        sin: "f32[256, 16][16, 1]cpu" = torch.ops.aten.sin.default(mul_3);  mul_3 = None

        # File: /home/user/torchgen/models.py:146 in rope, code: return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
        mul_7: "f32[8, 4, 256, 16][16384, 16, 64, 1]cpu" = torch.ops.aten.mul.Tensor(getitem_1, sin)
        sub: "f32[8, 4, 256, 16][16384, 16, 64, 1]cpu" = torch.ops.aten.sub.Tensor(mul_6, mul_7);  mul_6 = mul_7 = None
        mul_8: "f32[8, 4, 256, 16][16384, 16, 64, 1]cpu" = torch.ops.aten.mul.Tensor(getitem, sin);  getitem = None
        mul_9: "f32[8, 4, 256, 16][16384, 16, 64, 1]cpu" = torch.ops.aten.mul.Tensor(getitem_1, cos);  getitem_1 = None
        add_3: "f32[8, 4, 256, 16][16384, 16, 64, 1]cpu" = torch.ops.aten.add.Tensor(mul_8, mul_9);  mul_8 = mul_9 = None
        cat: "f32[8, 4, 256, 32][32768, 8192, 32, 1]cpu" = torch.ops.aten.cat.default([sub, add_3], -1);  sub = add_3 = None
        mul_10: "f32[8, 4, 256, 16][16384, 16, 64, 1]cpu" = torch.ops.aten.mul.Tensor(getitem_2, cos)
        mul_11: "f32[8, 4, 256, 16][16384, 16, 64, 1]cpu" = torch.ops.aten.mul.Tensor(getitem_3, sin)
        sub_1: "f32[8, 4, 256, 16][16384, 16, 64, 1]cpu" = torch.ops.aten.sub.Tensor(mul_10, mul_11);  mul_10 = mul_11 = None
        mul_12: "f32[8, 4, 256, 16][16384, 16, 64, 1]cpu" = torch.ops.aten.mul.Tensor(getitem_2, sin);  getitem_2 = sin = None
        mul_13: "f32[8, 4, 256, 16][16384, 16, 64, 1]cpu" = torch.ops.aten.mul.Tensor(getitem_3, cos);  getitem_3 = cos = None
        add_4: "f32[8, 4, 256, 16][16384, 16, 64, 1]cpu" = torch.ops.aten.add.Tensor(mul_12, mul_13);  mul_12 = mul_13 = None
        cat_1: "f32[8, 4, 256, 32][32768, 8192, 32, 1]cpu" = torch.ops.aten.cat.default([sub_1, add_4], -1);  sub_1 = add_4 = None

        # File: /home/user/torchgen/models.py:174 in forward, code: v = self.wv(hx).view(B, T, self.h, hd).transpose(1, 2)
        view_6: "f32[2048, 128][128, 1]cpu" = torch.ops.aten.reshape.default(mul_5, [2048, 128]);  mul_5 = None
        permute_4: "f32[128, 128][1, 128]cpu" = torch.ops.aten.permute.default(arg4_1, [1, 0]);  arg4_1 = None
        mm_2: "f32[2048, 128][128, 1]cpu" = torch.ops.aten.mm.default(view_6, permute_4);  view_6 = permute_4 = None
        view_7: "f32[8, 256, 128][32768, 128, 1]cpu" = torch.ops.aten.reshape.default(mm_2, [8, 256, 128]);  mm_2 = None
        view_8: "f32[8, 256, 4, 32][32768, 128, 32, 1]cpu" = torch.ops.aten.reshape.default(view_7, [8, 256, 4, 32]);  view_7 = None
        permute_5: "f32[8, 4, 256, 32][32768, 32, 128, 1]cpu" = torch.ops.aten.permute.default(view_8, [0, 2, 1, 3]);  view_8 = None

        # File: /home/user/torchgen/models.py:175 in forward, code: y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        _scaled_dot_product_flash_attention_for_cpu = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(cat, cat_1, permute_5, 0.0, True);  cat = cat_1 = permute_5 = None
        getitem_4: "f32[8, 4, 256, 32][32768, 8192, 32, 1]cpu" = _scaled_dot_product_flash_attention_for_cpu[0];  _scaled_dot_product_flash_attention_for_cpu = None

        # File: /home/user/torchgen/models.py:176 in forward, code: x = x + self.wo(y.transpose(1, 2).reshape(B, T, C))
        permute_6: "f32[8, 256, 4, 32][32768, 32, 8192, 1]cpu" = torch.ops.aten.permute.default(getitem_4, [0, 2, 1, 3]);  getitem_4 = None
        clone: "f32[8, 256, 4, 32][32768, 128, 32, 1]cpu" = torch.ops.aten.clone.default(permute_6, memory_format = torch.contiguous_format);  permute_6 = None
        view_9: "f32[8, 256, 128][32768, 128, 1]cpu" = torch.ops.aten.reshape.default(clone, [8, 256, 128]);  clone = None
        view_10: "f32[2048, 128][128, 1]cpu" = torch.ops.aten.reshape.default(view_9, [2048, 128]);  view_9 = None
        permute_7: "f32[128, 128][1, 128]cpu" = torch.ops.aten.permute.default(arg5_1, [1, 0]);  arg5_1 = None
        mm_3: "f32[2048, 128][128, 1]cpu" = torch.ops.aten.mm.default(view_10, permute_7);  view_10 = permute_7 = None
        view_11: "f32[8, 256, 128][32768, 128, 1]cpu" = torch.ops.aten.reshape.default(mm_3, [8, 256, 128]);  mm_3 = None
        add_5: "f32[8, 256, 128][32768, 128, 1]cpu" = torch.ops.aten.add.Tensor(arg0_1, view_11);  arg0_1 = view_11 = None

        # File: /home/user/torchgen/models.py:141 in forward, code: return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight
        pow_3: "f32[8, 256, 128][32768, 128, 1]cpu" = torch.ops.aten.pow.Tensor_Scalar(add_5, 2)
        mean_1: "f32[8, 256, 1][256, 1, 1]cpu" = torch.ops.aten.mean.dim(pow_3, [-1], True);  pow_3 = None
        add_6: "f32[8, 256, 1][256, 1, 1]cpu" = torch.ops.aten.add.Tensor(mean_1, 1e-06);  mean_1 = None
        rsqrt_1: "f32[8, 256, 1][256, 1, 1]cpu" = torch.ops.aten.rsqrt.default(add_6);  add_6 = None
        mul_14: "f32[8, 256, 128][32768, 128, 1]cpu" = torch.ops.aten.mul.Tensor(add_5, rsqrt_1);  rsqrt_1 = None
        mul_15: "f32[8, 256, 128][32768, 128, 1]cpu" = torch.ops.aten.mul.Tensor(mul_14, arg6_1);  mul_14 = arg6_1 = None

        # File: /home/user/torchgen/models.py:178 in forward, code: return x + self.w2(F.silu(self.w1(hx)) * self.w3(hx))
        view_12: "f32[2048, 128][128, 1]cpu" = torch.ops.aten.reshape.default(mul_15, [2048, 128])
        permute_8: "f32[128, 344][1, 128]cpu" = torch.ops.aten.permute.default(arg7_1, [1, 0]);  arg7_1 = None
        mm_4: "f32[2048, 344][344, 1]cpu" = torch.ops.aten.mm.default(view_12, permute_8);  view_12 = permute_8 = None
        view_13: "f32[8, 256, 344][88064, 344, 1]cpu" = torch.ops.aten.reshape.default(mm_4, [8, 256, 344]);  mm_4 = None
        neg: "f32[8, 256, 344][88064, 344, 1]cpu" = torch.ops.aten.neg.default(view_13)
        exp: "f32[8, 256, 344][88064, 344, 1]cpu" = torch.ops.aten.exp.default(neg);  neg = None
        add_7: "f32[8, 256, 344][88064, 344, 1]cpu" = torch.ops.aten.add.Tensor(exp, 1);  exp = None
        div_1: "f32[8, 256, 344][88064, 344, 1]cpu" = torch.ops.aten.div.Tensor(view_13, add_7);  view_13 = add_7 = None
        view_14: "f32[2048, 128][128, 1]cpu" = torch.ops.aten.reshape.default(mul_15, [2048, 128]);  mul_15 = None
        permute_9: "f32[128, 344][1, 128]cpu" = torch.ops.aten.permute.default(arg8_1, [1, 0]);  arg8_1 = None
        mm_5: "f32[2048, 344][344, 1]cpu" = torch.ops.aten.mm.default(view_14, permute_9);  view_14 = permute_9 = None
        view_15: "f32[8, 256, 344][88064, 344, 1]cpu" = torch.ops.aten.reshape.default(mm_5, [8, 256, 344]);  mm_5 = None
        mul_16: "f32[8, 256, 344][88064, 344, 1]cpu" = torch.ops.aten.mul.Tensor(div_1, view_15);  div_1 = view_15 = None
        view_16: "f32[2048, 344][344, 1]cpu" = torch.ops.aten.reshape.default(mul_16, [2048, 344]);  mul_16 = None
        permute_10: "f32[344, 128][1, 344]cpu" = torch.ops.aten.permute.default(arg9_1, [1, 0]);  arg9_1 = None
        mm_6: "f32[2048, 128][128, 1]cpu" = torch.ops.aten.mm.default(view_16, permute_10);  view_16 = permute_10 = None
        view_17: "f32[8, 256, 128][32768, 128, 1]cpu" = torch.ops.aten.reshape.default(mm_6, [8, 256, 128]);  mm_6 = None
        add_8: "f32[8, 256, 128][32768, 128, 1]cpu" = torch.ops.aten.add.Tensor(add_5, view_17);  add_5 = view_17 = None
        return (add_8,)
