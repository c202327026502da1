// <tally-float>: the float-format bit explorer.
//
// Attributes set the starting state (the URL overrides them, see web/state.js):
//   format="bf16" value="3.14159"   (or hex="0x4049" instead of value)
//   rounding="nearest_even|nearest_away|toward_zero|up|down" saturate="default|true|false"
//   outlier="40" seed="1"            (the block-format panel's generated vector)
//   block="1, 2.5, -3"               (the block-format panel's own values, instead of outlier and seed)
// Every number shown comes from the engine (float_encode, float_decode, float_compare, float_table,
// float_formats, block_compare); this module decodes nothing and only lays results out.
import {
  TallyWidget,
  TallyError,
  baseCss,
  showError,
  clearErrors,
  escapeHtml,
  formatNumber,
  fieldControl,
} from './base.js';
import { drawWidth, exponentTicks, labelRoom, linearScale, powerLabel, powerOfTwoStride } from './kit/chart.js';
import { trustedHtml } from './kit/trusted.js';

const SATURATION = [
  { value: 'default', label: "format's default" },
  { value: 'true', label: 'saturate to ±max' },
  { value: 'false', label: 'overflow to inf / NaN' },
];
const JUMPS = [
  { key: 'max', label: 'max' },
  { key: 'min_normal', label: 'min normal' },
  { key: 'min_subnormal', label: 'min subnormal' },
  { key: 'epsilon', label: 'epsilon' },
];
/**
 * The widget's state fields (kit/store.js). The state is this.state, not read from the controls: a hex code or a
 * number leads (values()), and a block's own values replace the generated vector's outlier and seed.
 */
const FIELDS = [
  {
    name: 'format',
    kind: 'select',
    label: 'Format',
    options: (w) => w.formats.map((f) => ({ value: f.name, label: f.display_name })),
    fallback: 'bf16',
    arg: 'format',
  },
  {
    name: 'value',
    kind: 'text',
    label: 'Number (1e-8, -0, inf, nan)',
    check: (t) => t.length <= 400 || 'too long',
    fallback: '3.14159', // π to five places: bf16 keeps 3.140625, so the first view shows a rounding
    arg: 'value',
  },
  {
    name: 'hex',
    kind: 'text',
    label: 'Bits as hex',
    check: (t) => /^(0x)?[0-9a-fA-F]{1,16}$/.test(t) || 'not a hex code',
    fallback: '',
    arg: 'hex',
  },
  {
    name: 'rounding',
    kind: 'select',
    label: 'Rounding',
    options: (w) => w.roundings,
    fallback: 'nearest_even',
    arg: 'rounding',
  },
  { name: 'saturate', kind: 'select', label: 'On overflow', options: SATURATION, fallback: 'default', arg: 'saturate' },
  {
    name: 'outlier',
    kind: 'text',
    label: 'Generated outlier',
    check: (t) => /^[-+]?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(t) || 'not a number',
    fallback: '40',
    arg: 'outlier',
  },
  {
    name: 'seed',
    kind: 'text',
    label: 'Seed',
    check: (t) => /^\d{1,9}$/.test(t) || 'not a whole number',
    fallback: '1',
    arg: 'seed',
  },
  {
    name: 'block',
    kind: 'text',
    label: 'Values (comma separated; empty = generated)',
    check: (t) => t.length <= 4000 || 'too long',
    fallback: '',
    arg: 'values',
  },
];
const label = (name) => FIELDS.find((f) => f.name === name).label;
/** Engine argument -> this widget's input, for errors the engine reports: the table's, and the decoder's. */
const ARG_TO_FIELD = {
  ...Object.fromEntries(FIELDS.filter((f) => f.name !== 'block').map((f) => [f.arg, f.name])),
  code: 'hex',
  flip_bit: 'flip_bit',
};

