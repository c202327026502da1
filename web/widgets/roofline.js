// <tally-roofline>: a log-log roofline of one or more hardware presets with the named operations of a
// transformer placed by their arithmetic intensity, and "Measure my machine": the peak and bandwidth
// probes and the GEMM ladder run in Web Workers (web/widgets/roofline-worker.js) on the reader's own
// CPU: first on one core (worker 0: every kernel, including simd-relaxed where the browser validates
// relaxed SIMD), then on all cores (one worker per core, each on a stripe of C's rows with its own
// copy of B: no SharedArrayBuffer, so no cross-origin isolation needed), drawn as a single-core and an
// all-core roof with circles (one core) and squares (all cores) per kernel and size.
//
// Attributes: hardware="h100-sxm" (comma-separated ids for several roofs), dtype="bf16", seq="2048",
//   sizes="128,256,512" (GEMM sizes measured; the naive kernel only up to 256), probe-mib="128"
//   (bandwidth buffer, larger than the last-level cache), reps="5".
// "Measure my GPU" (WebGPU, roofline-webgpu.js): on request, a streaming-copy probe and a tiled WGSL GEMM on the
//   reader's GPU, checked against the engine's CPU GEMM, drawn as "your GPU" roofs and points and kept as a device
//   (your-gpu.js). Attributes: gpu-sizes="256,512,1024,2048" (tried in order, stopping once one call takes over a
//   second), gpu-probe-mib="256" (the copy's buffer). Without WebGPU the button is replaced by the reason.
// Optional: a file gpu-report.json at the site root (schema tally.gpu-measurement/1, written by
// engine/cuda/gemm_roofline) adds GPU measurements as further points.
// Every number comes from the engine (roofline, roofline_custom, probe_*, gemm_bench); this module
// only places them on the chart. The measurement is a controller beside it (roofline-bench.js: worker
// pool and benchmark plan), the labels' layout its own module (roofline-labels.js).
import {
  TallyWidget,
  TallyError,
  baseCss,
  darkCss,
  escapeHtml,
  formatNumber,
  formatSi,
  parseNumber,
  fieldControl,
} from './base.js';
import { drawWidth, exponentTicks, logScale } from './kit/chart.js';
import { LabelPlacer, textWidth } from './roofline-labels.js';
import { RooflineBench, MAX_WORKERS, DEFAULT_WORKERS } from './roofline-bench.js';
import { trustedHtml } from './kit/trusted.js';
import { RooflineGpu } from './roofline-webgpu.js';
import { DEFAULT_MEMORY_GB, setYourGpuMemory } from './your-gpu.js';

/** Only if the engine has no hardware presets (the list normally comes from their dense peaks). */
const FALLBACK_DTYPES = ['bf16'];
const W = 760,
  H_WIDE = 460;
const M_WIDE = { left: 74, right: 18, top: 16, bottom: 52 };
/** Point and legend labels, in px as shown (the chart is drawn at its own pixel width). */
const LABEL_PX = 11;
const X_DOMAIN = [-2, 4.5]; // log10 FLOP/byte: 0.01 .. ~31623

