// <tally-memory-budget>: per-GPU training memory, term by term, against the GPU's capacity.
//
// Attributes set the starting state (the URL overrides them, see web/state.js):
//   model="llama-2-7b" hardware="h100-sxm" gpus="8" recipe="bf16_mixed_adamw" seq="4096" mbs="1"
//   recompute="none|selective|full" flash="true|false" sp="true|false" zero="0..3" tp="1" pp="1"
//   dropout="model|true|false" (default model: the model's own dropouts) context-mib="512" frag-pct="5"
//   (the allowance for the CUDA context and allocator fragmentation the "fits" verdict subtracts)
//   rlayers="0" (layers per stage fully recomputed) rops="" (per-operation recomputation) vstages="1"
//   (interleaved pipeline chunks) gacc="none|fp32" (gradient-accumulation buffer) z3buf="none|module|layer"
//   ep="1" (MoE expert parallel degree) cf="0" (MoE capacity factor, 0 = no limit)
//   dseq="0" (an encoder-decoder's target length, 0 = the sequence length)
//   mode="pretrain|full|lora|qlora" (fine-tuning: the engine's finetune method) rank="8" alpha="16" ldrop="0"
//   targets="q,v|q,k,v,o|all-linear|q_a,q_b,kv_a,kv_b,o" opt8="false" (8-bit AdamW) paged="false" dq="true"
//   (QLoRA double quantization)
//   controls="model,hardware,..." (not state: the fields shown outside "More settings", kit/disclosure.js;
//   default: all but the MoE and encoder-decoder ones)
// Every number comes from the engine's memory_budget or finetune method; this module only lays it out.
import {
  TallyWidget,
  TallyError,
  baseCss,
  clearErrors,
  formatBytes,
  formatParams,
  formatPercent,
  escapeHtml,
  formulaHtml,
  symbolLegend,
  copyText,
  downloadBlob,
  standaloneSvg,
  svgToPng,
  oneOf,
  GB,
  modelOption,
} from './base.js';
import { YOUR_GPU_ID, yourGpu } from './your-gpu.js';
import { drawWidth, linearScale, linearTicks } from './kit/chart.js';
import { trustedHtml } from './kit/trusted.js';
import { disclosedControls, disclosureCss, revealFolded, tableControls } from './kit/disclosure.js';

const CUSTOM = 'custom';
const RECOMPUTE_OPS = [
  { value: '', label: 'none beyond the setting above' },
  { value: 'norms', label: 'norm outputs' },
  { value: 'norms,mlp_activation', label: 'norm outputs, MLP activation' },
  { value: 'attention_scores,norms,mlp_activation', label: '+ attention scores' },
  { value: 'attention_scores,qkv,norms,mlp_up,mlp_activation', label: 'everything but layer inputs and outputs' },
];
const GRAD_ACCUM = [
  { value: 'none', label: 'none (accumulate in the gradients)' },
  { value: 'fp32', label: 'fp32 buffer (+4 B/param)' },
];
const ZERO3_BUFFER = [
  { value: 'none', label: 'not counted' },
  { value: 'module', label: 'largest module (DeepSpeed)' },
  { value: 'layer', label: 'one layer (FSDP)' },
];
const RECOMPUTE = [
  { value: 'none', label: 'none (keep all activations)' },
  { value: 'selective', label: 'selective (attention scores)' },
  { value: 'full', label: 'full (keep layer inputs only)' },
];
const ZERO = [
  { value: '0', label: '0: replicate everything' },
  { value: '1', label: '1: shard optimizer states' },
  { value: '2', label: '2: + gradients' },
  { value: '3', label: '3 / FSDP: + weights' },
];
/** Training modes: pre-training asks memory_budget, the fine-tuning modes ask finetune with their method. */
const MODES = [
  { value: 'pretrain', label: 'pre-training (every weight trains)' },
  { value: 'full', label: 'full fine-tuning' },
  { value: 'lora', label: 'LoRA (frozen base + adapters)' },
  { value: 'qlora', label: 'QLoRA (NF4 base + adapters)' },
];
const LORA_TARGETS = [
  { value: 'q,v', label: 'q, v (the LoRA paper)' },
  { value: 'q,k,v,o', label: 'q, k, v, o (attention)' },
  { value: 'all-linear', label: 'every linear layer (QLoRA)' },
  { value: 'q_a,q_b,kv_a,kv_b,o', label: 'latent attention: q_a, q_b, kv_a, kv_b, o' },
];
/** The fine-tuning modes a field is used in: hidden, unread and not sent in the others. */
const inModes = (...modes) => ({ modes, activeWhen: (v) => modes.includes(v.mode) });
const ADAPTER_MODES = inModes('lora', 'qlora');
const FINETUNE_MODES = inModes('full', 'lora', 'qlora');
/** Unsent at this value: the engine's default is the same, so its arguments stay those of the plain setup. */
const unless = (plain) => (text) => (text === plain ? undefined : text);

/**
 * The widget's fields (kit/store.js), in the order of their controls. Pre-training asks memory_budget, the
 * fine-tuning modes ask finetune with their method; `optional` numbers are not sent at their default.
 */