const css = `
.top { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(160px, 40%), 1fr)); gap: 10px 14px; }
.field input.mono, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
.bits { display: flex; flex-wrap: wrap; gap: 3px; margin: 14px 0 4px; }
.bit { font: 600 14px ui-monospace, monospace; min-width: 26px; min-height: 34px; padding: 0; border-radius: 4px;
  border: 1px solid transparent; color: #fff; }
.bit.sign { background: #c2410c; }
.bit.exponent { background: #1d4ed8; }
.bit.mantissa { background: #15803d; }
.bit[aria-pressed="false"] { opacity: 0.62; }
.bit:hover { border-color: var(--fg); }
.bit.gap-before { margin-left: 7px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: 13px; color: var(--muted); }
.legend b { font-family: ui-monospace, monospace; color: var(--fg); font-weight: 600; }
.legend .sw { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; }
.readout { margin-top: 10px; display: grid; gap: 4px; }
.stored { font-size: 20px; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.formula { font: 15px ui-monospace, monospace; overflow-wrap: anywhere; padding: 4px 0; }
.flags { display: flex; flex-wrap: wrap; gap: 6px; }
.flag { font-size: 12px; padding: 1px 8px; border-radius: 10px; border: 1px solid var(--border); background: var(--bg); }
.flag.warn { border-color: var(--error); color: var(--error); }
.flag.good { border-color: var(--ok); color: var(--ok); }
.small { font-size: 13px; color: var(--muted); overflow-wrap: anywhere; }
.flipper { display: flex; gap: 6px; align-items: flex-end; }
.flipper .field { max-width: 130px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; margin-top: 6px; }
th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid var(--border); vertical-align: top; }
th { font-size: 12px; color: var(--muted); font-weight: 600; }
td.num { font-variant-numeric: tabular-nums; }
td.mono { white-space: nowrap; }
td.exact { max-width: 22ch; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
tr.current td { background: color-mix(in srgb, var(--accent) 14%, transparent); }
tbody tr { cursor: pointer; }
.note-warn { color: var(--error); }
h2 { font-size: 14px; margin: 16px 0 4px; } /* h2: the level below an embed frame's h1 and a chapter's h1 */
.chart { width: 100%; height: auto; display: block; }
.chart .step { fill: none; stroke: var(--accent); stroke-width: 2; }
.chart .sub { stroke-dasharray: 4 3; }
.chart .tick { stroke: var(--muted); stroke-width: 1; }
.chart .marker { stroke: #c2410c; stroke-width: 2; }
.chart .marker-dot { fill: #c2410c; }
.scroll { overflow-x: auto; } /* focusable (tabindex) so a keyboard scrolls it too */
.block-grid { display: grid; grid-template-columns: minmax(0, 2fr) minmax(0, 1fr) minmax(0, 1fr); gap: 8px 12px; align-items: end; }
@media (max-width: 560px) {
  .top { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .top .field.wide { grid-column: 1 / -1; }
  .bits { gap: 2px; }
  .bit { min-width: 24px; min-height: 32px; font-size: 12px; } /* 24 px: WCAG 2.2 target size (2.5.8); a row wraps */
  .bit.gap-before { margin-left: 5px; }
  table { font-size: 12px; }
  th, td { padding: 3px 3px; }
  td.mono { white-space: normal; overflow-wrap: anywhere; }
  td.mono.hex { white-space: nowrap; overflow-wrap: normal; } /* a bit pattern is one token: the table scrolls instead */
  .block-grid { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }
  .block-grid .wide { grid-column: 1 / -1; }
  td.exact { width: 9ch; min-width: 9ch; max-width: 9ch; } /* room for a short value such as 3.140625 beside the unbroken hex */
  .hide-phone { display: none; }
}
`;

function textField({ name, label, value = '', mono = false, inputmode = 'text' }) {
  const id = `f-${name}`;
  return `<div class="field" data-field="${escapeHtml(name)}">
    <label for="${id}">${escapeHtml(label)}</label>
    <input id="${id}" name="${escapeHtml(name)}" class="${mono ? 'mono' : ''}" inputmode="${inputmode}" autocomplete="off"
      spellcheck="false" value="${escapeHtml(value)}" aria-describedby="${id}-error">
    <span class="error" id="${id}-error" role="alert"></span>
  </div>`;
}

function shortExact(text, max = 26) {
  if (text.length <= max) return text;
  return `${text.slice(0, max - 1)}…`;
}

class TallyFloat extends TallyWidget {
  static fields = FIELDS;

