// torchao's float8 "rowwise" training recipe in the step time (step.cpp calls this for precision fp8-rowwise).
// The recipe (torchao/float8/config.py at 6243040, Float8LinearRecipeName.ROWWISE) scales input, weight and output
// gradient per row (axiswise) in e4m3 and runs torch._scaled_mm's CUTLASS rowwise kernel; its backward re-quantizes
// each of the three tensors along the other axis from the BF16 copy (float8_linear.py,
// matmul_with_hp_or_float8_args.backward), so nothing is cached across the forward and the backward.
#pragma once

namespace tally {

// Speed-up over bfloat16 of one linear layer's forward + backward (casts included) in torchao's rowwise float8 on
// H100, at forward shape input M×K, weight K×N: torchao's published table, interpolated in log2 of each dimension and
// held at its edges (1024 to 32768 each). Below 1 where the rowwise kernel and its casts cost more than BF16 saves.
double torchao_rowwise_speedup(double m, double k, double n);

// Bytes moved per element to quantize one linear operand both ways, unfused, as torchao's float8 roofline model
// prices recipe "rowwise" (testing/float8/roofline_utils.py at 6243040, get_tensor_memory_traffic_ovhd_s): an
// activation or output gradient is cast row-wise while a transposed BF16 copy is written, then that copy is cast
// (3 high-precision reads/writes, 2 FP8 writes); a weight is cast, transposed in BF16 and cast again (4 and 2).
double rowwise_cast_bytes_per_element(double element_bytes, double fp8_bytes, bool weight);

}  // namespace tally