const FIELDS = [
  {
    name: 'model',
    kind: 'select',
    label: 'Model',
    options: (w) => [...w.presets.models.map(modelOption), { value: CUSTOM, label: 'Custom: paste a config.json' }],
    fallback: (w) => w.presets.models[0]?.id ?? CUSTOM,
    arg: 'model',
    sendWhen: (v) => v.model !== CUSTOM,
  },
  {
    name: 'config',
    kind: 'text', // the textarea beside the model select (mount)
    check: (text) => text.trim().startsWith('{') || 'must be a JSON object',
    fallback: '',
    arg: 'hf_config',
    activeWhen: (v) => v.model === CUSTOM,
    stateWhen: (v) => v.model === CUSTOM, // a pasted config counts only with the custom model
    embed: false,
  },
  {
    name: 'hardware',
    kind: 'select',
    label: 'GPU',
    options: (w) =>
      w.presets.hardware.map((h) => ({ value: h.id, label: `${h.name} (${formatBytes(h.memory_bytes, 3)})` })),
    // The H100 SXM (80 GB) most authors mean by "an H100", as the compute widget and the iframe example use; not the
    // first preset whose id says h100 (a 96 GB power-limited part sorts before it).
    fallback: (w) =>
      (w.presets.hardware.find((h) => h.id === 'h100-sxm') ?? w.presets.hardware.find((h) => /h100/i.test(h.id)))?.id ??
      w.presets.hardware[0]?.id,
    arg: 'hardware',
  },
  {
    name: 'mode',
    kind: 'select',
    label: 'Training',
    options: MODES,
    fallback: 'pretrain',
    arg: 'method',
    toArg: unless('pretrain'),
  },
  {
    name: 'recipe',
    kind: 'select',
    label: 'Recipe (dtypes + optimizer)',
    options: (w) => w.presets.recipes.map((r) => ({ value: r.id, label: shortRecipeName(r.name), title: r.name })),
    fallback: (w) => w.presets.recipes.find((r) => r.id === 'bf16_mixed_adamw')?.id ?? w.presets.recipes[0]?.id,
    arg: 'recipe',
  },
  { name: 'rank', kind: 'number', label: 'LoRA rank r', fallback: '8', arg: 'lora_rank', ...ADAPTER_MODES },
  { name: 'alpha', kind: 'number', label: 'LoRA alpha', fallback: '16', arg: 'lora_alpha', ...ADAPTER_MODES },
  {
    name: 'targets',
    kind: 'select',
    label: 'LoRA target modules',
    options: LORA_TARGETS,
    fallback: 'q,v',
    arg: 'lora_targets',
    ...ADAPTER_MODES,
  },
  {
    name: 'ldrop',
    kind: 'number',
    label: 'LoRA dropout',
    fallback: '0',
    arg: 'lora_dropout',
    optional: true,
    ...ADAPTER_MODES,
  },
  {
    name: 'dq',
    kind: 'check',
    label: 'Double quantization (NF4 scales)',
    fallback: 'true',
    arg: 'double_quant',
    toArg: (on) => (on ? undefined : false),
    ...inModes('qlora'),
  },
  {
    name: 'opt8',
    kind: 'check',
    label: '8-bit AdamW (bitsandbytes)',
    fallback: 'false',
    arg: 'optimizer',
    toArg: (on) => (on ? 'adamw_8bit' : undefined),
    ...FINETUNE_MODES,
  },
  {
    name: 'paged',
    kind: 'check',
    label: 'Paged optimizer (spills to host RAM)',
    fallback: 'false',
    arg: 'paged',
    toArg: (on) => (on ? true : undefined),
    ...FINETUNE_MODES,
  },
  { name: 'gpus', kind: 'number', label: 'GPUs', fallback: '1', arg: 'gpus' },
  {
    name: 'seq',
    kind: 'number',
    label: 'Sequence length (tokens)',
    fallback: '4096',
    arg: 'seq',
    engineDefault: (r) => r.setup?.seq,
    why: "Llama 2's pretraining context; the engine's default is GPT-3's",
  },
  { name: 'mbs', kind: 'number', label: 'Micro-batch (sequences)', fallback: '1', arg: 'micro_batch' },
  { name: 'tp', kind: 'number', label: 'Tensor parallel', fallback: '1', arg: 'tp' },
  { name: 'pp', kind: 'number', label: 'Pipeline parallel', fallback: '1', arg: 'pp' },
  {
    name: 'vstages',
    kind: 'number',
    label: 'Interleaved chunks per GPU',
    fallback: '1',
    arg: 'virtual_stages',
    optional: true,
  },
  {
    name: 'rlayers',
    kind: 'number',
    label: 'Layers fully recomputed (per stage)',
    fallback: '0',
    arg: 'recompute_layers',
    optional: true,
  },
  { name: 'ep', kind: 'number', label: 'Expert parallel (MoE)', fallback: '1', arg: 'ep', optional: true },
  {
    name: 'cf',
    kind: 'number',
    label: 'Expert capacity factor (MoE; 0: no limit)',
    fallback: '0',
    arg: 'capacity_factor',
    optional: true,
  },
  {
    name: 'dseq',
    kind: 'number',
    label: 'Target length (encoder-decoder; 0: the sequence length)',
    fallback: '0',
    arg: 'decoder_seq',
    optional: true,
  },
  {
    name: 'recompute',
    kind: 'select',
    label: 'Activation recomputation',
    options: RECOMPUTE,
    fallback: 'none',
    arg: 'recompute',
  },
  {
    name: 'rops',
    kind: 'select',
    label: 'Also recompute',
    options: RECOMPUTE_OPS,
    fallback: '',
    arg: 'recompute_ops',
    toArg: unless(''),
  },
  {
    name: 'zero',
    kind: 'select',
    label: 'ZeRO stage (over data parallel)',
    options: ZERO,
    fallback: '0',
    arg: 'zero',
    toArg: Number,
  },
  {
    name: 'gacc',
    kind: 'select',
    label: 'Gradient accumulation buffer',
    options: GRAD_ACCUM,
    fallback: 'none',
    arg: 'grad_accum',
    toArg: unless('none'),
  },
  {
    name: 'z3buf',
    kind: 'select',
    label: 'ZeRO-3 gathered parameters',
    options: ZERO3_BUFFER,
    fallback: 'none',
    arg: 'zero3_gather',
    toArg: unless('none'),
  },
  { name: 'flash', kind: 'check', label: 'FlashAttention', fallback: 'false', arg: 'flash_attention' },
  { name: 'sp', kind: 'check', label: 'Sequence parallel (with TP)', fallback: 'false', arg: 'sequence_parallel' },
  {
    name: 'dropout',
    kind: 'select',
    label: 'Dropout masks',
    // The first choice names what the chosen model does (dropoutOptions); the values are these three.
    options: (w) => w.dropoutOptions(w.startModel),
    check: oneOf(['model', 'true', 'false']),
    fallback: 'model',
    arg: 'dropout',
    toArg: (text) => (text === 'model' ? undefined : text === 'true'),
  },
  // The allowance for the CUDA context and fragmentation, converted to the engine's units only (the engine checks ranges).
  {
    name: 'context_mib',
    attribute: 'context-mib',
    kind: 'number',
    label: 'Reserved: CUDA context (MiB)',
    fallback: '512',
    arg: 'cuda_context_bytes',
    toArg: (mib) => Math.round(mib * 2 ** 20), // MiB -> whole bytes
  },
  {
    name: 'frag_pct',
    attribute: 'frag-pct',
    kind: 'number',
    label: 'Reserved: fragmentation (% of memory)',
    fallback: '5',
    arg: 'fragmentation_fraction',
    toArg: (pct) => pct * 0.01, // percent -> fraction
  },
];
/** Fine-tuning fields and the modes that use them (hidden and not sent in the others). */
const FINETUNE_FIELD_MODES = Object.fromEntries(FIELDS.filter((f) => f.modes).map((f) => [f.name, f.modes]));
/** Fields folded behind "More settings" when the page does not say which to show (MoE, encoder-decoder). */
const FOLDED_BY_DEFAULT = ['ep', 'cf', 'dseq'];
/** The finetune result's memory classes in stacking order; names and descriptions are the widget's words. */
const FINETUNE_CLASSES = [
  {
    id: 'frozen_weights',
    name: 'frozen base weights',
    color: '#4e79a7',
    description: 'the base model, stored but not trained: no gradients, no optimizer states',
  },
  {
    id: 'trainable_weights',
    name: 'adapter weights',
    fullName: 'weights',
    color: '#9c755f',
    description: 'the weights the optimizer updates',
  },
  {
    id: 'gradients',
    name: 'adapter gradients',
    fullName: 'gradients',
    color: '#f28e2b',
    description: 'one per trainable weight',
  },
  {
    id: 'master_weights',
    name: 'master weights',
    color: '#e15759',
    description: 'an fp32 copy of the trainable weights',
  },
  {
    id: 'optimizer_states',
    name: 'adapter optimizer states',
    fullName: 'optimizer states',
    color: '#76b7b2',
    description: "the optimizer's moments of the trainable weights (a paged optimizer can spill them to host RAM)",
  },
  {
    id: 'activations',
    name: 'activations',
    color: '#59a14f',
    description: "the base model's stored activations: the gradient still flows through every frozen layer",
  },
  {
    id: 'adapter_activations',
    name: 'adapter activations',
    color: '#8cd17d',
    description: "each adapter's A·x (r values per token), plus the dropped input and mask with LoRA dropout",
  },
  {
    id: 'dequant_buffer',
    name: 'dequantization buffer',
    color: '#ff9da7',
    description: 'the largest NF4 weight dequantized to the compute dtype for its matmul',
  },
  {
    id: 'quantized_inputs',
    name: "4-bit linears' saved inputs",
    color: '#b07aa1',
    description:
      'bitsandbytes before 0.43.2: each 4-bit linear kept its input for backward, though its weight takes no gradient',
  },
  { id: 'other', name: 'other buffers', color: '#edc948', description: 'gradient accumulation and ZeRO-3 buffers' },
];
/** What to try when a fine-tuning budget does not fit, by method. */
const FINETUNE_HINTS = {
  full: 'try LoRA or QLoRA, a shorter sequence, recomputation or a larger GPU',
  lora: 'try QLoRA, a shorter sequence, recomputation or a larger GPU',
  qlora: 'try a shorter sequence, recomputation, fewer target modules or a larger GPU',
};
/** Rows shown even at 0 bytes in the adapter modes: what LoRA removes is part of the lesson. */
const ADAPTER_CORE = ['frozen_weights', 'trainable_weights', 'gradients', 'optimizer_states', 'activations'];

