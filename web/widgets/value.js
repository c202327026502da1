// Inline engine values for the prose: the text never types a number the engine can compute.
//
//   <tally-value method="training_cost" args='{"params":70e9,...}' field="seconds" format="days0"></tally-value>
//
// calls engine.call(method, args), reads the dot path `field` of the result and shows it formatted.
// <tally-recipes> renders the engine's table of training recipes and their bytes per parameter.
// Both render into light DOM with textContent only, so they take the page's typography.
import {
  getEngine,
  escapeHtml,
  formatNumber,
  formatBytes,
  formatParams,
  formatPercent,
  defineWidget,
  ElementBase,
  SECONDS_PER_DAY,
  SECONDS_PER_HOUR,
} from './base.js';
import { trustedHtml } from './kit/trusted.js';

const GiB = 2 ** 30;
const MiB = 2 ** 20;

/** Display formats (never formulas: unit conversion and rounding only). */
export const FORMATS = {
  int: (v) => Math.round(v).toLocaleString('en-US'),
  num: (v) => formatNumber(v),
  sci: (v) => formatNumber(v, 3),
  // Up to 8 significant digits, for values that are exact in binary (65504, 0.015625).
  exact: (v) =>
    Math.abs(v) >= 1e-3 && Math.abs(v) < 1e7
      ? Number(v.toPrecision(8)).toLocaleString('en-US', { maximumFractionDigits: 10 })
      : formatNumber(v, 4),
  gb: (v) => formatBytes(v),
  gib: (v) => `${Number((v / GiB).toPrecision(3)).toLocaleString('en-US')} GiB`,
  mib: (v) => `${Number((v / MiB).toPrecision(6)).toLocaleString('en-US')} MiB`,
  mb: (v) => `${Math.round(v / 1e6).toLocaleString('en-US')} MB`,
  params: (v) => formatParams(v),
  gbps: (v) => `${Math.round(v / 1e9).toLocaleString('en-US')} GB/s`,
  tflops: (v) => `${Number((v / 1e12).toPrecision(4)).toLocaleString('en-US')} TFLOP/s`,
  fixed0: (v) => v.toLocaleString('en-US', { maximumFractionDigits: 0 }),
  fixed1: (v) => v.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 }),
  fixed2: (v) => v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }),
  ms1: (v) => (v * 1e3).toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 }), // seconds shown in ms
  us1: (v) => (v * 1e6).toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 }), // seconds shown in µs
  // Results carry seconds and FLOP/s: these show them in days, hours and TFLOP/s (number only, the prose names the unit).
  days0: (v) => FORMATS.fixed0(v / SECONDS_PER_DAY),
  days1: (v) => FORMATS.fixed1(v / SECONDS_PER_DAY),
  hours0: (v) => FORMATS.int(v / SECONDS_PER_HOUR),
  minutes0: (v) => FORMATS.int(v / 60),
  tflops0: (v) => FORMATS.fixed0(v / 1e12),
  // Two significant figures, for predictions whose error (a few percent) leaves no more.
  sig2: (v) => Number(v.toPrecision(2)).toLocaleString('en-US'),
  tflops_sig2: (v) => FORMATS.sig2(v / 1e12),
  pct: (v) => formatPercent(v),
  // Two significant figures in percent, for small errors that pct would print as 0.0% (0.028%).
  pct_sig2: (v) => `${Number((v * 100).toPrecision(2)).toLocaleString('en-US', { maximumFractionDigits: 20 })}%`,
  // A signed relative error in whole percent: "+22%", "−5%" (an error band's bounds).
  spct: (v) => `${v < 0 ? '−' : '+'}${Math.abs(Math.round(100 * v))}%`,
  // One decimal at any size, for shares that differ in the first decimal (two layouts' MFU).
  pct1: (v) => `${(v * 100).toFixed(1)}%`,
  text: (v) => String(v),
};

/**
 * Reads a path from a result: "a.b.0.c", and "formats[name=bf16].constants.max.value" picks the array
 * element whose `name` is "bf16". Undefined when any step is missing.
 */
