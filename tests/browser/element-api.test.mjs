// The element API every widget shares (docs/EMBEDDING.md): getState() is the state the URL holds, setState()
// validates like the URL does and names the refused field (changing nothing), a reader edit fires `change` with
// the state as its detail, attributes set state after start-up, and a host page restyles the widget through
// --tally-* custom properties and ::part() names without touching the shadow DOM.
import test from 'node:test';
import assert from 'node:assert/strict';
import { sitePage } from './harness.mjs';
import { setControl, errors, openWidgetAlone } from './page-helpers.mjs';

/** Calls setState in the page; returns {state} or {error: {name, field, message}} and the state after the call. */
function trySetState(widget, state) {
  return widget.evaluate((el, s) => {
    try {
      return { state: el.setState(s), after: el.getState() };
    } catch (error) {
      return { error: { name: error.name, field: error.field, message: error.message }, after: el.getState() };
    }
  }, state);
}

/** The widget's parameters in the page URL (written after the state settles), as {field: text}. */
function urlState(widget) {
  return widget.evaluate(async (el) => {
    (await import('/state.js')).flushState();
    const out = {};
    for (const [param, text] of new URLSearchParams(location.search))
      if (param.startsWith(`${el.key}.`)) out[param.slice(el.key.length + 1)] = text;
    return out;
  });
}

const CASES = [
  {
    tag: 'tally-memory-budget',
    attributes: 'model="llama-3-8b" gpus="8"',
    good: { gpus: 16 },
    result: (el) => el.lastCall.result.setup.gpus,
    want: 16,
    badValue: { zero: '7' },
    refused: { gpus: '-4' },
    edit: ['zero', '3'],
    attribute: ['gpus', '32'],
  },
  {
    tag: 'tally-compute',
    attributes: 'model="llama-3-8b"',
    good: { mfu: '0.4' },
    result: (el) => el.lastCall.args.mfu,
    want: 0.4,
    badValue: { dtype: 'fp7' },
    refused: { mfu: '1.5' },
    edit: ['dtype', 'fp16'],
    attribute: ['tokens', '1e12'],
  },
  {
    tag: 'tally-step',
    attributes: '',
    good: { tp: '8', pp: '2' },
    result: (el) => el.lastCall.args.tp,
    want: 8,
    badValue: { recompute: 'some' },
    refused: { gpus: '0' },
    edit: ['recompute', 'selective'],
    attribute: ['seq', '4096'],
  },
  {
    tag: 'tally-float',
    attributes: 'format="bf16" value="3.14"',
    good: { value: '0.1' },
    result: (el) => el.current.hex,
    want: '0x3dcd',
    badValue: { format: 'fp7' },
    refused: { value: 'abc' },
    edit: ['rounding', 'toward_zero'],
    attribute: ['format', 'fp16'],
  },
  {
    tag: 'tally-roofline',
    attributes: 'hardware="h100-sxm"',
    good: { dtype: 'fp16' },
    result: (el) => el.lastCall.result.dtype,
    want: 'fp16',
    badValue: { hardware: 'no-such-gpu' },
    refused: { seq: '-5' },
    edit: ['dtype', 'fp32'],
    attribute: ['seq', '4096'],
  },
  // 5 KV heads do not divide Llama 3 8B's 32 query heads: the engine refuses them and names the field.
  {
    tag: 'tally-inference',
    attributes: 'model="llama-3-8b"',
    good: { batch: 16 },
    result: (el) => el.lastCall.args.batch,
    want: 16,
    badValue: { kv_dtype: 'fp7' },
    refused: { kv_heads: '5' },
    edit: ['kv_dtype', 'fp8'],
    attribute: ['kv-heads', '4'],
  },
  // 9 ranks on an 8-GPU H100 node pass the number check; the engine refuses them and names ranks_per_node.
  {
    tag: 'tally-collectives',
    attributes: '',
    good: { nodes: 4 },
    result: (el) => el.lastCall.result.ranks,
    want: 32,
    badValue: { collective: 'allreduce' },
    refused: { ranks_per_node: '9' },
    edit: ['algorithm', 'tree'],
    attribute: ['message-bytes', '4096'],
  },
];

