// Shared helpers for tally's widgets: a shadow-DOM custom element base, labelled number fields with
// an error line beside each, and display formatting. Widgets compute nothing: numbers come from the engine.
import { getEngine, TallyError } from '../engine.js';
import {
  readState,
  writeState,
  stateKey,
  isKeyId,
  isNumberText,
  isBoolText,
  oneOf,
  onStateRefused,
  MAX_VALUE_LENGTH,
} from '../state.js';
import { attachShare } from './share.js';

export { getEngine, TallyError };
export { readState, writeState, stateKey, isNumberText, isBoolText, oneOf };

/** The dark palette (docs/EMBEDDING.md lists it) for `selector`: a host's dark theme, or the OS's without one. */
function darkRule(selector) {
  return `${selector} { color-scheme: dark; --fg: var(--tally-fg, #e6edf3); --muted: var(--tally-muted, #9da7b3); --bg: var(--tally-bg, #0d1117);
    --panel: var(--tally-panel, #161b22); --border: var(--tally-border, #30363d); --accent: var(--tally-accent, #58a6ff);
    --error: var(--tally-error, #ff7b72); --ok: var(--tally-ok, #3fb950); --warn: var(--tally-warn, #e3b341); }`;
}

/**
 * Styles every widget shares; light or dark follows the `theme` attribute, else the host page, else the OS (hostTheme). A host page restyles the
 * widgets with the documented --tally-* custom properties (docs/EMBEDDING.md) and ::part() names, never by
 * reaching into the shadow DOM; the short names (--fg, …) are internal.
 */