export function pick(object, path) {
  let value = object;
  // Steps are separated by dots outside brackets: "tensors[name=layers.*.mlp.up.weight].count" has two.
  for (const [, key, , prop, wanted] of String(path).matchAll(/(?:^|\.)([^.[]*)(\[([a-z_]+)=([^\]]*)\])?/g)) {
    if (value == null) return undefined;
    if (key) value = value[key];
    if (prop) value = Array.isArray(value) ? value.find((item) => String(item?.[prop]) === wanted) : undefined;
  }
  return value;
}

/**
 * The text an inline value shows for an engine result: the build (scripts/build/build-site.mjs, same wasm engine
 * in node) and the browser both call this, so the prerendered page and the live page agree character for
 * character. Throws when the field is missing.
 */
export function valueText(method, result, field, formatName) {
  const format = FORMATS[formatName ?? 'num'] ?? FORMATS.num;
  const value = pick(result, field);
  if (value === undefined || value === null) throw new Error(`${method} has no result field "${field}"`);
  return typeof value === 'number' ? format(value) : String(value);
}

// Many inline values share one call (same method and args): compute each once per page.
const cache = new Map();
function cachedCall(engine, method, argsText) {
  const key = `${method}\u0000${argsText}`;
  if (!cache.has(key)) {
    try {
      cache.set(key, { result: engine.call(method, JSON.parse(argsText)) });
    } catch (error) {
      cache.set(key, { error });
    }
  }
  return cache.get(key);
}

// Inline values are computed in small batches when the browser is idle, after the widgets have wired their
// controls, so eighty numbers in the prose do not delay the page becoming interactive.
const queue = new Set();
let scheduled = false;
const idle = globalThis.requestIdleCallback ?? ((fn) => setTimeout(() => fn({ timeRemaining: () => 8 }), 16));
function schedule(value) {
  queue.add(value);
  if (scheduled) return;
  scheduled = true;
  getEngine().then(
    (engine) => {
      idle(
        function drain(deadline) {
          for (const next of queue) {
            queue.delete(next);
            next.renderWith(engine); // at least one per slice, then as many as the idle period allows
            if (deadline.timeRemaining() < 2) break;
          }
          if (queue.size) idle(drain, { timeout: 1000 });
          else scheduled = false;
        },
        { timeout: 1000 },
      );
    },
    (error) => {
      for (const next of queue) next.fail(`the engine could not load: ${error.message}`);
      queue.clear();
      scheduled = false;
    },
  );
}

class TallyValue extends ElementBase {
  static observedAttributes = ['method', 'args', 'field', 'format'];
  #live = false; // attribute reports before the first connect come from parsing, not from a change

  connectedCallback() {
    this.#live = true;
    // The build wrote the engine's number into the page (data-state="ok"): nothing to compute until an
    // attribute changes.
    if (this.dataset.state === 'ok') return;
    if (!this.textContent) this.textContent = '…';
    this.dataset.state = 'loading';
    schedule(this);
  }

  attributeChangedCallback(name, oldValue, newValue) {
    if (this.#live && this.isConnected && oldValue !== newValue) schedule(this);
  }

  renderWith(engine) {
    const method = this.getAttribute('method') ?? '';
    const outcome = cachedCall(engine, method, this.getAttribute('args') ?? '{}');
    if (outcome.error) {
      this.fail(`${method}: ${outcome.error.message}`);
      return;
    }
    try {
      this.textContent = valueText(
        method,
        outcome.result,
        this.getAttribute('field') ?? '',
        this.getAttribute('format') ?? 'num',
      );
    } catch (error) {
      this.fail(error.message);
      return;
    }
    this.dataset.state = 'ok';
    this.removeAttribute('title');
  }

  fail(message) {
    this.textContent = 'n/a';
    this.dataset.state = 'error';
    this.title = message;
  }
}

/** Bytes per parameter for reading: 16 -> "16", 2.00390625 -> "2.004*" (the note under the table explains it). */
export function bytesPerParam(bytes) {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return '—';
  return Number.isInteger(bytes) ? String(bytes) : `${Number(bytes.toFixed(3))}*`;
}

/** The fractional part of a byte count as "1/256" when it is an exact binary fraction, else ''. Display only. */
export function binaryFraction(bytes) {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes) || Number.isInteger(bytes)) return '';
  const part = bytes - Math.floor(bytes);
  for (let den = 2; den <= 1 << 20; den *= 2) {
    const num = part * den;
    if (Number.isInteger(num)) return `${num}/${den}`;
  }
  return '';
}

