// Must be rejected by scripts/check-cuda-source.sh (the check_cuda_source_rejects test):
// proves the check compiles the source rather than passing everything.
extern "C" __global__ void broken(float* out) { out[threadIdx.x] = not_declared_anywhere(1.0f); }