export const baseCss = `
:host([data-tally-theme="light"]) { color-scheme: light; }
:host { display: block; font: var(--tally-font-size, 15px)/1.5 var(--tally-font, system-ui, -apple-system, "Segoe UI", sans-serif);
  --fg: var(--tally-fg, #1b1f24); --muted: var(--tally-muted, #57606a); --bg: var(--tally-bg, #ffffff);
  --panel: var(--tally-panel, #f6f8fa); --border: var(--tally-border, #d0d7de); --accent: var(--tally-accent, #0b63ce);
  --error: var(--tally-error, #b3261e); --ok: var(--tally-ok, #1a7f37); --warn: var(--tally-warn, #8a4b00); color: var(--fg);
  /* text settings a host inherits into the shadow tree (reveal.js centres slides) */
  text-align: start; text-transform: none; letter-spacing: normal; word-spacing: normal; white-space: normal; }
${darkRule(':host([data-tally-theme="dark"])')}
@media (prefers-color-scheme: dark) { ${darkRule(':host(:not([data-tally-theme]))')} }
.widget { background: var(--panel); border: 1px solid var(--border); border-radius: var(--tally-radius, 8px); padding: 12px 14px; }
.warnings { color: var(--warn); font-size: 13px; margin: 6px 0 0; padding: 0 0 0 1.2em; }
.warnings:empty { display: none; }
.fields { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(170px, 40%), 1fr)); gap: 10px 14px; }
.field.wide { grid-column: span 2; }
.field { display: flex; flex-direction: column; gap: 2px; min-width: 0; }
.field label { font-size: 13px; color: var(--muted); }
.field input, .field select { font: inherit; padding: 4px 6px; border: 1px solid var(--border); border-radius: 4px;
  background: var(--bg); color: var(--fg); min-width: 0; }
.field input[aria-invalid="true"] { border-color: var(--error); outline-color: var(--error); }
.field .error { color: var(--error); font-size: 13px; min-height: 0; }
.results { margin-top: 12px; display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 8px 14px; }
.result .label { font-size: 13px; color: var(--muted); }
.result .value { font-size: 20px; font-variant-numeric: tabular-nums; }
.notice, .url-notice { color: var(--error); font-size: 13px; }
.url-notice:empty, .defaults-note:empty { display: none; }
.defaults-note { color: var(--muted); font-size: 13px; margin: 6px 0 0; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
.field.check { flex-direction: row; align-items: center; gap: 6px; padding-top: 18px; }
.field.check label { font-size: 14px; color: var(--fg); }
.field textarea { font: 12px/1.4 ui-monospace, monospace; width: 100%; min-height: 90px; padding: 4px 6px;
  border: 1px solid var(--border); border-radius: 4px; background: var(--bg); color: var(--fg); }
.toolbar { display: flex; flex-wrap: wrap; gap: 6px; margin-top: 10px; align-items: center; }
button { font: 13px system-ui, sans-serif; padding: 4px 10px; border-radius: 4px; border: 1px solid var(--border);
  background: var(--bg); color: var(--fg); cursor: pointer; min-height: 30px; }
button:hover { border-color: var(--accent); }
.status { font-size: 13px; color: var(--muted); }
svg text { fill: var(--fg); font: 12px system-ui, sans-serif; }
svg .axis line, svg .axis path { stroke: var(--muted); }
svg .grid line { stroke: var(--border); }
/* compact: a slide (960x700) holds the widget; the box scrolls inside past that height and explanations step aside. */
:host([compact]) { font-size: var(--tally-font-size, 13px); }
:host([compact]) .widget { max-height: var(--tally-compact-height, 660px); overflow: auto; padding: 8px 10px; box-sizing: border-box; }
:host([compact]) .fields { grid-template-columns: repeat(auto-fill, minmax(min(120px, 40%), 1fr)); gap: 4px 10px; }
:host([compact]) .note, :host([compact]) details.share { display: none; }
:host([compact]) svg.chart, :host([compact]) svg.timeline { max-height: 240px; }
:host([compact]) .result .value { font-size: 17px; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;

/**
 * `rules` (plain `selector { ... }` rules) for the dark theme: under a dark `data-tally-theme`, or under the OS's
 * dark setting before the widget has resolved its theme.
 */
export function darkCss(rules) {
  const under = (host) =>
    rules.replace(
      /([^{}]+)\{/g,
      (_, selectors) =>
        `${selectors
          .split(',')
          .map((sel) => `${host} ${sel.trim()}`)
          .join(', ')} {`,
    );
  return `${under(':host([data-tally-theme="dark"])')}\n@media (prefers-color-scheme: dark) { ${under(':host(:not([data-tally-theme]))')} }`;
}

/** The theme attribute's values; `auto` (or none) follows the host page, then the OS. */
export const THEMES = ['light', 'dark', 'auto'];

/** A page-wide light/dark toggle on <html> or <body>: VitePress/Tailwind `.dark`, Docusaurus/Bootstrap/Pico `data-theme`/`data-bs-theme`, Material `data-md-color-scheme`. */
function pageToggle(el) {
  if (!el) return null;
  if (el.classList.contains('dark')) return 'dark';
  for (const name of ['data-theme', 'data-bs-theme']) {
    const value = el.getAttribute(name)?.trim().toLowerCase();
    if (value === 'dark' || value === 'light') return value;
  }
  const md = el.getAttribute('data-md-color-scheme')?.trim().toLowerCase();
  if (md === 'slate') return 'dark';
  if (md === 'default') return 'light';
  return null;
}

/**
 * 'light' or 'dark' for `element`: its `theme` attribute, else the host page's toggle (pageToggle), else the
 * `color-scheme` its parent inherits from the host when that names one scheme, else the OS setting.
 */
export function hostTheme(element) {
  const own = element.getAttribute('theme')?.trim().toLowerCase();
  if (own === 'light' || own === 'dark') return own;
  const toggle = pageToggle(document.documentElement) ?? pageToggle(document.body);
  if (toggle) return toggle;
  const parent = element.parentElement ?? element.getRootNode()?.host ?? document.documentElement;
  const words = new Set(getComputedStyle(parent).colorScheme.split(/\s+/));
  if (words.has('dark') !== words.has('light')) return words.has('dark') ? 'dark' : 'light';
  return globalThis.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/** Connected widgets, re-themed when the host page flips its toggle or the OS changes its setting. */
const themedWidgets = new Set();
let themeWatcher = null;

function watchHostTheme() {
  if (themeWatcher) return;
  const refresh = () => themedWidgets.forEach((widget) => widget.applyTheme());
  themeWatcher = new MutationObserver(refresh);
  const attributeFilter = ['class', 'style', 'data-theme', 'data-bs-theme', 'data-md-color-scheme'];
  themeWatcher.observe(document.documentElement, { attributes: true, attributeFilter });
  if (document.body) themeWatcher.observe(document.body, { attributes: true, attributeFilter });
  globalThis.matchMedia?.('(prefers-color-scheme: dark)').addEventListener?.('change', refresh);
}

/** Escapes text for insertion into HTML. Never put unescaped input into innerHTML. */
export function escapeHtml(text) {
  return String(text).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
  );
}

/** A labelled input with an error line beside it; `name` is the engine argument it feeds. */
export function numberField({ name, label, value = '', help = '' }) {
  const id = `f-${name}`;
  return `<div class="field" part="field" data-field="${escapeHtml(name)}">
    <label part="label" for="${id}">${escapeHtml(label)}</label>
    <input part="control" id="${id}" name="${escapeHtml(name)}" inputmode="decimal" autocomplete="off" value="${escapeHtml(value)}"
      aria-describedby="${id}-error"${help ? ` title="${escapeHtml(help)}"` : ''}>
    <span class="error" part="error" id="${id}-error" role="alert"></span>
  </div>`;
}

/** Multipliers of the count suffixes a reader may type: "70B", "15T", "8k" (decimal, as in "a 70B model"). */
const SUFFIXES = { k: 1e3, m: 1e6, b: 1e9, t: 1e12 };
const NUMBER_PATTERN = /^([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d*)?(?:[eE][-+]?\d+)?)\s*([kKmMbBtT%]?)$/;

/** Text a reader is still typing ("", "-", "0.", "1e", "1e-", "1,0"): not yet a number, so not yet an error. */
export function isIncompleteNumber(text) {
  const t = String(text ?? '').trim();
  return (
    /^[-+]?$/.test(t) ||
    /^[-+]?[\d,]*\.$/.test(t) ||
    /^[-+]?[\d,]*\.?\d*[eE][-+]?$/.test(t) ||
    /^[-+]?\d{1,3}(,\d{3})*,\d{0,2}$/.test(t)
  );
}

/**
 * Reads a numeric text field: "70e9", "70B", "1,024", "0.4", and "40%" where the field is a fraction
 * (`percent: true`). Empty and unreadable text throw TallyError(field) naming the field and, when given,
 * its allowed `range` (text such as "(0, 1]"); the engine checks the range itself and names it too.
 */
export function parseNumber(text, field, label = field, { percent = false, range = '' } = {}) {
  const trimmed = String(text ?? '').trim();
  const inRange = range ? ` in ${range}` : '';
  const examples = percent ? '0.4 or 40%' : '70e9, 70B or 0.5';
  if (trimmed === '') throw new TallyError(field, `${label} is empty: enter a number${inRange}`);
  const match = NUMBER_PATTERN.exec(trimmed);
  const suffix = match?.[2] ?? '';
  if (!match || !/\d/.test(match[1]) || (suffix === '%' && !percent))
    throw new TallyError(field, `${label} must be a number${inRange} (like ${examples}), got "${trimmed}"`);
  let value = Number(match[1].replace(/,/g, ''));
  if (suffix === '%') value /= 100;
  else if (suffix) value *= SUFFIXES[suffix.toLowerCase()];
  if (!Number.isFinite(value)) throw new TallyError(field, `${label} is too large${inRange}`);
  return value;
}

/**
 * Reads every field of a widget's `fields` list ({name, label, percent?, range?}) from `values`, collecting
 * every unreadable one, so that each bad field gets its own message at once: {numbers: {name: value}, errors}.
 */
export function parseNumberFields(fields, values) {
  const numbers = {};
  const errors = [];
  for (const f of fields) {
    try {
      numbers[f.name] = parseNumber(values[f.name], f.name, f.label, f);
    } catch (error) {
      errors.push(error);
    }
  }
  return { numbers, errors };
}

/** How long an error waits while the reader is typing in its field ("0" on the way to "0.4" is not a mistake). */
export const TYPING_ERROR_DELAY_MS = 700;

/**
 * Shows `message` beside the field named `field` (or in the widget's notice line). While the reader is
 * typing in that very field, the message waits until they pause (or, for text that is still an unfinished
 * number such as "0." or "1e", until they leave the field), so intermediate states never flash an error.
 */
export function showError(root, field, message) {
  const host = root.host;
  const input = root.querySelector(
    `.field[data-field="${CSS.escape(field)}"] input, .field[data-field="${CSS.escape(field)}"] textarea`,
  );
  if (host instanceof TallyWidget && input && host.typingField === field) {
    host.holdError(field, message, isIncompleteNumber(input.value) ? null : TYPING_ERROR_DELAY_MS);
    return;
  }
  showErrorNow(root, field, message);
}

function showErrorNow(root, field, message) {
  const box = root.querySelector(`.field[data-field="${CSS.escape(field)}"]`);
  if (box) {
    box.querySelector('.error').textContent = message;
    box.querySelector('input, select, textarea')?.setAttribute('aria-invalid', 'true');
  } else {
    const notice = root.querySelector('.notice');
    if (notice) notice.textContent = message;
  }
}

export function clearErrors(root) {
  if (root.host instanceof TallyWidget) root.host.dropHeldErrors();
  for (const el of root.querySelectorAll('.field .error')) el.textContent = '';
  for (const el of root.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  const notice = root.querySelector('.notice');
  if (notice) notice.textContent = '';
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

/** Option labels longer than this (about 130 px of 15 px text) make their select span two grid columns. */
const WIDE_OPTION_CHARS = 16;

/** A labelled <select>; options are [{value, label, title?}]. */
export function selectField({ name, label, options, value = '' }) {
  const id = `f-${name}`;
  const opts = options.map(
    (o) =>
      `<option value="${escapeHtml(o.value)}"${String(o.value) === String(value) ? ' selected' : ''}${o.title ? ` title="${escapeHtml(o.title)}"` : ''}>${escapeHtml(o.label)}</option>`,
  );
  // A select cannot wrap its text: one whose longest option would be cut off in one grid column takes two.
  const wide = Math.max(0, ...options.map((o) => String(o.label).length)) > WIDE_OPTION_CHARS;
  return `<div class="field${wide ? ' wide' : ''}" part="field" data-field="${escapeHtml(name)}">
    <label part="label" for="${id}">${escapeHtml(label)}</label>
    <select part="control" id="${id}" name="${escapeHtml(name)}" aria-describedby="${id}-error">${opts.join('')}</select>
    <span class="error" part="error" id="${id}-error" role="alert"></span>
  </div>`;
}

/** A labelled checkbox. */
export function checkboxField({ name, label, checked = false }) {
  const id = `f-${name}`;
  return `<div class="field check" part="field" data-field="${escapeHtml(name)}">
    <input part="control checkbox" type="checkbox" id="${id}" name="${escapeHtml(name)}"${checked ? ' checked' : ''} aria-describedby="${id}-error">
    <label part="label" for="${id}">${escapeHtml(label)}</label>
    <span class="error" part="error" id="${id}-error" role="alert"></span>
  </div>`;
}

/** Bytes in decimal GB (10^9 bytes), the one unit every tally chart and table uses. Display only. */
export const GB = 1e9;
export function formatBytes(bytes, digits = 3) {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return '—';
  const gb = bytes / GB;
  if (gb !== 0 && Math.abs(gb) < 0.01) return `${EN.format(Number((bytes / 1e6).toPrecision(digits)))} MB`;
  return `${EN2.format(Number(gb.toPrecision(digits)))} GB`;
}

/** Declared-state entries (declareState) for number fields [{name, attribute?, fallback}], each read as number text. */
export function numberStateFields(fields) {
  return fields.map((f) => ({ name: f.name, attribute: f.attribute, check: isNumberText, fallback: f.fallback }));
}

/** A model preset as a select option: its name and parameter count. */
export function modelOption(model) {
  return { value: model.id, label: `${model.name} (${formatParams(model.params_total)})` };
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

/** Copies text to the clipboard; resolves true on success. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.append(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

/** Offers a Blob as a download named `filename`. */
export function downloadBlob(filename, blob) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * Serializes an <svg> for download with the colours resolved (a standalone file has no page CSS):
 * every element's computed fill, stroke and font are inlined. Returns the SVG text.
 */
export function standaloneSvg(svg) {
  const clone = svg.cloneNode(true);
  const source = [svg, ...svg.querySelectorAll('*')];
  const target = [clone, ...clone.querySelectorAll('*')];
  source.forEach((el, i) => {
    const cs = getComputedStyle(el);
    const style = [
      'fill',
      'stroke',
      'stroke-width',
      'stroke-dasharray',
      'opacity',
      'font-size',
      'font-family',
      'font-weight',
      'text-anchor',
      'dominant-baseline',
    ]
      .map((p) => `${p}:${cs.getPropertyValue(p)}`)
      .join(';');
    target[i].setAttribute('style', style);
  });
  clone.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  const box = svg.viewBox.baseVal;
  if (box && box.width) {
    clone.setAttribute('width', box.width);
    clone.setAttribute('height', box.height);
  }
  return new XMLSerializer().serializeToString(clone);
}

/** Rasterizes SVG text to a PNG Blob at `scale` times its size, on the given background colour. */
export function svgToPng(svgText, width, height, scale = 2, background = '#ffffff') {
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => {
      const canvas = document.createElement('canvas');
      canvas.width = Math.round(width * scale);
      canvas.height = Math.round(height * scale);
      const ctx = canvas.getContext('2d');
      ctx.fillStyle = background;
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(image, 0, 0, canvas.width, canvas.height);
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('PNG encoding failed'))), 'image/png');
    };
    image.onerror = () => reject(new Error('the chart could not be rasterized'));
    image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svgText)}`;
  });
}

