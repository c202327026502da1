// The reader's GPU through WebGPU (web/widgets/webgpu-gemm.js, roofline-webgpu.js, your-gpu.js), on the software
// adapter (SwiftShader) of headless Chromium: the WGSL GEMM matches the engine's CPU GEMM on the same inputs (and
// a corrupted result does not), the copy probe gives a positive finite rate, "Measure my GPU" in the roofline
// widget draws the your-GPU roof and points with the adapter's name and makes a hardware object, nothing is asked
// of the GPU at page load, and with WebGPU off the controls give the reason and nothing else on the page changes.
// Small sizes only: the software adapter runs about a GFLOP/s. Speeds are not asserted (the benchmark is
// scripts/bench/bench-webgpu-gemm.mjs, figures in BENCHMARKS.md).
import test from 'node:test';
import assert from 'node:assert/strict';
import { browserArgs, sitePage, screenshot, SOFTWARE_WEBGPU_ARGS } from './harness.mjs';
import { open, errors, setControl } from './page-helpers.mjs';

browserArgs(SOFTWARE_WEBGPU_ARGS);

const roofline = 'section#roofline tally-roofline';

async function openRoofline(site, page) {
  await open(site, page, '/#roofline');
  const widget = page.locator(roofline);
  await widget.evaluate((el) => el.ready);
  return widget;
}

test('webgpu: the WGSL GEMM matches the engine CPU GEMM on the same inputs, and a wrong entry fails the check', async (t) => {
  const { site, page } = await sitePage(t);
  const widget = await openRoofline(site, page);
  const result = await widget.evaluate(async (el) => {
    const g = await import('/widgets/webgpu-gemm.js');
    const gpu = await g.openGpu();
    const out = { name: gpu.name, f16: gpu.f16, rows: [] };
    // Sizes that are not whole tiles (the padding), one that is, and one larger than the 4,096 entries compared.
    for (const dtype of ['f32', ...(gpu.f16 ? ['f16'] : [])])
      for (const n of [1, 37, 64, 96])
        out.rows.push(await g.measureGemm(gpu, { n, dtype, engine: el.engine, reps: 1, warmup: 1, minSampleMs: 1 }));
    // The same inputs, one entry of C moved by 1e-3: the check must fail.
    const gemm = g.prepareGemm(gpu, { n: 48 });
    const c = await gemm.readC();
    out.good = g.checkAgainstEngine(el.engine, gemm, c);
    c[7] += 1e-3;
    out.bad = g.checkAgainstEngine(el.engine, gemm, c);
    gemm.destroy();
    return out;
  });
  assert.match(result.name, /swiftshader/i, "the adapter's name as the browser gives it");
  for (const row of result.rows) {
    assert.equal(row.check.ok, true, JSON.stringify(row.check));
    assert.equal(row.check.compared, Math.min(4096, row.n * row.n));
    assert.ok(row.check.max_abs_err <= row.check.tolerance || row.check.worst_ratio <= 1, JSON.stringify(row.check));
    assert.ok(Number.isFinite(row.flops_per_s) && row.flops_per_s > 0, JSON.stringify(row));
    assert.equal(row.flops, 2 * row.n ** 3);
  }
  assert.equal(result.good.ok, true);
  assert.equal(result.bad.ok, false, 'an entry off by 1e-3 is outside the fp32 tolerance');
  assert.ok(result.bad.worst_ratio > 1);
  assert.deepEqual(errors(page), []);
});

test('webgpu: the copy probe gives a positive finite bandwidth and copies its whole buffer', async (t) => {
  const { site, page } = await sitePage(t);
  await open(site, page, '/#roofline');
  const probe = await page.evaluate(async () => {
    const g = await import('/widgets/webgpu-gemm.js');
    const gpu = await g.openGpu();
    return g.measureBandwidth(gpu, { mib: 4, reps: 2, minSampleMs: 5 });
  });
  assert.equal(probe.verified, true, 'the last words of the source arrived');
  assert.equal(probe.buffer_bytes, 4 * 2 ** 20);
  assert.equal(probe.bytes, 2 * probe.buffer_bytes, 'read and written');
  assert.ok(Number.isFinite(probe.bytes_per_s) && probe.bytes_per_s > 0, JSON.stringify(probe));
  assert.deepEqual(errors(page), []);
});

