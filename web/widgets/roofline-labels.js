// The roofline chart's label placer: labels beside their points, clear of each other, the points and the roof
// lines, with a leader line where a label had to move. Pure layout over boxes; the chart (roofline.js) draws.

/** Width of `text` in system-ui at `px`, measured once per string (labels are placed before they are drawn). */
const widthCache = new Map();
let measureContext = null;
export function textWidth(text, px) {
  const key = `${px}|${text}`;
  if (!widthCache.has(key)) {
    measureContext ??= document.createElement('canvas').getContext('2d');
    measureContext.font = `${px}px system-ui, sans-serif`;
    widthCache.set(key, measureContext.measureText(text).width + 2);
  }
  return widthCache.get(key);
}

/**
 * Places labels beside their points without overprinting: each label tries spots around its point (right,
 * left, above, below, then the diagonals, then further out) and takes the first one that stays inside the
 * plot and clear of every box reserved so far (points, legend lines, earlier labels) and of the roof lines.
 * A label that had to move away from its point gets a thin leader line back to it.
 */
export class LabelPlacer {
  constructor(bounds) {
    this.bounds = bounds;
    this.boxes = [];
    this.segments = [];
  }

  reserve(x, y, w, h) {
    this.boxes.push({ x, y, w, h });
  }

  avoid(x1, y1, x2, y2) {
    this.segments.push([x1, y1, x2, y2]);
  }

  inside(box) {
    const b = this.bounds;
    return box.x >= b.left && box.y >= b.top && box.x + box.w <= b.right && box.y + box.h <= b.bottom;
  }

  /** Overlap area with reserved boxes. */
  overlap(box) {
    let area = 0;
    for (const o of this.boxes) {
      const ix = Math.min(box.x + box.w, o.x + o.w) - Math.max(box.x, o.x);
      const iy = Math.min(box.y + box.h, o.y + o.h) - Math.max(box.y, o.y);
      if (ix > 0 && iy > 0) area += ix * iy;
    }
    return area;
  }

  /** Overlap area with reserved boxes, plus a penalty for each line crossing the box. */
  cost(box) {
    let area = this.overlap(box);
    for (const seg of this.segments) if (segmentHitsBox(seg, box)) area += 40;
    return area;
  }

  /** Returns {x, y, anchor, leader} for an SVG <text> (y is the baseline). */
  place(px, py, r, w, h) {
    const spots = [];
    for (const far of [1, 2, 3.2, 4.5]) {
      const gap = (r + 3) * far;
      const d = gap * 0.75;
      spots.push(
        { x: px + gap, y: py - h / 2, anchor: 'start' },
        { x: px - gap - w, y: py - h / 2, anchor: 'end' },
        { x: px - w / 2, y: py - gap - h, anchor: 'middle' },
        { x: px - w / 2, y: py + gap, anchor: 'middle' },
        { x: px + d, y: py - d - h, anchor: 'start' },
        { x: px + d, y: py + d, anchor: 'start' },
        { x: px - d - w, y: py - d - h, anchor: 'end' },
        { x: px - d - w, y: py + d, anchor: 'end' },
      );
    }
    let chosen = null;
    let best = Infinity;
    for (const spot of spots) {
      const box = { x: spot.x, y: spot.y, w, h };
      if (!this.inside(box)) continue;
      const cost = this.cost(box);
      if (cost === 0) {
        chosen = spot;
        break;
      }
      if (cost < best) {
        best = cost;
        chosen = spot;
      }
    }
    // Every nearby spot overprints another label (a crowded chart after "Measure my machine"): take the spot
    // anywhere in the plot that overprints none, with a margin, crossing the fewest lines and nearest the point,
    // joined to it by a leader line.
    if (chosen && this.overlap({ x: chosen.x, y: chosen.y, w, h }) > 0) {
      let score = Infinity;
      const b = this.bounds;
      for (let y = b.top; y + h <= b.bottom; y += h / 2)
        for (let x = b.left; x + w <= b.right; x += h / 2) {
          if (this.overlap({ x: x - 3, y: y - 2, w: w + 6, h: h + 4 }) > 0) continue;
          const here = this.cost({ x, y, w, h }) + Math.hypot(x + w / 2 - px, y + h / 2 - py);
          if (here < score) ((score = here), (chosen = { x, y, anchor: 'start' }));
        }
    }
    chosen ??= spots[0];
    this.reserve(chosen.x, chosen.y, w, h);
    const x = chosen.anchor === 'start' ? chosen.x : chosen.anchor === 'end' ? chosen.x + w : chosen.x + w / 2;
    // The nearest point of the label's box, for a leader line when the label is not right beside its point.
    const nx = Math.max(chosen.x, Math.min(px, chosen.x + w));
    const ny = Math.max(chosen.y, Math.min(py, chosen.y + h));
    const leader = Math.hypot(nx - px, ny - py) > r + 6 ? { x1: px, y1: py, x2: nx, y2: ny } : null;
    // Baseline: the box is one line of text; descenders take about a fifth of it.
    return { x, y: chosen.y + h * 0.82, anchor: chosen.anchor, leader };
  }
}

/** Whether the segment [x1, y1, x2, y2] passes through the box (Liang-Barsky clipping). */
function segmentHitsBox([x1, y1, x2, y2], box) {
  let t0 = 0,
    t1 = 1;
  const dx = x2 - x1,
    dy = y2 - y1;
  const edges = [
    [-dx, x1 - box.x],
    [dx, box.x + box.w - x1],
    [-dy, y1 - box.y],
    [dy, box.y + box.h - y1],
  ];
  for (const [p, q] of edges) {
    if (p === 0) {
      if (q < 0) return false;
      continue;
    }
    const t = q / p;
    if (p < 0) {
      if (t > t1) return false;
      if (t > t0) t0 = t;
    } else {
      if (t < t0) return false;
      if (t < t1) t1 = t;
    }
  }
  return true;
}
