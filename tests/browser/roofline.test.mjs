// <tally-roofline> in Chromium: the roofs and operations come from the engine (same numbers as the native
// CLI); "Measure my machine" runs the probes and the GEMM ladder in a Web Worker with small sizes, the
// points appear with finite positive values, and the page stays responsive while the worker runs
// (an input typed meanwhile takes effect, and timers keep firing). Screenshots in light and dark.
// Speeds are not asserted: this is a correctness test, the benchmark lives in BENCHMARKS.md.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSite, screenshot, siteDir, DESKTOP, sitePage } from './harness.mjs';
import { native, open, errors } from './page-helpers.mjs';
import { startServer } from '../../scripts/dev/static-server.mjs';

// Whether this Chromium validates the relaxed-SIMD module (then the widget must use simd-relaxed).
async function relaxedValidates(page) {
  return page.evaluate(async () =>
    WebAssembly.validate(new Uint8Array(await (await fetch('/tally-relaxed.wasm')).arrayBuffer())),
  );
}

async function openRoofline(site, page) {
  await open(site, page, '/#roofline');
  const widget = page.locator('section#roofline tally-roofline');
  await widget.evaluate((el) => el.ready);
  await widget.scrollIntoViewIfNeeded();
  return widget;
}

test("roofline: the H100 roof and the operations are the engine's, placed on the chart", async (t) => {
  const { site, page } = await sitePage(t);
  const widget = await openRoofline(site, page);
  const shown = await widget.evaluate((el) => ({ roofs: el.roofs.map((r) => r.result), ops: el.ops }));
  const expected = native('roofline', {
    hardware: 'h100-sxm',
    dtype: 'bf16',
    seq: 2048,
    intensity: [10 ** -2, 10 ** 4.5],
  });
  assert.deepEqual(shown.roofs[0], expected, 'wasm and native agree to the last bit');
  assert.equal(await widget.locator('svg circle.op').count(), expected.ops.length);
  assert.match(
    await widget.locator('svg').textContent(),
    /ridge 295\.4 FLOP\/B/,
    'H100 SXM bf16: 989.5 TFLOP/s / 3.35 TB/s',
  );
  // hovering a point shows its numbers
  await widget.locator('svg circle.op').nth(4).hover();
  assert.match(await widget.locator('.readout').textContent(), /matrix-vector.*FLOP\/byte.*memory-bound/);
  assert.deepEqual(errors(page), []);
});

