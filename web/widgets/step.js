// <tally-step>: where one training step's time goes on one GPU, and the predicted MFU.
//
// Attributes set the starting state (the URL overrides them, see web/state.js):
//   model="llama-3-70b", hardware="h100-sxm", gpus="64", tp="4", pp="4", interleave="1", mbs="1",
//   batch="512" (global batch, sequences), seq="8192", cp="1" (context parallel), ep="1" (expert parallel, MoE),
//   etp="0" (expert tensor parallel, MoE: experts folded over tp, 0 = tp), zero="1", recompute="none",
//   sp="true", flash="true", stack="generic" (software stack profile: the values step_time declares, see stackIds),
//   shard-group, compile, async-tp, fp8-all-gather, ep-overlap, fabric, node-network-gbps, lora-rank, lora-targets
//   (step_time's declared defaults),
//   and the run's switches (STACK_SWITCHES: tp-comm-overlap, attention-kernel, bucket-bytes, ...; "stack" = the stack's default)
//   controls="model,hardware,..." (not state: the fields shown outside "More settings", kit/disclosure.js;
//   default: all but the run's switches)
// Every number comes from the engine (step_time, plan); this module only lays them out.
import {
  TallyWidget,
  TallyError,
  formatNumber,
  formatBytes,
  escapeHtml,
  declaredValues,
  presetSelect,
  declaredField,
  declaredArgs,
  isNumberText,
} from './base.js';
import { drawWidth } from './kit/chart.js';
import { panelHtml } from './kit/shell.js';
import { disclosedControls, disclosureCss, tableControls } from './kit/disclosure.js';
import { trustedHtml } from './kit/trusted.js';
import { YOUR_GPU_ID, yourGpu } from './your-gpu.js';

const RECOMPUTE = ['none', 'selective', 'full'];
const ZERO = ['0', '1', '2', '3'];
const choices = (list) => list.map((value) => ({ value, label: value }));
/**
 * The run's switches under "More settings": step_time's arguments whose default is the stack's (tally/step/stack.h,
 * content/presets/stacks). Each starts on "the stack's default" and sends nothing until set; a number is typed,
 * empty for the default. tests/node/step-switches.test.mjs checks this list against the contract.
 */
export const STACK_SWITCHES = [
  ['attention_kernel', 'Attention kernel'],
  ['tp_comm_overlap', 'TP communication overlap'],
  ['fp8_tensorwise_sp_gather', 'SP all-gathers in FP8 (tensorwise)'],
  ['sp_batch_first', 'Batch-first SP activations (a copy per collective)'],
  ['cp_exchange', 'Context-parallel K, V exchange'],
  ['cp_repeat_kv', 'CP exchanges K, V repeated to the query heads'],
  ['per_op_sac', 'Selective recomputation per op'],
  ['eager_elementwise', 'Eager elementwise kernels (unless compiled)'],
  ['fsdp_keep_gathered_with_pp', 'FSDP keeps gathered weights with PP'],
  ['grad_fp32', 'Gradients accumulated and reduced in fp32'],
  ['grad_reduce_after_backward', 'ZeRO-1/2 reduce after the backward'],
  ['tied_grad_after_backward', 'Tied embedding gradients after the backward'],
  ['bucket_bytes', 'Gradient bucket (bytes)', 'number'],
  ['bucket_params', 'Gradient bucket (parameters)', 'number'],
  ['bucket_params_per_rank', 'Gradient bucket per DP rank (parameters)', 'number'],
  ['torch_grouped_mm', 'MoE experts through torch._grouped_mm'],
  ['expert_host_launches', 'MoE experts launched one by one'],
  ['separate_qkv', 'Q, K, V as three GEMMs'],
  ['pipeline_lockstep', 'Lock-step looped pipeline'],
  ['cost_balanced_stages', 'Pipeline stages balanced by cost'],
  ['logits_bytes', 'Cross-entropy bytes per logit (0 = 20)', 'number'],
  ['eager_glu', 'Eager gated-MLP activation'],
];
const STACK_DEFAULT = 'stack';
/** Why the layout fields start where they do (the defaults note): one layout that fits the opening model. */
const LAYOUT_WHY = 'a layout in which Llama 3 70B fits 64 H100s';
/** A switch's field: a select over the stack's default and the declared values, or a number (empty: the default). */
function switchField([arg, label, kind]) {
  const engineDefault = (e) => e.layout?.[arg];
  if (kind === 'number')
    return declaredField('step_time', arg, 'text', label, {
      fallback: '',
      check: (t) => t.trim() === '' || isNumberText(t) || "not a number (empty: the stack's default)",
      toArg: (v) => (v.trim() === '' ? undefined : Number(v)),
      engineDefault,
    });
  return declaredField('step_time', arg, 'select', label, {
    options: (w) => {
      const declared = declaredArgs(w.engine, 'step_time', arg).get(arg);
      const values = declared?.type === 'boolean' ? ['true', 'false'] : declaredValues(w.engine, 'step_time', arg);
      const named = { true: 'on', false: 'off' };
      return [
        { value: STACK_DEFAULT, label: "the stack's default" },
        ...values.map((v) => ({ value: v, label: named[v] ?? v })),
      ];
    },
    fallback: STACK_DEFAULT,
    toArg: (v) => (v === STACK_DEFAULT ? undefined : v === 'true' ? true : v === 'false' ? false : v),
    engineDefault,
  });
}
const SWITCH_NAMES = new Set(STACK_SWITCHES.map(([arg]) => arg));