const css = `
.chart { width: 100%; height: auto; display: block; margin-top: 10px; background: var(--bg); border-radius: 6px; }
.chart .roof { fill: none; stroke-width: 2.2; }
.chart .roof.machine { stroke-dasharray: 7 4; }
.chart .ridge { stroke-width: 1; stroke-dasharray: 2 3; }
.chart .op { fill: var(--bg); stroke: var(--fg); stroke-width: 1.6; cursor: pointer; }
.chart .op:hover, .chart .op:focus, .chart .kpt:hover, .chart .kpt:focus, .chart .gpu:hover, .chart .gpu:focus { stroke-width: 3; outline: none; }
.chart .kpt { stroke: var(--bg); stroke-width: 1.2; cursor: pointer; }
.chart .gpu { fill: var(--fg); stroke: var(--bg); cursor: pointer; }
.chart .roof.yours { stroke-dasharray: 3 3; }
.chart .wgpu { stroke: var(--bg); stroke-width: 1.2; cursor: pointer; }
.chart .wgpu:hover, .chart .wgpu:focus { stroke: var(--fg); stroke-width: 2.5; outline: none; }
.cg { stroke: #be185d; fill: #be185d; } .chart text.cg { stroke: none; }
label.gpu-memory { display: inline-flex; gap: 4px; align-items: center; font-size: 14px; }
label.gpu-memory input { width: 5em; }
.chart .label { font-size: 11px; }
.chart .leader { stroke: var(--muted); stroke-width: 0.8; pointer-events: none; }
.chart .axis-title { font-size: 13px; fill: var(--muted); }
.c0 { stroke: #0b63ce; fill: #0b63ce; } .c1 { stroke: #c2410c; fill: #c2410c; } .c2 { stroke: #7c3aed; fill: #7c3aed; }
.c3 { stroke: #0f766e; fill: #0f766e; } .c4 { stroke: #a16207; fill: #a16207; } .cm { stroke: #1a7f37; fill: #1a7f37; }
.k1 { fill: #b3261e; } .k2 { fill: #c2410c; } .k3 { fill: #a16207; } .k4 { fill: #0f766e; } .k5 { fill: #1a7f37; } .k6 { fill: #1d4ed8; }
${darkCss(`.cg { stroke: #f778ba; fill: #f778ba; } .c0 { stroke: #58a6ff; fill: #58a6ff; } .c1 { stroke: #ffa657; fill: #ffa657; } .c2 { stroke: #d2a8ff; fill: #d2a8ff; }
  .c3 { stroke: #56d4bc; fill: #56d4bc; } .c4 { stroke: #e3b341; fill: #e3b341; } .cm { stroke: #3fb950; fill: #3fb950; }
  .k1 { fill: #ff7b72; } .k2 { fill: #ffa657; } .k3 { fill: #e3b341; } .k4 { fill: #56d4bc; } .k5 { fill: #3fb950; } .k6 { fill: #79c0ff; }`)}
.chart text.c0, .chart text.c1, .chart text.c2, .chart text.c3, .chart text.c4, .chart text.cm { stroke: none; }
fieldset.hw { border: 1px solid var(--border); border-radius: 6px; padding: 4px 8px; margin: 0; grid-column: 1 / -1; }
fieldset.hw legend { font-size: 13px; color: var(--muted); }
fieldset.hw label { display: inline-flex; gap: 4px; margin-right: 12px; font-size: 14px; align-items: center; }
/* 24 px: WCAG 2.2's minimum target size (2.5.8) for the box itself, not only its label. */
fieldset.hw input { width: 24px; height: 24px; margin: 0; }
.chart .kpt.all { stroke: var(--fg); stroke-width: 1.4; }
label.workers { display: inline-flex; gap: 4px; align-items: center; font-size: 14px; }
label.workers input { width: 4.5em; }
.readout { min-height: 2.8em; font-size: 14px; margin-top: 6px; }
.readout b { font-weight: 600; }
progress { width: 160px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; margin-top: 8px; }
th, td { text-align: left; padding: 2px 6px; border-bottom: 1px solid var(--border); }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { font-size: 12px; color: var(--muted); }
.note { font-size: 13px; color: var(--muted); margin: 6px 0 0; }
`;

const log10 = Math.log10;

/** 2.5e12 -> "2.5 T" (the shared formatter). */
const siPrefix = formatSi;

/**
 * The chart's fields (kit/store.js). `hardware` is the checked roofs, a comma-separated list of preset ids in the
 * order they were given or checked (this.selected, its checkboxes); each roof is one roofline call.
 */
const FIELDS = [
  {
    name: 'hardware',
    kind: 'text',
    check: (t, w) =>
      t.split(',').every((id) => w.hardware.some((h) => h.id === id.trim())) || 'not a list of hardware preset ids',
    fallback: 'h100-sxm',
    arg: 'hardware',
  },
  {
    name: 'dtype',
    kind: 'select',
    label: 'Data type (element size and peak)',
    options: (w) => w.dtypes.map((d) => ({ value: d, label: d })),
    check: (t, w) => w.dtypes.includes(t) || `not one of ${w.dtypes.join(', ')}`,
    fallback: 'bf16',
    arg: 'dtype',
  },
  { name: 'seq', kind: 'number', label: 'Sequence length s (attention)', fallback: '2048', arg: 'seq' },
];

class TallyRoofline extends TallyWidget {
  static fields = FIELDS;
  /** Attributes read once at start-up: the measured sizes and the probe's buffer and repetitions. */
  static configAttributes = ['sizes', 'probe-mib', 'reps', 'gpu-sizes', 'gpu-probe-mib'];

  build() {
    // No presets: the widget still shows the measured machine
    const presets = this.loadPresets();
    this.hardware = presets.hardware ?? [];
    const dtypes = [...new Set(this.hardware.flatMap((h) => Object.keys(h.peak_flops ?? {})))];
    this.dtypes = dtypes.length ? dtypes : FALLBACK_DTYPES;
    const start = this.declareState('roof');
    const wanted = this.roofOrder(start.hardware);
    /** Checked roofs in the author's order (then the order the reader checks them): the first places the operations. */
    this.selected = wanted;
    const dtype = start.dtype;
    this.gpuPoints = [];
    const boxes = this.hardware
      .map(
        (hw) =>
          `<label><input type="checkbox" name="hw" value="${escapeHtml(hw.id)}"${wanted.includes(hw.id) ? ' checked' : ''}>${escapeHtml(hw.name)}</label>`,
      )
      .join('');
    this.shadowRoot.innerHTML = trustedHtml(`<style>${baseCss}${css}</style>
      <div class="widget">
        <div class="fields">
          <fieldset class="hw"><legend>Hardware (roofs to draw; the first one given, or checked, places the operations)</legend>${boxes}</fieldset>
          ${fieldControl(FIELDS, 'dtype', dtype, this)}
          ${fieldControl(FIELDS, 'seq', start.seq, this)}
        </div>
        <div class="notice" role="alert"></div>
        <svg class="chart" viewBox="0 0 ${W} ${H_WIDE}" role="img" aria-label="Roofline chart: attainable FLOP/s against arithmetic intensity, both logarithmic"></svg>
        <div class="readout" aria-live="polite">Hover or focus a point to read its numbers.</div>
        <div class="toolbar">
          <button type="button" class="measure">Measure my machine</button>
          <label class="workers">Workers <input type="number" name="workers" min="1" max="${MAX_WORKERS}" step="1" value="${DEFAULT_WORKERS}" aria-describedby="workers-help"></label>
          <button type="button" class="cancel" hidden>Cancel</button>
          <progress class="progress" max="1" value="0" hidden></progress>
          <span class="status" aria-live="polite"></span>
        </div>
        <p class="note kernel-note" aria-live="polite"></p>
        <p class="note" id="workers-help">Workers: one per logical core your browser reports (${DEFAULT_WORKERS}) by default. Each runs its own
        engine; for the all-core points they run at once, each computing a stripe of C's rows with its own copy of B.</p>
        <table class="measured" hidden><thead><tr><th>kernel</th><th>n</th><th class="num">cores</th><th class="num">GFLOP/s</th><th class="num">FLOP/byte</th><th class="num">of this machine's roof</th></tr></thead><tbody></tbody></table>
        <div class="toolbar gpu-tools">
          <button type="button" class="measure-gpu">Measure my GPU (WebGPU)</button>
          <label class="gpu-memory">Your GPU's memory (GB) <input type="number" name="gpu-memory" min="0.1" step="any" value="${DEFAULT_MEMORY_GB}"></label>
          <span class="gpu-status" aria-live="polite"></span>
        </div>
        <table class="gpu-measured" hidden><thead><tr><th>your GPU</th><th>n</th><th class="num">GFLOP/s or GB/s</th><th class="num">FLOP/byte</th><th class="num">check against the CPU</th></tr></thead><tbody></tbody></table>
        <p class="note gpu-note">Measure my GPU runs, only when you press it, a copy through your GPU's memory and a
        tiled matrix multiply written in WGSL, each result checked against this page's CPU engine. What it can tell:
        the rate your GPU's ordinary shader cores reach through the browser, and the memory bandwidth a shader sees.
        What it cannot: WGSL has no tensor cores (or other matrix units) today, so it stays far below the tensor-core
        peaks of the datasheet roofs; clocks, power limits, heat and other tabs move it from run to run; and the
        browser does not report memory size, so type your GPU's above. The result becomes "your GPU", a device the
        step-time and memory widgets can select.</p>
        <p class="note over-roof" hidden>* Above 100 %: that kernel ran faster than the peak probe measured moments
        before, so the probe shared its cores with other work (another program, a slower power state). Measure again
        with the machine idle for a tighter roof.</p>
        <p class="note">Why the kernels differ: all of them do the same 2n³ FLOPs. The naive loop walks a column of B, so each
        multiply waits on a cache line; reordering to i-k-j streams rows; blocking keeps a block of B in cache; packing
        plus a register tile reuses every loaded value many times; the SIMD tile does 4 multiply-adds per instruction,
        and the relaxed-SIMD tile fuses each multiply and add into one. Only the SIMD kernels come near this machine's roof.</p>
        <p class="note">Measured in Web Workers on your CPU, in WebAssembly with 128-bit SIMD (fused multiply-add through
        relaxed SIMD where your browser has it, else a multiply and an add) and no wasm threads: this page is not
        cross-origin isolated, so the all-core points come from one worker per core, not shared memory. Intensities
        of the kernels are modelled (FLOPs over the bytes each must move beyond a 1 MiB cache under its blocking);
        the operations' intensities assume each tensor moves once.</p>
      </div>`);
    const root = this.shadowRoot;
    this.bench = new RooflineBench({
      engine: this.engine,
      sizes: () => this.sizes(),
      probe: () => this.probeSettings(),
      intensity: [10 ** X_DOMAIN[0], 10 ** X_DOMAIN[1]],
      ui: this.benchUi(),
    });
    this.onControlEdit((control) => {
      // measuring settings, not part of the chart's state
      if (control.name === 'workers') return;
      if (control.name === 'gpu-memory') {
        const gb = Number(control.value);
        if (gb > 0) setYourGpuMemory(gb);
        return;
      }
      if (control.name === 'hw')
        this.selected = control.checked
          ? [...this.selected.filter((id) => id !== control.value), control.value]
          : this.selected.filter((id) => id !== control.value);
      this.update();
      this.saveState();
    });
    root.querySelector('.measure').addEventListener('click', () => this.measure());
    root.querySelector('.cancel').addEventListener('click', () => this.cancel('cancelled'));
    this.setUpGpu();
    this.observeWidth(root.querySelector('svg.chart'), () => this.draw());
    this.firstUpdate();
    // Opened from a file (the single-file build), workers cannot start and nothing can be fetched: say so.
    if (globalThis.location?.protocol === 'file:') {
      root.querySelector('.measure').disabled = true;
      root.querySelector('.status').textContent =
        'Measuring your machine needs this page served over http(s): a page opened from a file cannot start Web Workers. The roofs and operations above work offline.';
      return;
    }
    this.loadGpuReport();
  }

  /** The chart's state as the URL holds it: checked roofs (comma-separated ids), data type, sequence length. */
  values() {
    return { hardware: this.selected.join(','), ...super.values() };
  }

  /** Sets controls from state texts (setState, URL reverts). */
  applyState(values) {
    if ('hardware' in values) {
      this.selected = this.roofOrder(values.hardware);
      for (const box of this.shadowRoot.querySelectorAll('input[name="hw"]'))
        box.checked = this.selected.includes(box.value);
    }
    super.applyState(values);
  }

  /** The preset ids of a comma-separated list, in its order, each once ("h100-sxm,a100-80gb"). */
  roofOrder(text) {
    const known = new Set(this.hardware.map((h) => h.id));
    return [
      ...new Set(
        String(text)
          .split(',')
          .map((id) => id.trim()),
      ),
    ].filter((id) => known.has(id));
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this.cancel('');
  }

  /** Recomputes roofs and operation points from the engine and redraws. */
  update() {
    const root = this.beginUpdate();
    const dtype = root.querySelector('select[name="dtype"]').value;
    const ids = this.selected;
    let seq;
    try {
      seq = parseNumber(root.querySelector('input[name="seq"]').value, 'seq', 'Sequence length');
    } catch (error) {
      this.showEngineError(error);
      return;
    }
    this.roofs = [];
    this.ops = null;
    const skipped = []; // checked devices without a dense peak in this dtype: named, not dropped silently
    try {
      for (const id of ids) {
        let r, args;
        try {
          // one call per roof: the operations and the roof's ends (its bound at the chart's edges)
          args = { hardware: id, dtype, seq, intensity: [10 ** X_DOMAIN[0], 10 ** X_DOMAIN[1]] };
          r = this.engine.call('roofline', args);
        } catch (error) {
          if (error instanceof TallyError && error.field === 'dtype') {
            skipped.push(this.hardware.find((h) => h.id === id)?.name ?? id); // chip lacks this dtype
            continue;
          }
          throw error;
        }
        if (!this.roofs.length) this.recordCall('roofline', args, r); // the first roof places the operations
        this.roofs.push({ id, name: r.hardware.name, result: r, ends: { points: r.points } });
        this.ops ??= r.ops;
      }
      this.ops ??= this.engine.call('roofline', { dtype, seq }).ops;
    } catch (error) {
      this.showEngineError(error);
      return;
    }
    this.showWarnings(this.roofs.flatMap((roof) => roof.result.warnings ?? []));
    if (ids.length && !this.roofs.length)
      root.querySelector('.notice').textContent = `None of the checked devices has a dense ${dtype} peak.`;
    else if (skipped.length)
      root.querySelector('.notice').textContent =
        `${skipped.join(' and ')} ${skipped.length > 1 ? 'have' : 'has'} no dense ${dtype} peak (no ${dtype} tensor cores), so ${skipped.length > 1 ? 'their roofs are' : 'its roof is'} not drawn.`;
    this.draw();
  }

  async loadGpuReport() {
    try {
      const response = await fetch(new URL('../gpu-report.json', import.meta.url));
      if (!response.ok) return;
      const report = await response.json();
      const body = report.schema === 'tally.gpu-measurement/1' ? report : report?.programs?.gemm_roofline?.result;
      if (!body || !Array.isArray(body.points)) return;
      this.gpuPoints = body.points
        .filter(
          (p) =>
            Number.isFinite(p.intensity_flop_per_byte) &&
            p.intensity_flop_per_byte > 0 &&
            Number.isFinite(p.flops_per_s) &&
            p.flops_per_s > 0,
        )
        .map((p) => ({ ...p, label: body.label ?? 'GPU' }));
      this.draw();
    } catch {
      // no report: nothing to add
    }
  }

  // ------------------------------------------------------------------------------------ measuring
  /** Workers to run: the control's value, else the machine's logical cores. */
  workerCount() {
    const value = Number(this.shadowRoot.querySelector('input[name="workers"]').value);
    return Number.isInteger(value) && value >= 1 && value <= MAX_WORKERS ? value : null;
  }

  sizes() {
    return (this.getAttribute('sizes') ?? '128,256,512')
      .split(',')
      .map(Number)
      .filter((n) => Number.isInteger(n) && n > 0);
  }

  probeSettings() {
    return { mib: Number(this.getAttribute('probe-mib') ?? 128), reps: Number(this.getAttribute('reps') ?? 5) };
  }

  // ------------------------------------------------------------------------------------ your GPU (WebGPU)
  /** The GPU controls: the button, or where this browser has no WebGPU the reason in its place. */
  setUpGpu() {
    const root = this.shadowRoot;
    const status = root.querySelector('.gpu-status');
    const button = root.querySelector('.measure-gpu');
    this.webgpu = new RooflineGpu({
      engine: this.engine,
      sizes: () =>
        (this.getAttribute('gpu-sizes') ?? '256,512,1024,2048')
          .split(',')
          .map(Number)
          .filter((n) => Number.isInteger(n) && n > 0 && n <= 2048),
      probe: () => ({
        mib: Number(this.getAttribute('gpu-probe-mib') ?? 256),
        reps: Number(this.getAttribute('reps') ?? 5),
      }),
      intensity: [10 ** X_DOMAIN[0], 10 ** X_DOMAIN[1]],
      memoryGb: () => {
        const gb = Number(root.querySelector('input[name="gpu-memory"]').value);
        return gb > 0 ? gb : null;
      },
      ui: {
        begin: () => {
          button.disabled = true;
          status.textContent = 'measuring your GPU…';
        },
        step: (label) => {
          status.textContent = label;
          this.dataset.gpuRunning = label;
        },
        changed: () => this.draw(),
        finish: (message) => {
          delete this.dataset.gpuRunning;
          button.disabled = false;
          status.textContent = message;
          this.draw();
        },
        measured: (detail) => this.dispatchEvent(new CustomEvent('gpu-measured', { detail })),
      },
    });
    const absent = RooflineGpu.absence();
    if (absent) {
      button.hidden = true;
      root.querySelector('label.gpu-memory').hidden = true;
      status.textContent = absent;
      this.dataset.webgpu = 'absent';
      return;
    }
    button.addEventListener('click', () => this.webgpu.measure());
  }

  /** Measures with the workers the control asks for (the bench controller, roofline-bench.js, does the work). */
  async measure() {
    if (this.bench.workers) return;
    const count = this.workerCount();
    if (count === null) {
      this.shadowRoot.querySelector('.status').textContent = `Workers must be a whole number from 1 to ${MAX_WORKERS}.`;
      return;
    }
    await this.bench.measure(count);
  }

  /** The measurement's progress and results, shown: the bench controller's hooks. */
  benchUi() {
    const root = this.shadowRoot;
    const progress = root.querySelector('.progress');
    const status = root.querySelector('.status');
    return {
      begin: (count) => {
        progress.hidden = false;
        progress.value = 0;
        root.querySelector('.cancel').hidden = false;
        root.querySelector('.measure').disabled = true;
        status.textContent = `loading the engine in ${count} worker${count > 1 ? 's' : ''}…`;
      },
      kernels: (note, best) => {
        root.querySelector('.kernel-note').textContent = note;
        this.dataset.kernel = best;
      },
      total: (steps) => {
        progress.max = steps;
      },
      step: (label) => {
        progress.value += 1;
        status.textContent = `${progress.value}/${progress.max}: ${label}`;
        this.dataset.running = label;
      },
      changed: () => this.draw(),
      done: () => {
        progress.value = progress.max;
      },
      finish: (message) => {
        delete this.dataset.running;
        root.querySelector('.cancel').hidden = true;
        root.querySelector('.measure').disabled = false;
        progress.hidden = true;
        status.textContent = message;
      },
      measured: (detail) => this.dispatchEvent(new CustomEvent('measured', { detail })),
    };
  }

  cancel(message) {
    this.bench?.cancel(message);
  }

  // ------------------------------------------------------------------------------------ drawing
  draw() {
    const svg = this.shadowRoot.querySelector('svg.chart');
    if (!svg) return;
    // Drawn in the chart's own pixel width (observeWidth; 760 until the first layout), so 11 px labels stay
    // 11 px on a phone instead of being scaled down with a fixed viewBox.
    const W = drawWidth(this.shownWidth(svg), { fallback: 760, min: 280 });
    const narrow = W < 560;
    const H = narrow ? Math.round(Math.max(340, W * 1.05)) : H_WIDE;
    // The legend of the roofs: one line per roof on a wide chart (in the plot's empty top-left corner), two
    // lines per roof on a narrow one, in a band above the plot so the points near the peak have room for labels.
    const legend = (this.roofs ?? []).flatMap((roof, i) => {
      const r = roof.result;
      const head = `${roof.name} ${r.dtype}`;
      const tail = `peak ${siPrefix(r.peak_flops_per_s)}FLOP/s, ridge ${formatNumber(r.ridge_flops_per_byte)} FLOP/B (dotted)`;
      const one = `${head}: ${tail}`;
      return (narrow ? [`${head}:`, tail] : [one]).map((text) => ({ text, cls: `c${i % 5}` }));
    });
    const lineStep = LABEL_PX + 3;
    const M = narrow ? { left: 60, right: 10, top: 10 + legend.length * lineStep + 6, bottom: 46 } : M_WIDE;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const xScale = logScale(X_DOMAIN, [M.left, W - M.right]);
    const ys = [];
    for (const roof of this.roofs ?? [])
      ys.push(roof.result.peak_flops_per_s, roof.ends.points[0].attainable_flops_per_s);
    for (const op of this.ops ?? [])
      if (this.roofs?.length)
        ys.push(this.roofs[0].result.ops.find((o) => o.id === op.id)?.attainable_flops_per_s ?? 1e9);
    for (const m of [this.machine, this.allCores]) if (m) ys.push(m.peakFlops, m.ends.points[0].attainable_flops_per_s);
    for (const row of [...this.kernelRows, ...this.allCoreRows]) ys.push(row.flops_per_s);
    for (const p of this.gpuPoints) ys.push(p.flops_per_s);
    for (const roof of this.webgpu?.roofs ?? []) ys.push(roof.peakFlops, roof.ends.points[0].attainable_flops_per_s);
    for (const row of this.webgpu?.rows ?? []) ys.push(row.flops_per_s);
    const finite = ys.filter((v) => Number.isFinite(v) && v > 0);
    const lo = Math.floor(log10(Math.min(1e9, ...finite)) - 0.3);
    const hi = Math.ceil(log10(Math.max(1e12, ...finite)) + 0.1);
    const yScale = logScale([lo, hi], [H - M.bottom, M.top]);
    const clampY = (v) => Math.max(10 ** lo, v);
    const parts = [];
    const labels = new LabelPlacer({
      left: M.left + 2,
      right: W - M.right,
      top: narrow ? M.top - 4 : 2,
      bottom: H - M.bottom - 2,
    });
    // grid and axes (every other decade on a narrow chart, so tick labels do not touch)
    const xStep = narrow ? 2 : 1;
    for (const e of exponentTicks(X_DOMAIN[0], X_DOMAIN[1])) {
      const x = xScale(10 ** e);
      parts.push(`<g class="grid"><line x1="${x}" x2="${x}" y1="${M.top}" y2="${H - M.bottom}"/></g>`);
      if ((e - Math.ceil(X_DOMAIN[0])) % xStep === 0)
        parts.push(`<text x="${x}" y="${H - M.bottom + 16}" text-anchor="middle">${siPrefix(10 ** e).trim()}</text>`);
    }
    const yStep = Math.max(1, Math.ceil((hi - lo) / Math.floor((H - M.top - M.bottom) / 22)));
    for (const e of exponentTicks(lo, hi)) {
      const y = yScale(10 ** e);
      parts.push(`<g class="grid"><line x1="${M.left}" x2="${W - M.right}" y1="${y}" y2="${y}"/></g>`);
      // The bottom tick's label sits just above the x axis, clear of the x tick labels below it.
      if ((e - lo) % yStep === 0)
        parts.push(
          `<text x="${M.left - 6}" y="${e === lo ? y - 3 : y + 4}" text-anchor="end">${siPrefix(10 ** e)}</text>`,
        );
    }
    parts.push(
      `<g class="axis"><line x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}"/><line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${H - M.bottom}"/></g>`,
    );
    const xTitle = narrow
      ? 'intensity (FLOP/byte, log scale)'
      : 'arithmetic intensity (FLOP per byte moved to/from memory, log scale)';
    parts.push(
      `<text class="axis-title" x="${(M.left + W - M.right) / 2}" y="${H - 10}" text-anchor="middle">${xTitle}</text>`,
    );
    parts.push(
      `<text class="axis-title" transform="translate(${narrow ? 12 : 16} ${(M.top + H - M.bottom) / 2}) rotate(-90)" text-anchor="middle">attainable FLOP/s (log scale)</text>`,
    );
    // roofs
    const roofPath = (ends, peak, ridge) => {
      const [a, b] = ends.points;
      return `M${xScale(a.intensity)},${yScale(clampY(a.attainable_flops_per_s))} L${xScale(ridge)},${yScale(peak)} L${xScale(b.intensity)},${yScale(b.attainable_flops_per_s)}`;
    };
    const avoidRoof = (ends, peak, ridge) => {
      const [a, b] = ends.points;
      const knee = [xScale(ridge), yScale(peak)];
      labels.avoid(xScale(a.intensity), yScale(clampY(a.attainable_flops_per_s)), ...knee);
      labels.avoid(...knee, xScale(b.intensity), yScale(b.attainable_flops_per_s));
    };
    let legendY = narrow ? 10 + LABEL_PX : M.top + 14;
    for (const line of legend) {
      labels.reserve(M.left + 8, legendY - LABEL_PX, textWidth(line.text, LABEL_PX), lineStep);
      parts.push(
        `<text class="label ${line.cls}" x="${narrow ? 4 : M.left + 8}" y="${legendY}">${escapeHtml(line.text)}</text>`,
      );
      legendY += lineStep;
    }
    (this.roofs ?? []).forEach((roof, i) => {
      const r = roof.result;
      const c = `c${i % 5}`;
      const rx = xScale(r.ridge_flops_per_byte);
      parts.push(`<path class="roof ${c}" d="${roofPath(roof.ends, r.peak_flops_per_s, r.ridge_flops_per_byte)}"/>`);
      avoidRoof(roof.ends, r.peak_flops_per_s, r.ridge_flops_per_byte);
      parts.push(
        `<line class="ridge ${c}" x1="${rx}" x2="${rx}" y1="${yScale(r.peak_flops_per_s)}" y2="${H - M.bottom}"/>`,
      );
    });
    const pointLabels = [];
    for (const m of [this.machine, this.allCores]) {
      if (!m) continue;
      const rx = xScale(m.ends.ridge_flops_per_byte);
      const what = m.cores > 1 ? `${m.cores} cores` : '1 core';
      parts.push(
        `<path class="roof machine cm" data-cores="${m.cores}" d="${roofPath(m.ends, m.peakFlops, m.ends.ridge_flops_per_byte)}"/>`,
      );
      avoidRoof(m.ends, m.peakFlops, m.ends.ridge_flops_per_byte);
      parts.push(`<line class="ridge cm" x1="${rx}" x2="${rx}" y1="${yScale(m.peakFlops)}" y2="${H - M.bottom}"/>`);
      pointLabels.push({
        x: rx,
        y: yScale(m.peakFlops),
        r: 2,
        cls: 'label cm',
        text: `${narrow ? `this machine, ${what}` : `this machine (${what}, wasm${m.peak.fma ? ' FMA' : ''})`}: ridge ${formatNumber(m.ends.ridge_flops_per_byte)} FLOP/B`,
      });
    }
    // your GPU (WebGPU): one roof per measured format, a triangle per GEMM
    const gpuName = this.webgpu?.name;
    for (const roof of this.webgpu?.roofs ?? []) {
      const rx = xScale(roof.ends.ridge_flops_per_byte);
      parts.push(
        `<path class="roof yours cg" data-dtype="${roof.dtype}" d="${roofPath(roof.ends, roof.peakFlops, roof.ends.ridge_flops_per_byte)}"/>`,
      );
      avoidRoof(roof.ends, roof.peakFlops, roof.ends.ridge_flops_per_byte);
      parts.push(`<line class="ridge cg" x1="${rx}" x2="${rx}" y1="${yScale(roof.peakFlops)}" y2="${H - M.bottom}"/>`);
      pointLabels.push({
        x: rx,
        y: yScale(roof.peakFlops),
        r: 2,
        cls: 'label cg',
        text: `${narrow ? 'your GPU' : `your GPU${gpuName ? ` (${gpuName})` : ''}`}, WebGPU ${roof.dtype}: ridge ${formatNumber(roof.ends.ridge_flops_per_byte)} FLOP/B`,
      });
    }
    (this.webgpu?.rows ?? []).forEach((row, i) => {
      const x = xScale(Math.min(Math.max(row.intensity, 10 ** X_DOMAIN[0]), 10 ** X_DOMAIN[1]));
      const y = yScale(clampY(row.flops_per_s));
      parts.push(
        `<path class="wgpu cg" tabindex="0" data-kind="webgpu" data-index="${i}" d="M${x},${y - 6.5} L${x + 6},${y + 4} L${x - 6},${y + 4} Z"><title>your GPU: WGSL GEMM ${row.dtype}, n = ${row.n}</title></path>`,
      );
      labels.reserve(x - 7, y - 7, 14, 14);
    });
    // operations, on the first roof
    const opsOnRoof = this.roofs?.length ? this.roofs[0].result.ops : null;
    (this.ops ?? []).forEach((op, i) => {
      const placed = opsOnRoof?.[i];
      const y = placed ? yScale(clampY(placed.attainable_flops_per_s)) : yScale(10 ** lo) - 10;
      const x = xScale(Math.min(Math.max(op.intensity, 10 ** X_DOMAIN[0]), 10 ** X_DOMAIN[1]));
      parts.push(
        `<circle class="op" tabindex="0" data-kind="op" data-index="${i}" cx="${x}" cy="${y}" r="5"><title>${escapeHtml(op.name)}</title></circle>`,
      );
      labels.reserve(x - 6, y - 6, 12, 12);
      const short = op.id.replace('attention-', 'attn ').replace('matmul-', 'mm ');
      pointLabels.push({ x, y, r: 5, cls: 'label', text: short });
    });
    // measured kernels: one label per kernel, at its largest size
    this.kernelRows.forEach((row, i) => {
      const x = xScale(row.intensity);
      const y = yScale(clampY(row.flops_per_s));
      parts.push(
        `<circle class="kpt k${row.number}" tabindex="0" data-kind="kernel" data-index="${i}" cx="${x}" cy="${y}" r="5.5"><title>${escapeHtml(row.kernel)} n = ${row.n}</title></circle>`,
      );
      labels.reserve(x - 6, y - 6, 12, 12);
    });
    // all-core points: squares outlined in the text colour
    this.allCoreRows.forEach((row, i) => {
      const x = xScale(row.intensity);
      const y = yScale(clampY(row.flops_per_s));
      parts.push(
        `<rect class="kpt all k${row.number}" tabindex="0" data-kind="all" data-index="${i}" x="${x - 5.5}" y="${y - 5.5}" width="11" height="11"><title>${escapeHtml(row.kernel)} n = ${row.n}, ${row.cores} cores</title></rect>`,
      );
      labels.reserve(x - 6, y - 6, 12, 12);
    });
    if (this.allCoreRows.length) {
      const last = this.allCoreRows.at(-1);
      pointLabels.push({
        x: xScale(last.intensity),
        y: yScale(clampY(last.flops_per_s)),
        r: 5.5,
        cls: 'label',
        text: `${last.kernel}, ${last.cores} cores`,
      });
    }
    const lastByKernel = new Map();
    this.kernelRows.forEach((row) => lastByKernel.set(row.kernel, row));
    for (const row of lastByKernel.values())
      pointLabels.push({
        x: xScale(row.intensity),
        y: yScale(clampY(row.flops_per_s)),
        r: 5.5,
        cls: 'label',
        text: row.kernel,
      });
    // GPU report points
    this.gpuPoints.forEach((p, i) => {
      const x = xScale(p.intensity_flop_per_byte);
      const y = yScale(p.flops_per_s);
      parts.push(
        `<rect class="gpu" tabindex="0" data-kind="gpu" data-index="${i}" x="${x - 4.5}" y="${y - 4.5}" width="9" height="9" transform="rotate(45 ${x} ${y})"><title>${escapeHtml(p.kernel)}</title></rect>`,
      );
      labels.reserve(x - 6, y - 6, 12, 12);
    });
    // Each label goes beside its own point, at the first spot that overprints nothing placed so far.
    for (const label of pointLabels) {
      const spot = labels.place(label.x, label.y, label.r, textWidth(label.text, LABEL_PX), LABEL_PX);
      if (spot.leader)
        parts.push(
          `<line class="leader" x1="${spot.leader.x1.toFixed(1)}" y1="${spot.leader.y1.toFixed(1)}" x2="${spot.leader.x2.toFixed(1)}" y2="${spot.leader.y2.toFixed(1)}"/>`,
        );
      parts.push(
        `<text class="${label.cls}" x="${spot.x.toFixed(1)}" y="${spot.y.toFixed(1)}" text-anchor="${spot.anchor}">${escapeHtml(label.text)}</text>`,
      );
    }
    svg.innerHTML = trustedHtml(parts.join(''));
    for (const el of svg.querySelectorAll('[data-kind]')) {
      const show = () => this.describe(el.dataset.kind, Number(el.dataset.index));
      el.addEventListener('mouseenter', show);
      el.addEventListener('focus', show);
    }
    this.renderTable();
  }

  describe(kind, index) {
    const out = this.shadowRoot.querySelector('.readout');
    if (kind === 'op') {
      const op = this.ops[index];
      const placed = this.roofs?.[0]?.result.ops[index];
      const bound = placed
        ? ` On ${escapeHtml(this.roofs[0].name)}: at most ${siPrefix(placed.attainable_flops_per_s)}FLOP/s (${escapeHtml(placed.bound)}-bound, ${(placed.fraction_of_peak * 100).toPrecision(3)}% of peak).`
        : '';
      out.innerHTML = trustedHtml(
        `<b>${escapeHtml(op.name)}</b>: ${formatNumber(op.intensity)} FLOP/byte (${formatNumber(op.flops)} FLOPs over ${formatNumber(op.bytes)} bytes).${bound}<br><span class="status">${escapeHtml(op.model)}</span>`,
      );
    } else if (kind === 'kernel' || kind === 'all') {
      const row = (kind === 'all' ? this.allCoreRows : this.kernelRows)[index];
      const adds = this.ladder?.[row.kernel]?.adds;
      const cores =
        kind === 'all'
          ? ` on ${row.cores} cores at once (stripes of ${row.stripes.join(', ')} rows; the workers' medians added)`
          : ', one core';
      out.innerHTML = trustedHtml(
        `<b>${escapeHtml(row.kernel)}</b>, n = ${row.n}${cores}: ${formatNumber(row.flops_per_s / 1e9)} GFLOP/s (median of ${row.samples}; min ${formatNumber(row.flops_per_s_min / 1e9)}, max ${formatNumber(row.flops_per_s_max / 1e9)}), modelled intensity ${formatNumber(row.intensity)} FLOP/byte, max error ${row.max_abs_err.toExponential(1)} (tolerance ${row.tolerance.toExponential(1)}).${adds ? `<br><span class="status">Rung ${row.number}: ${escapeHtml(adds)}.</span>` : ''}`,
      );
    } else if (kind === 'webgpu') {
      const row = this.webgpu.rows[index];
      const c = row.check;
      out.innerHTML = trustedHtml(
        `<b>Your GPU${this.webgpu.name ? ` (${escapeHtml(this.webgpu.name)})` : ''}</b>, WGSL GEMM ${row.dtype}, n = ${row.n}: ${formatNumber(row.flops_per_s / 1e9)} GFLOP/s (median of ${row.samples} samples of ${row.calls} call${row.calls > 1 ? 's' : ''}; min ${formatNumber(row.flops_per_s_min / 1e9)}, max ${formatNumber(row.flops_per_s_max / 1e9)}) at ${formatNumber(row.intensity)} FLOP/byte (each matrix moved once). ${c.ok ? 'Matches' : '<b>Does not match</b>'} the engine's CPU GEMM (${escapeHtml(c.cpu_kernel)}): ${c.compared} entries, max error ${c.max_abs_err.toExponential(1)}, tolerance ${c.tolerance.toExponential(1)} at the worst entry; sums ${c.checksum_gpu.toExponential(6)} and ${c.checksum_cpu.toExponential(6)}.`,
      );
    } else if (kind === 'gpu') {
      const p = this.gpuPoints[index];
      out.innerHTML = trustedHtml(
        `<b>${escapeHtml(p.kernel)}</b> ${escapeHtml(p.dtype ?? '')}${p.n ? `, n = ${escapeHtml(p.n)}` : ''}, ${escapeHtml(p.label)}: ${siPrefix(p.flops_per_s)}FLOP/s at ${formatNumber(p.intensity_flop_per_byte)} FLOP/byte.`,
      );
    }
  }

  /** The WebGPU measurement's rows: the copy probe, then each GEMM with its check. */
  renderGpuTable() {
    const table = this.shadowRoot.querySelector('table.gpu-measured');
    const gpu = this.webgpu;
    if (!gpu?.copy && !gpu?.rows.length) {
      table.hidden = true;
      return;
    }
    table.hidden = false;
    const rows = [];
    if (gpu.copy)
      rows.push(
        `<tr><td>copy probe (${formatNumber(gpu.copy.buffer_bytes / 2 ** 20)} MiB read and written)</td><td></td><td class="num">${formatNumber(gpu.copy.bytes_per_s / 1e9)} GB/s</td><td></td><td class="num">${gpu.copy.verified ? 'copied' : 'wrong data'}</td></tr>`,
      );
    for (const row of gpu.rows)
      rows.push(
        `<tr><td>WGSL GEMM ${row.dtype}</td><td class="num">${row.n}</td><td class="num">${formatNumber(row.flops_per_s / 1e9)}</td><td class="num">${formatNumber(row.intensity)}</td><td class="num">${row.check.ok ? 'matches' : 'does not match'} (${row.check.worst_ratio.toPrecision(2)} of tolerance)</td></tr>`,
      );
    table.querySelector('tbody').innerHTML = trustedHtml(rows.join(''));
  }

  renderTable() {
    this.renderGpuTable();
    const table = this.shadowRoot.querySelector('table.measured');
    if (!this.kernelRows.length && !this.machine) {
      table.hidden = true;
      return;
    }
    table.hidden = false;
    const boundsOn = (machine, rows) =>
      machine && rows.length
        ? this.engine.call('roofline_custom', {
            peak_flops_per_s: machine.peakFlops,
            bandwidth_bytes_per_s: machine.bandwidth,
            intensity: rows.map((r) => r.intensity),
          }).points
        : [];
    const rows = [];
    for (const m of [this.machine, this.allCores]) {
      if (!m) continue;
      const cores = `<td class="num">${m.cores}</td>`;
      if (m.mulAddPeak !== m.peak)
        rows.push(
          `<tr><td>peak probe (${escapeHtml(m.mulAddPeak.isa)}, ${m.mulAddPeak.lanes} lanes${m.mulAddPeak.fma ? ', FMA' : ', mul + add'})</td><td></td>${cores}<td class="num">${formatNumber(m.mulAddPeak.flops_per_s / 1e9)}</td><td></td><td></td></tr>`,
        );
      rows.push(
        `<tr><td>peak probe (${escapeHtml(m.peak.isa)}, ${m.peak.lanes} lanes${m.peak.fma ? ', FMA' : ', mul + add'})</td><td></td>${cores}<td class="num">${formatNumber(m.peak.flops_per_s / 1e9)}</td><td></td><td></td></tr>`,
      );
      rows.push(
        `<tr><td>bandwidth probe (read)</td><td></td>${cores}<td class="num">${formatNumber(m.bw.read_bytes_per_s / 1e9)} GB/s</td><td></td><td></td></tr>`,
      );
    }
    let overRoof = false;
    const listed = (list, machine) => {
      const bounds = boundsOn(machine, list);
      list.forEach((row, i) => {
        const fraction = bounds[i] ? row.flops_per_s / bounds[i].attainable_flops_per_s : null;
        if (fraction > 1) overRoof = true;
        const share = fraction === null ? '—' : `${(fraction * 100).toPrecision(3)}%${fraction > 1 ? ' *' : ''}`;
        rows.push(
          `<tr><td>${row.number} ${escapeHtml(row.kernel)}</td><td class="num">${row.n}</td><td class="num">${row.cores}</td><td class="num">${formatNumber(row.flops_per_s / 1e9)}</td><td class="num">${formatNumber(row.intensity)}</td><td class="num">${share}</td></tr>`,
        );
      });
    };
    listed(this.kernelRows, this.machine);
    listed(this.allCoreRows, this.allCores);
    table.querySelector('tbody').innerHTML = trustedHtml(rows.join(''));
    this.shadowRoot.querySelector('.over-roof').hidden = !overRoof;
  }
}

// What was measured lives in the bench controller; the chart (and tests) read and write it on the widget.
for (const key of ['machine', 'allCores', 'kernelRows', 'allCoreRows', 'ladder', 'workers', 'kernelNote'])
  Object.defineProperty(TallyRoofline.prototype, key, {
    get() {
      return this.bench?.[key] ?? (key.endsWith('Rows') ? [] : null);
    },
    set(value) {
      this.bench[key] = value;
    },
  });

TallyRoofline.define('tally-roofline');
