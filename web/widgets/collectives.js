// <tally-collectives>: one NCCL-style collective on a hardware preset. Message size, ranks per node and nodes
// in; time, algorithm and bus bandwidth, and the latency and bandwidth terms out, with the achieved bandwidth
// across message sizes drawn so the latency-bound and bandwidth-bound regimes show.
//
// Attributes set the starting state (the URL overrides them, see web/state.js):
//   collective="all_reduce", algorithm="ring", message-bytes="1e9", ranks-per-node="8", nodes="1", hardware="h100-sxm"
//   controls="model,..." (not state: the fields shown outside "More settings", kit/disclosure.js; default: all)
// Every number comes from the engine's `collective` method (engine/src/comm/collectives.cpp); this module lays them out.
import { TallyWidget, presetSelect, formatNumber, formatBytes, escapeHtml } from './base.js';
import { drawWidth, logScale, logTicks } from './kit/chart.js';
import { panelHtml } from './kit/shell.js';
import { disclosedControls, disclosureCss, tableControls } from './kit/disclosure.js';
import { trustedHtml } from './kit/trusted.js';

const COLLECTIVES = [
  { value: 'all_reduce', label: 'all-reduce' },
  { value: 'reduce_scatter', label: 'reduce-scatter' },
  { value: 'all_gather', label: 'all-gather' },
  { value: 'broadcast', label: 'broadcast' },
  { value: 'all_to_all', label: 'all-to-all' },
];
const ALGORITHMS = [
  { value: 'ring', label: 'ring' },
  { value: 'tree', label: 'tree (all-reduce only)' },
];
/** The widget's fields (kit/store.js): each engine argument is the field of the same name. */
const FIELDS = [
  {
    name: 'collective',
    kind: 'select',
    label: 'Collective',
    options: COLLECTIVES,
    fallback: 'all_reduce',
    arg: 'collective',
  },
  { name: 'algorithm', kind: 'select', label: 'Algorithm', options: ALGORITHMS, fallback: 'ring', arg: 'algorithm' },
  { name: 'message_bytes', kind: 'number', label: 'Message size (bytes)', fallback: '1e9', arg: 'message_bytes' },
  { name: 'ranks_per_node', kind: 'number', label: 'Ranks per node', fallback: '8', arg: 'ranks_per_node' },
  { name: 'nodes', kind: 'number', label: 'Nodes', fallback: '1', arg: 'nodes' },
  // Only presets with interconnect figures can place ranks on nodes.
  presetSelect('hardware', 'GPU and links', 'hardware', 'h100-sxm', { arg: 'hardware' }),
];
const RESULTS = [
  { out: 'time', label: 'Time' },
  { out: 'algbw', label: 'Algorithm bandwidth (size / time)' },
  { out: 'busbw', label: 'Bus bandwidth' },
  { out: 'latency', label: 'Latency term' },
  { out: 'bandwidth', label: 'Bandwidth term' },
  { out: 'sent', label: 'Bytes each rank sends' },
  { out: 'bottleneck', label: 'Slowest link' },
];
// Message sizes of the chart's sweep: 8 B to 8 GiB in powers of 4, as nccl-tests sweeps with -f.
const SWEEP = Array.from({ length: 16 }, (_, i) => 8 * 4 ** i);

/** Seconds as µs, ms or s with three significant digits. */
export function formatSeconds(seconds) {
  if (seconds < 1e-3) return `${formatNumber(seconds * 1e6)} µs`;
  if (seconds < 1) return `${formatNumber(seconds * 1e3)} ms`;
  return `${formatNumber(seconds)} s`;
}

/** Bytes per second as GB/s (decimal, as nccl-tests prints). */
export function formatBandwidth(bytesPerSecond) {
  return `${formatNumber(bytesPerSecond / 1e9)} GB/s`;
}

