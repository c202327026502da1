// The collectives area (engine/api/api_collectives.cpp: collective, comm_roofline) gives the same envelopes in
// wasm as the native CLI (`tally call METHOD JSON`), byte for byte, errors included: every argument set the
// chapter, its worked problems and the widget's defaults use, and bad input.
import test from 'node:test';
import assert from 'node:assert/strict';
import { assertSameEnvelopes, loadEngine } from './engine.mjs';

const collective = (args) => ['collective', { collective: 'all_reduce', hardware: 'h100-sxm', ...args }];
const cases = [
  // Chapter 8a's prose, worked problems and the widget's default.
  collective({ message_bytes: 1e9, ranks_per_node: 8 }),
  collective({ message_bytes: 1e9, ranks_per_node: 8, nodes: 2 }),
  collective({ message_bytes: 1e9, ranks_per_node: 1, nodes: 16 }),
  collective({ message_bytes: 1024, ranks_per_node: 8 }),
  collective({ message_bytes: 1024, ranks_per_node: 8, nodes: 64 }),
  collective({ message_bytes: 1024, ranks_per_node: 8, nodes: 64, algorithm: 'tree' }),
  // Every collective, and every preset's links.
  ...['reduce_scatter', 'all_gather', 'broadcast', 'all_to_all'].flatMap((kind) => [
    collective({ collective: kind, message_bytes: 3e8, ranks_per_node: 4 }),
    collective({ collective: kind, message_bytes: 3e8, ranks_per_node: 8, nodes: 3 }),
  ]),
  ...['a100-80gb', 'h100-pcie', 'b200', 'gb200-nvl72', 'mi300x', 'rtx-4090'].map((hardware) =>
    collective({ message_bytes: 123456789, ranks_per_node: 4, nodes: 5, hardware }),
  ),
  collective({ message_bytes: 7, ranks_per_node: 72, nodes: 2, hardware: 'gb300-nvl72', efficiency: 0.65 }),
  // Refusals.
  collective({ message_bytes: 1e9, ranks_per_node: 0 }),
  collective({ message_bytes: 1e9, ranks_per_node: 9 }),
  collective({ message_bytes: 0, ranks_per_node: 8 }),
  collective({ message_bytes: 1e9, ranks_per_node: 8, nodes: 0 }),
  collective({ message_bytes: 1e9, ranks_per_node: 8, collective: 'all_gather', algorithm: 'tree' }),
  collective({ message_bytes: 1e9, ranks_per_node: 8, efficiency: 2 }),
  // The communication roofline of the chapter and its problems; a MoE model; refusals.
  ['comm_roofline', { model: 'llama-2-7b', hardware: 'h100-sxm', seq: 4096, degree: 8 }],
  ['comm_roofline', { model: 'llama-2-7b', hardware: 'h100-sxm', seq: 4096, degree: 16 }],
  ['comm_roofline', { model: 'mixtral-8x7b', hardware: 'h100-sxm', seq: 4096, degree: 8 }],
  ['comm_roofline', { model: 'mixtral-8x7b', hardware: 'h100-sxm', seq: 8192, degree: 8, micro_batch: 3 }],
  ['comm_roofline', { model: 'deepseek-v3', hardware: 'h200', degree: 64 }],
  ['comm_roofline', { model: 'llama-2-7b', degree: 1 }],
  ['comm_roofline', { model: 'llama-2-7b', seq: 0 }],
];

test('wasm and native agree on collective and comm_roofline, errors included', async () => {
  assert.equal(await assertSameEnvelopes(cases), 8, 'the refusals are refused');
});

test('collective refuses 0 ranks per node naming the field and its range, in wasm as natively', async () => {
  const engine = await loadEngine();
  assert.throws(
    () => engine.call('collective', { message_bytes: 1e9, ranks_per_node: 0 }),
    (error) => error.field === 'ranks_per_node' && /from 1 to 8/.test(error.message),
  );
});
