/* gen_graph.c — synthetic FX graphs for the pipeline-scaling figure: a chain of blocks
 *     h = x + gelu(layer_norm(x) * w + b)
 * written as Inductor's post-grad graphs write them (var_mean, rsqrt, erf-gelu), 15 nodes per
 * block, over f32[rows, cols]. `minibench gen N` prints one. */
#include "bench.h"

char *gen_graph(int nodes, int rows, int cols) {
    int blocks = nodes / 15 > 0 ? nodes / 15 : 1;
    char big[96], row[96], vec[64];
    snprintf(big, sizeof big, "\"f32[%d, %d][%d, 1]cpu\"", rows, cols, cols);
    snprintf(row, sizeof row, "\"f32[%d, 1][1, 1]cpu\"", rows);
    snprintf(vec, sizeof vec, "\"f32[%d][1]cpu\"", cols);
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "class GraphModule(torch.nn.Module):\n"
                  "    def forward(self, arg0_1: %s, arg1_1: %s, arg2_1: %s):\n", vec, vec, big);
    sb_printf(&b, "        # File: bench/gen_graph.c, code: %d blocks of h = x + gelu(ln(x) * w + b)\n", blocks);
    char x[32] = "arg2_1";
    for (int k = 0; k < blocks; k++) {
        sb_printf(&b, "        var_mean_%d = torch.ops.aten.var_mean.correction(%s, [1], correction = 0, keepdim = True)\n", k, x);
        sb_printf(&b, "        var_%d: %s = var_mean_%d[0]\n", k, row, k);
        sb_printf(&b, "        mean_%d: %s = var_mean_%d[1];  var_mean_%d = None\n", k, row, k, k);
        sb_printf(&b, "        sub_%d: %s = torch.ops.aten.sub.Tensor(%s, mean_%d);  mean_%d = None\n", k, big, x, k, k);
        sb_printf(&b, "        add_%d: %s = torch.ops.aten.add.Tensor(var_%d, 1e-05);  var_%d = None\n", k, row, k, k);
        sb_printf(&b, "        rsqrt_%d: %s = torch.ops.aten.rsqrt.default(add_%d);  add_%d = None\n", k, row, k, k);
        sb_printf(&b, "        norm_%d: %s = torch.ops.aten.mul.Tensor(sub_%d, rsqrt_%d);  sub_%d = rsqrt_%d = None\n", k, big, k, k, k, k);
        sb_printf(&b, "        scale_%d: %s = torch.ops.aten.mul.Tensor(norm_%d, arg0_1);  norm_%d = None\n", k, big, k, k);
        sb_printf(&b, "        shift_%d: %s = torch.ops.aten.add.Tensor(scale_%d, arg1_1);  scale_%d = None\n", k, big, k, k);
        sb_printf(&b, "        half_%d: %s = torch.ops.aten.mul.Tensor(shift_%d, 0.5)\n", k, big, k);
        sb_printf(&b, "        inv_sqrt2_%d: %s = torch.ops.aten.mul.Tensor(shift_%d, 0.7071067811865476);  shift_%d = None\n", k, big, k, k);
        sb_printf(&b, "        erf_%d: %s = torch.ops.aten.erf.default(inv_sqrt2_%d);  inv_sqrt2_%d = None\n", k, big, k, k);
        sb_printf(&b, "        erf1_%d: %s = torch.ops.aten.add.Tensor(erf_%d, 1);  erf_%d = None\n", k, big, k, k);
        sb_printf(&b, "        gelu_%d: %s = torch.ops.aten.mul.Tensor(half_%d, erf1_%d);  half_%d = erf1_%d = None\n", k, big, k, k, k, k);
        sb_printf(&b, "        res_%d: %s = torch.ops.aten.add.Tensor(%s, gelu_%d);  gelu_%d = None\n", k, big, x, k, k);
        snprintf(x, sizeof x, "res_%d", k);
    }
    sb_printf(&b, "        return (%s,)\n", x);
    return sb_take(&b);
}