test('roofline: measuring runs in workers, single- and all-core points are finite, positive and correct, the page stays responsive', async (t) => {
  const { site, page } = await sitePage(t);
  const widget = await openRoofline(site, page);
  await widget.evaluate((el) => {
    el.setAttribute('sizes', '64,128,256');
    el.setAttribute('probe-mib', '64'); // twice the 32 MiB L3 here, so the screenshot shows memory bandwidth
    el.setAttribute('reps', '3');
    el.shadowRoot.querySelector('input[name="workers"]').value = '2';
    // Main-thread heartbeat: a timer every 10 ms; the largest gap tells whether anything blocked the page.
    window.__beats = [];
    window.__beat = setInterval(() => window.__beats.push(performance.now()), 10);
    el.addEventListener(
      'measured',
      () => {
        window.__doneAt = performance.now();
      },
      { once: true },
    );
  });
  await widget.evaluate((el) => {
    window.__startAt = performance.now();
  });
  await widget.locator('button.measure').click();
  // While a kernel is running in the worker, type a new sequence length: the operations must update now.
  await page.waitForFunction(
    () => document.querySelector('section#roofline tally-roofline').dataset.running?.startsWith('GEMM'),
    null,
    { timeout: 60000 },
  );
  const before = await widget.evaluate((el) => el.ops.find((o) => o.id === 'attention-unfused').flops);
  const seq = widget.locator('input[name="seq"]');
  await seq.fill('8192');
  const during = await widget.evaluate((el) => ({
    running: el.dataset.running ?? null,
    flops: el.ops.find((o) => o.id === 'attention-unfused').flops,
    at: performance.now(),
  }));
  assert.notEqual(during.running, null, 'the worker was still measuring when the input took effect');
  assert.ok(during.flops > before, 'attention at s = 8192 has more FLOPs than at s = 2048');
  await page.waitForFunction(() => window.__doneAt !== undefined, null, { timeout: 120000 });
  const result = await widget.evaluate((el) => {
    clearInterval(window.__beat);
    const beats = window.__beats.filter((b) => b >= window.__startAt && b <= window.__doneAt);
    const gaps = beats
      .slice(1)
      .map((b, i) => b - beats[i])
      .sort((a, b) => a - b);
    return {
      rows: el.kernelRows,
      machine: el.machine,
      allCores: el.allCores,
      allCoreRows: el.allCoreRows,
      kernel: el.dataset.kernel,
      note: el.shadowRoot.querySelector('.kernel-note').textContent,
      beats: beats.length,
      doneAt: window.__doneAt,
      p90: gaps[Math.floor(gaps.length * 0.9)] ?? Infinity,
      max: gaps.at(-1) ?? Infinity,
      ms: window.__doneAt - window.__startAt,
      status: el.shadowRoot.querySelector('.status').textContent,
    };
  });
  assert.ok(during.at < result.doneAt, 'the input responded before the measurement finished');
  assert.match(result.status, /^done/);
  const relaxed = await relaxedValidates(page);
  assert.equal(result.kernel, relaxed ? 'simd-relaxed' : 'simd', 'the fastest kernel this browser can run');
  assert.match(
    result.note,
    relaxed
      ? /simd-relaxed \(fused multiply-add, f32x4\.relaxed_madd/
      : /5 simd \(mul \+ add\)\. Relaxed SIMD not used/,
  );
  // 64, 128, 256 for all five kernels (naive runs up to 256), and simd-relaxed where it validates
  const perSize = relaxed ? 6 : 5;
  assert.equal(result.rows.length, 3 * perSize);
  // all cores: the fastest kernel at each size, two stripes of C that together are the whole product
  assert.deepEqual(
    result.allCoreRows.map((r) => [r.kernel, r.n, r.cores]),
    [64, 128, 256].map((n) => [result.kernel, n, 2]),
  );
  for (const row of result.allCoreRows) {
    assert.equal(
      row.stripes.reduce((a, b) => a + b, 0),
      row.n,
      JSON.stringify(row),
    );
    assert.equal(row.flops, 2 * row.n ** 3, 'the stripes do the FLOPs of one n x n product');
    assert.equal(row.correct, true);
    assert.ok(
      Number.isFinite(row.flops_per_s) && row.flops_per_s > 0 && Number.isFinite(row.intensity) && row.intensity > 0,
      JSON.stringify(row),
    );
  }
  assert.equal(result.allCores.cores, 2);
  assert.ok(result.allCores.peakFlops > 0 && result.allCores.bandwidth > 0);
  for (const row of result.rows) {
    assert.ok(Number.isFinite(row.flops_per_s) && row.flops_per_s > 0, JSON.stringify(row));
    assert.ok(Number.isFinite(row.intensity) && row.intensity > 0);
    assert.equal(row.correct, true, `${row.kernel} n=${row.n} matches the double reference`);
  }
  assert.ok(Number.isFinite(result.machine.peak.flops_per_s) && result.machine.peak.flops_per_s > 0);
  assert.ok(Number.isFinite(result.machine.bw.read_bytes_per_s) && result.machine.bw.read_bytes_per_s > 0);
  assert.equal(
    result.machine.peak.isa,
    relaxed ? 'wasm-simd128+relaxed-madd' : 'wasm-simd128',
    "the roof is the fastest kernel's ceiling",
  );
  assert.equal(result.machine.mulAddPeak.isa, 'wasm-simd128');
  // That the page stayed responsive is asserted above by order, not time (the input took effect while the
  // worker was still measuring); timer gaps depend on machine load, so they are reported, never asserted.
  const beatsInfo = `${result.beats} timer ticks in ${result.ms.toFixed(0)} ms, p90 gap ${result.p90.toFixed(0)} ms, max ${result.max.toFixed(0)} ms`;
  console.log(`# responsiveness: ${beatsInfo}`);
  assert.equal(await widget.locator('svg circle.kpt').count(), 3 * perSize);
  assert.equal(await widget.locator('svg rect.kpt.all').count(), 3, 'one all-core point per size');
  assert.equal(await widget.locator('svg path.roof.machine').count(), 2, 'single-core and all-core roofs');
  // With the machine's roofs, ridges and kernel labels added, no two labels of the chart overprint each other.
  const overlaps = await widget.evaluate((el) => {
    const boxes = [...el.shadowRoot.querySelectorAll('svg.chart text')]
      .map((t) => ({ text: t.textContent, b: t.getBBox() }))
      .filter((t) => t.b.width > 0);
    const out = [];
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, b] = [boxes[i].b, boxes[j].b];
        const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
        const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
        // Glyph boxes include line gaps: a sliver of 2 px is spacing, not overprinting (as layout-audit.mjs).
        if (w > 2 && h > 2) out.push(`"${boxes[i].text}" over "${boxes[j].text}"`);
      }
    return out;
  });
  assert.deepEqual(overlaps, []);
  const probeRows = relaxed ? 3 : 2;
  assert.equal(await widget.locator('table.measured tbody tr').count(), 2 * probeRows + 3 * perSize + 3);
  await widget.locator('svg circle.kpt').last().hover();
  assert.match(
    await widget.locator('.readout').textContent(),
    new RegExp(`${result.kernel}, n = 256, one core: .* GFLOP/s`),
  );
  await widget.locator('svg rect.kpt.all').last().hover();
  assert.match(
    await widget.locator('.readout').textContent(),
    new RegExp(`${result.kernel}, n = 256 on 2 cores at once .* GFLOP/s`),
  );
  await screenshot(widget, 'roofline-desktop');
  await page.emulateMedia({ colorScheme: 'dark' });
  await screenshot(widget, 'roofline-dark');
  // A kernel above its measured roof (a probe disturbed by other work) is starred and explained, never silent.
  const roofNote = () =>
    widget.evaluate((el) => ({
      hidden: el.shadowRoot.querySelector('.over-roof').hidden,
      starred: [...el.shadowRoot.querySelectorAll('table.measured tbody td:last-child')].filter((td) =>
        td.textContent.endsWith('*'),
      ).length,
    }));
  const measured = await roofNote();
  assert.equal(measured.hidden, measured.starred === 0, JSON.stringify(measured));
  // Both roofs are lowered: an all-core row can sit above its own measured roof on a loaded machine.
  await widget.evaluate((el) => {
    el.machine = { ...el.machine, peakFlops: 1e6 };
    el.allCores = { ...el.allCores, peakFlops: 1e6 };
    el.renderTable();
  });
  const starred = await roofNote();
  assert.equal(starred.hidden, false);
  assert.equal(starred.starred, 3 * perSize + 3, 'every single- and all-core kernel is above a 1 MFLOP/s roof');
  assert.deepEqual(errors(page), []);
});

