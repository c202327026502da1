// <tally-step>: where one training step's time goes on one GPU, and the predicted MFU.
//
// Attributes set the starting state (the URL overrides them, see web/state.js):
//   model="llama-3-70b", hardware="h100-sxm", gpus="64", tp="4", pp="4", interleave="1", mbs="1",
//   batch="512" (global batch, sequences), seq="8192", ep="1" (expert parallel, MoE), zero="1", recompute="none",
//   sp="true", flash="true", stack="generic" (software-stack profile, docs/API.md "Step time")
// Every number comes from the engine (step_time, plan); this module only lays them out.
import {
  TallyWidget,
  TallyError,
  baseCss,
  numberField,
  selectField,
  checkboxField,
  parseNumber,
  showError,
  clearErrors,
  formatNumber,
  formatBytes,
  escapeHtml,
  isBoolText,
  oneOf,
  numberStateFields,
} from './base.js';
import { drawWidth } from './chart.js';

const RECOMPUTE = ['none', 'selective', 'full'];
/** The engine's stack profiles (step.cpp stack_profiles), each with what it chooses; an unknown id is the engine's error. */
const STACKS = [
  { value: 'generic', label: 'generic: FlashAttention-2, no TP overlap (default)' },
  { value: 'megatron-te', label: 'Megatron-Core + TE: cuDNN attention, TP overlap' },
  { value: 'pytorch-fsdp', label: 'PyTorch FSDP: FlashAttention-2' },
  { value: 'torchtitan', label: 'torchtitan: SDPA (FlashAttention-2)' },
  { value: 'nanotron', label: 'nanotron: FlashAttention-2' },
  { value: 'deepspeed', label: 'DeepSpeed: FlashAttention-2' },
];
const ZERO = ['0', '1', '2', '3'];
const NUMBER_FIELDS = [
  { name: 'gpus', label: 'GPUs', fallback: '64' },
  { name: 'tp', label: 'Tensor parallel t', fallback: '4' },
  { name: 'pp', label: 'Pipeline stages p', fallback: '4' },
  { name: 'interleave', label: 'Chunks per stage v', fallback: '1' },
  { name: 'mbs', label: 'Micro-batch b', fallback: '1' },
  { name: 'batch', label: 'Global batch (sequences)', fallback: '512' },
  { name: 'seq', label: 'Sequence length', fallback: '8192' },
  { name: 'ep', label: 'Expert parallel e (MoE)', fallback: '1' },
];
/** Widget defaults the engine may choose differently (named in the defaults note, see noteEngineDefaults). */
const ENGINE_DEFAULTS = [
  { field: 'gpus', arg: 'gpus', engine: (e) => e.layout?.gpus },
  { field: 'tp', arg: 'tp', engine: (e) => e.layout?.tp },
  { field: 'pp', arg: 'pp', engine: (e) => e.layout?.pp },
  { field: 'batch', arg: 'global_batch', engine: (e) => e.global_batch },
  { field: 'seq', arg: 'seq', engine: (e) => e.layout?.seq },
  { field: 'zero', arg: 'zero', engine: (e) => e.layout?.zero },
  { field: 'sp', arg: 'sequence_parallel', engine: (e) => e.layout?.sequence_parallel },
  { field: 'flash', arg: 'flash_attention', engine: (e) => e.layout?.flash_attention },
];
/** Engine argument -> this widget's field, for errors the engine reports. */
const ARG_TO_FIELD = { micro_batch: 'mbs', global_batch: 'batch', sequence_parallel: 'sp', flash_attention: 'flash' };
/** Timeline colours per breakdown component (exposed parts only are drawn). */
/** A prediction to the digits its error supports: the step model's median error of about 5 % leaves two figures. */
function formatPrediction(value, unit = '') {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  const shown = unit === '%' ? 100 * value : value;
  return `${Number(shown.toPrecision(2)).toLocaleString('en-US')}${unit}`;
}

const COLOURS = {
  matmul: 'var(--accent)',
  memory_bound: '#8e6bd1',
  tp_comm: '#d9822b',
  bubble: '#9aa0a6',
  pp_comm: '#c0504d',
  dp_comm: '#2e8b57',
  zero3_comm: '#b8860b',
  optimizer: '#4a6fa5',
  ep_comm: '#20a0a0',
  fp8_cast: '#a0522d',
};