test('webgpu: "Measure my GPU" draws your GPU roof and points with the adapter name, and makes the device', async (t) => {
  const { site, page } = await sitePage(t);
  // Count adapter requests: none may happen before the reader presses the button.
  await page.addInitScript(() => {
    window.__adapterRequests = 0;
    const original = navigator.gpu?.requestAdapter?.bind(navigator.gpu);
    if (original)
      navigator.gpu.requestAdapter = (...args) => {
        window.__adapterRequests += 1;
        return original(...args);
      };
  });
  const widget = await openRoofline(site, page);
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => window.__adapterRequests), 0, 'nothing asks for the GPU at page load');
  assert.equal(await widget.locator('button.measure-gpu').isVisible(), true);
  const detail = await widget.evaluate(async (el) => {
    el.setAttribute('gpu-sizes', '32,64');
    el.setAttribute('gpu-probe-mib', '4');
    el.setAttribute('reps', '2');
    el.shadowRoot.querySelector('input[name="gpu-memory"]').value = '24';
    const done = new Promise((resolve) =>
      el.addEventListener('gpu-measured', (e) => resolve(e.detail), { once: true }),
    );
    const device = new Promise((resolve) =>
      addEventListener('tally-your-gpu', (e) => resolve(e.detail), { once: true }),
    );
    el.shadowRoot.querySelector('button.measure-gpu').click();
    const d = await done;
    return { rows: d.rows.length, ok: d.rows.every((r) => r.check.ok), device: await device, name: d.name };
  });
  assert.equal(detail.rows, 2);
  assert.equal(detail.ok, true);
  assert.match(await widget.locator('.gpu-status').textContent(), /^done: 2 GEMMs on google swiftshader/);
  assert.equal(await widget.locator('svg path.roof.yours').count(), 1, 'one roof: f32 (this adapter has no f16)');
  assert.equal(await widget.locator('svg path.wgpu').count(), 2, 'a point per GEMM');
  assert.match(await widget.locator('svg').textContent(), /your GPU \(google swiftshader\), WebGPU f32: ridge/);
  // With your GPU's roof, ridge label and points added, no two labels of the chart overprint each other.
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
        if (w > 2 && h > 2) out.push(`"${boxes[i].text}" over "${boxes[j].text}"`);
      }
    return out;
  });
  assert.deepEqual(overlaps, []);
  await widget.locator('svg path.wgpu').last().hover();
  assert.match(
    await widget.locator('.readout').textContent(),
    /Your GPU \(google swiftshader\), WGSL GEMM f32, n = 64: .* GFLOP\/s .*Matches the engine's CPU GEMM/,
  );
  assert.equal(await widget.locator('table.gpu-measured tbody tr').count(), 3, 'the copy probe and two GEMMs');
  await screenshot(widget, 'roofline-webgpu');
  // The device: the preset format, its rates the measured ones.
  const { device } = detail;
  const rates = await widget.evaluate((el) => ({
    best: Math.max(...el.webgpu.rows.map((r) => r.flops_per_s)),
    bw: el.webgpu.copy.bytes_per_s,
  }));
  assert.deepEqual(Object.keys(device).sort(), [
    'interconnect',
    'memory_bandwidth_tb_s',
    'memory_gb',
    'name',
    'peak_tflops',
    'source',
  ]);
  assert.equal(device.name, 'Your GPU (google swiftshader)');
  assert.equal(device.memory_gb, 24, 'the memory the reader typed');
  assert.equal(device.peak_tflops.fp32, Number((rates.best / 1e12).toPrecision(4)));
  assert.equal(device.peak_tflops.bf16, device.peak_tflops.fp32, 'no f16 here: bf16 taken as the f32 rate');
  assert.equal(device.memory_bandwidth_tb_s, Number((rates.bw / 1e12).toPrecision(4)));
  // Typing another memory size updates the device.
  const updated = await widget.evaluate(async (el) => {
    const next = new Promise((resolve) => addEventListener('tally-your-gpu', (e) => resolve(e.detail), { once: true }));
    const input = el.shadowRoot.querySelector('input[name="gpu-memory"]');
    input.value = '12';
    input.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    input.dispatchEvent(new Event('change', { bubbles: true, composed: true }));
    return (await next).memory_gb;
  });
  assert.equal(updated, 12);
  // The step widget lists "your GPU" and sends it to the engine as the hardware object.
  const step = page.locator('tally-step').first();
  await step.scrollIntoViewIfNeeded();
  await step.evaluate((el) => el.ready);
  const option = await step.evaluate(
    (el) =>
      [...el.shadowRoot.querySelector('select[name="hardware"]').options].find((o) => o.value === 'your-gpu')?.text,
  );
  assert.equal(option, 'Your GPU (google swiftshader)');
  for (const [name, value] of [
    ['gpus', '1'],
    ['tp', '1'],
    ['pp', '1'],
  ])
    await setControl(step, name, value);
  await setControl(step, 'hardware', 'your-gpu');
  const sent = await step.evaluate((el) => ({
    hardware: el.stepArgs?.hardware,
    result: el.result,
    notice: el.shadowRoot.querySelector('.notice').textContent,
    direct: (() => {
      try {
        return { ok: el.engine.call('step_time', el.stepArgs) };
      } catch (error) {
        return { error: `${error.field}: ${error.message}` };
      }
    })(),
  }));
  assert.deepEqual(sent.hardware, { ...device, memory_gb: 12 }, 'the measured device, with the memory typed');
  // The step follows from the measured rates: the widget's answer is the engine's for that object, and halving
  // the peaks (bf16, the GEMMs' dtype here, is the measured f32 rate) makes the step slower.
  assert.equal(sent.direct.error, undefined, sent.direct.error);
  assert.deepEqual(sent.result, sent.direct.ok);
  assert.ok(sent.result.step_seconds > 0);
  const halved = await step.evaluate((el) => {
    const hw = el.stepArgs.hardware;
    const peaks = Object.fromEntries(Object.entries(hw.peak_tflops).map(([k, v]) => [k, v / 2]));
    return el.engine.call('step_time', { ...el.stepArgs, hardware: { ...hw, peak_tflops: peaks } }).step_seconds;
  });
  assert.ok(halved > sent.result.step_seconds * 1.2, `${halved} against ${sent.result.step_seconds}`);
  // The memory widget lists it too, with the memory the reader typed as the capacity.
  const memory = page.locator('tally-memory-budget').first();
  await memory.scrollIntoViewIfNeeded();
  await memory.evaluate((el) => el.ready);
  await setControl(memory, 'hardware', 'your-gpu');
  const budget = await memory.evaluate((el) => ({
    sent: el.args(el.values()).args.hardware,
    capacity: el.budget?.capacity_bytes,
    budgetHardware: el.budgetArgs?.hardware,
    option: el.shadowRoot.querySelector('select[name="hardware"]').selectedOptions[0].text,
    error: el.lastError?.message ?? null,
    notice: el.shadowRoot.querySelector('.notice')?.textContent ?? '',
  }));
  assert.equal(budget.option, 'Your GPU (google swiftshader) (12 GB)');
  assert.deepEqual(budget.sent, { ...device, memory_gb: 12 }, 'sent as the hardware object');
  if (typeof budget.budgetHardware === 'object') {
    assert.equal(budget.capacity, 12e9, 'the capacity is the 12 GB typed (no device report in a browser)');
  } else {
    // memory_budget on this engine takes a preset id only: the refusal is shown, nothing breaks.
    t.diagnostic(`memory_budget refuses a hardware object: ${budget.error ?? budget.notice}`);
    assert.match(`${budget.error} ${budget.notice}`, /hardware/);
  }
  assert.deepEqual(errors(page), []);
});

