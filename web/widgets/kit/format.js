// Display formatting: numbers, bytes, parameter counts, dollars, SI prefixes, percentages and the engine's
// plain-text formulas. Results carry base units; these convert them for display only.

/** Escapes text for insertion into HTML. Never put unescaped input into innerHTML. */
export function escapeHtml(text) {
  return String(text).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
  );
}

// Results carry base units (seconds, FLOP/s); these convert them for display only.
export const SECONDS_PER_DAY = 86400;
export const SECONDS_PER_HOUR = 3600;

// Intl formatters are costly to create (toLocaleString builds one per call), so keep two; made on first use,
// because the first one in a page loads ICU's number data (about 40 ms on the test machine, BENCHMARKS.md) and a
// page whose numbers are prerendered needs none until a widget mounts.
let en = null;
let en2 = null;
const EN = { format: (value) => (en ??= new Intl.NumberFormat('en-US')).format(value) };
const EN2 = { format: (value) => (en2 ??= new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 })).format(value) };

/** 6.3e24 -> "6.30 × 10²⁴"; 143.93 -> "143.9". Display only. */
export function formatNumber(value, digits = 3) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  const magnitude = Math.abs(value);
  if (magnitude !== 0 && (magnitude >= 1e6 || magnitude < 1e-3)) {
    const [mantissa, exponent] = value.toExponential(digits - 1).split('e');
    const superscript = String(Number(exponent)).replace(/[-0-9]/g, (c) => '⁻⁰¹²³⁴⁵⁶⁷⁸⁹'['-0123456789'.indexOf(c)]);
    return `${mantissa} × 10${superscript}`;
  }
  return EN.format(Number(value.toPrecision(digits + 1)));
}

/** Bytes in decimal GB (10^9 bytes), the one unit every tally chart and table uses. Display only. */
export const GB = 1e9;
export function formatBytes(bytes, digits = 3) {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return '—';
  const gb = bytes / GB;
  if (gb !== 0 && Math.abs(gb) < 0.01) return `${EN.format(Number((bytes / 1e6).toPrecision(digits)))} MB`;
  return `${EN2.format(Number(gb.toPrecision(digits)))} GB`;
}

/** 6738415616 -> "6.74 B"; for parameter counts. Display only. */
export function formatParams(count, digits = 3) {
  if (typeof count !== 'number' || !Number.isFinite(count)) return '—';
  const units = [
    [1e12, ' T'],
    [1e9, ' B'],
    [1e6, ' M'],
    [1e3, ' k'],
  ];
  for (const [scale, suffix] of units)
    if (Math.abs(count) >= scale) return `${Number((count / scale).toPrecision(digits))}${suffix}`;
  return String(count);
}

/** $7,074,279.94 -> "$7.07 M". Display only. */
export function formatDollars(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  const scales = [
    [1e12, ' T'],
    [1e9, ' B'],
    [1e6, ' M'],
  ];
  for (const [scale, suffix] of scales)
    if (Math.abs(value) >= scale) return `$${(value / scale).toPrecision(3)}${suffix}`;
  return `$${value.toLocaleString('en-US', { maximumFractionDigits: Math.abs(value) >= 1000 ? 0 : 2 })}`;
}

/** 2.5e12 -> "2.5 T" (an SI prefix with a trailing space, for "FLOP/s" after it). Display only. */
export function formatSi(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  const units = [
    [1e15, 'P'],
    [1e12, 'T'],
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
    [1, ''],
  ];
  for (const [scale, suffix] of units) if (value >= scale) return `${Number((value / scale).toPrecision(3))} ${suffix}`;
  return String(Number(value.toPrecision(3)));
}

/** A share in [0, 1] as "12.3%". Display only. */
export function formatPercent(share) {
  if (typeof share !== 'number' || !Number.isFinite(share)) return '—';
  return `${(share * 100).toFixed(share < 0.1 ? 1 : 0)}%`;
}

/**
 * The engine's plain-text formulas ("N_w · 4 B", "2 s h (a d + 2 n_kv d) L") as safe HTML: letters become
 * italic variables and "_x" becomes a subscript. The text is escaped first, so nothing in it becomes markup.
 */
export function formatFormula(text) {
  return escapeHtml(text)
    .replace(/_\{([^}]*)\}|_([A-Za-z0-9]+)/g, (_, braced, plain) => `<sub>${braced ?? plain}</sub>`)
    .replace(/(^|[^A-Za-z<\/&#;])([a-zA-Z])(?![A-Za-z;])/g, '$1<var>$2</var>');
}

/** The symbols of a plain-text formula: "N_w", "n_kv", "s", "Σ_matrices" (numbers and operators dropped). */
export function formulaSymbols(text) {
  return [...new Set(String(text ?? '').match(/Σ_[A-Za-z]+|[A-Za-z]+(?:_[A-Za-z0-9]+)?/g) ?? [])];
}

/**
 * A formula as HTML with word identifiers readable: "per_layer" shows as "per-layer" rather than as
 * "per" with a subscript "layer"; one-letter symbols with a subscript ("N_w", "n_kv") keep it.
 */
export function formulaHtml(text) {
  return formatFormula(String(text ?? '').replace(/\b([A-Za-z]{2,})_([A-Za-z]{2,})\b/g, '$1-$2'));
}

/**
 * "where N_w = parameters … (6.74 B); B = bytes": every symbol of `formulas` that `glossary` defines
 * ({symbol: [words, value?]}), in order of first use, as safe HTML. Symbols the glossary lacks are returned
 * in `missing` (words such as "layers" in a formula need no definition and are not symbols).
 */
export function symbolLegend(formulas, glossary) {
  const symbols = [...new Set(formulas.flatMap((f) => formulaSymbols(f)))];
  const defined = symbols.filter((sym) => Object.hasOwn(glossary, sym));
  const missing = symbols.filter((sym) => !Object.hasOwn(glossary, sym) && (sym.length <= 2 || sym.includes('_')));
  const items = defined.map((sym) => {
    const [words, value] = glossary[sym];
    const shown = value === undefined || value === null || value === '' ? '' : ` (${escapeHtml(String(value))} here)`;
    return `<span class="sym"><span class="formula">${formulaHtml(sym)}</span> = ${escapeHtml(words)}${shown}</span>`;
  });
  return { html: items.length ? `where ${items.join('; ')}` : '', missing };
}