  build() {
    const catalogue = this.engine.call('float_formats', {});
    this.formats = catalogue.formats;
    // Rounding modes and their labels are the engine's (tally::fp::round_label), like the formats' names.
    this.roundings = catalogue.roundings.map((r) => ({ value: r.name, label: r.label }));
    const start = this.declareState('float');
    const fromHex = this.urlFields.has('hex') || (!this.urlFields.has('value') && this.hasAttribute('hex'));
    this.state = { ...start, source: fromHex ? 'hex' : 'value' };
    this.render();
    this.observeWidth(this.shadowRoot.querySelector('[data-out="chart"]'), () => this.gaps && this.updateChart());
    this.blocksDirty = true; // the first update draws the block table in the same engine call
    this.firstUpdate();
  }

  /** Sets state fields from texts (setState, URL reverts); a hex or a value also says which one leads. */
  applyState(values) {
    const root = this.shadowRoot;
    for (const [name, text] of Object.entries(values)) {
      this.state[name] = text;
      const control = root.querySelector(`[name="${name}"]`);
      if (control) control.value = text;
    }
    if ('hex' in values) this.state.source = 'hex';
    else if ('value' in values) this.state.source = 'value';
    if ('block' in values || 'outlier' in values || 'seed' in values) this.blocksDirty = true;
  }

  /** A hex code leads over a number, and a block's own values over the generated vector's outlier and seed. */
  urlOverrideReason(field, state) {
    if (field === 'value' && state.hex !== undefined) return `${this.key}.hex gives the number`;
    if ((field === 'outlier' || field === 'seed') && state.block !== undefined)
      return `${this.key}.block gives the values, so nothing is generated`;
    return super.urlOverrideReason(field, state);
  }

  /** The state as the URL holds it. */
  values() {
    const s = this.state;
    const out = { format: s.format, rounding: s.rounding, saturate: s.saturate };
    if (s.source === 'hex') out.hex = s.hex;
    else out.value = s.value;
    if (s.block.trim() !== '') out.block = s.block;
    else {
      out.outlier = s.outlier;
      out.seed = s.seed;
    }
    return out;
  }