const css = `
.timeline { width: 100%; height: auto; display: block; margin-top: 10px; }
.timeline rect.seg { stroke: var(--bg, #fff); stroke-width: 1; }
.timeline text { font-size: 12px; fill: currentColor; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 14px; font-size: 13px; margin-top: 6px; }
.legend span::before { content: ''; display: inline-block; width: 10px; height: 10px; margin-right: 5px; background: var(--c); border-radius: 2px; }
table { border-collapse: collapse; width: 100%; font-size: 14px; margin-top: 8px; }
th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid var(--border); }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { font-size: 12px; color: var(--muted); }
button.use { font: inherit; font-size: 13px; padding: 2px 8px; cursor: pointer; }
button.plan { font: inherit; margin-top: 10px; padding: 4px 12px; cursor: pointer; }
@media (max-width: 480px) {
  .fields, .results { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .result .value { font-size: 17px; }
}
`;

class TallyStep extends TallyWidget {
  static stateAttributes = [
    'model',
    'hardware',
    'gpus',
    'tp',
    'pp',
    'interleave',
    'mbs',
    'batch',
    'seq',
    'ep',
    'zero',
    'recompute',
    'sp',
    'flash',
    'stack',
  ];

  mount() {
    // Without presets there is nothing to choose; the engine error shows below.
    const presets = this.loadPresets();
    const models = presets.models ?? [];
    const hardware = (presets.hardware ?? []).filter((h) => h.interconnect);
    const start = this.declareState('step', [
      {
        name: 'model',
        check: oneOf(models.map((m) => m.id)),
        fallback: models.find((m) => m.id === 'llama-3-70b')?.id ?? models[0]?.id ?? '',
      },
      {
        name: 'hardware',
        check: oneOf(hardware.map((h) => h.id)),
        fallback: hardware.find((h) => h.id === 'h100-sxm')?.id ?? hardware[0]?.id ?? '',
      },
      { name: 'zero', check: oneOf(ZERO), fallback: '1' },
      { name: 'recompute', check: oneOf(RECOMPUTE), fallback: 'none' },
      { name: 'sp', check: isBoolText, fallback: 'true' },
      { name: 'flash', check: isBoolText, fallback: 'true' },
      { name: 'stack', check: oneOf(STACKS.map((s) => s.value)), fallback: 'generic' },
      ...numberStateFields(NUMBER_FIELDS),
    ]);

    const field = (name) =>
      numberField({ name, label: NUMBER_FIELDS.find((f) => f.name === name).label, value: start[name] });
    this.shadowRoot.innerHTML = `<style>${baseCss}${css}</style>
      <div class="widget" role="group" aria-label="Step time and MFU of a parallel layout">
        <div class="fields">
          ${selectField({ name: 'model', label: 'Model', options: models.map((m) => ({ value: m.id, label: m.name })), value: start.model })}
          ${selectField({ name: 'hardware', label: 'GPU', options: hardware.map((h) => ({ value: h.id, label: h.name })), value: start.hardware })}
          ${field('gpus')}${field('tp')}${field('pp')}${field('interleave')}${field('mbs')}${field('batch')}${field('seq')}${field('ep')}
          ${selectField({ name: 'zero', label: 'ZeRO stage', options: ZERO.map((z) => ({ value: z, label: z })), value: start.zero })}
          ${selectField({ name: 'recompute', label: 'Recomputation', options: RECOMPUTE.map((r) => ({ value: r, label: r })), value: start.recompute })}
          ${checkboxField({ name: 'sp', label: 'Sequence parallelism', checked: start.sp === 'true' })}
          ${checkboxField({ name: 'flash', label: 'FlashAttention', checked: start.flash === 'true' })}
          ${selectField({ name: 'stack', label: 'Software stack', options: STACKS, value: start.stack })}
        </div>
        <p class="notice" role="status"></p>
        <div class="results" aria-live="polite">
          <div class="result"><div class="label">Predicted MFU</div><div class="value" data-out="mfu">—</div></div>
          <div class="result"><div class="label">Predicted HFU</div><div class="value" data-out="hfu">—</div></div>
          <div class="result"><div class="label">Step time</div><div class="value" data-out="step">—</div></div>
          <div class="result"><div class="label">Tokens/s (cluster)</div><div class="value" data-out="tokens">—</div></div>
          <div class="result"><div class="label">Model TFLOP/s per GPU</div><div class="value" data-out="tflops">—</div></div>
          <div class="result"><div class="label">Memory per GPU</div><div class="value" data-out="memory">—</div></div>
          <div class="result"><div class="label">Bubble (p−1)/(v·m)</div><div class="value" data-out="bubble">—</div></div>
          <div class="result"><div class="label">Error band (held-out runs)</div><div class="value" data-out="band">—</div></div>
        </div>
        <svg class="timeline" data-out="timeline" viewBox="0 0 640 70" role="img" aria-label="One step on one GPU"></svg>
        <div class="legend" data-out="legend"></div>
        <button type="button" class="plan" data-action="plan">Find the fastest layouts for this model and GPU count</button>
        <div data-out="plan"></div>
      </div>`;
    const root = this.shadowRoot;
    this.onControlEdit(() => {
      this.update();
      this.saveState();
    });
    root.addEventListener('click', (event) => this.onClick(event));
    this.observeWidth(root.querySelector('[data-out="timeline"]'), () => this.result && this.drawTimeline(this.result));
    this.update();
    this.settleUrlState();
  }