/** Marks tally's widget classes, so a second copy of the script recognises the first one's elements. */
const TALLY_WIDGET = Symbol.for('tally.widget');
/** Tags of the TallyWidget classes this copy registered: each has a Share control, so embed.html serves each. */
const registeredWidgets = new Set();

/** The tags (`tally-compute`, …) of every registered TallyWidget, in registration order. */
export function widgetTags() {
  return [...registeredWidgets];
}

/**
 * Registers a tally element class as `<name>`. A name the host page already uses is left alone with a console
 * warning (throwing would stop every widget module evaluated after this one); a tally widget already registered
 * by another copy of the script (a second origin or URL) is kept silently. Returns true when `cls` was defined.
 */
export function defineWidget(name, cls) {
  cls[TALLY_WIDGET] = true;
  // On a server (a static-site generator's pre-render) there is no registry: importing defines nothing.
  if (typeof customElements === 'undefined') return false;
  const existing = customElements.get(name);
  if (existing === cls) return true;
  if (existing) {
    if (!existing[TALLY_WIDGET])
      console.warn(
        `tally: <${name}> is already defined by this page, so tally's ${name} widget is not available here; the other tally widgets work.`,
      );
    return false;
  }
  try {
    customElements.define(name, cls);
    if (cls.prototype instanceof TallyWidget) registeredWidgets.add(name);
    return true;
  } catch (error) {
    console.warn(`tally: could not define <${name}> (${error.message}); the other tally widgets work.`);
    return false;
  }
}