/** The memory classes in stacking order, with a colour that reads on light and dark backgrounds. */
const CLASSES = [
  { id: 'weights', color: '#4e79a7' },
  { id: 'gradients', color: '#f28e2b' },
  { id: 'master_weights', color: '#e15759' },
  { id: 'optimizer_states', color: '#76b7b2' },
  { id: 'activations', color: '#59a14f' },
  { id: 'grad_accum', color: '#edc948', optional: true },
  { id: 'zero3_buffer', color: '#b07aa1', optional: true },
];

const css = `
.layout { display: grid; grid-template-columns: minmax(0, 1fr); gap: 12px; }
.config { display: none; grid-column: 1 / -1; }
.config.open { display: flex; }
.verdict { font-size: 16px; font-weight: 600; margin: 4px 0 0; }
.verdict.fits { color: var(--ok); }
.verdict.over { color: var(--error); }
.verdict .sub { display: block; font-weight: 400; font-size: 13px; color: var(--muted); }
.chart { width: 100%; height: auto; display: block; }
.chart rect.seg { stroke: var(--panel); stroke-width: 1; cursor: pointer; }
.chart rect.seg:hover, .chart rect.seg.hot { stroke: var(--fg); stroke-width: 2; }
.chart .cap { stroke: var(--error); stroke-width: 2; stroke-dasharray: 6 4; }
.chart .cap-label { fill: var(--error); font-weight: 600; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { text-align: left; padding: 4px 6px; border-bottom: 1px solid var(--border); vertical-align: middle; }
th { font-size: 12px; color: var(--muted); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.hot td { background: color-mix(in srgb, var(--accent) 12%, transparent); }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; }
.formula-btn { padding: 0 8px; min-height: 26px; font-style: italic; font-family: Georgia, serif; }
.formula-box { min-height: 2.6em; margin-top: 6px; padding: 6px 8px; border-radius: 4px; background: var(--bg);
  border: 1px solid var(--border); font-size: 14px; overflow-x: auto; }
.formula { font-family: Georgia, 'Times New Roman', serif; font-size: 16px; }
.formula var { font-style: italic; }
.formula-box .desc { color: var(--muted); font-size: 13px; }
details { margin-top: 6px; font-size: 14px; }
details summary { cursor: pointer; color: var(--accent); }
.field[hidden], [hidden] { display: none; }
@media (max-width: 480px) {
  .fields { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .fields .field.wide { grid-column: 1 / -1; }
  td, th { padding: 4px 3px; font-size: 13px; }
}
`;

/** The GPU select's entry for the measured device: its id, name and memory in bytes (decimal GB, as the engine). */
function yourGpuEntry(device) {
  return { id: YOUR_GPU_ID, name: device.name, memory_bytes: device.memory_gb * 1e9 };
}

class TallyMemoryBudget extends TallyWidget {
  static fields = FIELDS;