  /** Sets controls from state texts (setState, URL reverts). */
  applyState(values) {
    for (const [name, value] of Object.entries(values)) {
      const control = this.control(name);
      if (control.type === 'checkbox') control.checked = value === 'true';
      else control.value = value;
    }
  }

  control(name) {
    return this.shadowRoot.querySelector(`[name="${name}"]`);
  }

  values() {
    const v = {};
    for (const name of ['model', 'hardware', 'zero', 'recompute', 'stack', ...NUMBER_FIELDS.map((f) => f.name)])
      v[name] = this.control(name).value;
    v.sp = String(this.control('sp').checked);
    v.flash = String(this.control('flash').checked);
    return v;
  }

  embedAttributes() {
    return this.values();
  }

  onClick(event) {
    const button = event.target.closest('button');
    if (!button) return;
    if (button.dataset.action === 'plan') this.runPlan();
    if (button.dataset.use !== undefined) this.useLayout(this.plan.best[Number(button.dataset.use)].layout);
  }

  /** Arguments of step_time from the controls; throws TallyError naming the field. */
  args() {
    const v = this.values();
    const n = {};
    for (const f of NUMBER_FIELDS) n[f.name] = parseNumber(v[f.name], f.name, f.label);
    return {
      model: v.model,
      hardware: v.hardware,
      gpus: n.gpus,
      tp: n.tp,
      pp: n.pp,
      interleave: n.interleave,
      micro_batch: n.mbs,
      global_batch: n.batch,
      seq: n.seq,
      zero: Number(v.zero),
      recompute: v.recompute,
      sequence_parallel: v.sp === 'true',
      flash_attention: v.flash === 'true',
      ep: n.ep,
      stack: v.stack,
    };
  }

  fail(root, error) {
    this.showEngineError(error, ARG_TO_FIELD);
  }

  update() {
    const root = this.shadowRoot;
    clearErrors(root);
    this.lastError = null;
    const out = (key, text) => {
      root.querySelector(`[data-out="${key}"]`).textContent = text;
    };
    try {
      this.stepArgs = null;
      this.stepArgs = this.args();
      this.result = this.engine.call('step_time', this.stepArgs);
    } catch (error) {
      this.fail(root, error);
      // A refusal the widget's own defaults cause (pp 4 with 8 GPUs at tp 8) is named as such.
      if (this.stepArgs) this.noteEngineDefaults('step_time', this.stepArgs, ENGINE_DEFAULTS);
      for (const key of ['mfu', 'hfu', 'step', 'tokens', 'tflops', 'memory', 'bubble', 'band']) out(key, '—');
      root.querySelector('[data-out="timeline"]').replaceChildren();
      root.querySelector('[data-out="legend"]').replaceChildren();
      this.result = null;
      return;
    }
    const r = this.result;
    this.showWarnings(r.warnings);
    this.noteEngineDefaults('step_time', this.stepArgs, ENGINE_DEFAULTS);
    // A layout that does not fit never runs: it has no MFU, step time or throughput to predict.
    const predicted = (text) => (r.fits ? text : '— (does not fit)');
    out('mfu', predicted(formatPrediction(r.mfu, '%')));
    out('hfu', predicted(formatPrediction(r.hfu, '%')));
    out('step', predicted(`${formatPrediction(r.step_seconds)} s`));
    out('tokens', predicted(formatPrediction(r.tokens_per_second)));
    out('tflops', predicted(formatPrediction(r.model_flops_per_s_per_gpu / 1e12))); // FLOP/s shown in TFLOP/s
    out('memory', `${formatBytes(r.memory_bytes)}${r.fits ? '' : ' — does not fit'}`);
    out('bubble', `${formatNumber(100 * r.bubble_fraction, 3)}%`);
    // How far to trust it: the engine's band from held-out runs of this kind (or a coarser kind).
    out(
      'band',
      r.band
        ? `±${formatNumber(100 * r.band.half_width, 2)}% (${r.band.key}, ${r.band.runs} runs)`
        : '— (no held-out runs of this kind)',
    );
    this.drawTimeline(r);
  }

