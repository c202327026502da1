// Each widget declares its fields once (`static fields`, web/widgets/kit/store.js): the attributes it observes,
// the keys of its URL state and of getState/setState, and the engine-error mapping all come from that table, so
// no list can drift from another (memory's ep, cf and dseq once were settable only before start-up).
import test from 'node:test';
import assert from 'node:assert/strict';
import { startSite, DESKTOP, sitePage } from './harness.mjs';
import { errors, openWidgetAlone } from './page-helpers.mjs';

const TAGS = [
  'tally-memory-budget',
  'tally-compute',
  'tally-step',
  'tally-inference',
  'tally-float',
  'tally-roofline',
  'tally-collectives',
];

/** Inside the page: the table, the derived lists, the state and its URL parameters after setState(getState()). */
async function inspect(widget) {
  return widget.evaluate(async (el) => {
    const { fieldAttribute } = await import('/widgets/kit/store.js');
    const fields = el.constructor.fields ?? [];
    const before = el.getState();
    const after = el.setState(before);
    (await import('/state.js')).flushState();
    const urlKeys = [...new URLSearchParams(location.search).keys()]
      .filter((param) => param.startsWith(`${el.key}.`))
      .map((param) => param.slice(el.key.length + 1));
    return {
      names: fields.map((f) => f.name),
      attributes: fields.map(fieldAttribute),
      observed: el.constructor.observedAttributes,
      schema: Object.keys(el.stateSchema),
      before,
      after,
      urlKeys,
    };
  });
}

/** Sets attribute `name` to `value` and waits until the widget has taken it (the state or a notice changed). */
async function setAttribute(widget, name, value) {
  return widget.evaluate(
    (el, [name, value]) => {
      el.setAttribute(name, value);
      return { state: el.getState(), notice: el.shadowRoot.querySelector('.url-notice')?.textContent ?? '' };
    },
    [name, value],
  );
}

test('every widget: observed attributes, URL keys and getState keys come from its one field table, and setState(getState()) is the identity', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  for (const tag of TAGS) {
    const page = await site.newPage(DESKTOP);
    const widget = await openWidgetAlone(site, page, tag, 'url-state');
    await widget.evaluate((el) => el.ready);
    const got = await inspect(widget);
    assert.ok(got.names.length >= 3, `${tag} declares its fields (${got.names.join(', ')})`);
    assert.equal(new Set(got.names).size, got.names.length, `${tag}: each field is declared once`);
    assert.deepEqual(got.observed, [...got.attributes, 'theme'], `${tag}: observedAttributes are the table's`);
    assert.deepEqual(got.schema, got.names, `${tag}: the URL state's schema is the table's`);
    const stateKeys = Object.keys(got.before);
    assert.ok(
      stateKeys.every((k) => got.names.includes(k)),
      `${tag}: getState keys ${stateKeys} are declared fields`,
    );
    assert.deepEqual(got.after, got.before, `${tag}: setState(getState()) changes nothing`);
    assert.deepEqual(got.urlKeys.sort(), [...stateKeys].sort(), `${tag}: the URL holds the getState keys`);

    // Every field in the state is observed through its declared attribute after start-up and reaches setState as
    // that field: an overlong value is refused by name (not as "no such setting") and changes nothing; its own
    // value again is taken and clears the notice (a linked field may move another: a parameter count detaches
    // compute's preset model, so the state is put back after each).
    // The whole sweep runs inside the page in one call (each step as setAttribute below: set, then read back).
    const steps = await widget.evaluate(
      (el, { names, attributes, before }) => {
        const read = () => ({
          state: el.getState(),
          notice: el.shadowRoot.querySelector('.url-notice')?.textContent ?? '',
        });
        const out = [];
        for (const [i, name] of names.entries()) {
          if (!(name in before)) continue; // a field the state holds only in another mode (a pasted config)
          const attribute = attributes[i];
          el.setAttribute(attribute, 'x'.repeat(5000));
          const refused = read();
          el.setAttribute(attribute, before[name]);
          const shown = read();
          el.setState(before);
          out.push({ name, attribute, refused, shown });
        }
        return out;
      },
      { names: got.names, attributes: got.attributes, before: got.before },
    );
    assert.equal(
      steps.length,
      got.names.filter((name) => name in got.before).length,
      `${tag}: every field in the state is tried`,
    );
    for (const { name, attribute, refused, shown } of steps) {
      assert.ok(refused.notice.includes(`Ignored attribute ${attribute}="`), `${tag}: ${attribute} is observed`);
      assert.ok(!refused.notice.includes('no such setting'), `${tag}: ${attribute} names field ${name}`);
      assert.deepEqual(refused.state, got.before, `${tag}: a refused ${attribute} changes nothing`);
      assert.equal(shown.state[name], got.before[name], `${tag}: attribute ${attribute} sets field ${name}`);
      assert.ok(!shown.notice.includes(`Ignored attribute ${attribute}=`), `${tag}: ${attribute} is accepted`);
    }
    assert.deepEqual(errors(page), [], `${tag}: no page errors`);
    await page.close();
  }
});

test('memory: ep, cf and dseq set after start-up reach the state and the engine (they once were missing from the observed attributes)', async (t) => {
  const { site, page } = await sitePage(t);
  const widget = await openWidgetAlone(site, page, 'tally-memory-budget', 'model="mixtral-8x7b" gpus="8"');
  await widget.evaluate((el) => el.ready);
  await setAttribute(widget, 'ep', '2');
  const shown = await setAttribute(widget, 'cf', '1.5');
  assert.equal(shown.state.ep, '2');
  assert.equal(shown.state.cf, '1.5');
  const args = await widget.evaluate((el) => el.lastCall.args);
  assert.equal(args.ep, 2);
  assert.equal(args.capacity_factor, 1.5);
  // Mixtral is not an encoder-decoder: the engine refuses a target length, and the notice names the attribute.
  const refused = await setAttribute(widget, 'dseq', '128');
  assert.equal(refused.state.dseq, '0', 'the refused value is not taken');
  assert.match(refused.notice, /Ignored attribute dseq="128": .*decoder_seq/);
  assert.deepEqual(errors(page), []);
});
