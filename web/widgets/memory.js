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
// Every number comes from the engine's memory_budget method; this module only lays it out.
import {
  TallyWidget,
  TallyError,
  baseCss,
  numberField,
  selectField,
  checkboxField,
  parseNumber,
  parseNumberFields,
  showError,
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
  isBoolText,
  oneOf,
  GB,
  numberStateFields,
  modelOption,
} from './base.js';
import { drawWidth, linearScale, linearTicks } from './chart.js';

const CUSTOM = 'custom';
const NUMBER_FIELDS = [
  { name: 'gpus', label: 'GPUs', arg: 'gpus', fallback: '1' },
  { name: 'seq', label: 'Sequence length (tokens)', arg: 'seq', fallback: '4096' },
  { name: 'mbs', label: 'Micro-batch (sequences)', arg: 'micro_batch', fallback: '1' },
  { name: 'tp', label: 'Tensor parallel', arg: 'tp', fallback: '1' },
  { name: 'pp', label: 'Pipeline parallel', arg: 'pp', fallback: '1' },
  { name: 'vstages', label: 'Interleaved chunks per GPU', arg: 'virtual_stages', fallback: '1', optional: true },
  {
    name: 'rlayers',
    label: 'Layers fully recomputed (per stage)',
    arg: 'recompute_layers',
    fallback: '0',
    optional: true,
  },
  { name: 'ep', label: 'Expert parallel (MoE)', arg: 'ep', fallback: '1', optional: true },
  {
    name: 'cf',
    label: 'Expert capacity factor (MoE; 0: no limit)',
    arg: 'capacity_factor',
    fallback: '0',
    optional: true,
  },
  {
    name: 'dseq',
    label: 'Target length (encoder-decoder; 0: the sequence length)',
    arg: 'decoder_seq',
    fallback: '0',
    optional: true,
  },
];
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
/** The allowance fields; their values convert to the engine's units (MiB -> bytes, % -> fraction) only. */
const ALLOWANCE_FIELDS = [
  {
    name: 'context_mib',
    attribute: 'context-mib',
    label: 'Reserved: CUDA context (MiB)',
    fallback: '512',
    arg: 'cuda_context_bytes',
    scale: 2 ** 20,
  },
  {
    name: 'frag_pct',
    attribute: 'frag-pct',
    label: 'Reserved: fragmentation (% of memory)',
    fallback: '5',
    arg: 'fragmentation_fraction',
    scale: 0.01,
  },
];
const DROPOUT = ['model', 'true', 'false'];
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
/** Engine argument -> this widget's field, for errors the engine reports. */
const ARG_TO_FIELD = {
  micro_batch: 'mbs',
  flash_attention: 'flash',
  sequence_parallel: 'sp',
  hf_config: 'config',
  capacity_bytes: 'hardware',
  cuda_context_bytes: 'context_mib',
  fragmentation_fraction: 'frag_pct',
  virtual_stages: 'vstages',
  recompute_layers: 'rlayers',
  recompute_ops: 'rops',
  grad_accum: 'gacc',
  zero3_gather: 'z3buf',
  capacity_factor: 'cf',
  decoder_seq: 'dseq',
};

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
@media (max-width: 480px) {
  .fields { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .fields .field.wide { grid-column: 1 / -1; }
  td, th { padding: 4px 3px; font-size: 13px; }
}
`;

class TallyMemoryBudget extends TallyWidget {
  static stateAttributes = [
    'model',
    'config',
    'hardware',
    'recipe',
    'gpus',
    'seq',
    'mbs',
    'tp',
    'pp',
    'vstages',
    'rlayers',
    'ep',
    'cf',
    'dseq',
    'recompute',
    'rops',
    'zero',
    'gacc',
    'z3buf',
    'flash',
    'sp',
    'dropout',
    'context-mib',
    'frag-pct',
  ];

  mount() {
    const engine = this.engine;
    try {
      this.presets = engine.call('presets', {});
    } catch (error) {
      this.shadowRoot.innerHTML = `<style>${baseCss}</style><div class="widget notice">The engine has no presets: ${escapeHtml(error.message)}</div>`;
      return;
    }
    const models = this.presets.models ?? [];
    const hardware = this.presets.hardware ?? [];
    const recipes = this.presets.recipes ?? [];
    const start = this.declareState('mem', [
      { name: 'model', check: oneOf([...models.map((m) => m.id), CUSTOM]), fallback: models[0]?.id ?? CUSTOM },
      { name: 'config', check: (text) => text.trim().startsWith('{') || 'must be a JSON object', fallback: '' },
      {
        name: 'hardware',
        check: oneOf(hardware.map((h) => h.id)),
        fallback: hardware.find((h) => /h100/i.test(h.id))?.id ?? hardware[0]?.id,
      },
      {
        name: 'recipe',
        check: oneOf(recipes.map((r) => r.id)),
        fallback: recipes.find((r) => r.id === 'bf16_mixed_adamw')?.id ?? recipes[0]?.id,
      },
      { name: 'recompute', check: oneOf(RECOMPUTE.map((r) => r.value)), fallback: 'none' },
      { name: 'zero', check: oneOf(ZERO.map((z) => z.value)), fallback: '0' },
      { name: 'rops', check: oneOf(RECOMPUTE_OPS.map((r) => r.value)), fallback: '' },
      { name: 'gacc', check: oneOf(GRAD_ACCUM.map((g) => g.value)), fallback: 'none' },
      { name: 'z3buf', check: oneOf(ZERO3_BUFFER.map((z) => z.value)), fallback: 'none' },
      { name: 'flash', check: isBoolText, fallback: 'false' },
      { name: 'sp', check: isBoolText, fallback: 'false' },
      { name: 'dropout', check: oneOf(DROPOUT), fallback: 'model' },
      ...numberStateFields([...NUMBER_FIELDS, ...ALLOWANCE_FIELDS]),
    ]);

    const modelOptions = [...models.map(modelOption), { value: CUSTOM, label: 'Custom: paste a config.json' }];
    this.shadowRoot.innerHTML = `<style>${baseCss}${css}</style>
      <div class="widget" role="group" aria-label="Training memory budget per GPU">
        <div class="fields">
          ${selectField({ name: 'model', label: 'Model', options: modelOptions, value: start.model })}
          <div class="field config" data-field="config">
            <label for="f-config">Hugging Face config.json</label>
            <textarea id="f-config" name="config" spellcheck="false" aria-describedby="f-config-error"
              placeholder='{"model_type": "llama", "hidden_size": 4096, ...}'></textarea>
            <span class="error" id="f-config-error" role="alert"></span>
          </div>
          ${selectField({ name: 'hardware', label: 'GPU', options: hardware.map((h) => ({ value: h.id, label: `${h.name} (${formatBytes(h.memory_bytes, 3)})` })), value: start.hardware })}
          ${selectField({ name: 'recipe', label: 'Recipe (dtypes + optimizer)', options: recipes.map((r) => ({ value: r.id, label: shortRecipeName(r.name), title: r.name })), value: start.recipe })}
          ${NUMBER_FIELDS.map((f) => numberField({ name: f.name, label: f.label, value: start[f.name] })).join('')}
          ${selectField({ name: 'recompute', label: 'Activation recomputation', options: RECOMPUTE, value: start.recompute })}
          ${selectField({ name: 'rops', label: 'Also recompute', options: RECOMPUTE_OPS, value: start.rops })}
          ${selectField({ name: 'zero', label: 'ZeRO stage (over data parallel)', options: ZERO, value: start.zero })}
          ${selectField({ name: 'gacc', label: 'Gradient accumulation buffer', options: GRAD_ACCUM, value: start.gacc })}
          ${selectField({ name: 'z3buf', label: 'ZeRO-3 gathered parameters', options: ZERO3_BUFFER, value: start.z3buf })}
          ${checkboxField({ name: 'flash', label: 'FlashAttention', checked: start.flash === 'true' })}
          ${checkboxField({ name: 'sp', label: 'Sequence parallel (with TP)', checked: start.sp === 'true' })}
          ${selectField({ name: 'dropout', label: 'Dropout masks', options: this.dropoutOptions(start.model), value: start.dropout })}
          ${ALLOWANCE_FIELDS.map((f) => numberField({ name: f.name, label: f.label, value: start[f.name] })).join('')}
        </div>
        <p class="notice" role="status"></p>
        <div class="layout" aria-live="polite">
          <p class="verdict" data-out="verdict">—</p>
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
      </div>`;
    const root = this.shadowRoot;
    root.querySelector('textarea[name="config"]').value = start.config;
    this.onControlEdit((control) => this.onEdit(control.name));
    root.addEventListener('click', (event) => this.onClick(event));
    root.addEventListener('pointerover', (event) => this.onHover(event));
    root.addEventListener('focusin', (event) => this.onHover(event));

    this.observeWidth(root.querySelector('[data-out="chart"]'), () => this.budget && this.render());
    this.update();
    this.settleUrlState();
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
    for (const [field, value] of Object.entries(values)) this.setControl(field, value);
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

  /** The widget's settings as text, keyed like its attributes. */
  values() {
    const root = this.shadowRoot;
    const get = (name) => root.querySelector(`[name="${name}"]`);
    const values = {};
    for (const name of [
      'model',
      'hardware',
      'recipe',
      'recompute',
      'rops',
      'zero',
      'gacc',
      'z3buf',
      'dropout',
      ...NUMBER_FIELDS.map((f) => f.name),
      ...ALLOWANCE_FIELDS.map((f) => f.name),
    ])
      values[name] = get(name).value;
    values.flash = String(get('flash').checked);
    values.sp = String(get('sp').checked);
    if (values.model === CUSTOM) values.config = get('config').value;
    return values;
  }

  /** Attributes that reproduce the current state in an embed snippet. */
  embedAttributes() {
    const values = this.values();
    delete values.config;
    for (const f of ALLOWANCE_FIELDS) {
      values[f.attribute] = values[f.name];
      delete values[f.name];
    }
    return values;
  }

  onEdit(name) {
    if (name === 'model') this.syncDropoutLabel(this.values().model);
    this.update();
    this.saveState();
  }

  /** Builds the engine arguments; throws TallyError naming a field for unreadable numbers. */
  args(values) {
    const args = {
      hardware: values.hardware,
      recipe: values.recipe,
      recompute: values.recompute,
      zero: Number(values.zero),
      flash_attention: values.flash === 'true',
      sequence_parallel: values.sp === 'true',
    };
    // Settings left at their defaults are not sent, so the engine's arguments stay those of the plain setup.
    if (values.rops) args.recompute_ops = values.rops;
    if (values.gacc !== 'none') args.grad_accum = values.gacc;
    if (values.z3buf !== 'none') args.zero3_gather = values.z3buf;
    const errors = [];
    if (values.model === CUSTOM) {
      if (!values.config?.trim())
        errors.push(
          new TallyError('config', 'paste a Hugging Face config.json (a JSON object with model_type, hidden_size, …)'),
        );
      args.hf_config = values.config;
    } else {
      args.model = values.model;
    }
    const settings = parseNumberFields(NUMBER_FIELDS, values);
    errors.push(...settings.errors);
    for (const f of NUMBER_FIELDS) {
      const value = settings.numbers[f.name];
      // Optional settings at their default are not sent (the engine's default is the same).
      if (value !== undefined && !(f.optional && value === Number(f.fallback))) args[f.arg] = value;
    }
    if (values.dropout === 'true' || values.dropout === 'false') args.dropout = values.dropout === 'true';
    for (const f of ALLOWANCE_FIELDS) {
      try {
        // Unit conversion only (MiB -> bytes rounded to whole bytes, percent -> fraction); the engine checks ranges.
        const number = parseNumber(values[f.name], f.name, f.label) * f.scale;
        args[f.arg] = f.arg === 'cuda_context_bytes' ? Math.round(number) : number;
      } catch (error) {
        errors.push(error);
      }
    }
    return { args, errors };
  }

  update() {
    const root = this.shadowRoot;
    clearErrors(root);
    const values = this.values();
    root.querySelector('.config').classList.toggle('open', values.model === CUSTOM);
    this.lastError = null;
    const built = this.args(values);
    if (built.errors.length) {
      for (const error of built.errors) showError(root, error.field, error.message);
      this.lastError = built.errors[0];
      this.clearOutputs(built.errors[0].message);
      this.showWarnings([]);
      return;
    }
    try {
      this.budget = this.engine.call('memory_budget', built.args);
      this.budgetArgs = built.args;
    } catch (error) {
      if (!(error instanceof TallyError)) throw error;
      // Errors about a pasted config name its HF field (hidden_size, ...): show them beside the config box.
      const field = ARG_TO_FIELD[error.field] ?? error.field;
      const toConfig = values.model === CUSTOM && !root.querySelector(`[name="${CSS.escape(field)}"]`);
      this.showEngineError(error, toConfig ? { [error.field]: 'config' } : ARG_TO_FIELD);
      this.clearOutputs(error.message);
      return;
    }
    this.showWarnings(this.budget.warnings);
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

  render() {
    const root = this.shadowRoot;
    const b = this.budget;
    const hw = this.presets.hardware.find((h) => h.id === this.budgetArgs.hardware);
    const total = b.per_gpu_bytes.total;
    const verdict = root.querySelector('[data-out="verdict"]');
    const setup = b.setup ?? {};
    const layout = `${setup.dp ?? '?'} data × ${setup.tp ?? 1} tensor × ${setup.pp ?? 1} pipeline parallel`;
    const usable = b.usable_bytes;
    const capacityNote = `usable = ${formatBytes(b.capacity_bytes)} the device reports − ${formatBytes(b.allowance_bytes)} reserved for the CUDA context and fragmentation`;
    if (b.fits) {
      verdict.className = 'verdict fits';
      verdict.innerHTML = `Fits: ${escapeHtml(formatBytes(total))} of ${escapeHtml(formatBytes(usable))} usable per GPU (${escapeHtml(formatPercent(total / usable))})<span class="sub">${escapeHtml(formatParams(b.params_total))} parameters on ${escapeHtml(layout)}; ${escapeHtml(formatBytes(b.headroom_bytes))} to spare (${escapeHtml(capacityNote)}).</span>`;
    } else {
      verdict.className = 'verdict over';
      const need =
        b.min_gpus == null
          ? 'no data-parallel size fits with these settings: raise the ZeRO stage, TP or PP, or recompute activations'
          : `needs at least ${b.min_gpus.toLocaleString('en-US')} GPUs with this ZeRO stage, TP and PP`;
      verdict.innerHTML = `Does not fit: ${escapeHtml(formatBytes(total))} per GPU &gt; ${escapeHtml(formatBytes(usable))} usable<span class="sub">${escapeHtml(formatParams(b.params_total))} parameters on ${escapeHtml(layout)}; ${escapeHtml(need)} (${escapeHtml(capacityNote)}).</span>`;
    }
    const rows = this.rows();
    this.drawChart(rows, total, usable, `${hw?.name ?? 'GPU'} usable`);
    const tbody = root.querySelector('[data-out="table"] tbody');
    tbody.innerHTML =
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
      `<tr><td><strong>total per GPU</strong></td><td class="num"><strong>${escapeHtml(formatBytes(total))}</strong></td><td class="num">100%</td><td></td></tr>`;
    const act = b.activations ?? {};
    root.querySelector('[data-out="activations"] tbody').innerHTML = (act.terms ?? [])
      .map(
        (t) => `<tr>
        <td>${escapeHtml(t.name ?? t.id)}${t.scope === 'outside' ? ' <span class="status">(once, outside the layers)</span>' : ''}</td>
        <td class="num">${escapeHtml(formatBytes(t.bytes))}</td><td class="formula">${formulaHtml(t.formula ?? '')}</td></tr>`,
      )
      .join('');
    root.querySelector('[data-out="act-symbols"]').innerHTML = symbolLegend(
      (act.terms ?? []).map((t) => t.formula ?? ''),
      this.glossary(),
    ).html;
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
    svg.innerHTML = `<title id="chart-title">Memory per GPU by term, ${escapeHtml(formatBytes(total))} against ${escapeHtml(gpuName)} capacity ${escapeHtml(formatBytes(capacity))}</title>
      <g class="grid">${ticks.map((t) => `<line x1="${x(t * GB).toFixed(2)}" x2="${x(t * GB).toFixed(2)}" y1="${barY - 6}" y2="${barY + barH + 6}"/>`).join('')}</g>
      ${segs.join('')}
      <line class="cap" x1="${capX}" x2="${capX}" y1="14" y2="${barY + barH + 8}"/>
      <text class="cap-label" x="${capAnchor === 'end' ? Number(capX) - 4 : Number(capX) + 4}" y="24" text-anchor="${capAnchor}">${escapeHtml(W < 480 ? 'usable' : gpuName)}: ${escapeHtml(formatBytes(capacity))}</text>
      <g class="axis"><line x1="${left}" x2="${W - right}" y1="${barY + barH + 8}" y2="${barY + barH + 8}"/>
      ${ticks.map((t) => `<text x="${x(t * GB).toFixed(2)}" y="${barY + barH + 24}" text-anchor="middle">${Number(t.toPrecision(6))}</text>`).join('')}
      <text x="${(W - right + left) / 2}" y="${barY + barH + 44}" text-anchor="middle">memory per GPU (GB = 10⁹ bytes)</text></g>`;
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
    box.innerHTML = `<div class="formula">${row.formula ? formulaHtml(row.formula) : ''}</div><div class="desc" data-out="symbols">${where}</div><div>${head}</div><div class="desc">${desc}</div>`;
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
    legend.innerHTML = parts.join('');
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
      `Training memory per GPU: ${model}, ${v.recipe}, ${v.gpus} × ${v.hardware}, seq ${v.seq}, micro-batch ${v.mbs}, recompute ${v.recompute}, FlashAttention ${v.flash}, sequence parallel ${v.sp}, ZeRO-${v.zero}, TP ${v.tp}, PP ${v.pp}`,
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