test('roofline: Cancel stops the worker mid-run and the widget can measure again', async (t) => {
  const { site, page } = await sitePage(t);
  const widget = await openRoofline(site, page);
  // Count the workers started and terminated on this page.
  await page.evaluate(() => {
    window.__workers = { started: 0, terminated: 0 };
    const Original = window.Worker;
    window.Worker = class extends Original {
      constructor(...args) {
        super(...args);
        window.__workers.started += 1;
      }
      terminate() {
        window.__workers.terminated += 1;
        super.terminate();
      }
    };
  });
  await widget.evaluate((el) => {
    el.setAttribute('sizes', '256,512');
    el.setAttribute('probe-mib', '16');
    el.setAttribute('reps', '3');
    el.shadowRoot.querySelector('input[name="workers"]').value = '3';
  });
  await widget.locator('button.measure').click();
  await page.waitForFunction(
    () => document.querySelector('section#roofline tally-roofline').dataset.running !== undefined,
    null,
    { timeout: 60000 },
  );
  await widget.locator('button.cancel').click();
  const after = await widget.evaluate((el) => ({
    workers: el.workers,
    running: el.dataset.running ?? null,
    status: el.shadowRoot.querySelector('.status').textContent,
    disabled: el.shadowRoot.querySelector('button.measure').disabled,
    rows: el.kernelRows.length,
  }));
  assert.deepEqual(
    await page.evaluate(() => window.__workers),
    { started: 3, terminated: 3 },
    'Cancel terminates every worker',
  );
  assert.equal(after.workers, null);
  // nothing arrives after Cancel
  await page.waitForTimeout(500);
  assert.equal(await widget.evaluate((el) => el.kernelRows.length), after.rows);
  assert.equal(after.running, null);
  assert.equal(after.status, 'cancelled');
  assert.equal(after.disabled, false);
  assert.deepEqual(errors(page), []);
});