for (const c of CASES) {
  test(`${c.tag}: getState is the URL's state; setState applies ${JSON.stringify(c.good)}, refuses bad fields by name and changes nothing; edits fire change; attributes set state`, async (t) => {
    const { site, page } = await sitePage(t);
    // url-state: this page is the author's, who opts in to the URL state checked here.
    const widget = await openWidgetAlone(site, page, c.tag, `${c.attributes} url-state`);
    await widget.evaluate((el) => el.ready); // `ready` is a promise
    const initial = await widget.evaluate((el) => el.getState());
    assert.equal(typeof initial, 'object');

    // setState: applied, computed by the engine, written to the URL, and no `change` event for it.
    await widget.evaluate((el) => {
      el.changes = [];
      el.addEventListener('change', (e) => el.changes.push(e.detail));
    });
    const set = await trySetState(widget, c.good);
    assert.equal(set.error, undefined, JSON.stringify(set.error));
    for (const [field, value] of Object.entries(c.good)) assert.equal(set.state[field], String(value));
    assert.equal(await widget.evaluate(c.result), c.want);
    assert.deepEqual(await urlState(widget), set.state);
    assert.equal(await widget.evaluate((el) => el.changes.length), 0, 'setState fires no change event');

    // Refusals name the field and change nothing: an unknown field, a value the URL would refuse, one the engine refuses.
    for (const bad of [{ no_such_field: '1' }, c.badValue, c.refused]) {
      const refused = await trySetState(widget, { ...c.good, ...bad });
      const field = Object.keys(bad)[0];
      assert.equal(refused.error?.name, 'TallyError', `${JSON.stringify(bad)} is refused`);
      assert.equal(refused.error.field, field);
      assert.match(refused.error.message, new RegExp(field));
      assert.deepEqual(refused.after, set.state, `${JSON.stringify(bad)} leaves the state as it was`);
    }
    assert.equal(await widget.evaluate(c.result), c.want, 'the result is still that of the last good state');

    // A reader edit fires one `change` whose detail is the new state.
    await setControl(widget, ...c.edit);
    const changes = await widget.evaluate((el) => el.changes);
    assert.equal(changes.length, 1);
    assert.equal(changes[0][c.edit[0]], c.edit[1]);
    assert.deepEqual(changes[0], await widget.evaluate((el) => el.getState()));

    // An attribute set after start-up sets that field.
    await widget.evaluate((el, [name, value]) => el.setAttribute(name, value), c.attribute);
    assert.equal((await widget.evaluate((el) => el.getState()))[c.attribute[0].replace(/-/g, '_')], c.attribute[1]);
    assert.deepEqual(errors(page), []);
  });
}

test('a host page restyles a widget through --tally-* custom properties and ::part names only', async (t) => {
  const { site, page } = await sitePage(t);
  const head = `<style>
    tally-compute { --tally-font: Georgia, serif; --tally-accent: rgb(1, 2, 3); --tally-panel: rgb(250, 240, 230); }
    tally-compute::part(value) { color: rgb(7, 8, 9); }
    tally-compute::part(control) { border-color: rgb(10, 20, 30); }
  </style>`;
  const widget = await openWidgetAlone(site, page, 'tally-compute', 'model="llama-3-8b"', { head });
  const styles = await widget.evaluate((el) => {
    const root = el.shadowRoot;
    const css = (selector) => getComputedStyle(root.querySelector(selector));
    return {
      font: css('.widget').fontFamily,
      panel: css('.widget').backgroundColor,
      value: css('.result .value').color,
      control: css('select[name="model"]').borderTopColor,
      accent: getComputedStyle(el).getPropertyValue('--accent').trim(),
      parts: [...new Set([...root.querySelectorAll('[part]')].flatMap((n) => [...n.part]))].sort(),
    };
  });
  assert.match(styles.font, /Georgia/);
  assert.equal(styles.panel, 'rgb(250, 240, 230)');
  assert.equal(styles.value, 'rgb(7, 8, 9)');
  assert.equal(styles.control, 'rgb(10, 20, 30)');
  for (const part of [
    'panel',
    'fields',
    'field',
    'label',
    'control',
    'error',
    'results',
    'result',
    'value',
    'notice',
    'chart',
  ])
    assert.ok(styles.parts.includes(part), `part "${part}" is exposed`);
  assert.deepEqual(errors(page), []);
});