test('webgpu: with WebGPU off the controls say why, and nothing else on the page changes', async (t) => {
  const { site, page } = await sitePage(t);
  // The same page without WebGPU: navigator.gpu removed before any script runs.
  const off = await site.newPage();
  await off.addInitScript(() => {
    delete Navigator.prototype.gpu;
  });
  const texts = [];
  for (const p of [page, off]) {
    const widget = await openRoofline(site, p);
    texts.push(
      await widget.evaluate((el) => {
        const root = el.shadowRoot;
        const tools = root.querySelector('.gpu-tools');
        const rest = [...root.querySelector('.widget').children].filter((c) => c !== tools);
        return {
          webgpu: el.dataset.webgpu ?? null,
          button: !root.querySelector('button.measure-gpu').hidden,
          memory: !root.querySelector('label.gpu-memory').hidden,
          status: root.querySelector('.gpu-status').textContent,
          rest: rest.map((c) => c.textContent).join('\n'),
          page: document.body.innerText,
        };
      }),
    );
  }
  const [on, without] = texts;
  assert.equal(on.button, true);
  assert.equal(without.webgpu, 'absent');
  assert.equal(without.button, false, 'no button that cannot work');
  assert.equal(without.memory, false);
  assert.match(without.status, /does not offer WebGPU \(navigator\.gpu is missing/);
  assert.equal(without.rest, on.rest, 'the rest of the widget is the same');
  assert.equal(without.page, on.page, 'the page around it is the same');
  assert.deepEqual(errors(page), []);
  assert.deepEqual(errors(off), []);
});
