# A rewrite for the `patterns` lesson (format: core/fx_passes/patterns.md).
# relu is idempotent: relu(relu(x)) computes the same values as relu(x).
pattern double_relu
  doc: relu(relu(x)) -> relu(x)
  match:
    r1 = aten.relu.default(x)
    r2 = aten.relu.default(r1)
  replace:
    r = aten.relu.default(x)
    return r
end
