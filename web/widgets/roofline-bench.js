// Measuring this machine for the roofline chart: Web Workers that each run the engine, the probes (peak FLOP/s,
// memory bandwidth) and the GEMM kernel ladder on one core, then every worker at once on its own stripe of C.
// A controller beside the chart (roofline.js): it holds what was measured and tells the chart through `ui`.
import { TallyError, absoluteUrl, engineFiles } from '../engine.js';
import { trustedScriptUrl } from './kit/trusted.js';

/** The naive kernel's largest size: beyond it one product takes seconds. */
const NAIVE_MAX_N = 256;
export const MAX_WORKERS = 64;
export const DEFAULT_WORKERS = Math.min(
  MAX_WORKERS,
  Math.max(1, Number(globalThis.navigator?.hardwareConcurrency) || 1),
);

/** Thrown inside a measurement that Cancel (or a new measurement) has superseded. */
class Cancelled extends Error {}

export class RooflineBench {
  /**
   * `engine`: the page's engine (gemm_kernels, roofline_custom); `sizes()` and `probe()` ({mib, reps}): what to
   * measure, read when a measurement starts; `intensity`: [lo, hi] FLOP/byte of a roof's ends; `ui`: hooks
   * {begin(count), kernels(note, best), total(steps), step(label), changed(), done(), finish(message),
   * measured(detail)}.
   */
  constructor({ engine, sizes, probe, intensity, ui }) {
    Object.assign(this, { engine, sizes, probe, intensity, ui });
    // The kernel ladder (gemm_kernels) is asked for when the reader measures, not on first render.
    this.ladder = null;
    this.workers = null;
    this.run = null;
    this.kernelNote = '';
    this.reset();
  }

  /** Forgets the last measurement: {peak, bw, peakFlops, bandwidth, ends, cores, mulAddPeak} roofs and rows. */
  reset() {
    this.machine = null;
    this.allCores = null; // the same roof with every worker at once
    this.kernelRows = [];
    this.allCoreRows = [];
  }

  /** Single-core steps (worker 0): probes, then every kernel at every size. */
  plan(kernels) {
    const sizes = this.sizes();
    const { mib, reps } = this.probe();
    const steps = [
      {
        method: 'probe_peak',
        args: { samples: reps, min_sample_ms: 30 },
        label: 'peak FLOP/s probe (independent multiply-add chains)',
      },
      { method: 'probe_bandwidth', args: { mib, samples: reps }, label: `memory bandwidth probe (${mib} MiB stream)` },
    ];
    if (kernels.includes('simd-relaxed'))
      steps.push({
        method: 'probe_peak',
        args: { samples: reps, min_sample_ms: 30, variant: 'relaxed' },
        label: 'peak FLOP/s probe (f32x4.relaxed_madd chains)',
      });
    for (const n of sizes)
      for (const kernel of kernels) {
        if (kernel === 'naive' && n > NAIVE_MAX_N) continue;
        steps.push({
          method: 'gemm_bench',
          args: { n, kernel, reps, warmup: 3, min_sample_ms: 20 },
          label: `GEMM ${kernel}, n = ${n}`,
        });
      }
    return steps;
  }

  /**
   * A worker of this widget's engine. Served beside the engine on this page's origin (tally's site, the package
   * served as files) it starts as it is; else (another origin, or a bundle that renamed the files or inlined the
   * worker as a data: URL) a blob: worker of this page's origin imports it and is told where the engine's files are.
   */
  startWorker() {
    const url = new URL(absoluteUrl(new URL('./roofline-worker.js', import.meta.url)));
    const files = { ...engineFiles(), relaxed: absoluteUrl(new URL('../tally-relaxed.wasm', import.meta.url)) };
    if (url.origin === globalThis.location.origin && new URL('../tally.js', url).href === files.glue)
      return { worker: new Worker(trustedScriptUrl(url.href)) };
    // A Worker cannot run another origin's script; a blob: worker may importScripts it (classic scripts need no
    // CORS), and the engine files it fetches are served with Access-Control-Allow-Origin: *.
    // Under Trusted Types (inherited by a blob: worker) its importScripts goes through tally's policy (kit/trusted.js).
    const source = `self.tallyFiles = ${JSON.stringify(files)};
try { self.tallyPolicy = self.trustedTypes?.createPolicy('tally', { createScriptURL: (u) => u }); } catch {}
importScripts(self.tallyPolicy ? self.tallyPolicy.createScriptURL(${JSON.stringify(url.href)}) : ${JSON.stringify(url.href)});
`;
    const blobUrl = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
    return { worker: new Worker(trustedScriptUrl(blobUrl)), blobUrl };
  }