/** Shadow parts every widget exposes for ::part() styling (docs/EMBEDDING.md), by selector. */
const PARTS = [
  ['.widget', 'panel'],
  ['.fields, .top', 'fields'],
  ['.field', 'field'],
  ['.field label', 'label'],
  ['.field input, .field select, .field textarea', 'control'],
  ['.field .error', 'error'],
  ['.results', 'results'],
  ['.result', 'result'],
  ['.result .label', 'result-label'],
  ['.result .value', 'value'],
  ['.notice', 'notice'],
  ['.url-notice', 'url-notice'],
  ['.warnings', 'warnings'],
  ['svg.chart, svg.timeline', 'chart'],
  ['table', 'table'],
  ['.toolbar', 'toolbar'],
  ['button', 'button'],
  ['.status', 'status'],
];

/** Longest value text quoted back in a setState error. */
const QUOTE_CHARS = 40;

/** An engine error's message for a URL notice; an overflow's "nan" or "inf" is said in words instead. */
function plainMessage(error) {
  return /\b(nan|inf|infinity)\b/i.test(error.message) ? 'the result is not a finite number' : error.message;
}

/** "the engine refused tokens: …", for a URL value that made the engine refuse another field. */
function refusal(error) {
  return `the engine refused ${error.field || 'the input'}: ${plainMessage(error)}`;
}

/** Whether a state text shows the URL's text (a missing field reads as empty; a textarea turns CR LF into LF). */
function sameStateText(shown, given) {
  const norm = (text) => String(text ?? '').replace(/\r\n?/g, '\n');
  return norm(shown) === norm(given);
}

// ------------------------------------------------------------------------------------ when widgets mount
// A widget near the viewport when the page is first laid out mounts at once; the others mount one per idle
// period, or as soon as they come near the viewport, whichever is first. So the first screen is interactive
// before off-screen widgets have built their DOM or asked the engine anything, and every widget is still
// wired soon after load without the reader scrolling to it.

/** How far outside the viewport a widget counts as near (half a screen above and below). */
const NEAR_VIEWPORT = '50% 0px';
const idleQueue = [];
let idleScheduled = false;

function runOneIdleMount() {
  idleScheduled = false;
  idleQueue.shift()?.();
  scheduleIdleMount();
}

function scheduleIdleMount() {
  if (idleScheduled || !idleQueue.length) return;
  idleScheduled = true;
  // The timeout bounds the wait on a page that is never idle; browsers without requestIdleCallback use a timer.
  if (typeof requestIdleCallback === 'function') requestIdleCallback(runOneIdleMount, { timeout: 1000 });
  else setTimeout(runOneIdleMount, 50);
}