  render() {
    const s = this.state;
    this.shadowRoot.innerHTML = trustedHtml(`<style>${baseCss}${css}</style>
    <div class="widget">
      <div class="top">
        ${fieldControl(FIELDS, 'format', s.format, this)}
        ${textField({ name: 'value', label: label('value'), value: s.source === 'value' ? s.value : '' })}
        ${textField({ name: 'hex', label: label('hex'), value: s.hex, mono: true })}
        ${fieldControl(FIELDS, 'rounding', s.rounding, this)}
        ${fieldControl(FIELDS, 'saturate', s.saturate, this)}
      </div>
      <div class="bits" role="group" aria-label="Bits, most significant first: click one to flip it"></div>
      <div class="legend"></div>
      <div class="readout">
        <div class="stored" data-out="stored" aria-live="polite"></div>
        <div class="formula" data-out="formula"></div>
        <div class="flags" data-out="flags"></div>
        <div class="small" data-out="input"></div>
      </div>
      <div class="toolbar">
        <button type="button" data-step="prev" aria-label="prev: the previous representable value">◀ prev</button>
        <button type="button" data-step="next" aria-label="next: the next representable value">next ▶</button>
        ${JUMPS.map((j) => `<button type="button" data-jump="${j.key}">${escapeHtml(j.label)}</button>`).join('')}
        <div class="flipper">
          ${textField({ name: 'flip_bit', label: 'Flip bit number', value: '', inputmode: 'numeric' })}
          <button type="button" data-action="flip">flip</button>
        </div>
      </div>
      <div class="notice" role="status"></div>
      <h2>The same number in every format</h2>
      <div class="scroll" tabindex="0" role="region" aria-label="The same number in every format"><table data-out="compare">
        <thead><tr><th scope="col">format</th><th scope="col">bits</th><th scope="col">stored value (exact)</th>
        <th scope="col" class="hide-phone">rel. error</th><th scope="col">what happened</th></tr></thead><tbody></tbody></table></div>
      <h2>Where the precision goes: gap between neighbouring values (log scale)</h2>
      <svg class="chart" data-out="chart" role="img" aria-label="Gap between neighbouring values across the format's range"></svg>
      <div class="small" data-out="chart-note"></div>
      <h2>Block formats: one vector, four ways to spend 4 to 8 bits per value</h2>
      <div class="block-grid">
        <div class="field wide" data-field="block">
          <label for="f-block">${escapeHtml(label('block'))}</label>
          <textarea id="f-block" name="block" spellcheck="false" aria-describedby="f-block-error">${escapeHtml(s.block)}</textarea>
          <span class="error" id="f-block-error" role="alert"></span>
        </div>
        ${textField({ name: 'outlier', label: label('outlier'), value: s.outlier, inputmode: 'decimal' })}
        ${textField({ name: 'seed', label: label('seed'), value: s.seed, inputmode: 'numeric' })}
      </div>
      <div class="toolbar"><button type="button" data-action="generate">Generate 64 values with one outlier</button></div>
      <div class="scroll" tabindex="0" role="region" aria-label="Block formats compared"><table data-out="blocks">
        <thead><tr><th scope="col">scheme</th><th scope="col">bits / value</th><th scope="col">rel. error</th>
        <th scope="col">max abs error</th><th scope="col">flushed to 0</th><th scope="col" class="hide-phone">block scales</th></tr></thead>
        <tbody></tbody></table></div>
    </div>`);
    const root = this.shadowRoot;
    const on = (sel, ev, fn) => root.querySelector(sel).addEventListener(ev, fn);
    on('[name="format"]', 'change', (e) => {
      // Keep the number, not the bits, when switching formats.
      if (this.state.source === 'hex' && this.current) this.state.value = this.current.exact;
      this.state.source = 'value';
      this.state.format = e.target.value;
      this.update();
    });
    on('[name="value"]', 'input', (e) => {
      this.state.source = 'value';
      this.state.value = e.target.value;
      this.update();
    });
    on('[name="hex"]', 'input', (e) => {
      this.state.source = 'hex';
      this.state.hex = e.target.value;
      this.update();
    });
    on('[name="rounding"]', 'change', (e) => {
      this.state.rounding = e.target.value;
      this.update();
    });
    on('[name="saturate"]', 'change', (e) => {
      this.state.saturate = e.target.value;
      this.update();
    });
    root.querySelector('.bits').addEventListener('click', (e) => {
      const button = e.target.closest('button[data-bit]');
      if (button) this.flipBit(Number(button.dataset.bit));
    });
    for (const b of root.querySelectorAll('[data-step]')) b.addEventListener('click', () => this.step(b.dataset.step));
    for (const b of root.querySelectorAll('[data-jump]')) b.addEventListener('click', () => this.jump(b.dataset.jump));
    on('[data-action="flip"]', 'click', () => this.flipBit(root.querySelector('[name="flip_bit"]').value));
    on('[name="flip_bit"]', 'keydown', (e) => {
      if (e.key === 'Enter') this.flipBit(e.target.value);
    });
    root.querySelector('[data-out="compare"] tbody').addEventListener('click', (e) => {
      const row = e.target.closest('tr[data-format]');
      if (!row) return;
      root.querySelector('[name="format"]').value = row.dataset.format;
      root.querySelector('[name="format"]').dispatchEvent(new Event('change'));
    });
    on('[name="block"]', 'input', (e) => {
      this.state.block = e.target.value;
      this.updateBlocks();
    });
    on('[name="outlier"]', 'input', (e) => {
      this.state.outlier = e.target.value;
      this.state.block = '';
      this.syncBlockText();
      this.updateBlocks();
    });
    on('[name="seed"]', 'input', (e) => {
      this.state.seed = e.target.value;
      this.state.block = '';
      this.syncBlockText();
      this.updateBlocks();
    });
    on('[data-action="generate"]', 'click', () => {
      this.state.block = '';
      this.syncBlockText();
      this.updateBlocks();
    });
  }

  syncBlockText() {
    this.shadowRoot.querySelector('[name="block"]').value = this.state.block;
  }

  args() {
    const a = { format: this.state.format, rounding: this.state.rounding };
    if (this.state.saturate !== 'default') a.saturate = this.state.saturate === 'true';
    return a;
  }

  /** Shows an engine error beside the input it concerns (or in the notice line). */
  fail(error) {
    this.showEngineError(error, ARG_TO_FIELD);
  }