/**
 * The widget's fields (kit/store.js), all sent to step_time. `engineDefault` reads the engine's own choice of a
 * default from its answer (the defaults note, noteEngineDefaults).
 */
const FIELDS = [
  presetSelect('model', 'Model', 'models', 'llama-3-70b', { arg: 'model' }),
  presetSelect('hardware', 'GPU', 'hardware', 'h100-sxm', { arg: 'hardware' }),
  {
    name: 'gpus',
    kind: 'number',
    label: 'GPUs',
    fallback: '64',
    arg: 'gpus',
    engineDefault: (e) => e.layout?.gpus,
    why: LAYOUT_WHY,
  },
  {
    name: 'tp',
    kind: 'number',
    label: 'Tensor parallel t',
    fallback: '4',
    arg: 'tp',
    engineDefault: (e) => e.layout?.tp,
    why: LAYOUT_WHY,
  },
  {
    name: 'pp',
    kind: 'number',
    label: 'Pipeline stages p',
    fallback: '4',
    arg: 'pp',
    engineDefault: (e) => e.layout?.pp,
    why: LAYOUT_WHY,
  },
  { name: 'interleave', kind: 'number', label: 'Chunks per stage v', fallback: '1', arg: 'interleave' },
  { name: 'mbs', kind: 'number', label: 'Micro-batch b', fallback: '1', arg: 'micro_batch' },
  {
    name: 'batch',
    kind: 'number',
    label: 'Global batch (sequences)',
    fallback: '512',
    arg: 'global_batch',
    engineDefault: (e) => e.global_batch,
    why: LAYOUT_WHY,
  },
  {
    name: 'seq',
    kind: 'number',
    label: 'Sequence length',
    fallback: '8192',
    arg: 'seq',
    engineDefault: (e) => e.layout?.seq,
    why: "Llama 3's pretraining context",
  },
  { name: 'cp', kind: 'number', label: 'Context parallel c (long sequences)', fallback: '1', arg: 'cp' },
  { name: 'ep', kind: 'number', label: 'Expert parallel e (MoE)', fallback: '1', arg: 'ep' },
  { name: 'etp', kind: 'number', label: 'Expert tensor parallel (MoE; 0 = t)', fallback: '0', arg: 'etp' },
  {
    name: 'zero',
    kind: 'select',
    label: 'ZeRO stage',
    options: choices(ZERO),
    fallback: '1',
    arg: 'zero',
    toArg: Number,
    engineDefault: (e) => e.layout?.zero,
    why: "the optimizer states sharded, as Megatron's distributed optimizer does",
  },
  declaredField('step_time', 'shard_group', 'number', 'HSDP shard group (ZeRO 3; 0 = all of d)'),
  {
    name: 'recompute',
    kind: 'select',
    label: 'Recomputation',
    options: choices(RECOMPUTE),
    fallback: 'none',
    arg: 'recompute',
  },
  {
    name: 'stack',
    kind: 'select',
    label: 'Software stack',
    options: (w) => w.stacks.map((id) => ({ value: id, label: id })),
    fallback: 'generic',
    arg: 'stack',
    engineDefault: (e) => e.layout?.stack,
  },
  {
    name: 'sp',
    kind: 'check',
    label: 'Sequence parallelism',
    fallback: 'true',
    arg: 'sequence_parallel',
    engineDefault: (e) => e.layout?.sequence_parallel,
    why: 'as large tensor-parallel runs train',
  },
  {
    name: 'flash',
    kind: 'check',
    label: 'FlashAttention',
    fallback: 'true',
    arg: 'flash_attention',
    engineDefault: (e) => e.layout?.flash_attention,
    why: 'as large tensor-parallel runs train',
  },
  declaredField('step_time', 'compile', 'check', 'torch.compile'),
  declaredField('step_time', 'async_tp', 'check', 'Async TP'),
  declaredField('step_time', 'fp8_all_gather', 'check', 'FP8 weight all-gather'),
  declaredField('step_time', 'ep_overlap', 'check', 'MoE all-to-all overlap (combined 1F1B)'),
  declaredField('step_time', 'fabric', 'select', 'Cluster fabric', {
    options: (w) => declaredValues(w.engine, 'step_time', 'fabric').map((v) => ({ value: v, label: v })),
  }),
  declaredField('step_time', 'node_network_gbps', 'number', "Node network, Gb/s (0 = the GPU preset's cards)"),
  declaredField('step_time', 'lora_rank', 'number', 'LoRA rank r (0 = full training)'),
  declaredField('step_time', 'lora_targets', 'text', 'LoRA modules (e.g. q,v or all-linear)', {
    check: (t) => /^[\w ,-]{0,200}$/.test(t) || 'not a comma-separated list of module names',
    sendWhen: (v) => Number(v.lora_rank) !== 0, // the modules mean nothing without adapters
  }),
  ...STACK_SWITCHES.map(switchField),
];
/** step_time's choices that are not the layout: the planner searches layouts under the same ones. */
const PLANNED_OPTIONS = [
  'compile',
  'async_tp',
  'fp8_all_gather',
  'ep_overlap',
  'fabric',
  'node_network_gbps',
  'lora_rank',
  'lora_targets',
  ...SWITCH_NAMES,
];