  build() {
    const engine = this.engine;
    try {
      this.presets = engine.call('presets', {});
    } catch (error) {
      this.shadowRoot.innerHTML = trustedHtml(
        `<style>${baseCss}</style><div class="widget notice">The engine has no presets: ${escapeHtml(error.message)}</div>`,
      );
      return;
    }
    this.presets = {
      ...this.presets,
      models: this.presets.models ?? [],
      // "Your GPU" (your-gpu.js: measured by the roofline widget on this page) joins the presets once it exists.
      hardware: [...(this.presets.hardware ?? []), ...(yourGpu() ? [yourGpuEntry(yourGpu())] : [])],
      recipes: this.presets.recipes ?? [],
    };
    const start = this.declareState('mem');
    this.startModel = start.model;

    // Each control's markup by field name, so the page can choose which stay outside "More settings"
    // (kit/disclosure.js); the pasted config sits in the model's box.
    const controls = tableControls(
      this,
      FIELDS.filter((f) => f.name !== 'config').map((f) => f.name),
      start,
    ).map(([name, html, help, label]) => [
      name,
      html +
        (name === 'model'
          ? `<div class="field config" data-field="config">
            <label for="f-config">Hugging Face config.json</label>
            <textarea id="f-config" name="config" spellcheck="false" aria-describedby="f-config-error"
              placeholder='{"model_type": "llama", "hidden_size": 4096, ...}'></textarea>
            <span class="error" id="f-config-error" role="alert"></span>
          </div>`
          : ''),
      help,
      label,
    ]);
    const { shown, more } = disclosedControls(this, controls, FOLDED_BY_DEFAULT);
    this.shadowRoot.innerHTML = trustedHtml(`<style>${baseCss}${css}${disclosureCss}</style>
      <div class="widget" role="group" aria-label="Training memory budget per GPU">
        <div class="fields">${shown}</div>
        ${more}
        <p class="notice" role="status"></p>
        <div class="layout">
          <p class="verdict" data-out="verdict" aria-live="polite" aria-atomic="true">—</p>
          <svg class="chart" data-out="chart" viewBox="0 0 640 130" role="img" aria-labelledby="chart-title">
            <title id="chart-title">Memory per GPU by term</title></svg>
          <table data-out="table">
            <caption class="visually-hidden">Memory per GPU by term (GB = 10^9 bytes)</caption>
            <thead><tr><th scope="col">term</th><th scope="col" class="num">per GPU</th><th scope="col" class="num">share</th><th scope="col">formula</th></tr></thead>
            <tbody></tbody>
          </table>
          <div class="formula-box" data-out="formula" aria-live="polite"><span class="desc">Hover or tap a term (or press its ƒ button) to see the formula behind it.</span></div>
          <details data-out="activations"><summary>Activation terms, per layer</summary><table><thead><tr><th scope="col">tensor kept for the backward pass</th><th scope="col" class="num">per layer</th><th scope="col">formula</th></tr></thead><tbody></tbody></table><p class="status" data-out="act-symbols"></p><p class="status" data-out="korthikanti"></p></details>
        </div>
        <div class="toolbar" role="toolbar" aria-label="Export">
          <button type="button" data-action="markdown">Copy as Markdown</button>
          <button type="button" data-action="json">Copy as JSON</button>
          <button type="button" data-action="svg">Download SVG</button>
          <button type="button" data-action="png">Download PNG</button>
          <span class="status" data-out="export" role="status"></span>
        </div>
      </div>`);
    const root = this.shadowRoot;
    root.querySelector('textarea[name="config"]').value = start.config;
    this.updateOnEdit();
    this.onYourGpu = () => this.offerYourGpu();
    globalThis.addEventListener?.('tally-your-gpu', this.onYourGpu);
    root.addEventListener('click', (event) => this.onClick(event));
    root.addEventListener('pointerover', (event) => this.onHover(event));
    root.addEventListener('focusin', (event) => this.onHover(event));

    this.observeWidth(root.querySelector('[data-out="chart"]'), () => this.budget && this.render());
    this.firstUpdate();
  }

  /** Shows the fine-tuning fields of the chosen mode only, and opens "More settings" where it holds news. */
  syncModeFields(values) {
    const root = this.shadowRoot;
    for (const [name, modes] of Object.entries(FINETUNE_FIELD_MODES))
      root.querySelector(`.field[data-field="${name}"]`).hidden = !modes.includes(values.mode);
    // With adapters only the recipe's optimizer applies: the frozen base and the fp32 adapters set the rest.
    root.querySelector('.field[data-field="recipe"] label').textContent = FINETUNE_FIELD_MODES.rank.includes(
      values.mode,
    )
      ? 'Recipe (the adapters use its optimizer)'
      : 'Recipe (dtypes + optimizer)';
    // A folded field with an error, or one a link set away from its starting value, must not stay out of sight.
    revealFolded(this);
  }

  /** A refused config also leaves the custom model, so the widget shows a preset again. */
  revertField(field) {
    this.setControl(field, this.defaults[field]);
    if (field === 'config')
      this.setControl(
        'model',
        this.defaults.model === CUSTOM ? (this.presets.models[0]?.id ?? CUSTOM) : this.defaults.model,
      );
  }

  /** A pasted config counts only with the custom model. */
  urlOverrideReason(field, state) {
    if (field === 'config' && state.model !== CUSTOM) return `used only with ${this.key}.model=custom`;
    return super.urlOverrideReason(field, state);
  }

  /** Sets controls from state texts (setState, URL reverts). */
  applyState(values) {
    super.applyState(values);
    if ('model' in values) this.syncDropoutLabel(values.model);
  }

  /** The first dropout choice names what the chosen model does. */
  syncDropoutLabel(modelId) {
    this.shadowRoot.querySelector('[name="dropout"]').options[0].textContent = this.dropoutOptions(modelId)[0].label;
  }

  /** The dropout choices; the first names what the chosen model does (engine preset data). */
  dropoutOptions(modelId) {
    const config = this.presets?.models?.find((m) => m.id === modelId)?.config;
    const rates = config ? [config.attention_dropout, config.residual_dropout, config.embedding_dropout] : [];
    const own = !config
      ? "from the model's config.json"
      : rates.some((p) => p > 0)
        ? `as the model: on (p = ${Math.max(...rates)})`
        : 'as the model: none';
    return [
      { value: 'model', label: own },
      { value: 'true', label: 'on: store every mask' },
      { value: 'false', label: 'off: no masks' },
    ];
  }

  setControl(field, value) {
    const el = this.shadowRoot.querySelector(`[name="${field}"]`);
    if (!el) return;
    if (el.type === 'checkbox') el.checked = value === 'true';
    else el.value = value;
  }