  /**
   * Asks the engine for everything the explorer shows, in one float_explore call: the stored value, every
   * format side by side, the gap table when the format changed, and the block table when its inputs did.
   * `extra` adds decode arguments (flip_bit). Throws the engine's error for the stored value.
   */
  explore(extra = {}) {
    const s = this.state;
    const args = { ...this.args(), ...(s.source === 'hex' ? { hex: s.hex } : { value: s.value }), ...extra };
    if (extra.hex !== undefined) delete args.value;
    if (this.chartFormat !== s.format) args.table = true;
    if (this.blocksDirty) {
      try {
        args.blocks = this.blockArgs();
      } catch (error) {
        if (!(error instanceof TallyError)) throw error;
        this.blocksDirty = false;
        this.showBlockError(error);
      }
    }
    const r = this.engine.call('float_explore', args);
    this.recordCall('float_explore', args, r);
    if (r.table) {
      this.chartFormat = s.format;
      this.gaps = r.table.gaps;
      this.valueTable = r.table.values ? { values: r.table.values } : null;
    }
    if (args.blocks) {
      this.blocksDirty = false;
      if (r.blocks) this.showBlocks(r.blocks);
      else this.showBlockError(new TallyError(r.blocks_error.field, r.blocks_error.message));
    }
    return r;
  }

  /** Recomputes everything from this.state. */
  update() {
    const root = this.beginUpdate();
    let r;
    try {
      r = this.explore();
    } catch (error) {
      this.fail(error);
      this.current = null;
      this.showInvalid();
      this.save();
      if (this.blocksDirty) this.updateBlocks(); // the stored value failed, so the blocks need their own call
      return;
    }
    this.show(r.stored, r.compare, [...(r.warnings ?? []), ...(r.stored.warnings ?? [])]);
  }

  show(result, compare, warnings) {
    const root = this.shadowRoot;
    const s = this.state;
    this.current = result;
    this.showWarnings(warnings);
    s.hex = result.hex;
    if (s.source === 'hex') s.value = result.exact;
    const hexInput = root.querySelector('[name="hex"]');
    if (root.activeElement !== hexInput || s.source !== 'hex') hexInput.value = result.hex;
    const valueInput = root.querySelector('[name="value"]');
    if (s.source === 'hex' && root.activeElement !== valueInput)
      valueInput.value = result.exact.length <= 60 ? result.exact : '';
    root.querySelector('[name="format"]').value = s.format;

    // Bits: sign | exponent | mantissa, most significant first.
    const nbits = result.bits.length;
    const fb = result.field_bits;
    const kinds = [...fb.sign]
      .map(() => 'sign')
      .concat(
        [...fb.exponent].map(() => 'exponent'),
        [...fb.mantissa].map(() => 'mantissa'),
      );
    // A reader flipping bits from the keyboard keeps the focus on the bit they flipped (the buttons are redrawn).
    const focusedBit = root.activeElement?.closest?.('.bits button[data-bit]')?.dataset.bit;
    root.querySelector('.bits').innerHTML = trustedHtml(
      [...result.bits]
        .map((ch, i) => {
          const bit = nbits - 1 - i;
          const kind = kinds[i];
          const gap = i > 0 && kinds[i - 1] !== kind ? ' gap-before' : '';
          return `<button type="button" class="bit ${kind}${gap}" data-bit="${bit}" aria-pressed="${ch === '1'}"
        aria-label="bit ${bit} (${kind}) is ${ch}; flip it" title="bit ${bit} (${kind})">${ch}</button>`;
        })
        .join(''),
    );
    if (focusedBit !== undefined) root.querySelector(`.bits button[data-bit="${focusedBit}"]`)?.focus();
    const f = this.formats.find((x) => x.name === s.format);
    const unb = result.unbiased_exponent === null ? '' : ` → 2^${result.unbiased_exponent}`;
    root.querySelector('.legend').innerHTML = trustedHtml(`
      ${fb.sign ? `<span><span class="sw" style="background:#c2410c"></span>sign <b>${escapeHtml(fb.sign)}</b> = ${result.fields.sign}</span>` : '<span>no sign bit</span>'}
      <span><span class="sw" style="background:#1d4ed8"></span>exponent <b>${escapeHtml(fb.exponent)}</b> = ${result.fields.exponent}, bias ${f.bias}${escapeHtml(unb)}</span>
      ${fb.mantissa ? `<span><span class="sw" style="background:#15803d"></span>mantissa <b>${escapeHtml(fb.mantissa)}</b> = ${result.fields.mantissa}${result.significand ? ` → significand ${escapeHtml(result.significand)}` : ''}</span>` : '<span>no mantissa bits</span>'}`);

    root.querySelector('[data-out="stored"]').textContent =
      `${s.format} ${result.hex} = ${result.class === 'nan' ? 'NaN' : result.exact}`;
    root.querySelector('[data-out="formula"]').textContent = result.formula;
    // The engine words what storing did (tally::fp::store_notes); the widget only styles it.
    const flags = [`<span class="flag">${escapeHtml(result.class)}</span>`];
    for (const note of result.notes)
      flags.push(`<span class="flag${note.kind ? ` ${note.kind}` : ''}">${escapeHtml(note.text)}</span>`);
    root.querySelector('[data-out="flags"]').innerHTML = trustedHtml(flags.join(''));
    root.querySelector('[data-out="input"]').textContent =
      'input' in result
        ? `input ${result.input_exact}${result.error_abs !== null ? `; error ${result.error_abs === 0 ? '0' : formatNumber(result.error_abs)} (relative ${result.error_rel === null ? '—' : formatNumber(result.error_rel)})` : ''}; ulp here ${result.ulp_exact ?? '—'}`
        : `decoded from the bits; ulp here ${result.ulp_exact ?? '—'}`;
    root.querySelector('[data-step="next"]').disabled = !result.next;
    root.querySelector('[data-step="prev"]').disabled = !result.prev;

    this.showCompare(compare);
    this.updateChart();
    this.save();
  }

