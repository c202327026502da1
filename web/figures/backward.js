// Figure "backward" (web/figures/index.js): a diagram drawn from the data below and the engine's numbers.
import { arrow, line, rect, svg, text } from './svg.js';

/** Forward and backward graph of one linear layer Y = X·W, with each matmul's cost. */
export default function backward() {
  const node = (x, y, w, label, cls = 'box tone-0') =>
    rect(x, y, w, 30, cls, ' rx="5"') + text(x + w / 2, y + 20, label, { anchor: 'middle' });
  const op = (x, y, w, label, cost) =>
    rect(x, y, w, 42, 'box tone-2', ' rx="5"') +
    text(x + w / 2, y + 18, label, { anchor: 'middle' }) +
    text(x + w / 2, y + 35, cost, { anchor: 'middle', cls: 'muted' });
  const body = [
    text(10, 18, 'forward', { cls: 'heading' }),
    node(10, 30, 84, 'X (B×D)'),
    node(10, 72, 84, 'W (D×K)', 'box tone-1'),
    op(140, 44, 110, 'Y = X·W', '2BDK FLOPs'),
    arrow(94, 45, 138, 60),
    arrow(94, 87, 138, 74),
    node(296, 50, 96, 'Y → loss'),
    arrow(250, 65, 294, 65),
    line(10, 126, 390, 126, 'rule'),
    text(10, 148, 'backward: chain rule, right to left', { cls: 'heading' }),
    node(310, 196, 82, '∂L/∂Y', 'box tone-0'),
    op(122, 162, 152, '∂L/∂W = Xᵀ·∂L/∂Y', '2BDK FLOPs'),
    op(122, 220, 152, '∂L/∂X = ∂L/∂Y·Wᵀ', '2BDK FLOPs'),
    arrow(308, 205, 276, 185),
    arrow(308, 218, 276, 240),
    node(10, 168, 90, 'update W', 'box tone-1'),
    node(10, 226, 90, 'layer below'),
    arrow(120, 183, 102, 183),
    arrow(120, 241, 102, 241),
    text(10, 290, 'forward 2BDK + backward 4BDK = 6BDK', { cls: 'strong' }),
    text(10, 310, '= 6 × tokens (B) × parameters (D·K)', { cls: 'strong' }),
  ].join('');
  return svg(
    320,
    body,
    'One linear layer: the forward pass is one matmul; the backward pass needs two matmuls of the same size, one for the weight gradient and one for the input gradient.',
  );
}