  onEdit(name) {
    if (name === 'model') this.syncDropoutLabel(this.values().model);
  }

  disconnectedCallback() {
    super.disconnectedCallback?.();
    globalThis.removeEventListener?.('tally-your-gpu', this.onYourGpu);
  }

  /** Lists (or updates) "your GPU" in the GPU select once measured; recomputes if it is the one selected. */
  offerYourGpu() {
    const device = yourGpu();
    const select = this.shadowRoot.querySelector('select[name="hardware"]');
    if (!device || !select) return;
    const entry = yourGpuEntry(device);
    const list = this.presets.hardware;
    const at = list.findIndex((h) => h.id === YOUR_GPU_ID);
    if (at >= 0) list[at] = entry;
    else list.push(entry);
    let option = [...select.options].find((o) => o.value === YOUR_GPU_ID);
    if (!option) {
      option = document.createElement('option');
      option.value = YOUR_GPU_ID;
      select.append(option);
    }
    option.textContent = `${entry.name} (${formatBytes(entry.memory_bytes, 3)})`;
    if (select.value === YOUR_GPU_ID) this.update();
  }

  /**
   * Builds the engine arguments from the field table: {args, errors}, each error a TallyError naming a field.
   * "Your GPU" goes as its hardware object (the presets' format).
   */
  args(values) {
    const { args, errors } = this.fieldArgs(values);
    if (args.hardware === YOUR_GPU_ID && yourGpu()) args.hardware = yourGpu();
    if (values.model === CUSTOM && !values.config?.trim())
      errors.unshift(
        new TallyError('config', 'paste a Hugging Face config.json (a JSON object with model_type, hidden_size, …)'),
      );
    return { args, errors };
  }
  update() {
    const root = this.shadowRoot;
    clearErrors(root);
    const values = this.values();
    root.querySelector('.config').classList.toggle('open', values.model === CUSTOM);
    this.lastError = null;
    const built = this.args(values);
    if (this.showFieldErrors(built.errors)) {
      this.clearOutputs(built.errors[0].message);
      this.showWarnings([]);
      this.syncModeFields(values);
      return;
    }
    const method = values.mode === 'pretrain' ? 'memory_budget' : 'finetune';
    const argToField = { ...this.argToField, capacity_bytes: 'hardware' };
    // Errors about a pasted config name its HF field (hidden_size, ...): show them beside the config box.
    const toField = (arg) => {
      const field = argToField[arg] ?? arg;
      return values.model === CUSTOM && !root.querySelector(`[name="${CSS.escape(field)}"]`) ? 'config' : field;
    };
    const budget = this.callEngine(method, built.args, toField);
    if (!budget) {
      this.clearOutputs(this.lastError.message);
      this.syncModeFields(values);
      return;
    }
    this.budget = budget;
    this.budgetArgs = built.args;
    this.method = method;
    this.syncModeFields(values);
    this.showWarnings(this.budget.warnings ?? []);
    this.noteEngineDefaults(method, built.args, this.engineDefaultFields);
    this.render();
  }

  /** The symbols of the engine's memory formulas in words, with this budget's value where it has one. */
  glossary() {
    const b = this.budget ?? {};
    const m = b.model ?? {},
      st = b.setup ?? {},
      act = b.activations ?? {};
    const cls = Object.fromEntries((b.classes ?? []).map((c) => [c.id, c]));
    return {
      N_w: ['parameters whose working weights this GPU holds', formatParams(cls.weights?.params)],
      N_g: ['parameters whose gradients this GPU holds', formatParams(cls.gradients?.params)],
      N_o: ['parameters whose optimizer state this GPU holds', formatParams(cls.optimizer_states?.params)],
      B: ['bytes'],
      ceil: ['rounded up to a whole number'],
      Σ_matrices: ['the sum over the weight matrices'],
      rows: ['rows of a weight matrix'],
      cols: ['columns of a weight matrix'],
      per_layer: ['activation bytes of one layer', formatBytes(act.per_layer_bytes)],
      layers: ['layers on this GPU', act.layers],
      in_flight: ['micro-batches in flight at once (pipeline)', act.microbatches_in_flight],
      outside: ['activation bytes outside the layers (embedding, final norm, logits)', formatBytes(act.outside_bytes)],
      e: ['bytes per activation element', st.activation_bytes],
      s: ['sequence length (tokens)', st.seq],
      b: ['micro-batch (sequences)', st.micro_batch],
      h: ['hidden size', m.hidden_size],
      a: ['attention heads', m.num_heads],
      d: ['head dimension', m.head_dim],
      n_kv: ['key-value heads', m.num_kv_heads],
      f: ['MLP width', m.ffn_hidden_size],
      k: ['experts each token visits', m.experts_per_token],
      shared: ['shared experts', m.num_shared_experts],
      E: ['routed experts per layer', m.num_experts],
      cf: ['expert capacity factor', st.capacity_factor ?? 0],
      L: ['layers of the model', m.num_layers],
      L_dec: ['decoder layers (encoder-decoder)', m.num_decoder_layers ?? 0],
      t: ['tensor-parallel degree', st.tp],
      V: ['vocabulary size', m.vocab_size],
      p: ['micro-batches in flight', act.microbatches_in_flight],
    };
  }

  /** Removes the last result; `reason` (the error) takes the verdict's place so nothing stale stays on screen. */
  clearOutputs(reason = '') {
    const root = this.shadowRoot;
    this.budget = null;
    root.querySelector('[data-out="verdict"]').textContent = reason ? `No result: ${reason}` : '—';
    root.querySelector('[data-out="verdict"]').className = 'verdict';
    root.querySelector('[data-out="chart"]').replaceChildren();
    root.querySelector('[data-out="table"] tbody').replaceChildren();
    root.querySelector('[data-out="activations"] tbody').replaceChildren();
  }

  /** The budget's classes in stacking order: [{id, name, bytes, share, formula, description, color}]. */
  rows() {
    if (this.method === 'finetune') return this.finetuneRows();
    const b = this.budget;
    const byId = new Map((b.classes ?? []).map((c) => [c.id, c]));
    const total = b.per_gpu_bytes.total;
    return CLASSES.filter(({ id, optional }) => !optional || byId.has(id)).map(({ id, color }) => {
      const cls = byId.get(id) ?? byId.get(id.replace(/_states$/, '')) ?? {};
      const bytes = b.per_gpu_bytes[id] ?? cls.bytes ?? 0;
      return {
        id,
        color,
        bytes,
        share: total > 0 ? bytes / total : 0,
        name: cls.name ?? id.replace(/_/g, ' '),
        formula: cls.formula,
        description: cls.description,
        sharded: cls.sharded_by,
      };
    });
  }