  showInvalid() {
    const root = this.shadowRoot;
    root.querySelector('[data-out="stored"]').textContent = '—';
    root.querySelector('[data-out="formula"]').textContent = '';
    root.querySelector('[data-out="flags"]').innerHTML = trustedHtml('');
    root.querySelector('[data-out="input"]').textContent = '';
    root.querySelector('[data-out="compare"] tbody').innerHTML = trustedHtml('');
  }

  showCompare(cmp) {
    const s = this.state;
    const tbody = this.shadowRoot.querySelector('[data-out="compare"] tbody');
    tbody.innerHTML = trustedHtml(
      cmp.results
        .map((r) => {
          const notes = r.notes.map((n) => n.text);
          const warn = r.notes.some((n) => n.kind === 'warn');
          const rel = r.error_rel === null ? '—' : r.error_rel === 0 ? '0' : formatNumber(r.error_rel, 2);
          return `<tr data-format="${escapeHtml(r.format)}" class="${r.format === s.format ? 'current' : ''}">
        <td>${escapeHtml(r.format)}</td><td class="mono hex">${escapeHtml(r.hex)}</td>
        <td class="exact mono" title="${escapeHtml(r.exact)}">${escapeHtml(r.class === 'nan' ? 'NaN' : shortExact(r.exact))}</td>
        <td class="num hide-phone">${rel}</td><td class="${warn ? 'note-warn' : ''}">${escapeHtml(notes.join(', '))}</td></tr>`;
        })
        .join(''),
    );
  }

