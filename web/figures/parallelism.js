// Figure "parallelism" (web/figures/index.js): a diagram drawn from the data below and the engine's numbers.
import { rect, svg, text } from './svg.js';

// Which per-GPU state each method divides among its GPUs: "split", "whole" (every GPU keeps it all) or
// "partial" (split in part: TP splits activations inside blocks; PP's first stage holds p micro-batches).
// Activations are one micro-batch's: data parallelism and ZeRO hand each GPU its own, kept whole.
export const SPLITS = [
  ['DDP', ['whole', 'whole', 'whole', 'whole']],
  ['ZeRO-1', ['whole', 'whole', 'split', 'whole']],
  ['ZeRO-2', ['whole', 'split', 'split', 'whole']],
  ['ZeRO-3', ['split', 'split', 'split', 'whole']],
  ['TP', ['split', 'split', 'split', 'partial']],
  ['PP', ['split', 'split', 'split', 'partial']],
];
const COLUMNS = ['weights', 'grads', 'optimizer', 'activations'];

export default function parallelism() {
  const gpus = 4;
  const x0 = 64,
    colW = 84,
    rowH = 34,
    y0 = 30;
  let body = COLUMNS.map((c, j) => text(x0 + j * colW + (colW - 12) / 2, 20, c, { anchor: 'middle' })).join('');
  SPLITS.forEach(([name, states], i) => {
    const y = y0 + i * rowH;
    body += text(4, y + 20, name, { cls: 'strong' });
    states.forEach((state, j) => {
      const x = x0 + j * colW,
        w = colW - 12;
      if (state === 'whole') {
        for (let g = 0; g < gpus; g++) body += rect(x, y + 4 + g * 6, w, 5, 'bar-whole');
      } else {
        const piece = w / gpus;
        for (let g = 0; g < gpus; g++)
          body += rect(
            x + g * piece,
            y + 4 + g * 6,
            piece * (state === 'partial' ? 2 : 1),
            5,
            `bar-split tone-${g % 3}`,
          );
      }
    });
  });
  const y = y0 + SPLITS.length * rowH + 12;
  body += rect(4, y - 8, 24, 5, 'bar-whole') + text(34, y, 'every GPU keeps all of it');
  body +=
    rect(4, y + 12, 6, 5, 'bar-split tone-0') +
    rect(10, y + 18, 6, 5, 'bar-split tone-1') +
    text(34, y + 22, 'each of 4 GPUs keeps a quarter');
  body += text(4, y + 46, 'optimizer: Adam states + fp32 master weights', { cls: 'muted' });
  body += text(4, y + 64, 'activations: one micro-batch on each GPU', { cls: 'muted' });
  return svg(
    y + 74,
    body,
    'Which training state each method splits across 4 GPUs: ZeRO stages 1, 2 and 3 split optimizer state, then gradients, then weights, and no stage splits a micro-batch’s activations; tensor and pipeline parallelism split all three and part of the activations.',
  );
}