  /** The finetune result's classes in stacking order, named for the mode (adapters or every weight). */
  finetuneRows() {
    const b = this.budget;
    const total = b.per_gpu_bytes.total;
    const adapters = b.method !== 'full';
    return FINETUNE_CLASSES.filter(({ id }) => b.per_gpu_bytes[id] > 0 || (adapters && ADAPTER_CORE.includes(id))).map(
      (c) => ({
        id: c.id,
        color: c.color,
        bytes: b.per_gpu_bytes[c.id],
        share: total > 0 ? b.per_gpu_bytes[c.id] / total : 0,
        name: adapters ? c.name : (c.fullName ?? c.name),
        description: c.description,
      }),
    );
  }

  /** The verdict of a finetune result: fits, fits only with the paged optimizer, or does not fit. */
  finetuneVerdict(verdict, b) {
    const usable = b.usable_bytes;
    const total = b.per_gpu_bytes.total;
    const label = MODES.find((m) => m.value === b.method)?.label ?? b.method;
    const trained = `${label}: ${formatParams(b.params_trainable)} of ${formatParams(b.params_total)} parameters train (${formatPercent(b.trainable_fraction)})`;
    const capacityNote = `usable = ${formatBytes(b.capacity_bytes)} the device reports − ${formatBytes(b.allowance_bytes)} reserved for the CUDA context and fragmentation`;
    if (b.fits) {
      verdict.className = 'verdict fits';
      verdict.innerHTML = trustedHtml(
        `Fits: ${escapeHtml(formatBytes(total))} of ${escapeHtml(formatBytes(usable))} usable on one GPU (${escapeHtml(formatPercent(total / usable))})<span class="sub">${escapeHtml(trained)} (${escapeHtml(capacityNote)}).</span>`,
      );
    } else if (b.paged && b.fits_paged) {
      verdict.className = 'verdict fits';
      verdict.innerHTML = trustedHtml(
        `Fits only with paging: ${escapeHtml(formatBytes(total))} &gt; ${escapeHtml(formatBytes(usable))} usable, but without the ${escapeHtml(formatBytes(b.per_gpu_bytes.optimizer_states))} of optimizer states the GPU holds ${escapeHtml(formatBytes(b.paged_floor_bytes))}<span class="sub">${escapeHtml(trained)}; the paged optimizer moves its states to host RAM when the GPU runs out, at the cost of PCIe transfers (${escapeHtml(capacityNote)}).</span>`,
      );
    } else {
      verdict.className = 'verdict over';
      verdict.innerHTML = trustedHtml(
        `Does not fit: ${escapeHtml(formatBytes(total))} per GPU &gt; ${escapeHtml(formatBytes(usable))} usable<span class="sub">${escapeHtml(trained)}; ${escapeHtml(FINETUNE_HINTS[b.method] ?? '')} (${escapeHtml(capacityNote)}).</span>`,
      );
    }
  }

  render() {
    const root = this.shadowRoot;
    const b = this.budget;
    const finetune = this.method === 'finetune';
    root.querySelector('[data-out="activations"]').hidden = finetune;
    const hw =
      typeof this.budgetArgs.hardware === 'object'
        ? this.budgetArgs.hardware
        : this.presets.hardware.find((h) => h.id === this.budgetArgs.hardware);
    const total = b.per_gpu_bytes.total;
    const verdict = root.querySelector('[data-out="verdict"]');
    const setup = b.setup ?? {};
    const layout = `${setup.dp ?? '?'} data × ${setup.tp ?? 1} tensor × ${setup.pp ?? 1} pipeline parallel`;
    const usable = b.usable_bytes;
    const capacityNote = `usable = ${formatBytes(b.capacity_bytes)} the device reports − ${formatBytes(b.allowance_bytes)} reserved for the CUDA context and fragmentation`;
    if (finetune) this.finetuneVerdict(verdict, b);
    else if (b.fits) {
      verdict.className = 'verdict fits';
      verdict.innerHTML = trustedHtml(
        `Fits: ${escapeHtml(formatBytes(total))} of ${escapeHtml(formatBytes(usable))} usable per GPU (${escapeHtml(formatPercent(total / usable))})<span class="sub">${escapeHtml(formatParams(b.params_total))} parameters on ${escapeHtml(layout)}; ${escapeHtml(formatBytes(b.headroom_bytes))} to spare (${escapeHtml(capacityNote)}).</span>`,
      );
    } else {
      verdict.className = 'verdict over';
      const need =
        b.min_gpus == null
          ? 'no data-parallel size fits with these settings: raise the ZeRO stage, TP or PP, or recompute activations'
          : `needs at least ${b.min_gpus.toLocaleString('en-US')} GPUs with this ZeRO stage, TP and PP`;
      verdict.innerHTML = trustedHtml(
        `Does not fit: ${escapeHtml(formatBytes(total))} per GPU &gt; ${escapeHtml(formatBytes(usable))} usable<span class="sub">${escapeHtml(formatParams(b.params_total))} parameters on ${escapeHtml(layout)}; ${escapeHtml(need)} (${escapeHtml(capacityNote)}).</span>`,
      );
    }
    const rows = this.rows();
    this.drawChart(rows, total, usable, `${hw?.name ?? 'GPU'} usable`);
    // A new setting usually changes numbers, not rows: the tables are rebuilt only when their rows change, else
    // their number cells are rewritten in place (no HTML parse per keystroke, issue 39's update latency).
    const tbody = root.querySelector('[data-out="table"] tbody');
    const tableKey = rows.map((r) => `${r.id}\u0000${r.name}\u0000${r.formula ? 1 : 0}`).join('\u0001');
    this.renderedKeys ??= {};
    if (this.renderedKeys.table === tableKey && tbody.rows.length === rows.length + 1) {
      rows.forEach((r, i) => {
        const cells = tbody.rows[i].cells;
        cells[1].textContent = formatBytes(r.bytes);
        cells[2].textContent = formatPercent(r.share);
      });
      tbody.rows[rows.length].cells[1].firstChild.textContent = formatBytes(total);
    } else {
      tbody.innerHTML = trustedHtml(
        rows
          .map(
            (r) => `<tr data-term="${r.id}">
        <td><span class="swatch" style="background:${r.color}"></span>${escapeHtml(r.name)}</td>
        <td class="num">${escapeHtml(formatBytes(r.bytes))}</td>
        <td class="num">${escapeHtml(formatPercent(r.share))}</td>
        <td>${r.formula ? `<button type="button" class="formula-btn" data-term="${r.id}" aria-label="Formula for ${escapeHtml(r.name)}">ƒ</button>` : ''}</td>
      </tr>`,
          )
          .join('') +
          `<tr><td><strong>total per GPU</strong></td><td class="num"><strong>${escapeHtml(formatBytes(total))}</strong></td><td class="num">100%</td><td></td></tr>`,
      );
      this.renderedKeys.table = tableKey;
    }
    const act = b.activations ?? {};
    const terms = act.terms ?? [];
    const actBody = root.querySelector('[data-out="activations"] tbody');
    const termsKey = terms.map((t) => `${t.id}\u0000${t.name}\u0000${t.scope}\u0000${t.formula}`).join('\u0001');
    if (this.renderedKeys.terms === termsKey && actBody.rows.length === terms.length) {
      terms.forEach((t, i) => (actBody.rows[i].cells[1].textContent = formatBytes(t.bytes)));
    } else {
      actBody.innerHTML = trustedHtml(
        terms
          .map(
            (t) => `<tr>
        <td>${escapeHtml(t.name ?? t.id)}${t.scope === 'outside' ? ' <span class="status">(once, outside the layers)</span>' : ''}</td>
        <td class="num">${escapeHtml(formatBytes(t.bytes))}</td><td class="formula">${formulaHtml(t.formula ?? '')}</td></tr>`,
          )
          .join(''),
      );
      this.renderedKeys.terms = termsKey;
    }
    const legend = symbolLegend(
      terms.map((t) => t.formula ?? ''),
      this.glossary(),
    ).html;
    const symbols = root.querySelector('[data-out="act-symbols"]');
    if (this.renderedKeys.legend !== legend || !symbols.firstChild) {
      symbols.innerHTML = trustedHtml(legend);
      this.renderedKeys.legend = legend;
    }
    root.querySelector('[data-out="korthikanti"]').textContent = act.layers
      ? `${act.layers} layers on this GPU × ${act.microbatches_in_flight ?? 1} micro-batch(es) in flight; total ${formatBytes(act.total_bytes)}. ` +
        (act.korthikanti_formula
          ? `Korthikanti et al.'s closed form for this setup: ${act.korthikanti_formula}.`
          : "Korthikanti et al.'s closed form covers only their GPT setup (16-bit, dropout, GELU, multi-head attention, no FlashAttention); the terms above are counted tensor by tensor instead.")
      : '';
    if (this.hot) this.highlight(this.hot);
  }