  /** Starts n workers; resolves to [{worker, relaxed, relaxedNote, call(method, args) -> Promise}]. */
  startWorkers(count) {
    const started = [];
    this.workers = started;
    return Promise.all(
      Array.from({ length: count }, () => {
        const { worker, blobUrl } = this.startWorker();
        const pending = new Map();
        let nextId = 0;
        const entry = { worker, blobUrl, pending };
        started.push(entry);
        return new Promise((resolve, reject) => {
          entry.fail = (error) => {
            reject(error);
            for (const p of pending.values()) p.reject(error);
            pending.clear();
          };
          worker.onmessage = (event) => {
            const m = event.data;
            if (m.type === 'ready') {
              entry.relaxed = m.relaxed;
              entry.relaxedNote = m.relaxedNote;
              entry.call = (method, args) =>
                new Promise((res, rej) => {
                  const id = nextId++;
                  pending.set(id, { resolve: res, reject: rej });
                  worker.postMessage({ type: 'call', id, method, args });
                });
              resolve(entry);
            } else if (m.type === 'failed') {
              entry.fail(new Error(m.message));
            } else if (m.type === 'result' || m.type === 'error') {
              const p = pending.get(m.id);
              pending.delete(m.id);
              if (m.type === 'result') p?.resolve(m.result);
              else p?.reject(new TallyError(m.field, m.message));
            }
          };
          worker.onerror = (event) =>
            entry.fail(
              new Error(`the worker failed: ${event.message || 'could not start (blocked by the host page?)'}`),
            );
        });
      }),
    );
  }

  /** Measures with `count` workers: one core first, then (count > 1) all at once. Resolves when done or stopped. */
  async measure(count) {
    if (this.workers) return;
    this.reset();
    this.ui.changed();
    this.ui.begin(count);
    const run = (this.run = {});
    const step = (label) => {
      if (this.run !== run) throw new Cancelled();
      this.ui.step(label);
    };
    try {
      let workers;
      try {
        workers = await this.startWorkers(count);
      } catch (error) {
        if (this.run !== run) throw new Cancelled();
        throw new Error(
          `could not measure: ${error.message}. On a host page that forbids workers (Content-Security-Policy worker-src) or cannot reach the widget's server, the measurement cannot run.`,
        );
      }
      if (this.run !== run) throw new Cancelled();
      const relaxed = workers[0].relaxed;
      // The ladder's single-threaded kernels, in the engine's order (simd-relaxed only where the worker has it).
      this.ladder ??= Object.fromEntries(this.engine.call('gemm_kernels', {}).kernels.map((k) => [k.name, k]));
      const ladder = Object.values(this.ladder)
        .filter((k) => k.available && !k.multithreaded && k.name !== 'simd-relaxed')
        .map((k) => k.name);
      const kernels = [...ladder, ...(relaxed ? ['simd-relaxed'] : [])];
      const best = relaxed ? 'simd-relaxed' : 'simd';
      this.kernelNote = relaxed
        ? `Fastest kernel: simd-relaxed (fused multiply-add, f32x4.relaxed_madd; ${workers[0].relaxedNote}); kernel 5 simd (mul + add) measured beside it.`
        : `Fastest kernel: 5 simd (mul + add). Relaxed SIMD not used: ${workers[0].relaxedNote}.`;
      this.ui.kernels(this.kernelNote, best);
      const plan = this.plan(kernels);
      const sizes = this.sizes();
      this.ui.total(plan.length + (count > 1 ? 2 + (relaxed ? 1 : 0) + sizes.length : 0));
      // 1. One core: worker 0 alone.
      const partial = {};
      for (const s of plan) {
        step(s.label);
        const result = await workers[0].call(s.method, s.args);
        if (s.method === 'probe_peak') partial[s.args.variant === 'relaxed' ? 'relaxedPeak' : 'peak'] = result;
        if (s.method === 'probe_bandwidth') partial.bw = result;
        if (partial.peak && partial.bw && (partial.relaxedPeak || !relaxed) && !this.machine)
          this.machine = this.roofOf(partial.relaxedPeak ?? partial.peak, partial.bw, 1, partial.peak);
        if (s.method === 'gemm_bench') this.kernelRows.push(...result.rows.map((row) => ({ ...row, cores: 1 })));
        this.ui.changed();
      }
      // 2. All cores: every worker at once, each on its own stripe of C with its own copy of B.
      if (count > 1) await this.measureAllCores(workers, best, relaxed, step);
      this.ui.done();
      this.finish(
        `done: ${this.kernelRows.length} single-core and ${this.allCoreRows.length} all-core (${count} workers) measurements`,
      );
      this.ui.measured({
        machine: this.machine,
        rows: this.kernelRows,
        allCores: this.allCores,
        allCoreRows: this.allCoreRows,
        kernel: best,
        workers: count,
      });
    } catch (error) {
      if (error instanceof Cancelled || this.run !== run) return;
      this.finish(`stopped: ${error.message}`);
    }
  }