/** { firstScreen: Promise<boolean>, due: Promise } for one widget (see above). */
function mountSchedule(element) {
  if (typeof IntersectionObserver !== 'function') return { firstScreen: Promise.resolve(true), due: Promise.resolve() };
  let placed;
  let mountNow;
  const firstScreen = new Promise((resolve) => {
    placed = resolve;
  });
  const due = new Promise((resolve) => {
    mountNow = resolve;
  });
  let decided = false;
  const start = () => {
    observer.disconnect();
    const queued = idleQueue.indexOf(start);
    if (queued >= 0) idleQueue.splice(queued, 1);
    mountNow();
  };
  const observer = new IntersectionObserver(
    (entries) => {
      const near = entries.some((entry) => entry.isIntersecting);
      if (!decided) {
        decided = true;
        placed(near);
        if (!near) {
          idleQueue.push(start);
          scheduleIdleMount();
        }
      }
      if (near) start();
    },
    { rootMargin: NEAR_VIEWPORT },
  );
  observer.observe(element);
  return { firstScreen, due };
}

/**
 * Base class: a shadow root, the shared engine, declared state (attributes, URL, rejection notices), warnings,
 * chart widths, and the element API every widget shares (docs/EMBEDDING.md): getState(), setState(state),
 * `ready`, a `change` event whose detail is the state, attributes that set state, ::part names, --tally-* properties.
 */
/** HTMLElement, or a plain class where there is none (server-side rendering), so the modules import anywhere. */
export const ElementBase = globalThis.HTMLElement ?? class {};

export class TallyWidget extends ElementBase {
  /** Registers the widget as `<name>` (see defineWidget). */
  static define(name) {
    return defineWidget(name, this);
  }

  /** Attributes every widget takes about its host page, not its state (docs/EMBEDDING.md, "On a host page"). */
  static hostAttributes = ['theme', 'compact', 'url-state'];
  /** The values a host attribute takes, for the package's types (scripts/pack-widgets.mjs); others are free text. */
  static hostAttributeOptions = { theme: THEMES, 'url-state': ['', 'on', 'off', 'true', 'false'] };

  /** Attributes that set state after start-up too (each subclass lists its own in `stateAttributes`), and `theme`. */
  static get observedAttributes() {
    return [...(this.stateAttributes ?? []), 'theme'];
  }

  constructor() {
    super();
    this.attachShadow({ mode: 'open' });
    /** Resolves once the widget has built its DOM and shown its first result (tests and the page wait on it). */
    this.ready = new Promise((resolve) => {
      this.resolveReady = resolve;
    });
    // The field the reader is typing in during this input event (errors about it wait, see showError).
    this.typingField = null;
    this.heldErrors = new Map();
    this.shadowRoot.addEventListener(
      'input',
      (event) => {
        const target = event.target;
        if (!target.matches?.('input:not([type="checkbox"]), textarea')) return;
        this.typingField = target.name;
        setTimeout(() => {
          if (this.typingField === target.name) this.typingField = null;
        });
      },
      true,
    );
    // Keys typed into the widget's controls are the reader's: a host's shortcuts (a slide deck's arrows, Space,
    // "." and "b") never see them. Focus still moves with Tab, which is the browser's default action.
    for (const type of ['keydown', 'keyup', 'keypress'])
      this.shadowRoot.addEventListener(type, (event) => {
        if (event.target.closest?.('input, select, textarea, button, summary, [tabindex]')) event.stopPropagation();
      });
    // Leaving the field (or pressing Enter) shows what was held back at once.
    this.shadowRoot.addEventListener(
      'change',
      () => {
        this.typingField = null;
        this.showHeldErrors();
      },
      true,
    );
  }

  // ------------------------------------------------------------------------------------ declared state
  /**
   * Declares the widget's state fields [{name, check, fallback, attribute?}] (check: a state.js validator; the
   * attribute defaults to the name with "-" for "_") and returns the starting values: each valid attribute, else
   * its fallback, with the URL's values on top. URL values that fail their check wait in this.urlRejections
   * for settleUrlState(); an invalid attribute falls back with a console warning.
   */
  /** The engine's presets (models, hardware), or empty lists when the engine refuses: the widget then
   *  still renders and its next engine call shows the error. The page asks the engine for them once. */
  loadPresets() {
    try {
      return this.engine.call('presets', {});
    } catch {
      return { models: [], hardware: [] };
    }
  }

  declareState(short, fields) {
    this.key ??= stateKey(this, short);
    this.stateFields = fields;
    this.stateSchema = Object.fromEntries(fields.map((f) => [f.name, f.check]));
    const start = {};
    for (const f of fields) {
      const attribute = f.attribute ?? f.name.replace(/_/g, '-');
      const text = this.getAttribute(attribute);
      const verdict = text === null ? null : f.check(text);
      start[f.name] = verdict === true ? text : f.fallback;
      if (text !== null && verdict !== true)
        console.warn(
          `tally: <${this.localName}> ignored ${attribute}="${text.slice(0, QUOTE_CHARS)}" (${verdict || 'not an accepted value'})`,
        );
    }
    this.defaults = { ...start };
    this.fallbacks = Object.fromEntries(fields.map((f) => [f.name, f.fallback]));
    const fromUrl = this.keepsUrlState ? readState(this.key, this.stateSchema) : { values: {}, rejected: [] };
    Object.assign(start, fromUrl.values);
    this.urlValues = { ...fromUrl.values };
    this.urlFields = new Set(Object.keys(fromUrl.values));
    this.urlRejections = [...fromUrl.rejected];
    return start;
  }