  updateChart() {
    const s = this.state;
    const svg = this.shadowRoot.querySelector('[data-out="chart"]');
    // Laid out at the width it is shown (observeWidth), so labels stay readable on a phone. Reading the width
    // from layout here instead forced a layout of the whole page on every keystroke (about 60 ms of each update).
    const W = drawWidth(this.shownWidth(svg), { min: 300, max: 720 });
    const H = W < 480 ? 190 : 210,
      L = 58,
      R = 14,
      T = 14,
      B = 30; // L: room for the widest y label ("2^-128")
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    // Positions on a log2 axis: display geometry only (the values themselves come from the engine).
    const lg = (v) => Math.log2(v);
    const rows = this.gaps;
    const xs = rows.flatMap((r) => [lg(r.from), lg(r.to)]);
    const ys = rows.map((r) => lg(r.gap));
    const x0 = Math.min(...xs),
      x1 = Math.max(...xs) + 1e-9;
    const y0 = Math.min(...ys) - 0.5,
      y1 = Math.max(...ys) + 0.5;
    const X = linearScale([x0, x1], [L, W - R]);
    const Y = linearScale([y0, y1], [H - B, T]);
    let marker = '';
    const cur = this.current;
    if (cur && cur.value !== null && cur.value !== 0 && cur.ulp) {
      const v = Math.abs(cur.value);
      const mx = X(lg(v)),
        my = Y(lg(cur.ulp));
      marker = `<line class="marker" x1="${mx.toFixed(2)}" x2="${mx.toFixed(2)}" y1="${T}" y2="${H - B}"></line>
        <circle class="marker-dot" cx="${mx.toFixed(2)}" cy="${my.toFixed(2)}" r="4"></circle>`;
    }
    // The steps (hundreds of lines) change only with the format and the width: build and parse them once, and
    // move only the current value's marker on each keystroke.
    const drawn = `${s.format}|${W}`;
    if (this.chartDrawn !== drawn || !svg.querySelector('g.cursor')) {
      this.chartDrawn = drawn;
      // Each binade's gap runs from its first value to the next binade's first value (or to max).
      const path = rows.map(
        (r, i) =>
          `<line class="step${r.kind === 'subnormal' ? ' sub' : ''}" x1="${X(lg(r.from)).toFixed(2)}" x2="${X(lg(i + 1 < rows.length ? rows[i + 1].from : r.to)).toFixed(2)}" y1="${Y(lg(r.gap)).toFixed(2)}" y2="${Y(lg(r.gap)).toFixed(2)}"></line>`,
      );
      const risers = rows
        .slice(1)
        .map(
          (r, i) =>
            `<line class="step" x1="${X(lg(r.from)).toFixed(2)}" x2="${X(lg(r.from)).toFixed(2)}" y1="${Y(lg(rows[i].gap)).toFixed(2)}" y2="${Y(lg(r.gap)).toFixed(2)}"></line>`,
        );
      const ticks = [];
      if (this.valueTable) {
        for (const v of this.valueTable.values)
          if (v > 0)
            ticks.push(
              `<line class="tick" x1="${X(lg(v)).toFixed(2)}" x2="${X(lg(v)).toFixed(2)}" y1="${H - B + 2}" y2="${H - B + 9}"></line>`,
            );
      }
      const axis = [];
      // Label every k-th power of two, with k a power of two leaving room for about one label per 70px (x), 28px (y).
      for (const e of exponentTicks(x0, x1, powerOfTwoStride(x1 - x0, labelRoom(W - L - R, 70))))
        axis.push(
          `<text x="${X(e).toFixed(1)}" y="${H - 6}" text-anchor="middle">${powerLabel(2, e, { caret: true })}</text>`,
        );
      for (const e of exponentTicks(y0, y1, powerOfTwoStride(y1 - y0, labelRoom(H - T - B, 28))))
        axis.push(
          `<text x="${L - 6}" y="${(Y(e) + 4).toFixed(1)}" text-anchor="end">${powerLabel(2, e, { caret: true })}</text>`,
        );
      svg.innerHTML =
        trustedHtml(`<g class="grid"><line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}"></line><line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}"></line></g>
        ${path.join('')}${risers.join('')}${ticks.join('')}<g class="cursor"></g>${axis.join('')}`);
    }
    svg.querySelector('g.cursor').innerHTML = trustedHtml(marker);
    const top = rows[rows.length - 1];
    this.shadowRoot.querySelector('[data-out="chart-note"]').textContent =
      `x: value, y: distance to the next value, both log scale${this.valueTable ? '; ticks: every positive value' : ''}. ` +
      `${rows.length} binades; near the top the gap is ${top.gap === 0 ? '—' : formatNumber(top.gap)}, ` +
      `and each doubling of the value doubles the gap (dashed: subnormals, where the gap stays fixed).` +
      (cur && cur.value !== null && cur.value !== 0 ? ' The orange line is the current value.' : '');
  }

  flipBit(bit) {
    if (!this.current) return;
    const root = this.shadowRoot;
    clearErrors(root);
    const text = String(bit).trim();
    let r;
    try {
      if (text === '')
        throw new TallyError('flip_bit', 'Flip bit number is empty: enter a bit index (0 is the least significant)');
      r = this.explore({ hex: this.current.hex, flip_bit: /^[-+]?\d+$/.test(text) ? Number(text) : text });
    } catch (error) {
      this.fail(error);
      return;
    }
    this.state.source = 'hex';
    this.show(r.stored, r.compare, [...(r.warnings ?? []), ...(r.stored.warnings ?? [])]);
  }