test('roofline: a gpu-report.json (tally.gpu-measurement/1) adds its measured points with their numbers on hover', async (t) => {
  const { site, page } = await sitePage(t);
  // The report engine/cuda/gemm_roofline writes; served here by the test, since this machine has no GPU.
  const report = {
    schema: 'tally.gpu-measurement/1',
    program: 'gemm_roofline',
    label: 'measured on Test GPU',
    points: [
      {
        kernel: 'wmma_bf16',
        kind: 'gemm',
        dtype: 'bf16',
        m: 4096,
        n: 4096,
        k: 4096,
        flops: 2 * 4096 ** 3,
        bytes: (4 * 3 * 4096 ** 2) / 2,
        intensity_flop_per_byte: 1024,
        time_s: 0.0005,
        flops_per_s: 2.75e14,
        gflops: 2.75e5,
      },
      {
        kernel: 'vector_add_fp32',
        kind: 'elementwise',
        dtype: 'fp32',
        elements: 67108864,
        flops: 67108864,
        bytes: 805306368,
        intensity_flop_per_byte: 1 / 12,
        time_s: 0.0003,
        flops_per_s: 2.2e11,
        gflops: 220,
      },
      { kernel: 'broken', kind: 'gemm', dtype: 'fp32', intensity_flop_per_byte: null, flops_per_s: null },
    ],
  };
  await page.route('**/gpu-report.json', (route) =>
    route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(report) }),
  );
  const widget = await openRoofline(site, page);
  await page.waitForFunction(
    () =>
      document.querySelector('section#roofline tally-roofline').shadowRoot.querySelectorAll('svg rect.gpu').length > 0,
    null,
    { timeout: 15000 },
  );
  assert.equal(await widget.locator('svg rect.gpu').count(), 2, 'the point without numbers is skipped');
  await widget.locator('svg rect.gpu').first().hover();
  assert.match(
    await widget.locator('.readout').textContent(),
    /wmma_bf16 bf16, n = 4096, measured on Test GPU: 275 TFLOP\/s at 1,024 FLOP\/byte/,
  );
  assert.deepEqual(errors(page), []);
});