  /**
   * After the first update(): every URL value either shows in the state or gets a notice naming its parameter.
   * Values the engine refused go back to their starting value, and so do values that made it refuse another
   * field (blameUrlFields); values another setting overrode stay overridden, with the reason.
   */
  settleUrlState() {
    const rejected = this.urlRejections ?? [];
    this.urlFields ??= new Set();
    const reject = (field, reason) => {
      this.urlFields.delete(field);
      rejected.push({ param: `${this.key}.${field}`, field, reason });
    };
    // A URL value equal to its starting value cannot be what the engine refuses: blameUrlFields looks further.
    const fromUrl = (field) => this.urlFields.has(field) && !sameStateText(this.urlValues[field], this.defaults[field]);
    while (this.lastError && fromUrl(this.lastError.field)) {
      const field = this.lastError.field;
      reject(field, plainMessage(this.lastError));
      this.revertField(field);
      this.update();
    }
    if (this.lastError && this.urlFields.size) this.blameUrlFields(reject);
    const state = this.values();
    for (const field of [...this.urlFields])
      if (!sameStateText(state[field], this.urlValues[field])) reject(field, this.urlOverrideReason(field, state));
    this.showUrlRejections(rejected);
    this.urlRejections = [];
  }

  /**
   * The engine blamed a field the URL did not set (an overflow it traces to `tokens` when `params` was huge): a URL
   * value whose revert clears or changes the error goes back, one at a time until none is left to blame; if no
   * single one does but reverting them all clears it, all go back; otherwise the URL is not the cause and stays.
   */
  blameUrlFields(reject) {
    const same = (a, b) => a && b && a.field === b.field && a.message === b.message;
    search: while (this.lastError && this.urlFields.size) {
      const error = this.lastError;
      for (const field of this.urlFields) {
        const before = this.values();
        this.revertField(field);
        this.update();
        if (!same(this.lastError, error)) {
          reject(field, `with it, ${refusal(error)}`);
          continue search;
        }
        this.applyState(before);
        this.update();
      }
      const before = this.values();
      const fields = [...this.urlFields];
      for (const field of fields) this.revertField(field);
      this.update();
      if (!this.lastError) fields.forEach((field) => reject(field, `with the other URL settings, ${refusal(error)}`));
      else {
        this.applyState(before);
        this.update();
      }
      return;
    }
  }

  /** Why a URL value another setting replaced does not show (widgets with linked fields say which setting). */
  urlOverrideReason(field, state) {
    return state[field] === undefined
      ? 'another setting of this link replaces it'
      : `another setting of this link replaces it with "${String(state[field]).slice(0, QUOTE_CHARS)}"`;
  }

  /** Puts one field back to its starting value (subclasses with linked fields override). */
  revertField(field) {
    this.applyState({ [field]: this.defaults[field] });
  }

  /**
   * Whether this widget reads and writes the page URL. A host page's URL belongs to its author, so it is off
   * unless the element has `url-state` (not "false"/"off") or the page has <meta name="tally-url-state" content="on">
   * (tally's own index.html and embed.html do).
   */
  get keepsUrlState() {
    const own = this.getAttribute('url-state')?.trim().toLowerCase();
    if (own !== undefined) return ['', 'on', 'true'].includes(own); // anything else is refused (hostAttributeNotices)
    return document.querySelector('meta[name="tally-url-state"]')?.getAttribute('content')?.trim() === 'on';
  }

  /** Writes the state to the URL (the widget calls it after each reader edit), where URL state is on. */
  saveState() {
    if (this.keepsUrlState) writeState(this.key, this.values());
  }

  // ------------------------------------------------------------------------------------ element API
  /** The widget's state: the same fields and texts the URL holds (null until `ready`). */
  getState() {
    return this.mounted ? { ...this.values() } : null;
  }

  /**
   * Sets some or all state fields ({field: text | number | boolean}) as the URL would: each field is checked
   * like a URL value and then by the engine. Nothing changes if any field is refused; the error is a TallyError
   * whose `field` names the field. Returns the new state. Does not fire `change` (only reader edits do).
   */
  setState(state) {
    if (!this.mounted) throw new Error(`<${this.localName}> is not ready: await element.ready before setState()`);
    if (!state || typeof state !== 'object' || Array.isArray(state))
      throw new TallyError('', 'setState takes an object such as {"gpus": "8"}');
    const changes = {};
    for (const [field, raw] of Object.entries(state)) {
      if (!Object.hasOwn(this.stateSchema, field))
        throw new TallyError(
          field,
          `${field}: this widget has no such setting (it has ${Object.keys(this.stateSchema).join(', ')})`,
        );
      if (!['string', 'number', 'boolean'].includes(typeof raw))
        throw new TallyError(field, `${field} must be text, a number or a boolean`);
      const text = String(raw);
      const verdict =
        text.length > MAX_VALUE_LENGTH ? `longer than ${MAX_VALUE_LENGTH} characters` : this.stateSchema[field](text);
      if (verdict !== true)
        throw new TallyError(
          field,
          `${field}: ${typeof verdict === 'string' ? verdict : 'not an accepted value'}, got "${text.slice(0, QUOTE_CHARS)}"`,
        );
      changes[field] = text;
    }
    const before = this.values();
    this.applyState(changes);
    this.update();
    if (this.lastError && Object.hasOwn(changes, this.lastError.field)) {
      const { field, message } = this.lastError;
      this.applyState(before);
      this.update();
      throw new TallyError(field, message.startsWith(field) ? message : `${field}: ${message}`);
    }
    this.saveState();
    this.announced = JSON.stringify(this.values());
    return this.getState();
  }

  /** Fires `change` (detail: the state) when a reader edit changed the state since the last one. */
  announceState() {
    if (!this.mounted) return;
    const state = this.values();
    const text = JSON.stringify(state);
    if (text === this.announced) return;
    this.announced = text;
    this.dispatchEvent(new CustomEvent('change', { detail: { ...state }, bubbles: true, composed: true }));
  }