  step(direction) {
    const target = this.current?.[direction];
    if (!target) return;
    this.state.source = 'hex';
    this.state.hex = target.hex;
    this.update();
  }

  jump(which) {
    const f = this.formats.find((x) => x.name === this.state.format);
    const c = f.constants[which];
    if (!c) {
      this.shadowRoot.querySelector('.notice').textContent =
        `${f.name} has no ${which.replace('_', ' ')} (it has no subnormals).`;
      return;
    }
    this.state.source = 'hex';
    this.state.hex = c.hex;
    this.update();
  }

  /** block_compare's arguments from the block fields; throws a TallyError naming an empty field. */
  blockArgs() {
    const s = this.state;
    const args = { schemes: ['mxfp4', 'nvfp4', 'fp8_tensor', 'mxfp8_e4m3'] };
    if (s.block.trim() !== '') args.values = s.block;
    else args.generate = { n: 64, seed: s.seed.trim(), outlier: s.outlier.trim() };
    if (!args.values && args.generate.seed === '') throw new TallyError('seed', 'Seed is empty: enter a whole number');
    if (!args.values && args.generate.outlier === '')
      throw new TallyError('outlier', 'Outlier is empty: enter a number (0 for none)');
    return args;
  }

  /** Recomputes only the block table (an edit of the block fields): one block_compare call. */
  updateBlocks() {
    this.blocksDirty = false;
    let r;
    try {
      r = this.engine.call('block_compare', this.blockArgs());
    } catch (error) {
      if (!(error instanceof TallyError)) throw error;
      this.showBlockError(error);
      return;
    }
    this.showBlocks(r);
  }

  clearBlockErrors() {
    for (const name of ['block', 'outlier', 'seed']) {
      const box = this.shadowRoot.querySelector(`.field[data-field="${name}"]`);
      box.querySelector('.error').textContent = '';
      box.querySelector('input, textarea').removeAttribute('aria-invalid');
    }
  }

  showBlockError(error) {
    const root = this.shadowRoot;
    this.clearBlockErrors();
    root.querySelector('[data-out="blocks"] tbody').innerHTML = trustedHtml('');
    const field = error.field.includes('seed') ? 'seed' : error.field.includes('outlier') ? 'outlier' : 'block';
    showError(root, field, error.message);
    this.lastError = { field, message: error.message };
    this.save();
  }

  showBlocks(r) {
    const root = this.shadowRoot;
    this.clearBlockErrors();
    if (this.state.block.trim() === '')
      root.querySelector('[name="block"]').placeholder = r.values.map(String).join(', ');
    root.querySelector('[data-out="blocks"] tbody').innerHTML = trustedHtml(
      r.results
        .map(
          (x) => `<tr data-scheme="${escapeHtml(x.scheme)}">
      <td>${escapeHtml(x.display_name)}</td><td class="num">${Number(x.bits_per_value.toFixed(3))}</td>
      <td class="num">${formatNumber(x.relative_error, 2)}</td><td class="num">${formatNumber(x.max_abs_error, 2)}</td>
      <td class="num">${x.zeroed} of ${x.codes.length}</td>
      <td class="mono hide-phone">${escapeHtml(
        x.scales
          .slice(0, 4)
          .map((c) => `${c.hex}=${formatNumber(c.value, 3)}`)
          .join(' ') + (x.scales.length > 4 ? ' …' : ''),
      )}</td></tr>`,
        )
        .join(''),
    );
    this.save();
  }

  save() {
    this.saveState();
  }

  /** The attributes that reproduce the current state (for the Share / embed snippets). */
  embedAttributes() {
    const s = this.state;
    const a = { format: s.format };
    if (s.source === 'hex') a.hex = s.hex;
    else a.value = s.value;
    if (s.rounding !== 'nearest_even') a.rounding = s.rounding;
    if (s.saturate !== 'default') a.saturate = s.saturate;
    return a;
  }
}

TallyFloat.define('tally-float');
