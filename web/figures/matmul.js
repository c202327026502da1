// Figure "matmul" (web/figures/index.js): a diagram drawn from the data below and the engine's numbers.
import { rect, svg, text } from './svg.js';

/** The shapes of C = A·B and the dot product behind each output. */
export default function matmul(engine, { m = 2048, k = 4096, n = 4096 } = {}) {
  const flops = engine.call('matmul_roofline', { m, n, k, hardware: 'h100-sxm' }).flops;
  const body = [
    rect(20, 60, 90, 120, 'box tone-0'),
    text(65, 50, 'A (m × k)', { anchor: 'middle' }),
    rect(20, 100, 90, 14, 'hl'),
    text(65, 198, 'row i: k numbers', { anchor: 'middle', cls: 'muted' }),
    rect(170, 24, 110, 90, 'box tone-1'),
    text(225, 16, 'B (k × n)', { anchor: 'middle' }),
    rect(230, 24, 14, 90, 'hl'),
    text(290, 74, 'column j', { cls: 'muted' }),
    rect(170, 130, 110, 120, 'box tone-2'),
    text(225, 270, 'C = A·B (m × n)', { anchor: 'middle' }),
    rect(230, 170, 14, 14, 'hl-strong'),
    text(290, 182, 'C[i, j]', { cls: 'muted' }),
    text(20, 300, 'C[i, j] = Σₜ A[i, t]·B[t, j]'),
    text(20, 320, 'k multiplies + k adds = 2k FLOPs', { cls: 'muted' }),
    text(20, 342, 'm·n outputs × 2k = 2mnk FLOPs', { cls: 'strong' }),
    text(
      20,
      364,
      `m = ${m}, k = ${k}, n = ${n}: ${(flops / 1e9).toLocaleString('en-US', { maximumFractionDigits: 1 })} GFLOP`,
      { cls: 'muted' },
    ),
  ].join('');
  return svg(
    376,
    body,
    'Matrix A of shape m by k times B of shape k by n gives C of shape m by n; each output is a dot product of length k, so the product costs 2mnk FLOPs.',
  );
}