/** 1e3 -> "1 kB", 1e6 -> "1 MB", 1e9 -> "1 GB": the chart's message-size ticks (decimal, as nccl-tests). */
function sizeLabel(bytes) {
  const [unit, scale] = bytes >= 1e9 ? ['GB', 1e9] : bytes >= 1e6 ? ['MB', 1e6] : bytes >= 1e3 ? ['kB', 1e3] : ['B', 1];
  return `${formatNumber(bytes / scale)} ${unit}`;
}

const css = `
/* The chart is always 240 units tall (drawChart): a fixed height, so its first draw, before the width is known, and
   the redraw at the shown width take the same room and nothing below moves (no layout shift). */
.chart { width: 100%; height: 240px; display: block; margin-top: 10px; }
.chart .axis { stroke: var(--muted); }
.chart .grid { stroke: var(--border); }
.chart path.bus { stroke: var(--accent); stroke-width: 2; fill: none; }
.chart .link { stroke: var(--ok); stroke-dasharray: 5 3; stroke-width: 1.5; }
.chart text { fill: var(--fg); font-size: 11px; }
.chart text.muted { fill: var(--muted); }
.chart .you { fill: none; stroke: var(--fg); stroke-width: 1.5; }
@media (max-width: 480px) {
  .fields, .results { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .result .value { font-size: 17px; }
}
`;

class TallyCollectives extends TallyWidget {
  static fields = FIELDS;

  build() {
    const presets = this.loadPresets();
    this.hardware = (presets.hardware ?? []).filter((h) => h.interconnect);
    const start = this.declareState('col');
    // Every field shows unless the page's `controls` fold some behind "More settings" (kit/disclosure.js).
    const controls = disclosedControls(
      this,
      tableControls(
        this,
        FIELDS.map((f) => f.name),
        start,
      ),
    );
    this.shadowRoot.innerHTML = trustedHtml(
      panelHtml({
        css: css + disclosureCss,
        label: 'A collective between GPUs: time and achieved bandwidth',
        fields: controls.shown,
        between: controls.more,
        results: RESULTS,
        body: `<svg class="chart" data-out="chart" viewBox="0 0 640 240" role="img"><title>Bus bandwidth against message size</title></svg>
        <p class="status" data-out="note"></p>`,
      }),
    );
    this.updateOnEdit();
    this.observeChartWidth();
    this.firstUpdate();
  }

  update() {
    const root = this.beginUpdate();
    const v = this.values();
    const out = (key, text) => this.showOut(key, text);
    const blank = () => {
      for (const { out: key } of RESULTS) out(key, '—');
      root.querySelector('[data-out="chart"]').replaceChildren();
      out('note', '');
      this.result = null;
      this.chartArgs = null;
    };
    const { args, errors } = this.fieldArgs(v);
    if (this.showFieldErrors(errors)) return blank();
    this.args = args;
    // Every engine field is a field's argument but "efficiency", which the widget never sends.
    const r = this.callEngine('collective', this.args, (arg) => this.argToField[arg] ?? 'collective');
    if (!r) return blank();
    this.result = r;
    this.showWarnings(r.warnings);
    out('time', formatSeconds(r.seconds));
    out('algbw', formatBandwidth(r.algorithm_bytes_per_s));
    out('busbw', formatBandwidth(r.bus_bytes_per_s));
    out('latency', formatSeconds(r.latency_seconds));
    out('bandwidth', formatSeconds(r.bandwidth_seconds));
    out('sent', formatBytes(r.bytes_sent_per_rank));
    out(
      'bottleneck',
      `${r.bottleneck === 'nvlink' ? 'in-node link' : 'network'}, ${formatBandwidth(r.bottleneck_bytes_per_s)}`,
    );
    const share = r.latency_seconds / r.seconds;
    out(
      'note',
      `${r.ranks} ranks, ${r.steps} steps. ${share > 0.5 ? 'Latency-bound' : 'Bandwidth-bound'}: the latency term is ${formatNumber(share * 100, 2)} % of the time. Bus bandwidth = algorithm bandwidth × ${formatNumber(r.bus_factor)}, the factor nccl-tests uses for this collective, so it can be compared with the link's ${formatBandwidth(r.bottleneck_bytes_per_s)}.`,
    );
    this.chartArgs = [r, this.sweep()];
    this.drawChart(...this.chartArgs);
  }