class TallyRecipes extends ElementBase {
  connectedCallback() {
    if (this.dataset.state === 'ok') return; // prerendered by the build
    this.textContent = 'Loading recipes…';
    // Built when the browser is idle, like the inline values (eleven memory budgets, a few ms).
    getEngine().then(
      (engine) => idle(() => this.build(engine), { timeout: 1000 }),
      (error) => {
        this.textContent = `The recipe table could not be computed: ${error.message}`;
        this.dataset.state = 'error';
      },
    );
  }

  build(engine) {
    try {
      this.innerHTML = trustedHtml(recipesTableHtml(engine));
      this.dataset.state = 'ok';
    } catch (error) {
      this.textContent = `The recipe table could not be computed: ${error.message}`;
      this.dataset.state = 'error';
    }
  }
}

/** The recipe table (and a note for each recipe whose bytes are not whole) as escaped HTML, for the build and the browser. */
export function recipesTableHtml(engine) {
  const { recipes } = engine.call('recipes', {});
  // Per-class bytes per parameter of each recipe, as the memory budget counts them (any model will do).
  const breakdown = new Map(
    recipes.map((r) => [
      r.id,
      engine.call('memory_budget', { model: 'gpt2-small', recipe: r.id, seq: 1 }).bytes_per_param,
    ]),
  );
  const optimizers = new Map((engine.call('presets', {}).optimizers ?? []).map((o) => [o.id, o.description]));
  const cell = (text, title) => `<td${title ? ` title="${escapeHtml(title)}"` : ''}>${escapeHtml(text)}</td>`;
  const part = (dtype, bytes) => (!dtype || dtype === 'none' || !bytes ? '—' : `${bytesPerParam(bytes)} (${dtype})`);
  const head = ['recipe', 'weights', 'gradients', 'master copy', 'optimizer states', 'bytes / param']
    .map((label) => `<th scope="col">${label}</th>`)
    .join('');
  const rows = recipes
    .map((recipe) => {
      const per = breakdown.get(recipe.id) ?? {};
      return (
        `<tr>${cell(recipe.name ?? recipe.id, recipe.description)}${cell(part(recipe.weights, per.weights))}` +
        `${cell(part(recipe.gradients, per.gradients))}${cell(part(recipe.master_weights, per.master_weights))}` +
        `${cell(part(`${recipe.optimizer}, ${recipe.optimizer_state}`, per.optimizer_states))}` +
        `<td><strong>${escapeHtml(bytesPerParam(per.total ?? recipe.bytes_per_param))}</strong></td></tr>`
      );
    })
    .join('');
  // One note per recipe whose bytes are not whole: where the fraction comes from (block scales).
  const notes = recipes
    .map((recipe) => {
      const states = breakdown.get(recipe.id)?.optimizer_states;
      const fraction = binaryFraction(states);
      if (!fraction) return '';
      return `<p class="caption recipe-note">${escapeHtml(
        `* ${recipe.name}: the optimizer states take ${Math.floor(states)} + ${fraction} bytes per parameter ` +
          `(shown rounded as ${bytesPerParam(states).replace('*', '')}): ${optimizers.get(recipe.optimizer) ?? recipe.description}. ` +
          `The ${fraction} byte is those scales.`,
      )}</p>`;
    })
    .join('');
  return (
    `<table class="numbers recipes" tabindex="0"><caption class="visually-hidden">Training recipes and the bytes each parameter costs, per state</caption>` +
    `<thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>${notes}`
  );
}

defineWidget('tally-value', TallyValue);
defineWidget('tally-recipes', TallyRecipes);