  /**
   * The `defaults-note` line naming each default of this widget that differs from the engine's, so the widget and
   * `tally call <method>` with the same attributes agree or the reader is told why not. `fields` lists
   * [{field, arg, engine: (result) => value}]: the engine is asked without the args of every field the page left at
   * the widget's default (as `tally call` with only the page's attributes), and its choices read from its answer;
   * where it refuses that, each field is asked alone.
   */
  noteEngineDefaults(method, args, fields) {
    const unset = fields.filter(({ field, arg }) => {
      const attribute = this.stateFields?.find((f) => f.name === field)?.attribute ?? field.replace(/_/g, '-');
      return arg in args && !this.hasAttribute(attribute) && this.values()[field] === this.fallbacks?.[field];
    });
    const ask = (omit) => {
      const rest = { ...args };
      for (const { arg } of omit) delete rest[arg];
      try {
        return this.engine.call(method, rest);
      } catch {
        return null; // refused without these: no choice of the engine's to compare
      }
    };
    const together = unset.length ? ask(unset) : null;
    const differ = [];
    for (const f of unset) {
      const answer = together ?? ask([f]);
      const theirs = answer === null ? undefined : f.engine(answer);
      if (theirs !== undefined && String(theirs) !== String(args[f.arg]))
        differ.push(`${f.field} is ${args[f.arg]} here, ${theirs} in the engine`);
    }
    const root = this.shadowRoot;
    let box = root.querySelector('.defaults-note');
    if (!box && !differ.length) return;
    if (!box) {
      box = document.createElement('p');
      box.className = 'defaults-note';
      box.part.add('defaults-note');
      (root.querySelector('.notice') ?? root.querySelector('.fields'))?.after(box);
    }
    box.textContent = differ.length
      ? `Defaults that differ from \`tally call ${method}\` with the same attributes: ${differ.join('; ')} (set the attribute to choose).`
      : '';
  }

  /** Sets data-tally-theme (which the shared styles key on) to the theme hostTheme resolves now. */
  applyTheme() {
    const theme = hostTheme(this);
    if (this.dataset.tallyTheme !== theme) this.dataset.tallyTheme = theme;
    if (this.mounted) this.hostAttributeNotices();
  }

  /** A host attribute outside its values is named, with the values, in the widget's notice line (and the console). */
  hostAttributeNotices() {
    for (const [name, allowed] of Object.entries(TallyWidget.hostAttributeOptions)) {
      const text = this.getAttribute(name);
      const bad = text !== null && !allowed.includes(text.trim().toLowerCase());
      const message = bad
        ? `Ignored attribute ${name}="${text.slice(0, QUOTE_CHARS)}": not one of ${allowed.map((v) => v || '(empty)').join(', ')}.`
        : null;
      if (bad && this.urlNotices?.get(`attribute:${name}`)?.text !== message)
        console.warn(`tally: <${this.localName}> ${message}`);
      this.setUrlNotice(`attribute:${name}`, message);
    }
  }

  disconnectedCallback() {
    themedWidgets.delete(this);
  }

  attributeChangedCallback(name, oldValue, value) {
    if (name === 'theme') {
      if (this.isConnected) this.applyTheme();
      return;
    }
    if (!this.mounted || oldValue === value || value === null) return;
    const field = name.replace(/-/g, '_');
    try {
      this.setState({ [field]: value });
      this.setUrlNotice(`attribute:${name}`, null);
    } catch (error) {
      if (!(error instanceof TallyError)) throw error;
      this.setUrlNotice(
        `attribute:${name}`,
        `Ignored attribute ${name}="${value.slice(0, QUOTE_CHARS)}": ${error.message}.`,
      );
    }
  }

  // ------------------------------------------------------------------------------------ shared plumbing
  /**
   * Calls `handler(control, event)` once per reader edit: text fields on `input`, selects and checkboxes on
   * `change` (they fire both events for one edit, which would otherwise ask the engine twice).
   */
  onControlEdit(handler) {
    const root = this.shadowRoot;
    const isText = (el) => el.matches?.('textarea, input:not([type="checkbox"]):not([type="radio"])');
    root.addEventListener('input', (event) => {
      if (event.target.name && isText(event.target)) handler(event.target, event);
    });
    root.addEventListener('change', (event) => {
      if (event.target.name && !isText(event.target)) handler(event.target, event);
    });
  }

  /**
   * The one path from an engine error to the screen: a TallyError is shown beside its field (engine argument
   * names mapped by `argToField`), recorded as this.lastError and returned; anything else is rethrown.
   */
  showEngineError(error, argToField = {}) {
    if (!(error instanceof TallyError)) throw error;
    const field = argToField[error.field] ?? error.field;
    showError(this.shadowRoot, field, error.message);
    this.lastError = { field, message: error.message };
    this.showWarnings([]);
    return this.lastError;
  }

  /**
   * Shows a result's `warnings` ([{field, message}]: legal but implausible input, e.g. an MFU above any
   * published run) in a status line the reader and screen readers get; an empty list clears it.
   */
  showWarnings(warnings) {
    const root = this.shadowRoot;
    let box = root.querySelector('.warnings');
    const list = (Array.isArray(warnings) ? warnings : []).filter((w) => w && w.message);
    if (!box) {
      if (!list.length) return;
      box = document.createElement('div');
      box.className = 'warnings';
      box.part.add('warnings');
      box.setAttribute('role', 'status');
      const anchor = root.querySelector('.notice');
      if (anchor) anchor.after(box);
      else (root.querySelector('.widget') ?? root).append(box);
    }
    box.replaceChildren(
      ...list.map((w) => {
        const line = document.createElement('p');
        line.textContent = `Warning: ${w.message}`; // textContent only: engine text never becomes markup
        if (w.field) line.dataset.field = w.field;
        return line;
      }),
    );
    if (list.length) this.dataset.warnings = String(list.length);
    else delete this.dataset.warnings;
  }

