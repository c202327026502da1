// 10,000 randomised control changes across every widget on the page: no error is thrown, every bad number
// is flagged beside its field, and the wasm heap does not grow (the engine's API passes strings only, so no
// Embind object can leak; this checks the C++ side frees what it allocates, too).
import test from 'node:test';
import assert from 'node:assert/strict';
import { sitePage } from './harness.mjs';
import { errors, watch, mountAll } from './page-helpers.mjs';

const STEPS = 10000;

test(`${STEPS.toLocaleString('en-US')} random control changes: no errors, bad numbers flagged, wasm heap flat`, async (t) => {
  const { site, page } = await sitePage(t);
  watch(page);
  await page.goto(site.url);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 20000 });
  await mountAll(page);

  const report = await page.evaluate(
    async ({ steps, seed }) => {
      const { getEngine } = await import('./engine.js');
      const engine = await getEngine();
      let state = seed >>> 0;
      const rand = () => {
        state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
        return state / 2 ** 32;
      };
      const pickOne = (list) => list[Math.floor(rand() * list.length)];
      const MINE = new Set(['tally-memory-budget', 'tally-compute']);
      const widgets = [
        ...document.querySelectorAll('tally-memory-budget, tally-compute, tally-float, tally-roofline'),
      ].filter((w) => w.shadowRoot);
      const controls = widgets.flatMap((w) =>
        [...w.shadowRoot.querySelectorAll('input, select, textarea')].filter((c) => !c.disabled).map((c) => ({ w, c })),
      );
      // Text that must be rejected beside the field (the rest may be valid or range errors from the engine).
      const BAD = ['', 'abc', '1e400', 'NaN', 'Infinity', '--3', '<img src=x onerror=alert(1)>', '1,00'];
      const NUMBERS = [
        '-1',
        '0',
        '1',
        '2',
        '3',
        '8',
        '0.5',
        '1.5',
        '7.25',
        '64',
        '4096',
        '1e12',
        '1e30',
        ' 16 ',
        '15e12',
        '70e9',
        '0.0001',
      ];
      const CONFIGS = [
        '',
        '{',
        '{"model_type":"llama"}',
        '[]',
        JSON.stringify({
          model_type: 'llama',
          vocab_size: 32000,
          hidden_size: 2048,
          intermediate_size: 5632,
          num_hidden_layers: 22,
          num_attention_heads: 32,
          num_key_value_heads: 4,
        }),
      ];
      // Two leak probes: the wasm memory size, and the address dlmalloc gives a 1 MiB block (it is carved from the
      // top of the heap, so anything leaked below it pushes it up).
      const top = () => {
        const p = engine.module._malloc(1 << 20);
        engine.module._free(p);
        return p;
      };
      const heap = [engine.heapBytes()];
      const tops = [top()];
      const violations = [];
      const counts = {};
      for (let i = 1; i <= steps; i++) {
        const { w, c } = pickOne(controls);
        let text = null;
        if (c.tagName === 'SELECT') c.selectedIndex = Math.floor(rand() * c.options.length);
        else if (c.type === 'checkbox') c.checked = !c.checked;
        else if (c.tagName === 'TEXTAREA') c.value = pickOne(CONFIGS);
        else if (c.type === 'range')
          c.value = String(Number(c.min || 0) + rand() * (Number(c.max || 100) - Number(c.min || 0)));
        else {
          text = rand() < 0.3 ? pickOne(BAD) : pickOne(NUMBERS);
          c.value = text;
        }
        c.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
        c.dispatchEvent(new Event('change', { bubbles: true, composed: true }));
        counts[w.localName] = (counts[w.localName] ?? 0) + 1;
        // A field its widget hides (LoRA settings in pre-training mode) is neither read nor shown, so it has no error.
        const hidden = c.closest('.field')?.hidden;
        if (text !== null && MINE.has(w.localName) && BAD.includes(text) && !hidden) {
          const message = c.closest('.field')?.querySelector('.error')?.textContent ?? '';
          if (!message) violations.push(`${w.localName} ${c.name}=${JSON.stringify(text)} shows no error`);
          if (w.shadowRoot.querySelector('img')) violations.push(`${w.localName} rendered markup from input`);
        }
        if (i % 1000 === 0) {
          heap.push(engine.heapBytes());
          tops.push(top());
        }
        if (i % 250 === 0) await new Promise((r) => setTimeout(r, 0)); // let the page breathe (timers, URL writes)
      }
      return {
        heap,
        tops,
        violations: violations.slice(0, 20),
        violationCount: violations.length,
        counts,
        controls: controls.length,
      };
    },
    { steps: STEPS, seed: 20261122 },
  );

  t.diagnostic(`controls driven: ${report.controls}; changes per widget: ${JSON.stringify(report.counts)}`);
  t.diagnostic(`wasm heap bytes at start and every 1,000 changes: ${report.heap.join(', ')}`);
  t.diagnostic(`address of a fresh 1 MiB block at the same points: ${report.tops.join(', ')}`);
  assert.deepEqual(report.violations, [], `${report.violationCount} bad inputs were not flagged`);
  assert.ok(
    (report.counts['tally-memory-budget'] ?? 0) > 1000 && (report.counts['tally-compute'] ?? 0) > 1000,
    'both widgets exercised',
  );
  // After the first 1,000 changes (warm-up: first use of each code path), the heap must not grow at all.
  assert.equal(report.heap.at(-1), report.heap[1], 'wasm heap did not grow');
  assert.ok(
    report.tops.at(-1) <= report.tops[1],
    `allocator top did not creep up (${report.tops[1]} -> ${report.tops.at(-1)})`,
  );
  assert.deepEqual(errors(page), []);
});
