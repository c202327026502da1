// Figure "strides" (web/figures/index.js): a diagram drawn from the data below and the engine's numbers.
import { rect, svg, text } from './svg.js';

/** A (2, 3) tensor, its transpose as a view, and the one storage both read (offsets from the strides). */
export default function strides() {
  const shape = [2, 3];
  const cell = 30;
  const grid = (x0, y0, rows, cols, stride, name, shapeText, strideText) => {
    let out =
      text(x0, y0 - 26, `${name}: shape ${shapeText}`, { cls: 'heading' }) +
      text(x0, y0 - 9, `strides ${strideText}`, { cls: 'muted' });
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++) {
        const offset = i * stride[0] + j * stride[1];
        out += rect(x0 + j * cell, y0 + i * cell, cell, cell, `box tone-${offset % 3}`);
        out += text(x0 + j * cell + cell / 2, y0 + i * cell + 20, offset, { anchor: 'middle' });
      }
    return out;
  };
  let body = grid(20, 52, shape[0], shape[1], [shape[1], 1], 'x', '(2, 3)', '(3, 1)');
  body += grid(220, 52, shape[1], shape[0], [1, shape[1]], 'x.T', '(3, 2)', '(1, 3)');
  const y = 186;
  body += text(20, y - 10, 'storage: 6 elements, shared by both', { cls: 'heading' });
  for (let k = 0; k < 6; k++) {
    body += rect(20 + k * cell * 1.6, y, cell * 1.6, cell, `box tone-${k % 3}`);
    body += text(20 + k * cell * 1.6 + cell * 0.8, y + 20, k, { anchor: 'middle' });
  }
  body += text(20, y + 54, '[i, j] lives at offset i·stride₀ + j·stride₁', { cls: 'muted' });
  return svg(
    252,
    body,
    'A 2 by 3 tensor and its transpose are two views of the same six stored elements; the numbers are storage offsets computed from the strides.',
  );
}