  drawTimeline(r) {
    const svg = this.shadowRoot.querySelector('[data-out="timeline"]');
    const parts = r.breakdown.filter((p) => p.exposed && p.seconds > 0);
    // Drawn at its shown width, so the axis labels keep their 12 px on a phone (viewBox units = CSS px).
    const W = drawWidth(this.shownWidth(svg), { min: 200 }),
      left = 4,
      right = 4,
      width = W - left - right;
    svg.setAttribute('viewBox', `0 0 ${W} 70`);
    let x = left;
    const segs = parts.map((p) => {
      const w = (p.seconds / r.step_seconds) * width;
      const seg = `<rect class="seg" data-part="${p.id}" x="${x.toFixed(2)}" y="8" width="${Math.max(w, 0).toFixed(2)}" height="30" fill="${COLOURS[p.id] ?? '#888'}"><title>${escapeHtml(p.name)}: ${escapeHtml(formatPrediction(p.seconds))} s (${escapeHtml(formatPrediction(p.share, '%'))})</title></rect>`;
      x += w;
      return seg;
    });
    svg.innerHTML = `<title>One step on one GPU: ${escapeHtml(formatPrediction(r.step_seconds))} s</title>${segs.join('')}
      <text x="${left}" y="56" text-anchor="start">0 s</text><text x="${W - right}" y="56" text-anchor="end">${escapeHtml(formatPrediction(r.step_seconds))} s</text>`;
    const hidden = r.breakdown.filter((p) => !p.exposed && p.seconds > 0);
    this.shadowRoot.querySelector('[data-out="legend"]').innerHTML =
      parts
        .map(
          (p) =>
            `<span style="--c:${COLOURS[p.id] ?? '#888'}">${escapeHtml(p.name)} ${escapeHtml(formatPrediction(p.share, '%'))}</span>`,
        )
        .join('') +
      hidden
        .map(
          (p) =>
            `<span style="--c:transparent">${escapeHtml(p.name)}: ${escapeHtml(formatPrediction(p.seconds))} s</span>`,
        )
        .join('');
  }

  runPlan() {
    const root = this.shadowRoot;
    const target = root.querySelector('[data-out="plan"]');
    let args;
    try {
      args = this.args();
      this.plan = this.engine.call('plan', {
        model: args.model,
        hardware: args.hardware,
        gpus: args.gpus,
        seq: args.seq,
        global_batch: args.global_batch,
        flash_attention: args.flash_attention,
        top: 5,
      });
    } catch (error) {
      this.fail(root, error);
      target.textContent = '';
      return;
    }
    const p = this.plan;
    const layout = (l) =>
      `t ${l.tp} · p ${l.pp} · d ${l.dp} · ZeRO ${l.zero}${l.sequence_parallel ? ' · SP' : ''}${l.interleave > 1 ? ` · v ${l.interleave}` : ''} · b ${l.micro_batch} · ${l.recompute}`;
    target.innerHTML = `<p class="status">${p.evaluated} layouts evaluated; ${p.fit} fit in memory.</p>
      <table><thead><tr><th scope="col">layout</th><th scope="col" class="num">MFU</th><th scope="col" class="num">step</th><th scope="col" class="num">memory</th><th></th></tr></thead><tbody>
      ${p.best
        .map(
          (
            b,
            i,
          ) => `<tr data-rank="${i}"><td>${escapeHtml(layout(b.layout))}</td><td class="num">${escapeHtml(formatPrediction(b.mfu, '%'))}</td>
        <td class="num">${escapeHtml(formatPrediction(b.step_seconds))} s</td><td class="num">${escapeHtml(formatBytes(b.memory_bytes))}</td>
        <td><button type="button" class="use" data-use="${i}">use</button></td></tr>`,
        )
        .join('')}
      </tbody></table>
      <p class="status">Why the others lose: ${p.losers.map((l) => `${l.count} × ${escapeHtml(l.reason)}`).join('; ')}.</p>`;
  }

  useLayout(l) {
    // ep is absent from a dense layout (1).
    const set = {
      tp: l.tp,
      pp: l.pp,
      interleave: l.interleave,
      mbs: l.micro_batch,
      zero: l.zero,
      recompute: l.recompute,
      ep: l.ep ?? 1,
    };
    for (const [name, value] of Object.entries(set)) this.control(name).value = String(value);
    this.control('sp').checked = l.sequence_parallel;
    this.update();
    this.saveState();
  }
}

TallyStep.define('tally-step');