/**
 * The place a prediction is rounded to under an absolute error `e`: the Particle Data Group's rule (Review of
 * Particle Physics, Introduction, "Rounding"): the error's three leading digits 100-354 keep two significant
 * figures, 355-949 one, 950-999 round up to 1000 with two.
 */
function bandPlace(e) {
  const k = Math.floor(Math.log10(e));
  const lead = Math.floor(e / 10 ** (k - 2));
  return 10 ** (lead <= 354 || lead >= 950 ? k - 1 : k);
}

/**
 * A prediction to the digits its error band supports (issue 25 item 3): rounded to bandPlace(half_width · value);
 * two significant figures when the engine stores no band for runs of this kind.
 */
function formatPrediction(value, unit = '', halfWidth = null) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  const shown = unit === '%' ? 100 * value : value;
  if (!(halfWidth > 0) || shown === 0) return `${Number(shown.toPrecision(2)).toLocaleString('en-US')}${unit}`;
  const place = bandPlace(Math.abs(shown) * halfWidth);
  const digits = Math.max(0, -Math.floor(Math.log10(place) + 1e-9));
  const rounded = Math.round(shown / place) * place;
  return `${rounded.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })}${unit}`;
}

/** A relative error as the band states it: "+22%", "−5%" (prediction − measured, of the measured). */
function formatSigned(e) {
  const text = formatPrediction(Math.abs(e), '%');
  return `${e < 0 ? '−' : '+'}${text}`;
}

/** The band's interval: "−5% to +22%". */
function formatInterval(band) {
  return `${formatSigned(band.lower)} to ${formatSigned(band.upper)}`;
}

/**
 * The band as a reader reads it: "−5% to +22% (27 runs of this kind: nanotron / bf16 / h100-sxm / compute-bound)";
 * the engine's interval of other runs' errors (tally/step/bands.h), never this run's own.
 */
function formatBand(band) {
  if (!band) return 'no published runs of this kind';
  const widened = band.widened ? '; widened: no published run on this GPU' : '';
  // The any-stack levels: too few runs of this stack, so every run predicted as the generic stack.
  if (band.level.startsWith('any stack'))
    return `${formatInterval(band)} (${band.runs} runs predicted as the generic stack: ${band.key}${widened})`;
  return `${formatInterval(band)} (${band.runs} runs of this kind: ${band.key}${widened})`;
}