  async measureAllCores(workers, kernel, relaxed, step) {
    const { mib, reps } = this.probe();
    const count = workers.length;
    const all = (method, argsOf) => Promise.all(workers.map((w, i) => w.call(method, argsOf(i))));
    const sum = (results, key) => results.reduce((total, r) => total + r[key], 0);
    const total = (results) => ({
      flops_per_s: sum(results, 'flops_per_s'),
      flops_per_s_min: sum(results, 'flops_per_s_min'),
      flops_per_s_max: sum(results, 'flops_per_s_max'),
    });
    step(`peak FLOP/s probe on ${count} workers at once`);
    const peaks = await all('probe_peak', () => ({ samples: reps, min_sample_ms: 30 }));
    let relaxedPeaks = null;
    if (relaxed) {
      step(`peak FLOP/s probe (relaxed) on ${count} workers at once`);
      relaxedPeaks = await all('probe_peak', () => ({ samples: reps, min_sample_ms: 30, variant: 'relaxed' }));
    }
    // The buffers together as large as the single-core probe's (each worker streams its own share).
    const share = Math.max(8, Math.round(mib / count));
    step(`memory bandwidth probe on ${count} workers at once (${share} MiB each)`);
    const bws = await all('probe_bandwidth', () => ({ mib: share, samples: reps }));
    const peak = { ...peaks[0], ...total(peaks) };
    const relaxedPeak = relaxedPeaks && { ...relaxedPeaks[0], ...total(relaxedPeaks) };
    const bw = {
      ...bws[0],
      read_bytes_per_s: sum(bws, 'read_bytes_per_s'),
      read_bytes_per_s_min: sum(bws, 'read_bytes_per_s_min'),
      read_bytes_per_s_max: sum(bws, 'read_bytes_per_s_max'),
    };
    this.allCores = this.roofOf(relaxedPeak ?? peak, bw, count, peak);
    this.ui.changed();
    const mr = this.ladder[kernel]?.tiling?.mr ?? 8;
    for (const n of this.sizes()) {
      step(`GEMM ${kernel}, n = ${n}, ${count} stripes of C at once`);
      // Stripes of whole register tiles; a worker left without rows sits this size out.
      const rows = Math.ceil(Math.ceil(n / count) / mr) * mr;
      const stripes = Array.from({ length: count }, (_, i) => Math.max(0, Math.min(rows, n - i * rows)));
      const active = workers.filter((_, i) => stripes[i] > 0);
      const args = (i, timed) => ({
        n,
        m: stripes[i],
        kernel,
        reps: timed ? reps : 1,
        warmup: 3,
        min_sample_ms: timed ? 20 : 2,
      });
      // Warm every worker up first, so that their timed samples overlap.
      await Promise.all(active.map((w, i) => w.call('gemm_bench', args(i, false))));
      const results = (await Promise.all(active.map((w, i) => w.call('gemm_bench', args(i, true))))).map(
        (r) => r.rows[0],
      );
      // One n x n product split into stripes run at the same time: the rates add up; FLOPs and modelled
      // bytes add up over the stripes.
      const flops = sum(results, 'flops');
      const bytes = sum(results, 'bytes');
      this.allCoreRows.push({
        kernel,
        number: results[0].number,
        n,
        cores: active.length,
        stripes: results.map((r) => r.m),
        ...total(results),
        flops,
        bytes,
        intensity: flops / bytes,
        correct: results.every((r) => r.correct),
        max_abs_err: Math.max(...results.map((r) => r.max_abs_err)),
        tolerance: Math.min(...results.map((r) => r.tolerance)),
        samples: results[0].samples,
      });
      this.ui.changed();
    }
  }

  /** This machine's roof from the probes (summed over workers for all cores). */
  roofOf(peak, bw, cores, mulAddPeak) {
    const peakFlops = peak.flops_per_s;
    const bandwidth = bw.read_bytes_per_s;
    const ends = this.engine.call('roofline_custom', {
      peak_flops_per_s: peakFlops,
      bandwidth_bytes_per_s: bandwidth,
      intensity: this.intensity,
    });
    return { peak, bw, peakFlops, bandwidth, ends, cores, mulAddPeak };
  }

  /** Stops a running measurement with `message` for the status line. */
  cancel(message) {
    if (!this.workers) return;
    this.finish(message);
  }

  finish(message) {
    for (const entry of this.workers ?? []) {
      entry.worker.terminate();
      if (entry.blobUrl) URL.revokeObjectURL(entry.blobUrl);
    }
    this.workers = null;
    this.run = null;
    this.ui.finish(message);
  }
}
