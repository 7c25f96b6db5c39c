# find_cublas.sh — sourced by run_cases.sh and run_device.sh: point MINDUCTOR_CUBLAS at the cuBLAS
# PyTorch itself loads (its wheel's site-packages/nvidia/.../lib/libcublas.so.N), as Inductor's
# extern_kernels.mm runs through it; left alone when set (MINDUCTOR_CUBLAS=0: the templated GEMM).
# Without torch the module's own search applies (libcublas.so.13/.12 through the loader, then
# /usr/local/cuda/lib64). The generated module dlopens it at its first GEMM (mi_cuda_libs says which).
if [ -z "${MINDUCTOR_CUBLAS+x}" ]; then
    _nv=$(python3 -c 'import nvidia, os; print(" ".join(nvidia.__path__))' 2>/dev/null)
    for _d in $_nv; do
        _l=$(ls "$_d"/cublas/lib/libcublas.so.* "$_d"/cu*/lib/libcublas.so.* 2>/dev/null | grep -v Lt | head -1)
        [ -n "$_l" ] && { export MINDUCTOR_CUBLAS=$_l; break; }
    done
    unset _nv _d _l
fi
echo "MINDUCTOR_CUBLAS=${MINDUCTOR_CUBLAS-unset, the module searches the loader path}"
