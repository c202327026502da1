// Figure "bit-layouts" (web/figures/index.js): a diagram drawn from the data below and the engine's numbers.
import { CHAR, W, rect, svg, text } from './svg.js';

/** Bit layouts of the main formats, from the engine's format table (sign, exponent, mantissa bits). */
export default function bitLayouts(engine) {
  const { formats } = engine.call('float_formats', {});
  const wanted = ['fp32', 'bf16', 'fp16', 'e4m3', 'e5m2', 'e2m1'];
  const bitW = (W - 52 - 66) / 32,
    rowH = 30; // room on the right for the bias label
  let body = '';
  wanted.forEach((name, i) => {
    const f = formats.find((x) => x.name === name);
    if (!f) throw new Error(`float_formats has no ${name}`);
    const y = 8 + i * rowH;
    body += text(4, y + 15, name, { cls: 'strong' });
    const parts = [
      ['sign', f.sign_bits, 'tone-1'],
      ['exp', f.exponent_bits, 'tone-0'],
      ['man', f.mantissa_bits, 'tone-2'],
    ];
    let x = 52;
    for (const [label, bits, tone] of parts) {
      if (!bits) continue;
      for (let b = 0; b < bits; b++) body += rect(x + b * bitW, y, bitW, 20, `box ${tone}`);
      // A part is named only where its name fits inside it; the colours and the caption cover the rest.
      const name = `${label} ${bits}`;
      if (name.length * CHAR + 4 < bits * bitW) body += text(x + (bits * bitW) / 2, y + 15, name, { anchor: 'middle' });
      x += bits * bitW;
    }
    body += text(x + 4, y + 15, `bias ${f.bias}`, { cls: 'muted' });
  });
  return svg(
    8 + wanted.length * rowH + 4,
    body,
    'Bit layouts: fp32 1 sign, 8 exponent, 23 mantissa bits; bf16 1, 8, 7; fp16 1, 5, 10; fp8 E4M3 1, 4, 3; E5M2 1, 5, 2; fp4 E2M1 1, 2, 1.',
  );
}