  /**
   * Redraws with `redraw()` whenever `element`'s shown width changes (rotation, window resize); shownWidth()
   * gives the last width. A ResizeObserver reports after layout, so drawing never forces a page layout.
   */
  observeWidth(element, redraw) {
    if (typeof ResizeObserver !== 'function') return;
    this.observed ??= new Map();
    if (this.observed.has(element)) return;
    this.resizeObserver ??= new ResizeObserver((entries) => {
      for (const entry of entries) {
        const watched = this.observed.get(entry.target);
        const now = Math.round(entry.contentRect.width);
        if (!watched || !now || Math.abs(now - (watched.width ?? 0)) < 2) continue;
        watched.width = now;
        requestAnimationFrame(() => watched.redraw());
      }
    });
    this.observed.set(element, { width: null, redraw });
    this.resizeObserver.observe(element);
  }

  /** The width `element` was last shown at in CSS px (undefined before its first layout). */
  shownWidth(element) {
    return this.observed?.get(element)?.width ?? undefined;
  }

  /** Adds the documented part names to the widget's elements (after mount; see PARTS). */
  applyParts() {
    for (const [selector, part] of PARTS)
      for (const el of this.shadowRoot.querySelectorAll(selector)) el.part.add(part);
  }

  holdError(field, message, delayMs) {
    this.heldErrors.set(field, message);
    clearTimeout(this.heldTimer);
    if (delayMs !== null) this.heldTimer = setTimeout(() => this.showHeldErrors(), delayMs);
    this.dataset.heldErrors = String(this.heldErrors.size);
  }

  showHeldErrors() {
    clearTimeout(this.heldTimer);
    for (const [field, message] of this.heldErrors) showErrorNow(this.shadowRoot, field, message);
    this.dropHeldErrors();
  }

  dropHeldErrors() {
    clearTimeout(this.heldTimer);
    this.heldErrors.clear();
    delete this.dataset.heldErrors;
  }

  async connectedCallback() {
    themedWidgets.add(this);
    watchHostTheme();
    this.applyTheme();
    if (this.engine || this.scheduled) return;
    this.shadowRoot.innerHTML = `<style>${baseCss}</style><div class="widget">Loading the engine…</div>`;
    // Widgets mount out of document order (those in view first): an id'd widget claims its URL key now, in
    // document order, so of two with the same id the first on the page keeps it (id-less keys count positions).
    if (this.id && isKeyId(this.id)) this.key ??= stateKey(this, '');
    const { firstScreen, due } = mountSchedule(this);
    this.scheduled = true;
    /** Resolves true when the widget was near the viewport at load (it mounts at once), false when it waits. */
    this.firstScreen = firstScreen;
    await due;
    try {
      this.engine = await getEngine();
    } catch (error) {
      this.shadowRoot.innerHTML = `<style>${baseCss}</style><div class="widget notice">The engine could not load: ${escapeHtml(error.message)}</div>`;
      this.resolveReady();
      return;
    }
    try {
      this.mount();
      attachShare(this);
      if (this.key) this.stopRefusals = onStateRefused(this.key, (message) => this.setUrlNotice(':link', message));
      if (typeof this.values === 'function' && this.stateSchema) {
        this.mounted = true;
        this.announced = JSON.stringify(this.values());
        // After the widget's own handlers: a reader edit that changed the state fires `change`.
        for (const type of ['input', 'change', 'click', 'keydown'])
          this.shadowRoot.addEventListener(type, () => queueMicrotask(() => this.announceState()));
      }
      this.hostAttributeNotices();
      this.applyParts();
    } catch (error) {
      // A widget that cannot start says so in its own box; the page around it still becomes ready.
      console.error(error);
      this.shadowRoot.innerHTML = `<style>${baseCss}</style><div class="widget notice">This figure could not start: ${escapeHtml(error.message)}</div>`;
    } finally {
      this.resolveReady();
    }
  }

  /** Subclasses build their DOM here (this.engine is ready). */
  mount() {}

  /**
   * Shows the URL values this widget ignored ([{param, field, reason}] from readState, or engine rejections).
   * Each line stays until the reader changes that field; clearErrors() does not touch them.
   */
  showUrlRejections(rejected) {
    for (const r of rejected) this.setUrlNotice(r.field ?? r.param, `${r.param} (${r.reason})`, true);
  }

  /** Sets (or with `text` null, removes) the URL notice line for `field`. */
  setUrlNotice(field, text, rejection = false) {
    this.urlNotices ??= new Map();
    if (text === null && !this.urlNotices.has(field)) return;
    if (text === null) this.urlNotices.delete(field);
    else this.urlNotices.set(field, { text, rejection });
    const root = this.shadowRoot;
    let box = root.querySelector('.url-notice');
    if (!box) {
      box = document.createElement('p');
      box.className = 'url-notice';
      box.setAttribute('role', 'status');
      const anchor = root.querySelector('.notice') ?? root.querySelector('.fields');
      if (anchor) anchor.before(box);
      else (root.querySelector('.widget') ?? root).append(box);
      // Changing a field the URL set wrongly settles that notice.
      const settle = (event) => {
        const name = event.target?.name;
        if (name && this.urlNotices.get(name)?.rejection) this.setUrlNotice(name, null);
      };
      root.addEventListener('input', settle);
      root.addEventListener('change', settle);
    }
    const rejections = [...this.urlNotices.values()].filter((n) => n.rejection).map((n) => n.text);
    const others = [...this.urlNotices.values()].filter((n) => !n.rejection).map((n) => n.text);
    box.textContent = [rejections.length ? `Ignored URL settings: ${rejections.join('; ')}.` : '', ...others]
      .filter(Boolean)
      .join(' ');
  }
}