  drawChart(rows, total, capacity, gpuName) {
    const svg = this.shadowRoot.querySelector('[data-out="chart"]');
    // Drawn in the chart's own pixel width (observeWidth) so text stays 12 px on a phone instead of shrinking.
    const W = drawWidth(this.shownWidth(svg), { min: 300 }),
      left = 10,
      right = 20,
      barY = 34,
      barH = 38;
    svg.setAttribute('viewBox', `0 0 ${W} 130`);
    const max = Math.max(total, capacity) * 1.08;
    const x = linearScale([0, max], [left, W - right]);
    const ticks = linearTicks(max / GB, 5);
    let offset = 0;
    const segs = rows
      .filter((r) => r.bytes > 0)
      .map((r) => {
        const seg = `<rect class="seg" data-term="${r.id}" x="${x(offset).toFixed(2)}" y="${barY}" width="${Math.max(0.5, x(offset + r.bytes) - x(offset)).toFixed(2)}" height="${barH}" fill="${r.color}" tabindex="0" role="img" aria-label="${escapeHtml(r.name)}: ${escapeHtml(formatBytes(r.bytes))}"><title>${escapeHtml(r.name)}: ${escapeHtml(formatBytes(r.bytes))} (${escapeHtml(formatPercent(r.share))})</title></rect>`;
        offset += r.bytes;
        return seg;
      });
    const capX = x(capacity).toFixed(2);
    const capAnchor = capacity / max > 0.75 ? 'end' : 'start';
    svg.innerHTML =
      trustedHtml(`<title id="chart-title">Memory per GPU by term, ${escapeHtml(formatBytes(total))} against ${escapeHtml(gpuName)} capacity ${escapeHtml(formatBytes(capacity))}</title>
      <g class="grid">${ticks.map((t) => `<line x1="${x(t * GB).toFixed(2)}" x2="${x(t * GB).toFixed(2)}" y1="${barY - 6}" y2="${barY + barH + 6}"/>`).join('')}</g>
      ${segs.join('')}
      <line class="cap" x1="${capX}" x2="${capX}" y1="14" y2="${barY + barH + 8}"/>
      <text class="cap-label" x="${capAnchor === 'end' ? Number(capX) - 4 : Number(capX) + 4}" y="24" text-anchor="${capAnchor}">${escapeHtml(W < 480 ? 'usable' : gpuName)}: ${escapeHtml(formatBytes(capacity))}</text>
      <g class="axis"><line x1="${left}" x2="${W - right}" y1="${barY + barH + 8}" y2="${barY + barH + 8}"/>
      ${ticks.map((t) => `<text x="${x(t * GB).toFixed(2)}" y="${barY + barH + 24}" text-anchor="middle">${Number(t.toPrecision(6))}</text>`).join('')}
      <text x="${(W - right + left) / 2}" y="${barY + barH + 44}" text-anchor="middle">memory per GPU (GB = 10⁹ bytes)</text></g>`);
  }

  onHover(event) {
    const term = event.target.closest?.('[data-term]')?.dataset.term;
    if (term && term !== this.hot) this.highlight(term);
  }

