// The SVG primitives every figure draws with (web/figures/index.js lists the figures). Colours are CSS classes and
// currentColor (web/style.css), so one SVG serves light and dark themes. The viewBox is 400 units wide and no
// text is under 13 units: a 375 px phone shows the figure ~350 px wide (scale 0.875), so the smallest text is
// 11.4 px, the page's minimum (tests/browser/layout-audit.mjs). Long labels are split over lines or moved under
// the drawing rather than shrunk.

export const W = 400;
export const F = 13; // the one text size, in viewBox units
export const CHAR = 0.56 * F; // a generous average glyph width of system-ui at that size, for laying labels out

export const esc = (text) =>
  String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
export const r1 = (v) => Math.round(v * 10) / 10;

export function rect(x, y, w, h, cls = 'box', extra = '') {
  return `<rect x="${r1(x)}" y="${r1(y)}" width="${r1(w)}" height="${r1(h)}" class="${cls}"${extra}/>`;
}
export function text(x, y, content, { anchor = 'start', cls = '', size } = {}) {
  return `<text x="${r1(x)}" y="${r1(y)}" text-anchor="${anchor}"${cls ? ` class="${cls}"` : ''}${size ? ` font-size="${size}"` : ''}>${esc(content)}</text>`;
}
export function line(x1, y1, x2, y2, cls = 'stroke', extra = '') {
  return `<line x1="${r1(x1)}" y1="${r1(y1)}" x2="${r1(x2)}" y2="${r1(y2)}" class="${cls}"${extra}/>`;
}
export function arrow(x1, y1, x2, y2, cls = 'stroke') {
  return line(x1, y1, x2, y2, cls, ' marker-end="url(#arrowhead)"');
}
const defs =
  '<defs><marker id="arrowhead" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="currentColor"/></marker></defs>';

export function svg(height, body, label) {
  return `<svg class="fig-svg" viewBox="0 0 ${W} ${height}" role="img" aria-label="${esc(label)}" xmlns="http://www.w3.org/2000/svg" font-family="system-ui, sans-serif" font-size="${F}" fill="currentColor">${defs}${body}</svg>`;
}
