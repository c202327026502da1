// The one small chart module of tally's hand-written SVG charts (compute, memory, float, step, roofline, inference):
// scales, ticks, tick labels and the drawing width. Display geometry only: every value drawn comes from the engine.

/** Superscript digits for "10⁻³"-style tick labels. */
const SUPERSCRIPT = '⁻⁰¹²³⁴⁵⁶⁷⁸⁹';

/** "10²⁴" for base 10 and exponent 24 (`caret` gives "2^-14", which the float chart's readers type back). */
export function powerLabel(base, exponent, { caret = false } = {}) {
  if (caret) return `${base}^${exponent}`;
  return `${base}${String(exponent).replace(/[-0-9]/g, (c) => SUPERSCRIPT['-0123456789'.indexOf(c)])}`;
}

/** A linear scale: domain [d0, d1] onto range [r0, r1]. */
export function linearScale([d0, d1], [r0, r1]) {
  const span = d1 - d0 || 1;
  return (v) => r0 + ((v - d0) / span) * (r1 - r0);
}

/** A logarithmic scale: `logDomain` is [log_base(lo), log_base(hi)]; values are plain numbers. */
export function logScale(logDomain, range, base = 10) {
  const toLog = base === 2 ? Math.log2 : base === 10 ? Math.log10 : (v) => Math.log(v) / Math.log(base);
  const linear = linearScale(logDomain, range);
  return (v) => linear(toLog(v));
}

/** A round tick step (1, 2 or 5 × 10^k) near `raw`. */
export function niceStep(raw) {
  if (!(raw > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  const scaled = raw / power;
  return (scaled < 1.5 ? 1 : scaled < 3.5 ? 2 : scaled < 7.5 ? 5 : 10) * power;
}

/** Ticks 0, step, 2·step, … up to `max`, with about `count` of them on a round step. */
export function linearTicks(max, count = 5) {
  const step = niceStep(max / count);
  const ticks = [];
  for (let v = 0; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

/** Integer exponents from `lo` to `hi` taking every `stride`-th, aligned to multiples of the stride. */
export function exponentTicks(lo, hi, stride = 1) {
  const ticks = [];
  for (let e = Math.ceil(lo / stride) * stride; e <= hi; e += stride) ticks.push(e);
  return ticks;
}

/** Ticks m × 10^e (m from `mantissas`) whose log10 lies in [lo, hi], ascending: for log axes that span little. */
export function logTicks(lo, hi, mantissas = [1, 2, 5]) {
  const ticks = [];
  for (let e = Math.floor(lo); e <= Math.ceil(hi); e++) {
    for (const m of mantissas) {
      const v = m * 10 ** e;
      if (Math.log10(v) >= lo && Math.log10(v) <= hi) ticks.push(v);
    }
  }
  return ticks;
}

/** The ladder value next to 10^x in `mantissas` × 10^e: the largest below it (`dir` −1) or the smallest above (+1). */
function ladderStep(x, mantissas, dir) {
  const values = [];
  for (let e = Math.floor(x) - 1; e <= Math.floor(x) + 1; e++) for (const m of mantissas) values.push(m * 10 ** e);
  const v = 10 ** x;
  return dir < 0
    ? Math.max(...values.filter((t) => t < v * (1 - 1e-9)))
    : Math.min(...values.filter((t) => t > v * (1 + 1e-9)));
}

/**
 * A log10 axis over [lo, hi] with at least `min` labelled ticks and at most `room`: 1-2-5 ticks, powers of ten
 * (or every k-th 1-2-5 tick) when those crowd, finer steps (1, 1.5, 2, 2.5, 3, 4, …, 9) when they are too few, and the domain widened to the next ticks outside it
 * when even those are too few. Returns the (possibly widened) domain and its ticks.
 */
export function logAxis(lo, hi, { min = 3, room = Infinity } = {}) {
  let ticks = logTicks(lo, hi);
  // Every k-th tick, k the smallest that leaves at most `room`.
  const thin = (list) => list.filter((_, i) => i % Math.ceil(list.length / room) === 0);
  if (ticks.length > room) {
    const powers = logTicks(lo, hi, [1]);
    const fewer = powers.length > room ? thin(powers) : powers;
    ticks = fewer.length >= min ? fewer : thin(ticks);
  }
  if (ticks.length >= min) return { lo, hi, ticks };
  const digits = [1, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9];
  ticks = logTicks(lo, hi, digits);
  while (ticks.length < min) {
    lo = Math.log10(ladderStep(lo, digits, -1));
    hi = Math.log10(ladderStep(hi, digits, +1));
    ticks = logTicks(lo, hi, digits);
  }
  return { lo, hi, ticks };
}

/** The smallest power-of-two stride that leaves at most `room` labels over `span` exponents. */
export function powerOfTwoStride(span, room) {
  let stride = 1;
  while (span / stride > room) stride *= 2;
  return stride;
}

/** Labels that fit along `lengthPx` at one per `pxPerLabel` (at least `min`). */
export function labelRoom(lengthPx, pxPerLabel, min = 3) {
  return Math.max(min, Math.floor(lengthPx / pxPerLabel));
}

/**
 * The width to draw a chart at: its shown width in CSS px (from TallyWidget.observeWidth; viewBox units equal
 * CSS px, so 12 px text stays 12 px on a phone), or `fallback` until the first layout, clamped to [min, max].
 */
export function drawWidth(shown, { fallback = 640, min = 280, max = Infinity } = {}) {
  return Math.min(max, Math.max(min, shown ?? fallback));
}