  highlight(term) {
    this.hot = term;
    const root = this.shadowRoot;
    for (const el of root.querySelectorAll('.hot')) el.classList.remove('hot');
    for (const el of root.querySelectorAll(`[data-term="${term}"]`))
      if (el.tagName !== 'BUTTON') el.classList.add('hot');
    if (!this.budget) return;
    const row = this.rows().find((r) => r.id === term);
    const box = root.querySelector('[data-out="formula"]');
    if (!row) return;
    const head = `${escapeHtml(row.name)}: ${escapeHtml(formatBytes(row.bytes))} per GPU`;
    const desc = [row.description, row.sharded ? `divided by: ${row.sharded}` : '']
      .filter(Boolean)
      .map(escapeHtml)
      .join(' · ');
    const where = row.formula ? symbolLegend([row.formula], this.glossary()).html : '';
    box.innerHTML = trustedHtml(
      `<div class="formula">${row.formula ? formulaHtml(row.formula) : ''}</div><div class="desc" data-out="symbols">${where}</div><div>${head}</div><div class="desc">${desc}</div>`,
    );
  }

  async onClick(event) {
    const button = event.target.closest('button');
    if (!button) return;
    if (button.classList.contains('formula-btn')) {
      this.hot = null;
      this.highlight(button.dataset.term);
      return;
    }
    const status = this.shadowRoot.querySelector('[data-out="export"]');
    if (!this.budget) {
      status.textContent = 'Fix the highlighted settings first.';
      return;
    }
    const action = button.dataset.action;
    try {
      if (action === 'markdown')
        status.textContent = (await copyText(this.markdown())) ? 'Markdown table copied.' : 'Copy failed.';
      else if (action === 'json')
        status.textContent = (await copyText(JSON.stringify({ args: this.budgetArgs, result: this.budget }, null, 2)))
          ? 'JSON copied.'
          : 'Copy failed.';
      else if (action === 'svg') {
        downloadBlob('tally-memory-budget.svg', new Blob([this.svgText()], { type: 'image/svg+xml' }));
        status.textContent = 'SVG downloaded.';
      } else if (action === 'png') {
        const text = this.svgText();
        const [, , width, height] = /viewBox="([^"]+)"/.exec(text)[1].split(/\s+/).map(Number);
        const bg = getComputedStyle(this.shadowRoot.querySelector('.widget')).backgroundColor;
        downloadBlob('tally-memory-budget.png', await svgToPng(text, width, height, 2, bg));
        status.textContent = 'PNG downloaded.';
      }
    } catch (error) {
      status.textContent = `Export failed: ${error.message}`;
    }
  }

  /**
   * The chart as a standalone SVG (the Download SVG and PNG buttons): the chart plus a legend, since the
   * table that names the colours on the page does not travel with the file. The legend is added to the
   * live chart only while it is serialized.
   */
  svgText() {
    const svg = this.shadowRoot.querySelector('[data-out="chart"]');
    const box = svg.viewBox.baseVal;
    const [x0, y0, width, height] = [box.x, box.y, box.width, box.height];
    const legend = document.createElementNS('http://www.w3.org/2000/svg', 'g');
    legend.setAttribute('class', 'legend');
    const items = this.rows()
      .filter((r) => r.bytes > 0)
      .map((r) => ({ color: r.color, text: `${r.name}: ${formatBytes(r.bytes)}` }));
    const measure = document.createElement('canvas').getContext('2d');
    measure.font = '12px system-ui, sans-serif';
    let x = 10,
      y = height + 6;
    const parts = [];
    for (const item of items) {
      const w = 18 + measure.measureText(item.text).width + 18;
      if (x > 10 && x + w > width - 10) {
        x = 10;
        y += 20;
      }
      parts.push(
        `<rect x="${x}" y="${y}" width="12" height="12" rx="2" fill="${item.color}"></rect><text x="${x + 18}" y="${y + 10.5}">${escapeHtml(item.text)}</text>`,
      );
      x += w;
    }
    const v = this.values();
    const total = this.budget ? formatBytes(this.budget.per_gpu_bytes.total) : '';
    parts.push(
      `<text x="10" y="${y + 34}">${escapeHtml(`${v.model === CUSTOM ? 'custom config' : v.model}, ${v.recipe}, seq ${v.seq}, micro-batch ${v.mbs}: ${total} per GPU (tally)`)}</text>`,
    );
    legend.innerHTML = trustedHtml(parts.join(''));
    svg.append(legend);
    svg.setAttribute('viewBox', `${x0} ${y0} ${width} ${y + 44}`);
    try {
      return standaloneSvg(svg);
    } finally {
      legend.remove();
      svg.setAttribute('viewBox', `${x0} ${y0} ${width} ${height}`);
    }
  }

  /** The budget as a Markdown table (GB = 10^9 bytes). */
  markdown() {
    const b = this.budget;
    const v = this.values();
    const model = v.model === CUSTOM ? 'custom config' : v.model;
    const lines = [
      `Training memory per GPU${v.mode === 'pretrain' ? '' : ` (${MODES.find((m) => m.value === v.mode).label}, finetune)`}: ${model}, ${v.recipe}, ${v.gpus} × ${v.hardware}, seq ${v.seq}, micro-batch ${v.mbs}, recompute ${v.recompute}, FlashAttention ${v.flash}, sequence parallel ${v.sp}, ZeRO-${v.zero}, TP ${v.tp}, PP ${v.pp}`,
      '',
      '| term | per GPU (GB) | bytes | share |',
      '|---|---:|---:|---:|',
      ...this.rows().map(
        (r) => `| ${r.name} | ${(r.bytes / GB).toFixed(2)} | ${r.bytes} | ${formatPercent(r.share)} |`,
      ),
      `| **total** | **${(b.per_gpu_bytes.total / GB).toFixed(2)}** | ${b.per_gpu_bytes.total} | 100% |`,
      '',
      `Usable ${(b.usable_bytes / GB).toFixed(2)} GB (reported ${(b.capacity_bytes / GB).toFixed(2)} GB less ${(b.allowance_bytes / GB).toFixed(2)} GB for the CUDA context and fragmentation): ${b.fits ? 'fits' : `does not fit${b.min_gpus ? `; needs ${b.min_gpus} GPUs` : ''}`}. Computed by tally.`,
    ];
    return lines.join('\n');
  }
}

/** "bf16 mixed precision AdamW (fp32 master)" -> "bf16 mixed AdamW (fp32 master)": fits a phone-wide select. */
function shortRecipeName(name) {
  return String(name).replace('mixed precision', 'mixed');
}

TallyMemoryBudget.define('tally-memory-budget');