test('roofline: embedded on another origin, "Measure my machine" runs its workers (blob: worker importing the widget\'s server)', async (t) => {
  // Two servers on two 127.0.0.1 ports: the site (widgets and engine) and a host page that embeds them.
  const widgets = await startServer(siteDir, 0);
  const hostDir = mkdtempSync(path.join(os.tmpdir(), 'tally-host-'));
  writeFileSync(
    path.join(hostDir, 'index.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>host</title><link rel="icon" href="data:,">
<script type="module" src="${new URL('/tally-widgets.js', widgets.url).href}"></script></head>
<body><tally-roofline sizes="64" probe-mib="8" reps="1"></tally-roofline></body></html>`,
  );
  const host = await startServer(hostDir, 0, { csp: null }); // a course page with no CSP of its own
  const site = await startSite();
  t.after(async () => {
    await site.close();
    await host.close();
    await widgets.close();
    rmSync(hostDir, { recursive: true, force: true });
  });
  assert.notEqual(new URL(host.url).origin, new URL(widgets.url).origin);
  const page = await site.newPage(DESKTOP);
  await page.goto(host.url);
  const widget = page.locator('tally-roofline');
  await widget.evaluate((el) => el.ready);
  const detail = await widget.evaluate(async (el) => {
    el.shadowRoot.querySelector('input[name="workers"]').value = '2';
    const done = new Promise((resolve) => el.addEventListener('measured', (e) => resolve(e.detail), { once: true }));
    const failed = new Promise((resolve) => {
      const status = el.shadowRoot.querySelector('.status');
      new MutationObserver(() => {
        if (status.textContent.startsWith('stopped')) resolve({ stopped: status.textContent });
      }).observe(status, { childList: true, characterData: true, subtree: true });
    });
    el.shadowRoot.querySelector('button.measure').click();
    const d = await Promise.race([done, failed]);
    return d.stopped
      ? d
      : {
          rows: d.rows.length,
          allCoreRows: d.allCoreRows.length,
          kernel: d.kernel,
          correct: d.rows.every((r) => r.correct),
        };
  });
  assert.equal(detail.stopped, undefined, `measuring failed on the host page: ${detail.stopped}`);
  assert.ok(detail.rows >= 5 && detail.allCoreRows === 1 && detail.correct, JSON.stringify(detail));
  assert.match(await widget.evaluate((el) => el.shadowRoot.querySelector('.status').textContent), /^done/);
  assert.deepEqual(errors(page), []);
});

test('roofline: a host page that forbids workers gets a plain message, not a silent failure', async (t) => {
  const { site, page } = await sitePage(t);
  const widget = await openRoofline(site, page);
  await page.evaluate(() => {
    window.Worker = class {
      constructor() {
        throw new DOMException('workers are not allowed here', 'SecurityError');
      }
    };
  });
  await widget.locator('button.measure').click();
  await page.waitForFunction(() =>
    document
      .querySelector('section#roofline tally-roofline')
      .shadowRoot.querySelector('.status')
      .textContent.startsWith('stopped'),
  );
  const status = await widget.evaluate((el) => el.shadowRoot.querySelector('.status').textContent);
  assert.match(status, /could not measure: workers are not allowed here\. .*worker-src/);
  assert.equal(await widget.evaluate((el) => el.shadowRoot.querySelector('button.measure').disabled), false);
});

test('roofline: fp8 with an A100 checked names the A100 as having no fp8 roof instead of dropping it silently', async (t) => {
  const { site, page } = await sitePage(t);
  const widget = await openRoofline(site, page);
  await widget.locator('input[name="hw"][value="a100-80gb"]').check();
  assert.equal(await widget.evaluate((el) => el.roofs.length), 2, 'both roofs in bf16');
  assert.equal(await widget.locator('.notice').textContent(), '');
  await widget.locator('select[name="dtype"]').selectOption('fp8');
  const roofs = await widget.evaluate((el) => el.roofs.map((r) => r.id));
  assert.deepEqual(roofs, ['h100-sxm'], 'the A100 has no dense fp8 peak (no fp8 tensor cores)');
  assert.match(await widget.locator('.notice').textContent(), /A100.*no dense fp8 peak.*not drawn/);
  await widget.locator('select[name="dtype"]').selectOption('bf16');
  assert.equal(await widget.locator('.notice').textContent(), '', 'the note goes with the reason for it');
  assert.deepEqual(errors(page), []);
});