  /** The engine's bus bandwidth at each message size of SWEEP for this placement (a size it refuses is left out). */
  sweep() {
    const points = [];
    for (const bytes of SWEEP) {
      try {
        const p = this.engine.call('collective', { ...this.args, message_bytes: bytes });
        points.push({ x: bytes, y: p.bus_bytes_per_s / 1e9 });
      } catch {
        // Left out of the curve; the shown message's own error, if any, is already beside its field.
      }
    }
    return points;
  }

  /** Bus bandwidth (y, log) against message size (x, log) for this placement: where latency stops mattering. */
  drawChart(r, points) {
    const svg = this.shadowRoot.querySelector('[data-out="chart"]');
    if (points.length < 2) return svg.replaceChildren();
    const W = drawWidth(this.shownWidth(svg), { min: 280 }),
      H = 240,
      left = 52,
      right = 16,
      top = 14,
      bottom = 42;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const link = r.bottleneck_bytes_per_s / 1e9;
    const xs = points.map((p) => Math.log10(p.x)),
      ys = points.map((p) => Math.log10(p.y));
    const [x0, x1] = [Math.min(...xs), Math.max(...xs)],
      [y0, y1] = [Math.min(...ys) - 0.1, Math.log10(link) + 0.15];
    const px = logScale([x0, x1], [left, W - right]);
    const py = logScale([y0, y1], [H - bottom, top]);
    let body = `<title>Bus bandwidth in GB/s against message size in bytes, log scales; dashed: the slowest link</title>`;
    // Over many decades only the powers of ten are labelled, so the labels do not collide.
    const yTicks = logTicks(y0, y1).filter((t) => y1 - y0 < 4 || Number.isInteger(Math.log10(t)));
    for (const t of yTicks)
      body += `<line class="grid" x1="${left}" x2="${W - right}" y1="${py(t).toFixed(1)}" y2="${py(t).toFixed(1)}"/><text x="${left - 6}" y="${(py(t) + 4).toFixed(1)}" text-anchor="end">${escapeHtml(formatNumber(t))}</text>`;
    const xTicks = logTicks(x0, x1).filter((t) => Number.isInteger(Math.log10(t) / 3));
    for (const t of xTicks)
      body += `<text x="${px(t).toFixed(1)}" y="${H - bottom + 16}" text-anchor="middle">${escapeHtml(sizeLabel(t))}</text>`;
    body += `<line class="axis" x1="${left}" x2="${left}" y1="${top}" y2="${H - bottom}"/><line class="axis" x1="${left}" x2="${W - right}" y1="${H - bottom}" y2="${H - bottom}"/>`;
    body += `<line class="link" x1="${left}" x2="${W - right}" y1="${py(link).toFixed(1)}" y2="${py(link).toFixed(1)}"/>`;
    body += `<path class="bus" d="${points.map((p, i) => `${i ? 'L' : 'M'}${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join('')}"/>`;
    const here = Math.min(Math.max(r.message_bytes, points[0].x), points.at(-1).x);
    body += `<circle class="you" cx="${px(here).toFixed(1)}" cy="${py(Math.max(r.bus_bytes_per_s / 1e9, 10 ** y0)).toFixed(1)}" r="6"><title>your message: ${escapeHtml(formatBandwidth(r.bus_bytes_per_s))}</title></circle>`;
    body += `<text x="${(left + W - right) / 2}" y="${H - 8}" text-anchor="middle" class="muted">message size, bytes (log)</text>`;
    body += `<text transform="translate(14 ${(top + H - bottom) / 2}) rotate(-90)" text-anchor="middle" class="muted">bus GB/s (log)</text>`;
    svg.innerHTML = trustedHtml(body);
  }
}

TallyCollectives.define('tally-collectives');
