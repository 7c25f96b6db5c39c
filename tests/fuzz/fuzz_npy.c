/* fuzz_npy.c — libFuzzer target: the .npy reader never trusts a header. */
#include "base/tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    MiCtx *ctx = mi_ctx_new();
    Tensor *t = npy_parse(ctx, data, size, "fuzz.npy");
    if (t) tensor_unref(t);
    mi_ctx_free(ctx);
    return 0;
}