/** Timeline colours per breakdown component (exposed parts only are drawn). */
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
  moe_sync: '#c71585',
  fp8_cast: '#a0522d',
  cp_comm: '#6b8e23',
  grad_accum: '#b8860b',
  overlap_contention: '#8b4513',
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
caption { text-align: left; font-size: 13px; color: var(--muted); padding: 6px 0 2px; }
.result.band .value { font-size: 14px; }
button.plan { font: inherit; margin-top: 10px; padding: 4px 12px; cursor: pointer; }
@media (max-width: 480px) {
  .fields, .results { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .result .value { font-size: 17px; }
}
`;

const RESULTS = [
  { out: 'mfu', label: 'Predicted MFU' },
  { out: 'hfu', label: 'Predicted HFU' },
  { out: 'step', label: 'Step time' },
  { out: 'tokens', label: 'Tokens/s (cluster)' },
  { out: 'tflops', label: 'Model TFLOP/s per GPU' },
  { out: 'memory', label: 'Memory per GPU' },
  { out: 'bubble', label: 'Bubble (p−1)/(v·m)' },
  { out: 'band', label: 'Error band (step time, tokens/s, MFU)', className: 'band' },
];

class TallyStep extends TallyWidget {
  static fields = FIELDS;

  build() {
    // Without presets there is nothing to choose; the engine error shows below.
    const presets = this.loadPresets();
    this.models = presets.models ?? [];
    this.hardware = (presets.hardware ?? []).filter((h) => h.interconnect);
    // "Your GPU": the device the roofline widget measured through WebGPU on this page (your-gpu.js), listed once
    // it exists and sent to the engine as a hardware object.
    if (yourGpu()) this.hardware.push({ id: YOUR_GPU_ID, name: yourGpu().name });
    this.stacks = this.stackIds();
    const start = this.declareState('step');
    // The chapter's `controls` choose the fields shown; the rest, and by default the run's switches, fold
    // behind "More settings" (kit/disclosure.js).
    const controls = disclosedControls(
      this,
      tableControls(
        this,
        FIELDS.map((f) => f.name),
        start,
      ),
      [...SWITCH_NAMES],
    );
    this.shadowRoot.innerHTML = trustedHtml(
      panelHtml({
        css: css + disclosureCss,
        label: 'Step time and MFU of a parallel layout',
        fields: controls.shown,
        between: controls.more,
        results: RESULTS,
        body: `<svg class="timeline" data-out="timeline" viewBox="0 0 640 70" role="img" aria-label="One step on one GPU"></svg>
        <div class="legend" data-out="legend"></div>
        <table class="breakdown"><caption>Where one step's time goes on the busiest GPU</caption>
          <thead><tr><th scope="col">component</th><th scope="col" class="num">seconds</th><th scope="col" class="num">share of step</th></tr></thead>
          <tbody data-out="breakdown"></tbody></table>
        <button type="button" class="plan" data-action="plan">Find the fastest layouts for this model and GPU count</button>
        <div data-out="plan"></div>`,
      }),
    );
    const root = this.shadowRoot;
    this.updateOnEdit();
    root.addEventListener('click', (event) => this.onClick(event));
    this.onYourGpu = () => this.offerYourGpu();
    globalThis.addEventListener?.('tally-your-gpu', this.onYourGpu);
    this.observeWidth(root.querySelector('[data-out="timeline"]'), () => this.result && this.drawTimeline(this.result));
    this.firstUpdate();
  }

  /** The engine's stack profiles: the values step_time declares for `stack` (the contract, kit/contract.js). */
  stackIds() {
    const declared = declaredValues(this.engine, 'step_time', 'stack');
    return declared.length ? declared : ['generic'];
  }

  control(name) {
    return this.shadowRoot.querySelector(`[name="${name}"]`);
  }

  onClick(event) {
    const button = event.target.closest('button');
    if (!button) return;
    if (button.dataset.action === 'plan') this.runPlan();
    if (button.dataset.use !== undefined) this.useLayout(this.plan.best[Number(button.dataset.use)].layout);
  }

  disconnectedCallback() {
    super.disconnectedCallback?.();
    globalThis.removeEventListener?.('tally-your-gpu', this.onYourGpu);
  }

  /** Lists (or renames) "your GPU" in the GPU select once it is measured; recomputes if it is the one selected. */
  offerYourGpu() {
    const device = yourGpu();
    const select = this.control('hardware');
    if (!device || !select) return;
    const entry = this.hardware.find((h) => h.id === YOUR_GPU_ID);
    if (entry) entry.name = device.name;
    else this.hardware.push({ id: YOUR_GPU_ID, name: device.name });
    let option = [...select.options].find((o) => o.value === YOUR_GPU_ID);
    if (!option) {
      option = document.createElement('option');
      option.value = YOUR_GPU_ID;
      select.append(option);
    }
    option.textContent = device.name;
    if (select.value === YOUR_GPU_ID) this.update();
  }

  /**
   * Arguments of step_time from the controls; throws a TallyError naming the first unreadable field. "Your GPU"
   * goes as its hardware object (the presets' format), not an id.
   */
  args() {
    const { args, errors } = this.fieldArgs();
    if (errors.length) throw errors[0];
    if (args.hardware === YOUR_GPU_ID && yourGpu()) args.hardware = yourGpu();
    return args;
  }

  fail(root, error) {
    this.showEngineError(error, this.argToField);
  }

  update() {
    const root = this.beginUpdate();
    const out = (key, text) => this.showOut(key, text);
    try {
      this.stepArgs = null;
      this.stepArgs = this.args();
      this.result = this.engine.call('step_time', this.stepArgs);
    } catch (error) {
      this.fail(root, error);
      // A refusal the widget's own defaults cause (pp 4 with 8 GPUs at tp 8) is named as such.
      if (this.stepArgs) this.noteEngineDefaults('step_time', this.stepArgs, this.engineDefaultFields);
      for (const { out: key } of RESULTS) out(key, '—');
      root.querySelector('[data-out="breakdown"]').replaceChildren();
      root.querySelector('[data-out="timeline"]').replaceChildren();
      root.querySelector('[data-out="legend"]').replaceChildren();
      this.result = null;
      return;
    }
    const r = this.result;
    this.recordCall('step_time', this.stepArgs, r);
    this.showWarnings(r.warnings);
    this.noteEngineDefaults('step_time', this.stepArgs, this.engineDefaultFields);
    // A layout that does not fit never runs: it has no MFU, step time or throughput to predict.
    const predicted = (text) => (r.fits ? text : '— (does not fit)');
    // Every prediction to the digits its band supports: the band is relative, the same for each of them.
    const h = r.band?.half_width ?? null;
    out('mfu', predicted(formatPrediction(r.mfu, '%', h)));
    out('hfu', predicted(formatPrediction(r.hfu, '%', h)));
    out('step', predicted(`${formatPrediction(r.step_seconds, '', h)} s`));
    out('tokens', predicted(formatPrediction(r.tokens_per_second, '', h)));
    out('tflops', predicted(formatPrediction(r.model_flops_per_s_per_gpu / 1e12, '', h))); // FLOP/s shown in TFLOP/s
    out('band', predicted(formatBand(r.band)));
    out('memory', `${formatBytes(r.memory_bytes)}${r.fits ? '' : ' — does not fit'}`);
    out('bubble', `${formatNumber(100 * r.bubble_fraction, 3)}%`);
    this.drawTimeline(r);
    this.drawBreakdown(r);
  }

  /** The engine's breakdown, every non-zero component: the exposed ones sum to the step, the hidden ones overlap. */
  drawBreakdown(r) {
    const h = r.band?.half_width ?? null;
    this.shadowRoot.querySelector('[data-out="breakdown"]').innerHTML = trustedHtml(
      r.breakdown
        .filter((p) => p.seconds > 0)
        .map(
          (p) =>
            `<tr data-part="${escapeHtml(p.id)}"><td>${escapeHtml(p.name)}</td>
          <td class="num">${escapeHtml(formatPrediction(p.seconds, '', h))}</td><td class="num">${p.exposed ? escapeHtml(formatPrediction(p.share, '%')) : 'hidden'}</td></tr>`,
        )
        .join(''),
    );
  }

  drawTimeline(r) {
    const svg = this.shadowRoot.querySelector('[data-out="timeline"]');
    // Seconds to the digits the band supports, as the headline and the table show them: the axis ends on the
    // headline's step time (a 62 s bar under a ±20 % band reads "60 s", never "62 s" beside a "60 s" headline).
    const h = r.band?.half_width ?? null;
    const seconds = (value) => escapeHtml(formatPrediction(value, '', h));
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
      const seg = `<rect class="seg" data-part="${p.id}" x="${x.toFixed(2)}" y="8" width="${Math.max(w, 0).toFixed(2)}" height="30" fill="${COLOURS[p.id] ?? '#888'}"><title>${escapeHtml(p.name)}: ${seconds(p.seconds)} s (${escapeHtml(formatPrediction(p.share, '%'))})</title></rect>`;
      x += w;
      return seg;
    });
    svg.innerHTML = trustedHtml(`<title>One step on one GPU: ${seconds(r.step_seconds)} s</title>${segs.join('')}
      <text x="${left}" y="56" text-anchor="start">0 s</text><text x="${W - right}" y="56" text-anchor="end">${seconds(r.step_seconds)} s</text>`);
    const hidden = r.breakdown.filter((p) => !p.exposed && p.seconds > 0);
    this.shadowRoot.querySelector('[data-out="legend"]').innerHTML = trustedHtml(
      parts
        .map(
          (p) =>
            `<span style="--c:${COLOURS[p.id] ?? '#888'}">${escapeHtml(p.name)} ${escapeHtml(formatPrediction(p.share, '%'))}</span>`,
        )
        .join('') +
        hidden
          .map((p) => `<span style="--c:transparent">${escapeHtml(p.name)}: ${seconds(p.seconds)} s</span>`)
          .join(''),
    );
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
        stack: args.stack,
        ...Object.fromEntries(PLANNED_OPTIONS.filter((a) => a in args).map((a) => [a, args[a]])),
        top: 5,
      });
    } catch (error) {
      this.fail(root, error);
      target.textContent = '';
      return;
    }
    const p = this.plan;
    const layout = (l) =>
      `t ${l.tp} · p ${l.pp}${l.cp > 1 ? ` · c ${l.cp}` : ''} · d ${l.dp} · ZeRO ${l.zero}${l.sequence_parallel ? ' · SP' : ''}${l.interleave > 1 ? ` · v ${l.interleave}` : ''} · b ${l.micro_batch} · ${l.recompute}`;
    target.innerHTML = trustedHtml(`<p class="status">${p.evaluated} layouts evaluated; ${p.fit} fit in memory.</p>
      <table><thead><tr><th scope="col">layout</th><th scope="col" class="num">MFU</th><th scope="col" class="num">step</th><th scope="col" class="num">band</th><th scope="col" class="num">memory</th><th></th></tr></thead><tbody>
      ${p.best
        .map(
          (
            b,
            i,
          ) => `<tr data-rank="${i}"><td>${escapeHtml(layout(b.layout))}</td><td class="num">${escapeHtml(formatPrediction(b.mfu, '%', b.band?.half_width))}</td>
        <td class="num">${escapeHtml(formatPrediction(b.step_seconds, '', b.band?.half_width))} s</td><td class="num">${b.band ? escapeHtml(formatInterval(b.band)) : '—'}</td><td class="num">${escapeHtml(formatBytes(b.memory_bytes))}</td>
        <td><button type="button" class="use" data-use="${i}">use</button></td></tr>`,
        )
        .join('')}
      </tbody></table>
      <p class="status">Why the others lose: ${p.losers.map((l) => `${l.count} × ${escapeHtml(l.reason)}`).join('; ')}.</p>`);
  }

  useLayout(l) {
    // ep is absent from a dense layout (1), cp from one without context parallelism; the planner does not fold
    // experts (etp = tp).
    const set = {
      tp: l.tp,
      pp: l.pp,
      interleave: l.interleave,
      mbs: l.micro_batch,
      zero: l.zero,
      recompute: l.recompute,
      ep: l.ep ?? 1,
      cp: l.cp ?? 1,
      etp: 0,
      shard_group: 0, // the planner picks ZeRO and d itself, without HSDP
    };
    for (const [name, value] of Object.entries(set)) this.control(name).value = String(value);
    this.control('sp').checked = l.sequence_parallel;
    this.update();
    this.saveState();
  }
}

TallyStep.define('tally-step');
