// The line chart every engine curve is drawn with, and the small formatters the curves share.
import { CHAR, W, esc, line, r1, svg, text } from './svg.js';

/**
 * A line chart of engine series. series: [{name, points: [[x, y]]}]; hlines: [{y, label}]; marker: {x, y,
 * label} (the state of the widget beside the chart). Series are named in a legend above the plot (wrapped
 * to the width), limits inside the plot above their line, so no label needs a right margin.
 */
export function chart({
  label,
  xLabel,
  yLabel,
  xLog = false,
  yLog = false,
  series,
  hlines = [],
  marker = null,
  height = 250,
  xFormat = String,
  yFormat = String,
}) {
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1])).concat(hlines.map((h) => h.y));
  if (marker) {
    xs.push(marker.x);
    ys.push(marker.y);
  }
  for (const v of [...xs, ...ys])
    if (!Number.isFinite(v) || ((xLog || yLog) && v <= 0))
      throw new Error(`chart "${label}": value ${v} cannot be plotted`);
  // Legend rows: swatch + name, wrapped to the width.
  let legend = '',
    lx = 4,
    ly = 14;
  series.forEach((s, i) => {
    const w = 22 + s.name.length * CHAR + 14;
    if (lx > 4 && lx + w > W) {
      lx = 4;
      ly += 20;
    }
    legend +=
      line(lx, ly - 4, lx + 16, ly - 4, `series s${i}`) + text(lx + 22, ly, s.name, { cls: `series-label s${i}` });
    lx += w;
  });
  const tx = xLog ? Math.log10 : (v) => v,
    ty = yLog ? Math.log10 : (v) => v;
  const ticks = (lo, hi, log) => {
    if (log) {
      const out = [];
      for (let e = Math.ceil(lo - 1e-9); e <= hi + 1e-9; e++) out.push(10 ** e);
      return out;
    }
    const step = 10 ** Math.floor(Math.log10((hi - lo) / 3));
    const k = (hi - lo) / step > 8 ? step * 2 : step;
    const out = [];
    for (let v = Math.ceil(lo / k) * k; v <= hi + 1e-9; v += k) out.push(v);
    return out;
  };
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)].map(tx);
  let [y0, y1] = [Math.min(...ys), Math.max(...ys)].map(ty);
  if (!yLog) y0 = Math.min(0, y0);
  const pad = (y1 - y0) * 0.06;
  y1 += pad;
  if (yLog) y0 -= pad;
  const yTicks = ticks(y0, y1, yLog);
  // Margins from the widest y label and half the last x label (centred on the right edge).
  const left = 30 + Math.max(...yTicks.map((v) => String(yFormat(v)).length)) * CHAR,
    top = ly + 14,
    bottom = 46;
  const right = Math.max(14, (String(xFormat(Math.max(...xs))).length * CHAR) / 2 + 4);
  const h = height + ly;
  const px = (v) => left + ((tx(v) - x0) / (x1 - x0)) * (W - left - right);
  const py = (v) => top + (1 - (ty(v) - y0) / (y1 - y0)) * (h - top - bottom);
  let body = legend + line(left, top, left, h - bottom, 'axis') + line(left, h - bottom, W - right, h - bottom, 'axis');
  for (const v of yTicks)
    body += line(left, py(v), W - right, py(v), 'grid') + text(left - 4, py(v) + 4, yFormat(v), { anchor: 'end' });
  let xt = xLog
    ? xs.filter((v, i, a) => a.indexOf(v) === i && Number.isInteger(Math.log2(v)) && Math.log2(v) % 2 === 0)
    : ticks(x0, x1, false);
  // Thin the ticks until their labels are a label's width apart.
  const room = (list) =>
    list.every(
      (v, i) =>
        !i ||
        px(v) - px(list[i - 1]) > ((String(xFormat(v)).length + String(xFormat(list[i - 1])).length) * CHAR) / 2 + 6,
    );
  while (xt.length > 2 && !room(xt)) xt = xt.filter((_, i) => i % 2 === 0);
  for (const v of xt) body += text(px(v), h - bottom + 21, xFormat(v), { anchor: 'middle' });
  body += text((left + W - right) / 2, h - 6, xLabel, { anchor: 'middle', cls: 'muted' });
  body += `<text transform="translate(14 ${r1((top + h - bottom) / 2)}) rotate(-90)" text-anchor="middle" class="muted">${esc(yLabel)}</text>`;
  for (const hl of hlines)
    body +=
      line(left, py(hl.y), W - right, py(hl.y), 'limit') + text(left + 6, py(hl.y) - 5, hl.label, { cls: 'muted' });
  series.forEach((s, i) => {
    const d = s.points.map((p, j) => `${j ? 'L' : 'M'}${r1(px(p[0]))},${r1(py(p[1]))}`).join('');
    body += `<path d="${d}" class="series s${i}" fill="none"/>`;
    for (const p of s.points) body += `<circle cx="${r1(px(p[0]))}" cy="${r1(py(p[1]))}" r="2.6" class="dot s${i}"/>`;
  });
  if (marker)
    body += `<circle cx="${r1(px(marker.x))}" cy="${r1(py(marker.y))}" r="6" class="marker"><title>${esc(marker.label)}</title></circle>`;
  return svg(h, body, label);
}

export const gb = (v) => `${Number((v / 1e9).toPrecision(3))}`;
export const kTokens = (v) => (v >= 1024 ? `${v / 1024}k` : String(v));

export const without = (object, keys) => Object.fromEntries(Object.entries(object).filter(([k]) => !keys.includes(k)));
export const modelName = (base) => base.model ?? 'the pasted model';
